/**
 * documents service, single label (spec §4.4 `GET /v1/documents/label/{orderId}`,
 * §7 documents exceptions). Real documents service + real PostgreSQL; intake,
 * booking and warehouses are small fakes faithful to lib/contracts.ts.
 *
 * The barcode and text checks render the PDF with poppler (`pdftoppm`,
 * `pdftotext`: Debian poppler-utils) and decode it with `zbarimg` (Debian
 * zbar-tools). CI must install them; when they are missing these tests FAIL,
 * unless MSA_SKIP_BARCODE_SCAN=1 (then they are skipped).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Context, ServiceBroker } from "moleculer";
import { PDFDict, PDFDocument, PDFName } from "pdf-lib";
import type { OrderRecord, ShipmentRecord, WarehouseRow } from "../../lib/contracts";
import { getSequelize, select } from "../../lib/db";
import { recordCourierLabel } from "../../lib/documents/store";
import { errorBodyOf } from "../../lib/errors";
import { as, newSender, rejects, startBroker } from "../helpers/broker";

// ---------------------------------------------------------------- fakes ----

const orders = new Map<string, OrderRecord>();
const shipments = new Map<string, ShipmentRecord>();
const warehouses = new Map<string, WarehouseRow>();
const warehouseCalls: Array<Record<string, unknown>> = [];
const k = (sender: number, id: number) => `${sender}:${id}`;

let nextOrderId = 500_000 + Math.floor(Math.random() * 100_000) * 10;
let nextWarehouseId = 9_000 + Math.floor(Math.random() * 1000) * 10;

function warehouseRow(sender: number, over: Partial<WarehouseRow> = {}): WarehouseRow {
	const id = ++nextWarehouseId;
	const w: WarehouseRow = {
		id,
		warehouse_name: `Acme Pune ${id}`,
		contact_person_name: "Sita Rao",
		contact_no: "9123456780",
		contact_email: null,
		address_line_1: "Plot 7, MIDC Industrial Area",
		address_line_2: "Bhosari",
		city: "Pune",
		state: "Maharashtra",
		pincode: "411026",
		gstin: "27AAPFU0939F1ZV",
		warehouse_type: "fulfillment_pickup",
		is_return_same: true,
		return_warehouse_name: null,
		return_contact_person_name: null,
		return_contact_no: null,
		return_address_line_1: null,
		return_address_line_2: null,
		return_city: null,
		return_state: null,
		return_pincode: null,
		active: true,
		retired: false,
		is_default: true,
		warehouse_code: `WH${id}`,
		courier_registered: true,
		shipped_30d: 0,
		...over,
	};
	warehouses.set(k(sender, id), w);
	return w;
}

function orderRecord(
	sender: number,
	over: Partial<OrderRecord> = {},
	product: Partial<OrderRecord["product"]> = {},
): OrderRecord {
	const order_id = ++nextOrderId;
	const o: OrderRecord = {
		order_id,
		sender_id: sender,
		customer_order_no: `ORD-${order_id}`,
		shipment_type: 0,
		channel: "api",
		order_type: 0,
		pickup_address_id: null,
		rto_address_id: null,
		receiver: {
			name: "Ram Kumar",
			address_1: "Flat 12B, Shanti Apartments, 4th Cross Road",
			address_2: "Near City Hospital",
			landmark: null,
			city: "Bengaluru",
			state: "Karnataka",
			pincode: "560001",
			mobile_no: "9876543210",
		},
		product: {
			product_name: "Cotton kurta",
			product_sku: "KRT-BL-M",
			physical_weight: 0.75,
			declared_order_total: 1499,
			cod_amount: null,
			length: 30,
			width: 20,
			height: 10,
			...product,
		},
		reverse: null,
		state: "not_shipped",
		status: "new",
		awb_number: null,
		courier: null,
		logistic_id: null,
		failure_reason: null,
		created_at: "2026-11-21T06:30:00.000Z",
		...over,
	};
	orders.set(k(sender, order_id), o);
	return o;
}

function book(o: OrderRecord, over: Partial<ShipmentRecord> = {}): ShipmentRecord {
	const s: ShipmentRecord = {
		order_id: o.order_id,
		attempt_id: o.order_id * 10,
		logistic_id: 101,
		courier_name: "Sandbox Express",
		awb_number: `7${String(o.order_id).padStart(12, "0")}`,
		state: "booked",
		routing_code: "BLR/KOR",
		charges: null,
		booked_at: "2026-11-21T07:00:00.000Z",
		...over,
	};
	shipments.set(k(o.sender_id, o.order_id), s);
	o.state = s.state;
	o.awb_number = s.awb_number;
	return s;
}

/** A booked order from a fresh warehouse of `sender`. */
function bookedOrder(
	sender: number,
	over: Partial<OrderRecord> = {},
	product: Partial<OrderRecord["product"]> = {},
) {
	const w = warehouseRow(sender);
	const order = orderRecord(sender, { pickup_address_id: w.id, ...over }, product);
	const shipment = book(order);
	return { order, shipment, warehouse: w };
}

const fakeServices = [
	{
		name: "intake",
		actions: {
			getOrder(ctx: Context<{ sender_id: number; order_id: number }>) {
				return orders.get(k(ctx.params.sender_id, ctx.params.order_id)) ?? null;
			},
		},
	},
	{
		name: "booking",
		actions: {
			getShipment(ctx: Context<{ sender_id: number; order_id: number }>) {
				return shipments.get(k(ctx.params.sender_id, ctx.params.order_id)) ?? null;
			},
		},
	},
	{
		name: "warehouses",
		actions: {
			get(ctx: Context<{ sender_id: number; id: number; include_retired?: boolean }>) {
				warehouseCalls.push({ ...ctx.params });
				const w = warehouses.get(k(ctx.params.sender_id, ctx.params.id));
				if (!w || (w.retired && !ctx.params.include_retired)) return null;
				return w;
			},
		},
	},
];

// -------------------------------------------------------------- helpers ----

interface Download {
	pdf: Buffer;
	meta: Record<string, any>;
}

let broker: ServiceBroker;

async function download(sender: number, orderId: string | number): Promise<Download> {
	const opts = as(sender);
	const pdf = (await broker.call("documents.label", { orderId: String(orderId) }, opts)) as Buffer;
	return { pdf, meta: opts.meta as Record<string, any> };
}

async function failure(
	sender: number,
	orderId: string,
): Promise<{ status: number; body: Record<string, unknown> }> {
	const err = await rejects(() => broker.call("documents.label", { orderId }, as(sender)));
	const out = errorBodyOf(err);
	assert.ok(out, `expected an ApiError, got ${err}`);
	return out;
}

async function labelRows(orderId: number) {
	return select<{
		order_id: string;
		sender_id: string;
		awb_number: string;
		logistic_id: number;
		source: string;
		label_downloaded_at: Date;
		first_downloaded_at: Date;
		download_count: number;
	}>(getSequelize(), "SELECT * FROM documents.labels WHERE order_id = $1", [orderId]);
}

let workDir: string;

function have(bin: string): boolean {
	const r = spawnSync(bin, ["-v"], { encoding: "utf8" });
	return !(r.error && (r.error as NodeJS.ErrnoException).code === "ENOENT");
}

/** Fails (or, with MSA_SKIP_BARCODE_SCAN=1, skips) when poppler-utils / zbar-tools are missing. */
function requireTools(test: Mocha.Context, bins: string[]): void {
	const missing = bins.filter((b) => !have(b));
	if (!missing.length) return;
	if (process.env.MSA_SKIP_BARCODE_SCAN === "1") test.skip();
	throw new Error(
		`missing ${missing.join(", ")}: apt-get install -y poppler-utils zbar-tools (or set MSA_SKIP_BARCODE_SCAN=1 to skip)`,
	);
}

/** Renders page 1 at 300 dpi and returns every Code128 value zbarimg decodes. */
function scanBarcodes(pdf: Buffer, name: string): string[] {
	const file = join(workDir, `${name}.pdf`);
	writeFileSync(file, pdf);
	const png = join(workDir, name);
	const r = spawnSync("pdftoppm", ["-r", "300", "-png", "-singlefile", file, png], { encoding: "utf8" });
	assert.equal(r.status, 0, `pdftoppm failed: ${r.stderr}`);
	const z = spawnSync("zbarimg", ["--raw", "-q", "-Sdisable", "-Scode128.enable", `${png}.png`], {
		encoding: "utf8",
	});
	assert.equal(z.status, 0, `zbarimg found no barcode (status ${z.status}): ${z.stderr}`);
	return z.stdout.split("\n").filter(Boolean);
}

/** Text of page 1 as poppler extracts it. */
function pdfText(pdf: Buffer, name: string): string {
	const file = join(workDir, `${name}.pdf`);
	writeFileSync(file, pdf);
	const r = spawnSync("pdftotext", ["-layout", file, "-"], { encoding: "utf8" });
	assert.equal(r.status, 0, `pdftotext failed: ${r.stderr}`);
	return r.stdout;
}

// ---------------------------------------------------------------- tests ----

describe("documents.label (GET /v1/documents/label/{orderId})", () => {
	before(async () => {
		workDir = mkdtempSync(join(tmpdir(), "msa-documents-"));
		broker = await startBroker(["documents"]);
		for (const s of fakeServices) broker.createService(s as any);
		await broker.waitForServices(["intake", "booking", "warehouses"], 10_000);
	});
	after(async () => {
		await broker?.stop();
		rmSync(workDir, { recursive: true, force: true });
	});

	describe("200 PDF", () => {
		it("answers a one-page 4×6 inch PDF with the download headers", async () => {
			const sender = newSender();
			const { order, shipment } = bookedOrder(sender);
			const { pdf, meta } = await download(sender, order.order_id);
			assert.ok(Buffer.isBuffer(pdf));
			assert.equal(pdf.subarray(0, 5).toString("latin1"), "%PDF-");
			const doc = await PDFDocument.load(pdf);
			assert.equal(doc.getPageCount(), 1);
			assert.deepEqual(doc.getPage(0).getSize(), { width: 288, height: 432 });
			assert.equal(meta.$responseType, "application/pdf");
			assert.deepEqual(meta.$responseHeaders, {
				"Content-Disposition": `inline; filename="label-${shipment.awb_number}.pdf"`,
				"Cache-Control": "private, no-store",
			});
		});

		it("renders a COD order (₹ amount) with an embedded, subsetted TrueType font", async () => {
			const sender = newSender();
			const { order } = bookedOrder(sender, { order_type: 1 }, { cod_amount: 123456.5 });
			const { pdf } = await download(sender, order.order_id);
			const doc = await PDFDocument.load(pdf);
			const descriptors = doc.context
				.enumerateIndirectObjects()
				.map(([, obj]) => obj)
				.filter(
					(o): o is PDFDict =>
						o instanceof PDFDict && o.get(PDFName.of("Type")) === PDFName.of("FontDescriptor"),
				);
			assert.ok(descriptors.length >= 1, "no font descriptor");
			assert.ok(
				descriptors.every((d) => d.has(PDFName.of("FontFile2"))),
				"font is not an embedded TrueType",
			);
			const names = descriptors.map((d) => String(d.get(PDFName.of("FontName"))));
			assert.ok(
				names.every((n) => /^\/NotoSansDevanagari-(Regular|Bold)/.test(n)),
				`unexpected fonts ${names.join(", ")}`,
			);
			// subsetted: each full TTF is ≈ 220 kB; the whole label stays far below one of them
			assert.ok(pdf.length < 60_000, `label is ${pdf.length} bytes: fonts not subsetted?`);
		});

		it("prints the label's fields (COD ₹ amount, consignee, return address, seller GSTIN…)", async function () {
			requireTools(this, ["pdftotext"]);
			const sender = newSender();
			const w = warehouseRow(sender, {
				warehouse_name: "Acme Fulfilment Pune",
				is_return_same: false,
				return_warehouse_name: "Acme Returns Desk",
				return_contact_person_name: "Kiran",
				return_contact_no: "9000000001",
				return_address_line_1: "Gate 3, Chakan Logistics Park",
				return_city: "Chakan",
				return_state: "Maharashtra",
				return_pincode: "410501",
			});
			const order = orderRecord(
				sender,
				{
					pickup_address_id: w.id,
					order_type: 1,
					customer_order_no: "SHOP-1001",
					receiver: {
						name: "राम कुमार",
						address_1: "12 MG Road",
						address_2: null,
						landmark: "Opp. SBI ATM",
						city: "Bengaluru",
						state: "Karnataka",
						pincode: "560001",
						mobile_no: "9876543210",
					},
				},
				{
					cod_amount: 123456.5,
					declared_order_total: 1499,
					physical_weight: 1.25,
					length: 30,
					width: 20,
					height: 10,
				},
			);
			const shipment = book(order, { courier_name: "Sandbox Surface", routing_code: "BLR/KOR" });
			const text = pdfText((await download(sender, order.order_id)).pdf, "fields");
			for (const expected of [
				`AWB ${shipment.awb_number}`,
				"Sandbox Surface",
				"BLR/KOR",
				"COD",
				"₹1,23,456.50",
				"₹1,499.00",
				"1.25 kg",
				"30×20×10 cm",
				"Cotton kurta",
				"SHOP-1001",
				"12 MG Road",
				"Landmark: Opp. SBI ATM",
				"Bengaluru, Karnataka",
				"PIN 560001",
				"9876543210",
				"Acme Returns Desk",
				"Gate 3, Chakan Logistics Park",
				"PIN 410501",
				"Acme Fulfilment Pune",
				"GSTIN: 27AAPFU0939F1ZV",
				"21 Nov 2026",
			]) {
				assert.ok(text.includes(expected), `label text lacks "${expected}":\n${text}`);
			}
			assert.ok(text.includes("कुमार"), "Devanagari consignee name missing");
			assert.ok(!text.includes("PREPAID"));
		});

		it("prints PREPAID and no amount to collect for a prepaid order", async function () {
			requireTools(this, ["pdftotext"]);
			const sender = newSender();
			const { order } = bookedOrder(sender, { order_type: 0 });
			const text = pdfText((await download(sender, order.order_id)).pdf, "prepaid");
			assert.ok(text.includes("PREPAID"));
			assert.ok(!text.includes("Collect"));
		});

		it("prints a reverse order's label to the return warehouse, picked up from the buyer, always PREPAID", async function () {
			requireTools(this, ["pdftotext"]);
			const sender = newSender();
			const w = warehouseRow(sender, {
				warehouse_name: "Acme Returns Pune",
				address_line_1: "9 Returns Lane",
			});
			const order = orderRecord(
				sender,
				{ pickup_address_id: w.id, shipment_type: 1, order_type: 1, customer_order_no: "SHOP-2002-R" },
				{ cod_amount: 999 },
			);
			book(order);
			const text = pdfText((await download(sender, order.order_id)).pdf, "reverse");
			for (const expected of [
				"REVERSE PICKUP",
				"DELIVER TO (RETURN)",
				"Acme Returns Pune",
				"9 Returns Lane",
				"PIN 411026",
				"PICKUP FROM",
				"Ram Kumar",
				"PIN 560001",
				"PREPAID",
			]) {
				assert.ok(text.includes(expected), `label text lacks "${expected}":\n${text}`);
			}
			assert.ok(!text.includes("Collect"), "a reverse label never asks to collect cash");
			assert.ok(text.indexOf("DELIVER TO (RETURN)") < text.indexOf("Acme Returns Pune"), text);
			assert.ok(text.indexOf("PICKUP FROM") < text.lastIndexOf("Ram Kumar"), text);
		});

		it("reads the pickup warehouse with include_retired (a retired warehouse still prints) and prefers the RTO warehouse", async function () {
			requireTools(this, ["pdftotext"]);
			const sender = newSender();
			const pickup = warehouseRow(sender, { warehouse_name: "Old Pickup Hub", retired: true, active: false });
			const rto = warehouseRow(sender, {
				warehouse_name: "RTO Desk Nashik",
				address_line_1: "5 Satpur MIDC",
				pincode: "422007",
			});
			const order = orderRecord(sender, { pickup_address_id: pickup.id, rto_address_id: rto.id });
			book(order);
			const text = pdfText((await download(sender, order.order_id)).pdf, "rto");
			const calls = warehouseCalls.filter((c) => c.sender_id === sender);
			assert.deepEqual(calls.map((c) => c.id).sort(), [pickup.id, rto.id].sort());
			assert.ok(calls.every((c) => c.include_retired === true));
			assert.ok(
				text.includes("RTO Desk Nashik") && text.includes("5 Satpur MIDC") && text.includes("PIN 422007"),
				text,
			);
			assert.ok(text.includes("Seller: Old Pickup Hub"), text);
		});
	});

	describe("barcodes scan", () => {
		const cases: Array<[string, string]> = [
			["13-digit numeric", "1234567890128"],
			["15-digit numeric", "123456789012345"],
			["alphanumeric", "SBX7D12345678"],
			["long alphanumeric", "DTDC-ABCDEFGH1234567890XYZ-99"],
		];
		for (const [label, awb] of cases) {
			it(`AWB ${label} decodes with zbarimg to exactly the AWB (and the order number too)`, async function () {
				requireTools(this, ["pdftoppm", "zbarimg"]);
				const sender = newSender();
				const w = warehouseRow(sender);
				const order = orderRecord(sender, { pickup_address_id: w.id });
				book(order, { awb_number: awb });
				const { pdf, meta } = await download(sender, order.order_id);
				assert.equal(meta.$responseHeaders["Content-Disposition"], `inline; filename="label-${awb}.pdf"`);
				const decoded = scanBarcodes(pdf, `scan-${order.order_id}`);
				assert.ok(decoded.includes(awb), `decoded ${JSON.stringify(decoded)}, expected AWB ${awb}`);
				assert.ok(
					decoded.includes(order.customer_order_no),
					`order number barcode not decoded: ${JSON.stringify(decoded)}`,
				);
				assert.ok(
					decoded.every((v) => v === awb || v === order.customer_order_no),
					`unexpected values ${decoded}`,
				);
			});
		}
	});

	describe("stamps label_downloaded_at", () => {
		it("upserts documents.labels on the first download and updates the stamp on the second", async () => {
			const sender = newSender();
			const { order, shipment } = bookedOrder(sender);
			assert.equal((await labelRows(order.order_id)).length, 0);
			assert.equal(
				await broker.call("documents.labelInfo", { sender_id: sender, order_id: order.order_id }),
				null,
			);

			await download(sender, order.order_id);
			const [first, ...more] = await labelRows(order.order_id);
			assert.equal(more.length, 0);
			assert.equal(Number(first.sender_id), sender);
			assert.equal(first.awb_number, shipment.awb_number);
			assert.equal(first.logistic_id, shipment.logistic_id);
			assert.equal(first.source, "generated");
			assert.equal(first.download_count, 1);
			assert.ok(first.label_downloaded_at instanceof Date);
			assert.equal(first.first_downloaded_at.getTime(), first.label_downloaded_at.getTime());

			await download(sender, String(order.order_id));
			const rows = await labelRows(order.order_id);
			assert.equal(rows.length, 1);
			const second = rows[0];
			assert.equal(second.download_count, 2);
			assert.ok(
				second.label_downloaded_at.getTime() > first.label_downloaded_at.getTime(),
				"stamp not updated",
			);
			assert.equal(second.first_downloaded_at.getTime(), first.first_downloaded_at.getTime());

			const info = (await broker.call("documents.labelInfo", {
				sender_id: sender,
				order_id: order.order_id,
			})) as any;
			assert.equal(info.label_downloaded_at, second.label_downloaded_at.toISOString());
			assert.equal(info.first_downloaded_at, first.label_downloaded_at.toISOString());
			assert.equal(info.download_count, 2);
			assert.equal(info.awb_number, shipment.awb_number);
			assert.equal(info.source, "generated");
			// another account sees nothing
			assert.equal(
				await broker.call("documents.labelInfo", { sender_id: newSender(), order_id: order.order_id }),
				null,
			);
		});

		it("keeps one row per AWB: a re-booked order gets a row for its new AWB", async () => {
			const sender = newSender();
			const { order } = bookedOrder(sender);
			await download(sender, order.order_id);
			const newer = book(order, { awb_number: "REBOOK000000001", attempt_id: order.order_id * 10 + 1 });
			await download(sender, order.order_id);
			const rows = await labelRows(order.order_id);
			assert.equal(rows.length, 2);
			assert.ok(rows.some((r) => r.awb_number === newer.awb_number && r.download_count === 1));
		});
	});

	describe("errors (§7 documents exception)", () => {
		for (const bad of ["abc", "0", "-1", "1.5", "", " 7", "+7", "1e3", "99999999999999999999"]) {
			it(`400 {message} with no error key for orderId ${JSON.stringify(bad)}`, async () => {
				const { status, body } = await failure(newSender(), bad);
				assert.equal(status, 400);
				assert.deepEqual(body, { message: "orderId must be a positive integer" });
				assert.ok(!("error" in body));
			});
		}

		it("404 {message:'not found'} with no error key for another account's order", async () => {
			const owner = newSender();
			const { order } = bookedOrder(owner);
			const { status, body } = await failure(newSender(), String(order.order_id));
			assert.equal(status, 404);
			assert.deepEqual(body, { message: "not found" });
			assert.ok(!("error" in body));
			assert.equal((await labelRows(order.order_id)).length, 0);
		});

		it("404 {message:'not found'} for an order that does not exist (same answer)", async () => {
			const { status, body } = await failure(newSender(), String(++nextOrderId));
			assert.equal(status, 404);
			assert.deepEqual(body, { message: "not found" });
		});

		it("409 {code:'not_ready_to_ship', message} for an order not booked yet, and no stamp", async () => {
			const sender = newSender();
			const w = warehouseRow(sender);
			const order = orderRecord(sender, { pickup_address_id: w.id });
			const { status, body } = await failure(sender, String(order.order_id));
			assert.equal(status, 409);
			assert.deepEqual(body, { code: "not_ready_to_ship", message: "order is not booked yet" });
			assert.equal((await labelRows(order.order_id)).length, 0);
		});

		it("409 not_ready_to_ship while booking is still in progress", async () => {
			const sender = newSender();
			const w = warehouseRow(sender);
			const order = orderRecord(sender, { pickup_address_id: w.id });
			book(order, { state: "booking_in_progress" });
			const { status, body } = await failure(sender, String(order.order_id));
			assert.equal(status, 409);
			assert.deepEqual(body, { code: "not_ready_to_ship", message: "order is not booked yet" });
		});

		it("409 {code:'carrier_label_missing', message} when the courier issues its own label and it was not captured", async () => {
			const sender = newSender();
			const { order, shipment } = bookedOrder(sender);
			await recordCourierLabel(getSequelize(), {
				order_id: order.order_id,
				sender_id: sender,
				awb_number: shipment.awb_number,
				logistic_id: shipment.logistic_id,
				file: null,
			});
			const { status, body } = await failure(sender, String(order.order_id));
			assert.equal(status, 409);
			assert.deepEqual(Object.keys(body).sort(), ["code", "message"]);
			assert.equal(body.code, "carrier_label_missing");
			assert.equal(typeof body.message, "string");
			const [row] = await labelRows(order.order_id);
			assert.equal(row.label_downloaded_at, null);
		});

		it("serves the courier's captured file as is (and stamps it)", async () => {
			const sender = newSender();
			const { order, shipment } = bookedOrder(sender);
			const courierPdf = Buffer.from("%PDF-1.4\n% courier label bytes\n%%EOF\n", "latin1");
			await recordCourierLabel(getSequelize(), {
				order_id: order.order_id,
				sender_id: sender,
				awb_number: shipment.awb_number,
				logistic_id: shipment.logistic_id,
				file: courierPdf,
			});
			const { pdf, meta } = await download(sender, order.order_id);
			assert.ok(Buffer.from(pdf).equals(courierPdf));
			assert.equal(meta.$responseType, "application/pdf");
			const [row] = await labelRows(order.order_id);
			assert.equal(row.source, "courier");
			assert.equal(row.download_count, 1);
			assert.ok(row.label_downloaded_at instanceof Date);
		});

		it("401 without an authenticated caller", async () => {
			const err = await rejects(() => broker.call("documents.label", { orderId: "1" }));
			assert.equal(errorBodyOf(err)?.status, 401);
		});
	});
});
