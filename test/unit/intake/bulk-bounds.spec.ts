/**
 * Bounded bulk error text (issue 31; lib/intake/bulk/bounds.ts;
 * docs/decisions/0077-bounded-bulk-errors.md): a header of 20,000 unknown (or
 * repeated) columns names ten and says how many more; the job's stored `error`
 * is cut to 1,000 characters and a row error's message to 500 whatever made
 * them; and, through the real gateway, a CSV with 20,000 unknown columns ends
 * its job failed with a short error, the job and the job list answering small.
 * The gateway and the real intake share one broker; `warehouses.resolve` is a
 * fake owning only warehouse `OWNED`.
 */
import assert from "node:assert/strict";
import {
	MAX_JOB_ERROR_CHARS,
	MAX_ROW_ERROR_CHARS,
	TEMPLATE_COLUMNS,
} from "../../../lib/contracts/http/intake-bulk-input";
import { capRowErrors, capText, listSome } from "../../../lib/intake/bulk/bounds";
import { HeaderError, mapHeader, TEMPLATE_EXAMPLE } from "../../../lib/intake/bulk/columns";
import { insertBulkJob } from "../../../lib/intake/bulk/jobs-store";
import { finishJob, insertOutcomes } from "../../../lib/intake/bulk/store";
import { getSequelize, select } from "../../../lib/platform/db";
import { useGatewayWith } from "../../helpers/broker";
import { useDevIdp } from "../../helpers/devidp";
import { eventually } from "../../helpers/poll";
import { http } from "../gateway/setup";
import { ownsOnly } from "./setup";

const OWNED = 7001;
const UNKNOWN = 20_000;

/** `n` unknown column names, each 4 characters or more. */
const unknownColumns = (n: number) => Array.from({ length: n }, (_, i) => `extra_${i}`);

describe("bulk error text is bounded (issue 31)", () => {
	describe("the bounds", () => {
		it("capText cuts to max characters with an ellipsis, never splitting a surrogate pair", () => {
			assert.equal(capText("short", 10), "short");
			assert.equal(capText("abcdefghij", 10), "abcdefghij");
			assert.equal(capText("abcdefghijk", 10), "abcdefghi…");
			assert.equal(capText("abcdefgh😀xyz", 10), "abcdefgh…");
			assert.equal(capText("abcdefgh😀xyz", 10).length, 9);
		});

		it("listSome names the first ten and how many were left out", () => {
			assert.equal(listSome(["a", "b"]), "a, b");
			assert.equal(listSome(["a", "b", "c"], 2), "a, b … and 1 more");
			const names = unknownColumns(UNKNOWN);
			assert.equal(listSome(names), `${names.slice(0, 10).join(", ")} … and 19,990 more`);
		});

		it("capRowErrors cuts each message to 500 characters and keeps null", () => {
			assert.equal(capRowErrors(null), null);
			const [e] = capRowErrors([{ column: "c", field: "f", message: "x".repeat(5_000) }]) ?? [];
			assert.equal(e.message.length, MAX_ROW_ERROR_CHARS);
			assert.deepEqual({ ...e, message: "" }, { column: "c", field: "f", message: "" });
		});

		it("a header of 20,000 unknown columns (long names) or 20,000 repeats: a message under 1,000 characters saying how many more", () => {
			const longNames = unknownColumns(UNKNOWN).map((n) => `${n}_${"y".repeat(500)}`);
			for (const header of [
				[...TEMPLATE_COLUMNS, ...unknownColumns(UNKNOWN)],
				[...TEMPLATE_COLUMNS, ...longNames],
				[...TEMPLATE_COLUMNS, ...Array.from({ length: UNKNOWN }, () => "customer_order_no")],
			]) {
				assert.throws(
					() => mapHeader(header),
					(e: unknown) => {
						assert.ok(e instanceof HeaderError);
						assert.ok(e.message.length < MAX_JOB_ERROR_CHARS, `${e.message.length} characters`);
						assert.match(e.message, /… and 19,990 more$/);
						return true;
					},
				);
			}
			assert.throws(
				() => mapHeader([...TEMPLATE_COLUMNS, ...longNames]),
				(e: unknown) => {
					assert.match(String((e as Error).message), /unknown column\(s\): "extra_0_y{31}…", "extra_1_/);
					return true;
				},
			);
			// a few: every one named, as before
			assert.throws(
				() => mapHeader([...TEMPLATE_COLUMNS, "colour", "size"]),
				/unknown column\(s\): "colour", "size"$/,
			);
		});
	});

	describe("through the gateway (intake migrated: the store's last guard too)", function () {
		this.timeout(60_000);
		const idp = useDevIdp();
		const gw = useGatewayWith(["intake", ownsOnly(OWNED)]);

		it("a CSV header with 20,000 unknown columns: the job fails with a bounded error naming how many were left out; job and list answers stay small", async () => {
			const sender = 990_000 + Math.floor(Math.random() * 9_000);
			const token = await idp.tokenFor(sender);
			const header = [...TEMPLATE_COLUMNS, ...unknownColumns(UNKNOWN)];
			const row = TEMPLATE_COLUMNS.map((c) =>
				c === "customer_order_no" ? `BIG-${sender}` : TEMPLATE_EXAMPLE[c],
			);
			const bytes = Buffer.from(`${header.join(",")}\n${row.join(",")}\n`);
			const form = new FormData();
			form.append("sender_address_id", String(OWNED));
			form.append("import_file", new Blob([bytes], { type: "text/csv" }), "wide.csv");
			const up = await fetch(`${gw.base}/v1/intake/bulk`, {
				method: "POST",
				headers: { authorization: `Bearer ${token}` },
				body: form,
			});
			const upText = await up.text();
			assert.equal(up.status, 202, upText);
			const { job_id } = JSON.parse(upText) as { job_id: number };
			const job = await eventually(() => http(gw.base, "GET", `/v1/intake/jobs/${job_id}`, { token }), {
				ok: (a) => a.body?.status === "failed",
				what: "the job failed",
			});
			const error = String(job.body.error);
			assert.ok(error.length <= MAX_JOB_ERROR_CHARS, `${error.length} characters`);
			assert.match(error, /^invalid header row: unknown column\(s\): "extra_0", "extra_1", /);
			assert.match(error, /"extra_9" … and 19,990 more$/);
			assert.ok(job.bytes.length < 2_000, `the job answers ${job.bytes.length} bytes`);
			const list = await http(gw.base, "GET", "/v1/intake/jobs", { token });
			assert.equal(list.status, 200, list.text);
			assert.equal(list.body.data[0].job_id, job_id);
			assert.ok(list.bytes.length < 2_000, `the job list answers ${list.bytes.length} bytes`);
		});

		it("finishJob stores at most 1,000 characters of an error; insertOutcomes at most 500 of a row error's message", async () => {
			const db = getSequelize();
			const job_id = await insertBulkJob(db, {
				sender_id: 930_000 + Math.floor(Math.random() * 60_000),
				file_name: "big.csv",
				content_type: "text/csv",
				format: "csv",
				bytes: Buffer.from("a\n"),
				sender_address_id: OWNED,
			});
			await db.transaction((tx) =>
				insertOutcomes(
					db,
					job_id,
					[
						{
							row_no: 1,
							outcome: "failed",
							order_id: null,
							errors: [
								{ column: null, field: null, message: `row could not be read: ${"q".repeat(50_000)}` },
							],
							review_reason: null,
							data: null,
						},
					],
					tx,
				),
			);
			await finishJob(db, job_id, "failed", `file error: ${"z".repeat(100_000)}`, null);
			const [job] = await select<{ error: string }>(
				db,
				"SELECT error FROM intake.bulk_jobs WHERE job_id = $1",
				[job_id],
			);
			assert.equal(job.error.length, MAX_JOB_ERROR_CHARS);
			assert.ok(job.error.startsWith("file error: zzz") && job.error.endsWith("…"));
			const [row] = await select<{ errors: Array<{ message: string }> }>(
				db,
				"SELECT errors FROM intake.bulk_rows WHERE job_id = $1 AND row_no = 1",
				[job_id],
			);
			assert.equal(row.errors[0].message.length, MAX_ROW_ERROR_CHARS);
		});
	});
});
