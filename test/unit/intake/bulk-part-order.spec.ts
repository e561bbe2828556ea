/**
 * Bulk upload: the multipart parts in any order (issue 25;
 * docs/decisions/0073-bulk-parts-any-order.md), over the real gateway and the
 * real intake on one broker (`warehouses.resolve` is a fake: warehouse `wh` of
 * each account, nothing else). `sender_address_id` before the file, after it,
 * or in the query string; missing; naming another account's warehouse; each
 * with a small file and with a 25 MB + 1 byte file (413 `file_too_large` wins:
 * it is answered while the file streams, every other check waits for the end
 * of the body). Every refusal leaves no job row, no stored file part, no row
 * outcome and no order (row counts before / after). Also: query and form both
 * naming the warehouse, control characters in the form's texts (issue 31: a
 * NUL in the file name answered 500), a malformed body, two files, a client
 * that goes away mid-upload.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { request } from "node:http";
import type { Context, ServiceBroker } from "moleculer";
import { TEMPLATE_COLUMNS } from "../../../lib/contracts/http/intake-bulk-input";
import { TEMPLATE_EXAMPLE } from "../../../lib/intake/bulk/columns";
import { getSequelize, select } from "../../../lib/platform/db";
import { loadServiceSchema } from "../../../lib/platform/system";
import { startWithGateway } from "../../helpers/broker";
import { fakeService } from "../../helpers/call";
import { useDevIdp } from "../../helpers/devidp";
import { warehouse } from "../../helpers/fixtures";
import { multipartBody, type Part } from "../../helpers/multipart";
import { eventually } from "../../helpers/poll";
import { http } from "../gateway/setup";

const MB25 = 25 * 1024 * 1024;

describe("intake bulk upload: multipart parts in any order (issue 25)", function () {
	this.timeout(120_000);
	let broker: ServiceBroker;
	let base: string;
	const idp = useDevIdp({
		// no worker: the row counts below change only through uploads
		INTAKE_BULK_WORKER: "off",
	});
	let next = 930_000 + Math.floor(Math.random() * 60_000);
	/** warehouse id → the account owning it */
	const owners = new Map<number, number>();
	/** the error codes `intake.bulkUpload` ended with (an `error` hook added to the real schema) */
	const uploadErrors: string[] = [];

	before(async () => {
		const intake = loadServiceSchema("intake");
		({ broker, base } = await startWithGateway([
			{
				...intake,
				hooks: {
					error: {
						bulkUpload(_ctx: Context, err: Error) {
							const body = (err as { data?: { body?: { error?: string } } }).data?.body;
							uploadErrors.push(String(body?.error ?? err));
							throw err;
						},
					},
				},
			},
			fakeService("warehouses", {
				resolve: (ctx) =>
					owners.get(ctx.params.id) === ctx.params.sender_id
						? warehouse(ctx.params.sender_id, { id: ctx.params.id })
						: null,
			}),
		]));
	});
	after(async () => {
		await broker?.stop();
	});

	/** A fresh account with one warehouse of its own. */
	const account = async () => {
		const s = next++;
		const wh = 8_000_000 + s;
		owners.set(wh, s);
		return { s, wh, token: await idp.tokenFor(s) };
	};

	const csv = (ref: string) =>
		Buffer.from(
			`${TEMPLATE_COLUMNS.join(",")}\n${TEMPLATE_COLUMNS.map((c) => (c === "customer_order_no" ? ref : TEMPLATE_EXAMPLE[c])).join(",")}\n`,
		);
	const line = Buffer.from(`${"x".repeat(1023)}\n`);
	const big = Buffer.concat([Buffer.alloc(MB25, line), Buffer.from("x")]);
	assert.equal(big.length, MB25 + 1);

	interface Answer {
		status: number;
		body: { error?: string; message?: string; details?: string[]; job_id?: number; status?: string };
		text: string;
	}

	/** POSTs `parts` (in that order) to /v1/intake/bulk`query` as `token`. */
	async function send(token: string, parts: Part[], query = ""): Promise<Answer> {
		const boundary = `----msa${randomBytes(8).toString("hex")}`;
		const r = await fetch(`${base}/v1/intake/bulk${query}`, {
			method: "POST",
			headers: {
				authorization: `Bearer ${token}`,
				"content-type": `multipart/form-data; boundary=${boundary}`,
			},
			body: multipartBody(parts, boundary),
		});
		const text = await r.text();
		let body: Answer["body"] = {};
		try {
			body = JSON.parse(text);
		} catch {}
		return { status: r.status, body, text: text.slice(0, 300) };
	}

	/** Rows of the bulk tables (all accounts) and the account's orders. */
	async function counts(s: number): Promise<Record<string, number>> {
		const [r] = await select<Record<string, string>>(
			getSequelize(),
			`SELECT (SELECT count(*) FROM intake.bulk_jobs) AS jobs,
				(SELECT count(*) FROM intake.bulk_jobs WHERE sender_id = $1) AS own_jobs,
				(SELECT count(*) FROM intake.bulk_files) AS parts,
				(SELECT count(*) FROM intake.bulk_rows) AS rows,
				(SELECT count(*) FROM intake.orders WHERE sender_id = $1) AS orders`,
			[s],
		);
		return Object.fromEntries(Object.entries(r).map(([k, v]) => [k, Number(v)]));
	}

	/** Asserts `answer` is the refusal `status` / `error` and nothing was stored by it. */
	async function refusedLeavingNothing(
		s: number,
		what: string,
		run: () => Promise<Answer>,
		status: number,
		error: string,
	): Promise<Answer> {
		const before = await counts(s);
		const a = await run();
		assert.equal(a.status, status, `${what}: ${a.text}`);
		assert.equal(a.body.error, error, `${what}: ${a.text}`);
		assert.deepEqual(await counts(s), before, `${what}: a refused upload stores nothing`);
		assert.equal(before.own_jobs, 0, what);
		return a;
	}

	const field = (v: string | number): Part => ({ name: "sender_address_id", value: String(v) });
	const file = (bytes: Buffer, filename = "orders.csv"): Part => ({
		name: "import_file",
		filename,
		type: "text/csv",
		bytes,
	});

	/** The three places `sender_address_id` may be sent, with the file `f`. */
	const orders = (wh: number, f: Part): Array<[string, Part[], string]> => [
		["field first", [field(wh), f], ""],
		["file first", [f, field(wh)], ""],
		["query", [f], `?sender_address_id=${wh}`],
	];

	it("file first, field first and the query form are all accepted (202, the job stores the warehouse)", async () => {
		const a = await account();
		for (const [what, parts, query] of orders(a.wh, file(csv(`P-${a.s}`)))) {
			const before = await counts(a.s);
			const r = await send(a.token, parts, query);
			assert.equal(r.status, 202, `${what}: ${r.text}`);
			assert.equal(r.body.status, "queued");
			const [job] = await select<{ sender_address_id: string; file_name: string; size_bytes: string }>(
				getSequelize(),
				"SELECT sender_address_id, file_name, size_bytes FROM intake.bulk_jobs WHERE job_id = $1 AND sender_id = $2",
				[r.body.job_id, a.s],
			);
			assert.equal(Number(job.sender_address_id), a.wh, what);
			assert.equal(job.file_name, "orders.csv");
			assert.equal(Number(job.size_bytes), csv(`P-${a.s}`).length);
			const after = await counts(a.s);
			assert.equal(after.own_jobs, before.own_jobs + 1, what);
			assert.equal(after.parts, before.parts + 1, what);
		}
	});

	it("a browser FormData with the file appended first (curl -F import_file=@… -F sender_address_id=…) is accepted", async () => {
		const a = await account();
		const form = new FormData();
		form.append("import_file", new Blob([csv(`F-${a.s}`)], { type: "text/csv" }), "orders.csv");
		form.append("sender_address_id", String(a.wh));
		const r = await fetch(`${base}/v1/intake/bulk`, {
			method: "POST",
			headers: { authorization: `Bearer ${a.token}` },
			body: form,
		});
		assert.equal(r.status, 202, await r.text());
	});

	it("missing sender_address_id: 400 with today's message, in any order; with a 25 MB + 1 byte file 413 file_too_large wins; nothing stored", async () => {
		const a = await account();
		for (const parts of [[file(csv("M1"))], [file(csv("M2")), { name: "note", value: "x" }]]) {
			const r = await refusedLeavingNothing(
				a.s,
				"missing",
				() => send(a.token, parts),
				400,
				"sender_address_id (pickup warehouse) required",
			);
			assert.equal(r.body.message, "sender_address_id (pickup warehouse) required");
		}
		await refusedLeavingNothing(a.s, "missing, big", () => send(a.token, [file(big)]), 413, "file_too_large");
	});

	it("another account's warehouse: 400 invalid_pickup_address in every order; with 25 MB + 1 byte 413 wins; nothing stored", async () => {
		const a = await account();
		const other = await account();
		for (const [what, parts, query] of orders(other.wh, file(csv(`W-${a.s}`)))) {
			await refusedLeavingNothing(
				a.s,
				what,
				() => send(a.token, parts, query),
				400,
				"invalid_pickup_address",
			);
		}
		for (const [what, parts, query] of orders(other.wh, file(big))) {
			await refusedLeavingNothing(
				a.s,
				`${what}, big`,
				() => send(a.token, parts, query),
				413,
				"file_too_large",
			);
		}
	});

	it("the caller's own warehouse with a 25 MB + 1 byte file: 413 file_too_large in every order, nothing stored; the server still answers", async () => {
		const a = await account();
		for (const [what, parts, query] of orders(a.wh, file(big))) {
			const r = await refusedLeavingNothing(
				a.s,
				`${what}, big`,
				() => send(a.token, parts, query),
				413,
				"file_too_large",
			);
			assert.match(r.body.message ?? "", /26214400/);
		}
		assert.equal((await http(base, "GET", "/v1/intake/jobs", { token: a.token })).status, 200);
	});

	it("sender_address_id in the query and in the form: 400 ambiguous_parameter (same value too); twice in the form: 400; nothing stored", async () => {
		const a = await account();
		const f = file(csv("A1"));
		const other = await account();
		for (const [what, parts, query] of [
			["different", [f, field(other.wh)], `?sender_address_id=${a.wh}`],
			["same", [field(a.wh), f], `?sender_address_id=${a.wh}`],
			["twice in the form", [field(a.wh), f, field(a.wh)], ""],
		] as Array<[string, Part[], string]>) {
			const r = await refusedLeavingNothing(
				a.s,
				what,
				() => send(a.token, parts, query),
				400,
				"ambiguous_parameter",
			);
			assert.match(r.body.message ?? "", /'sender_address_id' is given/);
		}
	});

	it("(issue 31) a control character in the file name, a field value or a field name: 400 validation_failed, never 500; nothing stored", async () => {
		const a = await account();
		const cases: Array<[string, Part[], RegExp]> = [
			[
				"NUL in the file name",
				[field(a.wh), file(csv("C1"), "ord\u0000ers.csv")],
				/^import_file: file name must not contain control characters$/,
			],
			[
				"ESC in the file name",
				[file(csv("C2"), "ord\u001bers.csv"), field(a.wh)],
				/^import_file: file name must not contain control characters$/,
			],
			[
				"NUL in the warehouse",
				[file(csv("C3")), field(`${a.wh}\u0000`)],
				/^sender_address_id: value must not contain control characters$/,
			],
			[
				"NUL in a field name",
				[field(a.wh), { name: "no\u0000te", value: "x" }, file(csv("C4"))],
				/^form field: field name must not contain control characters$/,
			],
		];
		for (const [what, parts, detail] of cases) {
			const r = await refusedLeavingNothing(a.s, what, () => send(a.token, parts), 400, "validation_failed");
			assert.match(r.body.details?.[0] ?? "", detail, `${what}: ${r.text}`);
		}
	});

	it("a malformed body, two files, no file, not multipart: 400 invalid_multipart / import_file_required; nothing stored", async () => {
		const a = await account();
		const boundary = "----msa-cut";
		const cut = multipartBody([file(csv("B1")), field(a.wh)], boundary);
		await refusedLeavingNothing(
			a.s,
			"body cut before its closing boundary",
			async () => {
				const r = await fetch(`${base}/v1/intake/bulk`, {
					method: "POST",
					headers: {
						authorization: `Bearer ${a.token}`,
						"content-type": `multipart/form-data; boundary=${boundary}`,
					},
					body: cut.subarray(0, cut.length - 40),
				});
				const text = await r.text();
				return { status: r.status, body: JSON.parse(text), text };
			},
			400,
			"invalid_multipart",
		);
		await refusedLeavingNothing(
			a.s,
			"two files",
			() => send(a.token, [file(csv("B2")), file(csv("B3")), field(a.wh)]),
			400,
			"invalid_multipart",
		);
		await refusedLeavingNothing(
			a.s,
			"no file",
			() => send(a.token, [field(a.wh)]),
			400,
			"import_file_required",
		);
		await refusedLeavingNothing(
			a.s,
			"JSON",
			async () => {
				const r = await http(base, "POST", "/v1/intake/bulk", { token: a.token, body: { a: 1 } });
				return { status: r.status, body: r.body as Answer["body"], text: r.text };
			},
			400,
			"invalid_multipart",
		);
	});

	it("a body that passes 26 MB outside any part (a junk preamble before the first boundary): 413 file_too_large, nothing stored", async () => {
		const a = await account();
		const boundary = "----msa-preamble";
		const body = Buffer.concat([
			Buffer.alloc(MB25 + 1024 * 1024 + 1, 0x61),
			Buffer.from("\r\n"),
			multipartBody([file(csv(`J-${a.s}`)), field(a.wh)], boundary),
		]);
		await refusedLeavingNothing(
			a.s,
			"junk preamble",
			async () => {
				const r = await fetch(`${base}/v1/intake/bulk`, {
					method: "POST",
					headers: {
						authorization: `Bearer ${a.token}`,
						"content-type": `multipart/form-data; boundary=${boundary}`,
					},
					body,
				});
				const text = await r.text();
				return { status: r.status, body: JSON.parse(text), text: text.slice(0, 300) };
			},
			413,
			"file_too_large",
		);
	});

	it("a client that goes away mid-upload (file first, field never sent) leaves nothing; the server still answers", async () => {
		const a = await account();
		const before = await counts(a.s);
		uploadErrors.length = 0;
		const boundary = "----msa-abort";
		const head = Buffer.from(
			`--${boundary}\r\nContent-Disposition: form-data; name="import_file"; filename="orders.csv"\r\nContent-Type: text/csv\r\n\r\n`,
		);
		await new Promise<void>((resolve) => {
			const req = request(`${base}/v1/intake/bulk`, {
				method: "POST",
				headers: {
					authorization: `Bearer ${a.token}`,
					"content-type": `multipart/form-data; boundary=${boundary}`,
					"content-length": String(head.length + 4 * 1024 * 1024),
				},
			});
			req.on("error", () => resolve());
			req.on("response", (res) => {
				res.resume();
				resolve();
			});
			req.write(head);
			req.write(Buffer.alloc(1024 * 1024, line), () => setTimeout(() => req.destroy(), 100));
		});
		// intake saw the body end early and refused it (the action ended, it does not wait forever); nothing stored
		await eventually(() => uploadErrors.includes("invalid_multipart"), {
			what: "the upload action refused the cut body",
			ms: 10_000,
			diagnose: async () => uploadErrors,
		});
		assert.deepEqual(await counts(a.s), before);
		const r = await send(a.token, [file(csv(`Z-${a.s}`)), field(a.wh)]);
		assert.equal(r.status, 202, r.text);
	});
});
