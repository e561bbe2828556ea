/**
 * documents.manifest (spec §4.4 `POST /v1/documents/manifest`, §3 manifest row, §7
 * `not_ready_to_ship` / `already_manifested`): the handover PDF (headers, rows, totals,
 * barcodes), input rules, 404, both 409s, the concurrent race, the outbox to
 * booking.markManifested (delivery and redelivery), and the re-print route.
 * Fakes and tools: ./setup.ts (a fake booking records markManifested calls).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PDFDict, PDFDocument, PDFName } from "pdf-lib";
import type { OrderRecord } from "../../../lib/contracts";
import { type ManifestSection, renderManifest } from "../../../lib/documents/manifest";
import { getSequelize, select } from "../../../lib/platform/db";
import { errorBodyOf } from "../../../lib/platform/errors";
import { as, newSender, rejects } from "../../helpers/broker";
import { callAs } from "../../helpers/call";
import { eventually } from "../../helpers/poll";
import {
	book,
	bookedOrder,
	broker,
	markManifestedCalls,
	markManifestedFaults,
	orderRecord,
	requireTools,
	useDocuments,
	warehouseRow,
} from "./setup";

interface Answer {
	pdf: Buffer;
	headers: Record<string, string>;
	type: string;
}

async function manifest(sender: number, order_ids: unknown): Promise<Answer> {
	const opts = as(sender);
	const pdf = (await callAs(broker(), "documents.manifest", { order_ids }, opts)) as Buffer;
	const meta = opts.meta as Record<string, any>;
	return { pdf, headers: meta.$responseHeaders, type: meta.$responseType };
}

async function manifestFailure(sender: number, order_ids: unknown) {
	const err = await rejects(() => callAs(broker(), "documents.manifest", { order_ids }, as(sender)));
	const out = errorBodyOf(err);
	assert.ok(out, `expected an ApiError, got ${err}`);
	return out;
}

let dir: string;

/** Every page's text (pdftotext -layout). */
function allText(pdf: Buffer, name: string): string {
	const file = join(dir, `${name}.pdf`);
	writeFileSync(file, pdf);
	const r = spawnSync("pdftotext", ["-layout", file, "-"], { encoding: "utf8" });
	assert.equal(r.status, 0, `pdftotext failed: ${r.stderr}`);
	return r.stdout;
}

/** Renders every page at 300 dpi and answers every Code128 value zbarimg decodes, page by page. */
function allBarcodes(pdf: Buffer, name: string): string[] {
	const file = join(dir, `${name}.pdf`);
	writeFileSync(file, pdf);
	const prefix = join(dir, `${name}-p`);
	const r = spawnSync("pdftoppm", ["-r", "300", "-gray", "-png", file, prefix], { encoding: "utf8" });
	assert.equal(r.status, 0, `pdftoppm failed: ${r.stderr}`);
	const pages = readdirSync(dir)
		.filter((f) => f.startsWith(`${name}-p`) && f.endsWith(".png"))
		.sort();
	const out: string[] = [];
	for (const p of pages) {
		const z = spawnSync("zbarimg", ["--raw", "-q", "-Sdisable", "-Scode128.enable", join(dir, p)], {
			encoding: "utf8",
		});
		if (z.status === 0) out.push(...z.stdout.split("\n").filter(Boolean));
	}
	return out;
}

/** Today's date in IST as yyyymmdd. */
function istToday(): string {
	const d = new Date(Date.now() + 330 * 60_000);
	return d.toISOString().slice(0, 10).replace(/-/g, "");
}

/** A booked forward order of `sender` from warehouse `wid`. */
function ready(sender: number, wid: number, over: Partial<OrderRecord> = {}, product = {}) {
	const o = orderRecord(sender, { pickup_address_id: wid, ...over }, product);
	const s = book(o);
	return { order: o, shipment: s };
}

const db = () => getSequelize();

async function liveParcels(awbs: string[]) {
	return select<{ awb_number: string; manifest_no: string; order_id: string }>(
		db(),
		`SELECT p.awb_number, m.manifest_no, p.order_id FROM documents.manifest_parcels p
		JOIN documents.manifests m ON m.id = p.manifest_id WHERE p.live AND p.awb_number = ANY($1::text[])`,
		[awbs],
	);
}

async function outboxOf(manifest_no: string) {
	return select<{
		id: string;
		tries: number;
		delivered_at: Date | null;
		last_error: string | null;
		payload: any;
	}>(
		db(),
		"SELECT id, tries, delivered_at, last_error, payload FROM documents.outbox WHERE payload->>'manifest_no' = $1",
		[manifest_no],
	);
}

describe("documents.manifest (POST /v1/documents/manifest)", () => {
	const saved: Record<string, string | undefined> = {};
	before(() => {
		// a quick relay and backoff, so redelivery is observable within the test (read at service start)
		for (const [k, v] of Object.entries({ DOCUMENTS_RELAY_MS: "100", DOCUMENTS_RELAY_BACKOFF_MS: "100" })) {
			saved[k] = process.env[k];
			process.env[k] = v;
		}
		dir = mkdtempSync(join(tmpdir(), "msa-manifest-"));
	});
	useDocuments();
	after(() => {
		for (const [k, v] of Object.entries(saved)) {
			if (v === undefined) delete process.env[k];
			else process.env[k] = v;
		}
		rmSync(dir, { recursive: true, force: true });
	});

	describe("200 PDF", () => {
		it("answers one PDF with x-manifest-no / x-manifest-count, and stores the manifest, rows and outbox row", async () => {
			const sender = newSender();
			const w = warehouseRow(sender, { pickup: { warehouse_name: "Acme Pune Hub" } });
			const a = ready(sender, w.id, { payment_mode: "cod" }, { cod_amount: 1234.5, physical_weight: 1.25 });
			const b = ready(sender, w.id, {}, { physical_weight: 0.5 });
			const { pdf, headers, type } = await manifest(sender, [a.order.order_id, b.order.order_id]);
			assert.equal(type, "application/pdf");
			assert.equal(pdf.subarray(0, 5).toString("latin1"), "%PDF-");
			const no = headers["x-manifest-no"];
			assert.match(no, new RegExp(`^MF-${istToday()}-\\d{6,}$`));
			assert.equal(headers["x-manifest-count"], "2");
			assert.equal(headers["Content-Disposition"], `inline; filename="manifest-${no}.pdf"`);
			assert.equal(headers["Cache-Control"], "private, no-store");
			const doc = await PDFDocument.load(pdf);
			assert.deepEqual(
				doc.getPages().map((p) => p.getSize()),
				[{ width: 595.28, height: 841.89 }],
			);

			const [m] = await select<any>(db(), "SELECT * FROM documents.manifests WHERE manifest_no = $1", [no]);
			assert.equal(Number(m.sender_id), sender);
			assert.equal(m.courier_name, "Sandbox Express");
			assert.equal(Number(m.parcel_count), 2);
			assert.equal(Number(m.cod_total_paise), 123450);
			assert.equal(m.warehouse.name, "Acme Pune Hub");
			const rows = await select<any>(
				db(),
				"SELECT * FROM documents.manifest_parcels WHERE manifest_id = $1 ORDER BY position",
				[m.id],
			);
			assert.deepEqual(
				rows.map((r) => [Number(r.order_id), r.awb_number, Number(r.cod_paise), Number(r.weight_kg)]),
				[
					[a.order.order_id, a.shipment.awb_number, 123450, 1.25],
					[b.order.order_id, b.shipment.awb_number, 0, 0.5],
				],
			);
			const [ob] = await outboxOf(no);
			assert.deepEqual(ob.payload, {
				sender_id: sender,
				manifest_no: no,
				at: new Date(m.created_at).toISOString(),
				awb_numbers: [a.shipment.awb_number, b.shipment.awb_number],
			});
		});

		it("prints the header, one row per parcel and the totals (pdftotext)", async function () {
			requireTools(this, ["pdftotext"]);
			const sender = newSender();
			const w = warehouseRow(sender, {
				pickup: { warehouse_name: "Acme Pune Hub", address_1: "Plot 7, MIDC", address_2: "Bhosari" },
			});
			const a = ready(
				sender,
				w.id,
				{ payment_mode: "cod", customer_order_no: "ORD-A-1" },
				{ cod_amount: 1499, physical_weight: 0.75 },
			);
			a.order.consignee = { ...a.order.consignee, name: "Meena Iyer", pincode: "600001" };
			const b = ready(sender, w.id, { customer_order_no: "ORD-B-2" }, { physical_weight: 2 });
			b.order.consignee = { ...b.order.consignee, name: "Arjun Das", pincode: "700001" };
			const c = ready(
				sender,
				w.id,
				{ payment_mode: "cod", customer_order_no: "ORD-C-3" },
				{ cod_amount: 100000.5, physical_weight: 0.3 },
			);
			const { pdf, headers } = await manifest(sender, [a.order.order_id, b.order.order_id, c.order.order_id]);
			const text = allText(pdf, "rows");
			const no = headers["x-manifest-no"];
			assert.match(text, /COURIER HANDOVER MANIFEST/);
			assert.ok(text.includes(no), "manifest number");
			assert.match(text, /Courier: Sandbox Express/);
			assert.match(text, /Acme Pune Hub/);
			assert.match(text, /Plot 7, MIDC, Bhosari/);
			assert.match(text, /Pune, Maharashtra 411026/);
			const ist = new Intl.DateTimeFormat("en-IN", {
				timeZone: "Asia/Kolkata",
				day: "2-digit",
				month: "short",
				year: "numeric",
			}).format(new Date());
			assert.ok(text.includes(`Date: ${ist}`), `IST date ${ist} in ${text.slice(0, 400)}`);
			const line = (awb: string) => text.split("\n").find((l) => l.includes(awb)) ?? "";
			// the AWB text sits under its barcode; the row's cells on the line above or the same line
			const rowOf = (order_no: string) => text.split("\n").find((l) => l.includes(order_no)) ?? "";
			assert.match(rowOf("ORD-A-1"), /1\s+.*ORD-A-1\s+Meena Iyer\s+600001\s+0\.75\s+1,499\.00/);
			assert.match(rowOf("ORD-B-2"), /2\s+.*ORD-B-2\s+Arjun Das\s+700001\s+2\s+—/);
			assert.match(rowOf("ORD-C-3"), /3\s+.*ORD-C-3\s+Ram Kumar\s+560001\s+0\.3\s+1,00,000\.50/);
			for (const s of [a, b, c])
				assert.ok(line(s.shipment.awb_number), `AWB ${s.shipment.awb_number} printed`);
			assert.match(text, /Total parcels: 3/);
			assert.match(text, /Total COD: ₹1,01,499\.50/);
			assert.match(text, /COD parcels: 2\s+Prepaid parcels: 1/);
			assert.match(text, /Handed over by \(seller\)/);
			assert.match(text, /Received by \(courier pickup agent\)/);
			assert.match(text, new RegExp(`${no} · page 1 of 1`));
		});

		it("draws every AWB as a Code128 barcode that decodes, across pages (200 rows)", async function () {
			this.timeout(120_000);
			requireTools(this, ["pdftoppm", "zbarimg"]);
			const sender = newSender();
			const w = warehouseRow(sender);
			const orders = Array.from({ length: 200 }, () => ready(sender, w.id));
			const { pdf, headers } = await manifest(
				sender,
				orders.map((o) => o.order.order_id),
			);
			assert.equal(headers["x-manifest-count"], "200");
			const doc = await PDFDocument.load(pdf);
			assert.ok(doc.getPageCount() > 5, `pages: ${doc.getPageCount()}`);
			const decoded = allBarcodes(pdf, "bars");
			assert.deepEqual(
				[...decoded].sort(),
				orders.map((o) => o.shipment.awb_number).sort(),
				"every AWB decoded exactly once",
			);
		});

		it("makes one section (own manifest number, own pages) per courier and pickup warehouse", async () => {
			const sender = newSender();
			const w1 = warehouseRow(sender, { pickup: { warehouse_name: "Hub One" } });
			const w2 = warehouseRow(sender, { pickup: { warehouse_name: "Hub Two" } });
			const a = ready(sender, w1.id);
			const b = ready(sender, w2.id);
			const c = ready(sender, w1.id);
			const d = orderRecord(sender, { pickup_address_id: w1.id });
			const ds = book(d, { logistic_id: 202, courier_name: "Other Courier" });
			const ids = [a, b, c].map((x) => x.order.order_id);
			const { pdf, headers } = await manifest(sender, [ids[0], ids[1], d.order_id, ids[2]]);
			const nos = headers["x-manifest-no"].split(",");
			assert.equal(nos.length, 3);
			assert.equal(new Set(nos).size, 3);
			assert.equal(headers["x-manifest-count"], "4");
			const doc = await PDFDocument.load(pdf);
			assert.equal(doc.getPageCount(), 3);
			const stored = await liveParcels([a, b, c].map((x) => x.shipment.awb_number).concat(ds.awb_number));
			const by = new Map(stored.map((r) => [r.awb_number, r.manifest_no]));
			// order of first appearance: (Sandbox, Hub One), (Sandbox, Hub Two), (Other, Hub One)
			assert.equal(by.get(a.shipment.awb_number), nos[0]);
			assert.equal(by.get(c.shipment.awb_number), nos[0]);
			assert.equal(by.get(b.shipment.awb_number), nos[1]);
			assert.equal(by.get(ds.awb_number), nos[2]);
			if (spawnSync("pdftotext", ["-v"]).error) return;
			const text = allText(pdf, "sections");
			const pages = text.split("\f");
			assert.match(pages[0], /Hub One/);
			assert.match(pages[1], /Hub Two/);
			assert.match(pages[2], /Courier: Other Courier/);
		});

		it("prints consignee names in Indian scripts, mixed ones too, with each script's font embedded (no tofu)", async function () {
			requireTools(this, ["pdftotext"]);
			const sender = newSender();
			const w = warehouseRow(sender, { pickup: { warehouse_name: "गोदाम पुणे" } });
			const names = ["Ravi रवि ரவி", "অমিত দাস", "ಅನಿಲ್ ಕುಮಾರ್", "ਸਿਮਰਨ ਕੌਰ"];
			const orders = names.map((name) => {
				const o = ready(sender, w.id);
				o.order.consignee = { ...o.order.consignee, name };
				return o;
			});
			const { pdf } = await manifest(
				sender,
				orders.map((o) => o.order.order_id),
			);
			const doc = await PDFDocument.load(pdf);
			const fontNames = doc.context
				.enumerateIndirectObjects()
				.map(([, obj]) => obj)
				.filter(
					(o): o is PDFDict =>
						o instanceof PDFDict && o.get(PDFName.of("Type")) === PDFName.of("FontDescriptor"),
				)
				.map((d) => String(d.get(PDFName.of("FontName"))));
			for (const script of ["Devanagari", "Tamil", "Bengali", "Kannada", "Gurmukhi"])
				assert.ok(
					fontNames.some((f) => f.includes(script)),
					`${script} face embedded: ${fontNames.join(", ")}`,
				);
			const text = allText(pdf, "scripts").normalize("NFC");
			for (const name of [...names, "गोदाम पुणे"])
				assert.ok(text.includes(name.normalize("NFC")), `${name} in the text`);
		});

		it("drops duplicate ids (first position kept) and accepts digit strings", async () => {
			const sender = newSender();
			const w = warehouseRow(sender);
			const a = ready(sender, w.id);
			const b = ready(sender, w.id);
			const { headers } = await manifest(sender, [
				String(b.order.order_id),
				a.order.order_id,
				b.order.order_id,
			]);
			assert.equal(headers["x-manifest-count"], "2");
			const rows = await select<{ awb_number: string }>(
				db(),
				`SELECT p.awb_number FROM documents.manifest_parcels p JOIN documents.manifests m ON m.id = p.manifest_id
				WHERE m.manifest_no = $1 ORDER BY p.position`,
				[headers["x-manifest-no"]],
			);
			assert.deepEqual(
				rows.map((r) => r.awb_number),
				[b.shipment.awb_number, a.shipment.awb_number],
			);
		});
	});

	describe("layout (renderManifest)", () => {
		it("puts every row once and the totals and signatures once, after the last row, whatever the page breaks", async function () {
			requireTools(this, ["pdftotext"]);
			for (const n of [1, 11, 12, 16, 17, 35]) {
				const section: ManifestSection = {
					manifest_no: "MF-20261121-000042",
					courier_name: "Sandbox Express",
					warehouse: {
						name: "Hub",
						lines: ["Plot 7, MIDC", "Pune, Maharashtra 411026"],
						phone: "9123456780",
					},
					created_at: "2026-11-21T06:30:00.000Z",
					parcels: Array.from({ length: n }, (_, i) => ({
						awb_number: `AWB${String(i).padStart(6, "0")}`,
						order_no: `ORD-${i}`,
						consignee_name: "Ravi Kumar",
						pincode: "560001",
						weight_kg: 1,
						cod_amount: 10,
					})),
				};
				const pdf = Buffer.from(await renderManifest([section]));
				const pages = allText(pdf, `layout-${n}`)
					.split("\f")
					.filter((p) => p.trim());
				const all = pages.join("\n");
				for (const p of section.parcels)
					assert.equal(all.split(p.awb_number).length - 1, 1, `${n} rows: ${p.awb_number} printed once`);
				assert.equal(all.split("Total parcels").length - 1, 1, `${n} rows: totals once`);
				const last = pages.at(-1) ?? "";
				assert.match(last, new RegExp(`Total parcels: ${n}\\b`));
				assert.match(last, /Received by \(courier pickup agent\)/);
				assert.match(last, new RegExp(`Total COD: ₹${(10 * n).toLocaleString("en-IN")}\\.00`));
				assert.match(last, new RegExp(`page ${pages.length} of ${pages.length}`));
				// the totals come after the last row on that page
				const lastAwb = section.parcels[n - 1].awb_number;
				if (last.includes(lastAwb)) assert.ok(last.indexOf(lastAwb) < last.indexOf("Total parcels"));
				if (n === 1) assert.equal(pages.length, 1, "one row: one page");
				if (n === 35) assert.ok(pages.length >= 3, `35 rows: ${pages.length} pages`);
			}
		});
	});

	describe("400 / 404 (§7 documents exception: {message})", () => {
		it("answers 400 {message} for a missing, empty, oversized or malformed order_ids", async () => {
			const sender = newSender();
			const cases: Array<[unknown, string]> = [
				[undefined, "order_ids is required: an array of 1 to 200 positive integers"],
				["1,2", "order_ids is required: an array of 1 to 200 positive integers"],
				[[], "order_ids must not be empty"],
				[Array.from({ length: 201 }, (_, i) => i + 1), "max 200 orders per request"],
				[[1, 0], "order_ids[1] must be a positive integer"],
				[[1.5], "order_ids[0] must be a positive integer"],
				[["x"], "order_ids[0] must be a positive integer"],
				[[null], "order_ids[0] must be a positive integer"],
			];
			for (const [ids, message] of cases) {
				const { status, body } = await manifestFailure(sender, ids);
				assert.equal(status, 400, JSON.stringify(ids));
				assert.deepEqual(body, { message });
			}
		});

		it("answers 404 {message} when one order is another account's (same as a missing one), storing nothing", async () => {
			const sender = newSender();
			const other = newSender();
			const w = warehouseRow(sender);
			const mine = ready(sender, w.id);
			const theirs = bookedOrder(other);
			const missing = 987_654_321;
			const { status, body } = await manifestFailure(sender, [mine.order.order_id, theirs.order.order_id]);
			assert.equal(status, 404);
			assert.deepEqual(body, { message: `orders not found: ${theirs.order.order_id}` });
			const gone = await manifestFailure(sender, [mine.order.order_id, missing]);
			assert.deepEqual(gone, { status: 404, body: { message: `orders not found: ${missing}` } });
			assert.deepEqual(await liveParcels([mine.shipment.awb_number, theirs.shipment.awb_number]), []);
		});
	});

	describe("409", () => {
		it("not_ready_to_ship lists the not-ready orders and those already on a manifest", async () => {
			const sender = newSender();
			const w = warehouseRow(sender);
			const good = ready(sender, w.id);
			const earlier = ready(sender, w.id);
			const unbooked = orderRecord(sender, { pickup_address_id: w.id });
			const picked = ready(sender, w.id, { status: "picked_up" });
			const cancelled = ready(sender, w.id, { status: "cancelled" });
			const reverse = ready(sender, w.id, { direction: "reverse" });
			const first = await manifest(sender, [earlier.order.order_id]);
			const ids = [
				good.order.order_id,
				unbooked.order_id,
				earlier.order.order_id,
				picked.order.order_id,
				cancelled.order.order_id,
				reverse.order.order_id,
			];
			const { status, body } = await manifestFailure(sender, ids);
			assert.equal(status, 409);
			assert.deepEqual(body, {
				code: "not_ready_to_ship",
				message: "some packages are not ready to ship",
				order_ids: [
					unbooked.order_id,
					picked.order.order_id,
					cancelled.order.order_id,
					reverse.order.order_id,
				],
				already_manifested_order_ids: [earlier.order.order_id],
				reasons: {
					[unbooked.order_id]: "not_booked",
					[picked.order.order_id]: "past_pickup",
					[cancelled.order.order_id]: "cancelled",
					[reverse.order.order_id]: "reverse",
				},
			});
			// nothing stored: the ready one is still free, the earlier one on its first manifest only
			const rows = await liveParcels([good.shipment.awb_number, earlier.shipment.awb_number]);
			assert.deepEqual(
				rows.map((r) => [r.awb_number, r.manifest_no]),
				[[earlier.shipment.awb_number, first.headers["x-manifest-no"]]],
			);
		});

		it("already_manifested when every problem is an existing manifest", async () => {
			const sender = newSender();
			const w = warehouseRow(sender);
			const a = ready(sender, w.id);
			const b = ready(sender, w.id);
			const first = await manifest(sender, [a.order.order_id]);
			const { status, body } = await manifestFailure(sender, [b.order.order_id, a.order.order_id]);
			assert.equal(status, 409);
			assert.deepEqual(body, {
				code: "already_manifested",
				message: "one or more AWBs are already on a manifest",
				order_ids: [],
				already_manifested_order_ids: [a.order.order_id],
				manifest_nos: [first.headers["x-manifest-no"]],
			});
			assert.deepEqual(await liveParcels([b.shipment.awb_number]), []);
		});

		it("an AWB is the courier's: the same AWB at another courier (another account) is not 'already manifested'", async () => {
			const a = newSender();
			const b = newSender();
			const wa = warehouseRow(a);
			const wb = warehouseRow(b);
			const mine = ready(a, wa.id);
			const theirs = orderRecord(b, { pickup_address_id: wb.id });
			book(theirs, { logistic_id: 202, courier_name: "Other Courier", awb_number: mine.shipment.awb_number });
			const first = await manifest(a, [mine.order.order_id]);
			const second = await manifest(b, [theirs.order_id]);
			assert.notEqual(second.headers["x-manifest-no"], first.headers["x-manifest-no"]);
			const rows = await liveParcels([mine.shipment.awb_number]);
			assert.equal(rows.length, 2);
		});

		it("two concurrent manifests over overlapping orders: exactly one succeeds, rows consistent", async () => {
			for (let round = 0; round < 5; round++) {
				const sender = newSender();
				const w = warehouseRow(sender);
				const [a, b, c] = [ready(sender, w.id), ready(sender, w.id), ready(sender, w.id)];
				const settle = (ids: number[]) =>
					manifest(sender, ids).then(
						(r) => ({ ok: true as const, no: r.headers["x-manifest-no"] }),
						(err) => ({ ok: false as const, err: errorBodyOf(err) }),
					);
				const results = await Promise.all([
					settle([a.order.order_id, b.order.order_id]),
					settle([c.order.order_id, b.order.order_id]),
				]);
				const wins = results.filter((r) => r.ok);
				const losses = results.filter((r) => !r.ok);
				assert.equal(wins.length, 1, JSON.stringify(results));
				const loss = losses[0];
				assert.ok(!loss.ok);
				assert.equal(loss.err?.status, 409);
				assert.equal(loss.err?.body.code, "already_manifested");
				assert.deepEqual(loss.err?.body.already_manifested_order_ids, [b.order.order_id]);
				const winner = wins[0];
				assert.ok(winner.ok);
				const rows = await liveParcels([a, b, c].map((x) => x.shipment.awb_number));
				assert.equal(rows.length, 2, "only the winner's two parcels");
				assert.ok(rows.every((r) => r.manifest_no === winner.no));
				assert.ok(rows.some((r) => r.awb_number === b.shipment.awb_number));
				const [{ n }] = await select<{ n: string }>(
					db(),
					"SELECT count(*) AS n FROM documents.manifests WHERE sender_id = $1",
					[sender],
				);
				assert.equal(Number(n), 1, "the loser left no manifest");
			}
		});
	});

	describe("outbox → booking.markManifested", () => {
		it("delivers the manifest's AWBs to booking.markManifested and marks the row delivered", async () => {
			const sender = newSender();
			const w = warehouseRow(sender);
			const a = ready(sender, w.id);
			const b = ready(sender, w.id);
			const { headers } = await manifest(sender, [a.order.order_id, b.order.order_id]);
			const no = headers["x-manifest-no"];
			const calls = await eventually(() => markManifestedCalls.filter((c) => c.manifest_no === no), {
				what: "booking.markManifested call",
				ok: (v) => v.length > 0,
			});
			const [m] = await select<{ created_at: Date }>(
				db(),
				"SELECT created_at FROM documents.manifests WHERE manifest_no = $1",
				[no],
			);
			assert.deepEqual(calls[0], {
				sender_id: sender,
				manifest_no: no,
				at: m.created_at.toISOString(),
				awb_numbers: [a.shipment.awb_number, b.shipment.awb_number],
			});
			const [row] = await eventually(() => outboxOf(no), {
				what: "outbox row delivered",
				ok: (r) => r[0]?.delivered_at !== null,
			});
			assert.equal(row.last_error, null);
		});

		it("redelivers after a failure until booking acknowledges", async () => {
			const sender = newSender();
			const w = warehouseRow(sender);
			const a = ready(sender, w.id);
			markManifestedFaults.next = 2;
			try {
				const { headers } = await manifest(sender, [a.order.order_id]);
				const no = headers["x-manifest-no"];
				const [row] = await eventually(() => outboxOf(no), {
					what: "outbox row delivered after failures",
					ok: (r) => r[0]?.delivered_at !== null,
				});
				const calls = markManifestedCalls.filter((c) => c.manifest_no === no);
				assert.equal(calls.length, 3, "two failed deliveries, then the acknowledged one");
				assert.ok(calls.every((c) => c.awb_numbers[0] === a.shipment.awb_number));
				assert.equal(row.tries, 3);
				assert.equal(row.last_error, null);
			} finally {
				markManifestedFaults.next = 0;
			}
		});

		it("keeps an unacknowledged row undelivered with its error, then delivers it once booking answers", async () => {
			const sender = newSender();
			const w = warehouseRow(sender);
			const a = ready(sender, w.id);
			markManifestedFaults.next = 1_000;
			let no = "";
			try {
				({ "x-manifest-no": no } = (await manifest(sender, [a.order.order_id])).headers);
				const [row] = await eventually(() => outboxOf(no), {
					what: "two failed deliveries",
					ok: (r) => (r[0]?.tries ?? 0) >= 2,
				});
				assert.equal(row.delivered_at, null);
				assert.match(String(row.last_error), /markManifested failed/);
			} finally {
				markManifestedFaults.next = 0;
			}
			const [row] = await eventually(() => outboxOf(no), {
				what: "the row delivered once booking answers",
				ok: (r) => r[0]?.delivered_at !== null,
			});
			assert.equal(row.last_error, null);
		});
	});

	describe("GET /v1/documents/manifest/{manifestNo} (re-print)", () => {
		it("prints a stored manifest again with the same number and rows; 404 for another account or a bad number", async () => {
			const sender = newSender();
			const w = warehouseRow(sender);
			const a = ready(sender, w.id, { customer_order_no: "ORD-RE-1" });
			const { headers } = await manifest(sender, [a.order.order_id]);
			const no = headers["x-manifest-no"];
			const opts = as(sender);
			const pdf = (await callAs(broker(), "documents.manifestCopy", { manifestNo: no }, opts)) as Buffer;
			const meta = opts.meta as Record<string, any>;
			assert.equal(meta.$responseType, "application/pdf");
			assert.equal(meta.$responseHeaders["x-manifest-no"], no);
			assert.equal(meta.$responseHeaders["x-manifest-count"], "1");
			if (!spawnSync("pdftotext", ["-v"]).error) {
				const text = allText(pdf, "copy");
				assert.ok(text.includes(no));
				assert.ok(text.includes(a.shipment.awb_number));
				assert.match(text, /ORD-RE-1/);
			}
			for (const [who, manifestNo] of [
				[newSender(), no],
				[sender, "MF-1"],
				[sender, `${no}9`],
			] as const) {
				const err = await rejects(() => callAs(broker(), "documents.manifestCopy", { manifestNo }, as(who)));
				assert.deepEqual(errorBodyOf(err), { status: 404, body: { message: "not found" } });
			}
		});
	});
});
