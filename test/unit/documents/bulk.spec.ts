/**
 * documents.labels (spec §4.4 `POST /v1/documents/label`, §7): bulk labels as ONE PDF, pages in the
 * requested order (each page's AWB text and barcodes read back with poppler + zbarimg), fonts embedded
 * once, all-or-nothing errors, stamps. Fakes and tools: ./setup.ts.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PDFDict, PDFDocument, PDFName, rgb } from "pdf-lib";
import { recordCourierLabel } from "../../../lib/documents/store";
import { getSequelize } from "../../../lib/platform/db";
import { errorBodyOf } from "../../../lib/platform/errors";
import { as, newSender, rejects } from "../../helpers/broker";
import { callAs } from "../../helpers/call";
import {
	book,
	bookedOrder,
	broker,
	labelRows,
	orderRecord,
	requireTools,
	useDocuments,
	warehouseRow,
} from "./setup";

let dir: string;

/** `documents.labels` as `sender` with `body` as the JSON body's fields: the bytes and the response meta. */
async function bulk(sender: number, body: Record<string, unknown>) {
	const opts = as(sender);
	const pdf = (await callAs(broker(), "documents.labels", body, opts)) as Buffer;
	return { pdf, meta: opts.meta as Record<string, any> };
}

/** `documents.labels` expected to fail: the contract status and body. */
async function bulkFailure(sender: number, body: Record<string, unknown>) {
	const err = await rejects(() => callAs(broker(), "documents.labels", body, as(sender)));
	const out = errorBodyOf(err);
	assert.ok(out, `expected an ApiError, got ${err}`);
	return out;
}

/** Text of page `n` (1-based) as pdftotext extracts it. */
function pageText(pdf: Buffer, n: number, name: string): string {
	const file = join(dir, `${name}.pdf`);
	writeFileSync(file, pdf);
	const r = spawnSync("pdftotext", ["-f", String(n), "-l", String(n), "-layout", file, "-"], {
		encoding: "utf8",
	});
	assert.equal(r.status, 0, `pdftotext failed: ${r.stderr}`);
	return r.stdout;
}

/** Every Code128 value zbarimg decodes on page `n` (1-based) rendered at 300 dpi. */
function pageBarcodes(pdf: Buffer, n: number, name: string): string[] {
	const file = join(dir, `${name}.pdf`);
	writeFileSync(file, pdf);
	const png = join(dir, `${name}-p${n}`);
	const r = spawnSync(
		"pdftoppm",
		["-r", "300", "-f", String(n), "-l", String(n), "-png", "-singlefile", file, png],
		{
			encoding: "utf8",
		},
	);
	assert.equal(r.status, 0, `pdftoppm failed: ${r.stderr}`);
	const z = spawnSync("zbarimg", ["--raw", "-q", "-Sdisable", "-Scode128.enable", `${png}.png`], {
		encoding: "utf8",
	});
	assert.equal(z.status, 0, `zbarimg found no barcode on page ${n} (status ${z.status}): ${z.stderr}`);
	return z.stdout.split("\n").filter(Boolean);
}

/** The embedded font descriptors' names (`/NotoSans…`) of a PDF. */
async function fontNames(pdf: Buffer): Promise<string[]> {
	const doc = await PDFDocument.load(pdf);
	return doc.context
		.enumerateIndirectObjects()
		.map(([, obj]) => obj)
		.filter(
			(o): o is PDFDict => o instanceof PDFDict && o.get(PDFName.of("Type")) === PDFName.of("FontDescriptor"),
		)
		.map((d) => String(d.get(PDFName.of("FontName"))));
}

describe("documents.labels (POST /v1/documents/label)", () => {
	useDocuments();
	before(() => {
		dir = mkdtempSync(join(tmpdir(), "msa-bulk-"));
	});
	after(() => rmSync(dir, { recursive: true, force: true }));

	describe("200 ONE PDF", () => {
		it("puts the pages in the requested order: each page's AWB text and barcodes read back", async function () {
			requireTools(this, ["pdftotext", "pdftoppm", "zbarimg"]);
			const sender = newSender();
			const w1 = warehouseRow(sender);
			const w2 = warehouseRow(sender, { pickup: { warehouse_name: "Second Pune Hub" } });
			const made = [w1, w2, w1, w2].map((w, i) => {
				const o = orderRecord(sender, { pickup_address_id: w.id, customer_order_no: `BULK-${i}-${w.id}` });
				return {
					order: o,
					shipment: book(o, { awb_number: `${9 - i}${String(o.order_id).padStart(12, "0")}` }),
				};
			});
			// requested order is neither creation nor AWB order
			const requested = [made[2], made[0], made[3], made[1]];
			const { pdf, meta } = await bulk(sender, { order_ids: requested.map((m) => m.order.order_id) });
			const doc = await PDFDocument.load(pdf);
			assert.equal(doc.getPageCount(), 4);
			for (const [i, m] of requested.entries()) {
				assert.deepEqual(doc.getPage(i).getSize(), { width: 288, height: 432 });
				const text = pageText(pdf, i + 1, "order");
				assert.ok(
					text.includes(`AWB ${m.shipment.awb_number}`),
					`page ${i + 1} is not ${m.shipment.awb_number}:\n${text}`,
				);
				for (const other of requested.filter((x) => x !== m))
					assert.ok(
						!text.includes(other.shipment.awb_number),
						`page ${i + 1} also holds ${other.shipment.awb_number}`,
					);
				assert.deepEqual(
					pageBarcodes(pdf, i + 1, "order").sort(),
					[m.shipment.awb_number, m.order.customer_order_no].sort(),
				);
			}
			assert.equal(meta.$responseType, "application/pdf");
			assert.deepEqual(meta.$responseHeaders, {
				"Content-Disposition": 'inline; filename="labels-4.pdf"',
				"Cache-Control": "private, no-store",
			});
		});

		it("embeds each font once for the whole batch (not once per label), subset", async () => {
			const sender = newSender();
			const ids = Array.from(
				{ length: 12 },
				() => bookedOrder(sender, { payment_mode: "cod" }).order.order_id,
			);
			const { pdf } = await bulk(sender, { order_ids: ids });
			const names = await fontNames(pdf);
			assert.equal(names.length, 2, `fonts: ${names.join(", ")}`);
			assert.ok(names.some((n) => n.startsWith("/NotoSansDevanagari-Regular")));
			assert.ok(names.some((n) => n.startsWith("/NotoSansDevanagari-Bold")));
			// one label is ≈ 25 kB, mostly the two font subsets; 12 merged ones would be ≈ 300 kB
			assert.ok(pdf.length < 12 * 12_000, `12 labels take ${pdf.length} bytes: fonts repeated?`);
		});

		it("stamps label_downloaded_at of every order in the batch", async () => {
			const sender = newSender();
			const a = bookedOrder(sender);
			const b = bookedOrder(sender);
			const before = Date.now();
			await bulk(sender, { order_ids: [a.order.order_id, b.order.order_id] });
			for (const m of [a, b]) {
				const rows = await labelRows(m.order.order_id);
				assert.equal(rows.length, 1);
				assert.equal(rows[0].awb_number, m.shipment.awb_number);
				assert.equal(rows[0].download_count, 1);
				assert.ok(rows[0].label_downloaded_at.getTime() >= before - 1000);
			}
		});

		it("drops duplicates (first position kept) and accepts digit strings", async function () {
			requireTools(this, ["pdftotext"]);
			const sender = newSender();
			const a = bookedOrder(sender);
			const b = bookedOrder(sender);
			const ids = [String(b.order.order_id), a.order.order_id, b.order.order_id, String(a.order.order_id)];
			const { pdf, meta } = await bulk(sender, { order_ids: ids });
			const doc = await PDFDocument.load(pdf);
			assert.equal(doc.getPageCount(), 2);
			assert.ok(pageText(pdf, 1, "dupes").includes(`AWB ${b.shipment.awb_number}`));
			assert.ok(pageText(pdf, 2, "dupes").includes(`AWB ${a.shipment.awb_number}`));
			assert.match(meta.$responseHeaders["Content-Disposition"], /filename="labels-2\.pdf"/);
			assert.equal((await labelRows(b.order.order_id))[0].download_count, 1);
		});

		it("accepts exactly 200 orders: 200 pages", async () => {
			const sender = newSender();
			const w = warehouseRow(sender);
			const ids = Array.from({ length: 200 }, () => {
				const o = orderRecord(sender, { pickup_address_id: w.id });
				book(o);
				return o.order_id;
			});
			const { pdf } = await bulk(sender, { order_ids: ids });
			assert.equal((await PDFDocument.load(pdf)).getPageCount(), 200);
		});

		it("places a captured courier-issued label as it came (its PDF pages), in its position", async function () {
			requireTools(this, ["pdftotext"]);
			const sender = newSender();
			const a = bookedOrder(sender);
			const c = bookedOrder(sender);
			const courierDoc = await PDFDocument.create();
			courierDoc
				.addPage([300, 450])
				.drawText("COURIER OWN LABEL XYZ", { x: 20, y: 200, size: 14, color: rgb(0, 0, 0) });
			await recordCourierLabel(getSequelize(), {
				order_id: c.order.order_id,
				sender_id: sender,
				awb_number: c.shipment.awb_number,
				logistic_id: c.shipment.logistic_id,
				file: Buffer.from(await courierDoc.save()),
				content_type: "application/pdf",
			});
			const { pdf } = await bulk(sender, { order_ids: [c.order.order_id, a.order.order_id] });
			const doc = await PDFDocument.load(pdf);
			assert.equal(doc.getPageCount(), 2);
			assert.deepEqual(doc.getPage(0).getSize(), { width: 300, height: 450 });
			assert.ok(pageText(pdf, 1, "courier").includes("COURIER OWN LABEL XYZ"));
			assert.ok(pageText(pdf, 2, "courier").includes(`AWB ${a.shipment.awb_number}`));
			assert.equal((await labelRows(c.order.order_id))[0].download_count, 1);
		});
	});

	describe("400 {message} (§7 documents exception)", () => {
		const cases: Array<[string, Record<string, unknown>, string]> = [
			["no order_ids", {}, "order_ids is required: an array of 1 to 200 positive integers"],
			[
				"order_ids not an array",
				{ order_ids: "1,2" },
				"order_ids is required: an array of 1 to 200 positive integers",
			],
			[
				"order_ids null",
				{ order_ids: null },
				"order_ids is required: an array of 1 to 200 positive integers",
			],
			["an empty array", { order_ids: [] }, "order_ids must not be empty"],
			["201 ids", { order_ids: Array.from({ length: 201 }, (_, i) => i + 1) }, "max 200 orders per request"],
			[
				"201 elements, even invalid ones",
				{ order_ids: Array.from({ length: 201 }, () => "x") },
				"max 200 orders per request",
			],
			["a zero", { order_ids: [1, 0] }, "order_ids[1] must be a positive integer"],
			["a negative id", { order_ids: [-3] }, "order_ids[0] must be a positive integer"],
			["a fraction", { order_ids: [2, 3, 1.5] }, "order_ids[2] must be a positive integer"],
			["a word", { order_ids: ["abc"] }, "order_ids[0] must be a positive integer"],
			["a padded string", { order_ids: [" 7"] }, "order_ids[0] must be a positive integer"],
			["null", { order_ids: [5, null] }, "order_ids[1] must be a positive integer"],
			["an object", { order_ids: [{ id: 5 }] }, "order_ids[0] must be a positive integer"],
			[
				"an unsafe integer",
				{ order_ids: ["99999999999999999999"] },
				"order_ids[0] must be a positive integer",
			],
		];
		for (const [what, body, message] of cases) {
			it(`${what} → 400 {message:"${message}"}`, async () => {
				const { status, body: answer } = await bulkFailure(newSender(), body);
				assert.equal(status, 400);
				assert.deepEqual(answer, { message });
			});
		}
	});

	describe("the whole batch fails: no PDF, no stamp", () => {
		it("404 {message} naming every missing or foreign id, in request order (identical answers)", async () => {
			const sender = newSender();
			const other = newSender();
			const mine = bookedOrder(sender);
			const foreign = bookedOrder(other);
			const missingId = foreign.order.order_id + 1_000_000;
			const { status, body } = await bulkFailure(sender, {
				order_ids: [missingId, mine.order.order_id, foreign.order.order_id],
			});
			assert.equal(status, 404);
			assert.deepEqual(body, { message: `orders not found: ${missingId}, ${foreign.order.order_id}` });
			assert.equal((await labelRows(mine.order.order_id)).length, 0);
			assert.equal((await labelRows(foreign.order.order_id)).length, 0);
		});

		it("404 wins over 409: a missing id and an unbooked one answer 404", async () => {
			const sender = newSender();
			const unbooked = orderRecord(sender, { pickup_address_id: warehouseRow(sender).id });
			const { status, body } = await bulkFailure(sender, { order_ids: [unbooked.order_id, 987_654_321] });
			assert.equal(status, 404);
			assert.deepEqual(body, { message: "orders not found: 987654321" });
		});

		it("409 {code:'not_ready_to_ship', message, order_ids} listing the orders without a live booked shipment", async () => {
			const sender = newSender();
			const ok = bookedOrder(sender);
			const w = warehouseRow(sender);
			const unbooked = orderRecord(sender, { pickup_address_id: w.id });
			const inProgress = orderRecord(sender, { pickup_address_id: w.id });
			book(inProgress, { state: "booking_in_progress" });
			const { status, body } = await bulkFailure(sender, {
				order_ids: [inProgress.order_id, ok.order.order_id, unbooked.order_id],
			});
			assert.equal(status, 409);
			assert.deepEqual(body, {
				code: "not_ready_to_ship",
				message: `orders not booked yet: ${inProgress.order_id}, ${unbooked.order_id}`,
				order_ids: [inProgress.order_id, unbooked.order_id],
			});
			assert.equal((await labelRows(ok.order.order_id)).length, 0);
		});

		it("409 {code:'carrier_label_missing', message, order_ids} for courier-issued labels never captured", async () => {
			const sender = newSender();
			const ok = bookedOrder(sender);
			const recorded = bookedOrder(sender);
			await recordCourierLabel(getSequelize(), {
				order_id: recorded.order.order_id,
				sender_id: sender,
				awb_number: recorded.shipment.awb_number,
				logistic_id: recorded.shipment.logistic_id,
				file: null,
			});
			const flagged = orderRecord(sender, { pickup_address_id: warehouseRow(sender).id });
			book(flagged, { courier_label: true });
			const { status, body } = await bulkFailure(sender, {
				order_ids: [ok.order.order_id, flagged.order_id, recorded.order.order_id],
			});
			assert.equal(status, 409);
			assert.equal(body.code, "carrier_label_missing");
			assert.deepEqual(body.order_ids, [flagged.order_id, recorded.order.order_id]);
			assert.match(String(body.message), new RegExp(`${flagged.order_id}, ${recorded.order.order_id}$`));
			assert.deepEqual(Object.keys(body).sort(), ["code", "message", "order_ids"]);
			assert.equal((await labelRows(ok.order.order_id)).length, 0);
			// one of them recorded missing: a retry cannot help, no retry_after
			const err = await rejects(() =>
				callAs(
					broker(),
					"documents.labels",
					{ order_ids: [flagged.order_id, recorded.order.order_id] },
					as(sender),
				),
			);
			assert.equal((err as { data?: { retry_after?: unknown } }).data?.retry_after, undefined);
			// every one pending (no capture recorded yet): retry_after 1 (the gateway's Retry-After)
			const pending = await rejects(() =>
				callAs(
					broker(),
					"documents.labels",
					{ order_ids: [ok.order.order_id, flagged.order_id] },
					as(sender),
				),
			);
			assert.equal((pending as { data?: { retry_after?: unknown } }).data?.retry_after, 1);
			assert.deepEqual(errorBodyOf(pending)?.body, {
				code: "carrier_label_missing",
				message: `the courier issues its own label for these orders and it has not been captured yet; retry shortly: ${flagged.order_id}`,
				order_ids: [flagged.order_id],
			});
		});

		it("401 without an authenticated caller", async () => {
			const err = await rejects(() => callAs(broker(), "documents.labels", { order_ids: [1] }));
			assert.equal(errorBodyOf(err)?.status, 401);
		});
	});
});
