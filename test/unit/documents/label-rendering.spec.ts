/**
 * documents.label (spec §4.4 `GET /v1/documents/label/{orderId}`): the PDF we draw: page, fonts, printed fields, return address, barcodes.
 * Fakes and tools: ./setup.ts.
 */
import assert from "node:assert/strict";
import { PDFDict, PDFDocument, PDFName } from "pdf-lib";
import { newSender } from "../../helpers/broker";
import { address } from "../../helpers/fixtures";
import {
	book,
	bookedOrder,
	download,
	orderRecord,
	pdfText,
	requireTools,
	scanBarcodes,
	useDocuments,
	warehouseCalls,
	warehouseRow,
} from "./setup";

describe("documents.label (GET /v1/documents/label/{orderId})", () => {
	useDocuments();

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
			const { order } = bookedOrder(sender, { payment_mode: "cod" }, { cod_amount: 123456.5 });
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
				pickup: { warehouse_name: "Acme Fulfilment Pune" },
				return_to: {
					warehouse_name: "Acme Returns Desk",
					name: "Kiran",
					phone: "9000000001",
					address_1: "Gate 3, Chakan Logistics Park",
					city: "Chakan",
					state: "Maharashtra",
					pincode: "410501",
				},
			});
			const order = orderRecord(
				sender,
				{
					pickup_address_id: w.id,
					payment_mode: "cod",
					customer_order_no: "SHOP-1001",
					consignee: address({
						name: "राम कुमार",
						phone: "9876543210",
						address_1: "12 MG Road",
						address_2: null,
						landmark: "Opp. SBI ATM",
						city: "Bengaluru",
						state: "Karnataka",
						pincode: "560001",
					}),
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
			const { order } = bookedOrder(sender, { payment_mode: "prepaid" });
			const text = pdfText((await download(sender, order.order_id)).pdf, "prepaid");
			assert.ok(text.includes("PREPAID"));
			assert.ok(!text.includes("Collect"));
		});

		it("prints a reverse order's label to the return warehouse, picked up from the buyer, always PREPAID", async function () {
			requireTools(this, ["pdftotext"]);
			const sender = newSender();
			const w = warehouseRow(sender, {
				pickup: { warehouse_name: "Acme Returns Pune", address_1: "9 Returns Lane" },
			});
			const order = orderRecord(
				sender,
				{
					pickup_address_id: w.id,
					direction: "reverse",
					payment_mode: "cod",
					customer_order_no: "SHOP-2002-R",
				},
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
			const pickup = warehouseRow(sender, {
				pickup: { warehouse_name: "Old Pickup Hub" },
				retired: true,
				active: false,
			});
			const rto = warehouseRow(sender, {
				pickup: { warehouse_name: "RTO Desk Nashik", address_1: "5 Satpur MIDC", pincode: "422007" },
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
});
