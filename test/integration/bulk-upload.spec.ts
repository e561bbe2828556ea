/**
 * Integration: the bulk order upload end to end over real NATS (issue 10; spec
 * §2.3, §4.1): the gateway on one broker, intake (with its BullMQ worker) on
 * another, the rest on a third. A CSV is streamed through the gateway to
 * intake over NATS, stored, parsed by the worker and polled to `completed`;
 * the orders exist exactly once, and the same file uploaded again creates
 * nothing new. The multipart parts may come in any order (issue 25): the raw
 * body crosses NATS and intake parses it; refusals store nothing.
 */
import { strict as assert } from "node:assert";
import { parse as parseCsv } from "csv-parse/sync";
import { stringify } from "csv-stringify/sync";
import { TEMPLATE_COLUMNS } from "../../lib/contracts/http/intake-bulk-input";
import { getSequelize, select } from "../../lib/platform/db";
import { useCluster } from "../helpers/cluster";
import { bulkCsv, freshRef } from "../helpers/fixtures";
import { merchantWithWarehouse, uploadBulkCsv } from "../helpers/flow";
import { eventually } from "../helpers/poll";

describe("integration: bulk upload streamed to intake over NATS, processed by its worker", function () {
	this.timeout(120_000);
	const cluster = useCluster(
		"it-bulk",
		[["gateway"], ["intake"], ["pincode", "rates", "warehouses"]],
		["intake", "pincode", "warehouses"],
	);

	it("uploads a CSV, polls the job to completed, creates each order once; the same file again creates nothing", async () => {
		const { token, api, warehouse_id } = await merchantWithWarehouse(cluster);
		const ref = freshRef("BULK");
		const N = 120;
		const csv = bulkCsv(ref, N);

		const upload = () => uploadBulkCsv(cluster.base, token, warehouse_id, csv);

		const first = await upload();
		assert.equal(first.status, "completed", JSON.stringify(first));
		assert.equal(first.counts.total, N);
		assert.equal(
			first.counts.created,
			N,
			JSON.stringify({ counts: first.counts, rows: first.rows?.data?.slice(0, 2) }),
		);
		assert.equal(first.counts.failed, 0);
		assert.equal(first.progress, 100);
		const found = await api.get(`/v1/orders?order_no=${ref}-7`);
		assert.equal(found.body.data.length, 1);

		const again = await upload();
		assert.equal(again.status, "completed");
		assert.equal(again.counts.created, 0, "a file uploaded twice creates nothing new");
		assert.equal(again.counts.deduped, N);
	});

	it("rows.csv streams a job's failed and review rows over NATS; corrected and uploaded again as it is, the fixed rows are created", async () => {
		const { token, api, warehouse_id } = await merchantWithWarehouse(cluster);
		const ref = freshRef("FIX");
		// 2,500 rows with a bad pincode (three export pages), one with a formula-looking name and a bad weight,
		// one COD above its order value (review), two good rows
		const BAD = 2500;
		const lines = bulkCsv(ref, BAD + 4)
			.trimEnd()
			.split("\n");
		const at = (i: number) => lines[i + 1].split(",");
		const cols = TEMPLATE_COLUMNS as readonly string[];
		// receiver_address_1 is one quoted cell holding a comma: the split gives it two pieces
		const col = (name: string) =>
			cols.indexOf(name) + (cols.indexOf(name) > cols.indexOf("receiver_address_1") ? 1 : 0);
		const rows = lines.slice(1).map((_, i) => {
			const r = at(i);
			if (i < BAD) r[col("receiver_pincode")] = "12";
			if (i === BAD) {
				r[col("receiver_name")] = "=2+3";
				r[col("physical_weight")] = "heavy";
			}
			if (i === BAD + 1) {
				r[col("order_type")] = "1";
				r[col("cod_amount")] = "900";
			}
			return r.join(",");
		});
		const first = await uploadBulkCsv(cluster.base, token, warehouse_id, [lines[0], ...rows].join("\n"));
		assert.equal(first.status, "completed", JSON.stringify(first));
		assert.deepEqual(
			[first.counts.created, first.counts.failed, first.counts.in_review],
			[2, BAD + 1, 1],
			JSON.stringify(first.counts),
		);

		const res = await fetch(`${cluster.base}/v1/intake/jobs/${first.job_id}/rows.csv`, {
			headers: { authorization: `Bearer ${token}` },
		});
		assert.equal(res.status, 200);
		assert.equal(res.headers.get("content-type"), "text/csv; charset=utf-8");
		const records = parseCsv(Buffer.from(await res.arrayBuffer()), { bom: true }) as string[][];
		const head = records[0];
		const get = (rec: string[], name: string) => rec[head.indexOf(name)];
		assert.equal(records.length, 1 + BAD + 2, "every failed and review row, once");
		assert.deepEqual(
			records.slice(1).map((x) => Number(get(x, "row_no"))),
			Array.from({ length: BAD + 2 }, (_, i) => i + 1),
		);
		const formula = records[BAD + 1];
		assert.equal(get(formula, "receiver_name"), "'=2+3", "neutralised");
		assert.match(get(formula, "errors"), /^physical_weight: /);
		assert.equal(get(records[BAD + 2], "outcome"), "review");
		assert.equal(get(records[1], "receiver_address_1"), "45 MG Road, Ashok Nagar");

		// the merchant corrects the failed rows in the file and uploads it as it is (report columns, quotes and all)
		const fixed = records.map((rec, i) => {
			if (i === 0 || get(rec, "outcome") !== "failed") return rec;
			const out = [...rec];
			out[head.indexOf("receiver_pincode")] = "560001";
			if (i === BAD + 1) out[head.indexOf("physical_weight")] = "0.5";
			return out;
		});
		const again = await uploadBulkCsv(
			cluster.base,
			token,
			warehouse_id,
			stringify(fixed, { record_delimiter: "windows" }),
		);
		assert.equal(again.status, "completed", JSON.stringify(again));
		assert.deepEqual(
			[again.counts.created, again.counts.failed, again.counts.in_review],
			[BAD + 1, 0, 1],
			JSON.stringify({ counts: again.counts, rows: again.rows?.data?.slice(0, 3) }),
		);
		const named = await api.get(`/v1/orders?order_no=${ref}-${BAD}`);
		assert.equal(named.body.data.length, 1);
		const detail = await api.get(`/v1/orders/${named.body.data[0].order_id}`);
		assert.equal(detail.status, 200, JSON.stringify(detail.body));
		assert.equal(
			JSON.stringify(detail.body).includes('"=2+3"'),
			true,
			"the name is stored as uploaded, as text",
		);
	});

	it("(issue 25) the file part BEFORE sender_address_id, over NATS: completed; missing, another account's warehouse and 25 MB + 1 byte refused with nothing stored", async () => {
		const { token, api, warehouse_id, sender } = await merchantWithWarehouse(cluster);
		const stranger = await merchantWithWarehouse(cluster);
		const ref = freshRef("FIRST");
		/** POST with the parts in the order given (FormData keeps it, as a browser and curl -F do) */
		const post = async (parts: Array<[string, string | Blob, string?]>, query = "") => {
			const form = new FormData();
			for (const [k, v, name] of parts) {
				if (typeof v === "string") form.append(k, v);
				else form.append(k, v, name);
			}
			const r = await fetch(`${cluster.base}/v1/intake/bulk${query}`, {
				method: "POST",
				headers: { authorization: `Bearer ${token}` },
				body: form,
			});
			return { status: r.status, body: (await r.json()) as { error?: string; job_id?: number } };
		};
		const file = (body: string | Buffer) => new Blob([body], { type: "text/csv" });

		const ok = await post([
			["import_file", file(bulkCsv(ref, 5)), "orders.csv"],
			["sender_address_id", String(warehouse_id)],
		]);
		assert.equal(ok.status, 202, JSON.stringify(ok.body));
		const job = await eventually(
			async () => {
				const j = await api.get(`/v1/intake/jobs/${ok.body.job_id}`);
				return j.body?.status === "completed" || j.body?.status === "failed" ? j.body : null;
			},
			{ what: "file-first job finished", ms: 60_000, every: 200 },
		);
		assert.equal(job.status, "completed", JSON.stringify(job));
		assert.equal(job.counts.created, 5);
		assert.equal(job.sender_address_id, warehouse_id);

		const counts = async () =>
			(
				await select<Record<string, string>>(
					getSequelize(),
					`SELECT (SELECT count(*) FROM intake.bulk_jobs) AS jobs, (SELECT count(*) FROM intake.bulk_files) AS parts,
						(SELECT count(*) FROM intake.bulk_jobs WHERE sender_id = $1) AS own_jobs,
						(SELECT count(*) FROM intake.orders WHERE sender_id = $1) AS orders`,
					[sender],
				)
			)[0];
		const big = Buffer.concat([Buffer.alloc(25 * 1024 * 1024, "x\n"), Buffer.from("x")]);
		const refusals: Array<[string, Array<[string, string | Blob, string?]>, string, number, string]> = [
			[
				"missing",
				[["import_file", file(bulkCsv(`${ref}M`, 2)), "orders.csv"]],
				"",
				400,
				"sender_address_id (pickup warehouse) required",
			],
			[
				"another account's warehouse, file first",
				[
					["import_file", file(bulkCsv(`${ref}W`, 2)), "orders.csv"],
					["sender_address_id", String(stranger.warehouse_id)],
				],
				"",
				400,
				"invalid_pickup_address",
			],
			[
				"another account's warehouse in the query",
				[["import_file", file(bulkCsv(`${ref}Q`, 2)), "orders.csv"]],
				`?sender_address_id=${stranger.warehouse_id}`,
				400,
				"invalid_pickup_address",
			],
			[
				"25 MB + 1 byte, file first",
				[
					["import_file", file(big), "orders.csv"],
					["sender_address_id", String(warehouse_id)],
				],
				"",
				413,
				"file_too_large",
			],
			["25 MB + 1 byte, missing", [["import_file", file(big), "orders.csv"]], "", 413, "file_too_large"],
			[
				"25 MB + 1 byte, another account's warehouse",
				[
					["import_file", file(big), "orders.csv"],
					["sender_address_id", String(stranger.warehouse_id)],
				],
				"",
				413,
				"file_too_large",
			],
		];
		for (const [what, parts, query, status, error] of refusals) {
			const before = await counts();
			const r = await post(parts, query);
			assert.equal(r.status, status, `${what}: ${JSON.stringify(r.body)}`);
			assert.equal(r.body.error, error, what);
			assert.deepEqual(await counts(), before, `${what}: nothing stored`);
		}
		// the gateway and intake still serve uploads
		const again = await uploadBulkCsv(cluster.base, token, warehouse_id, bulkCsv(`${ref}Z`, 2));
		assert.equal(again.status, "completed");
	});
});
