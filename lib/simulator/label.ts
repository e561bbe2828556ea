/**
 * The sandbox courier's own label file (its "packing slip", Delhivery's
 * `GET /api/p/packing_slip?wbns=`), as a courier that issues its own labels
 * would answer it: one 4 × 6 inch PDF page drawn with pdf-lib's standard
 * Helvetica (no embedded font: the courier's file looks nothing like ours, on
 * purpose). Deterministic: the same package always gives the same bytes (the
 * document dates are the package's booking time), so a test can compare what
 * was captured with what the courier serves.
 */
import { PDFDocument, StandardFonts } from "pdf-lib";
import type { SimCourier } from "./couriers";
import type { PackageRow } from "./store";

/** Helvetica (WinAnsi) prints Latin-1 only: anything else becomes "?" (the courier's own limitation). */
function latin1(s: unknown): string {
	return String(s ?? "").replace(/[^\x20-\x7e\xa0-\xff]/g, "?");
}

/**
 * The packing slip PDF of booked package `row` of `courier`: courier name,
 * AWB (large), sort code, consignee, payment (COD amount in rupees), the
 * merchant's order number, weight (grams on the wire, printed in kg) and the
 * return address.
 */
export async function packingSlipPdf(courier: SimCourier, row: PackageRow, bookedAt: Date): Promise<Buffer> {
	const doc = await PDFDocument.create();
	doc.setTitle(`${courier.name} packing slip ${row.waybill}`);
	doc.setAuthor(courier.name);
	doc.setCreator(`${courier.name} label service`);
	doc.setProducer(`${courier.code} packing slip`);
	doc.setCreationDate(bookedAt);
	doc.setModificationDate(bookedAt);
	const font = await doc.embedFont(StandardFonts.Helvetica);
	const bold = await doc.embedFont(StandardFonts.HelveticaBold);
	const page = doc.addPage([288, 432]);
	const s = row.shipment;
	let y = 405;
	const line = (text: string, size = 9, f = font) => {
		page.drawText(latin1(text).slice(0, 60), { x: 14, y, size, font: f });
		y -= size + 5;
	};
	line(courier.name, 16, bold);
	line("PACKING SLIP (issued by the courier)", 8);
	y -= 6;
	line(`AWB ${row.waybill}`, 18, bold);
	line(`Sort code: ${row.sort_code ?? "-"}`, 11, bold);
	y -= 6;
	line("Deliver to:", 8);
	line(s.name, 11, bold);
	line(s.add);
	if (s.add_2) line(s.add_2);
	line(`${s.city}, ${s.state} ${s.pin}`);
	line(`Phone: ${s.phone}`);
	y -= 6;
	line(
		s.payment_mode === "COD" ? `COD: collect Rs. ${s.cod_amount}` : s.payment_mode.toUpperCase(),
		12,
		bold,
	);
	line(`Order: ${s.client_order_no}`);
	line(`Weight: ${(Number(s.weight) / 1000).toFixed(3)} kg`);
	line(`Contents: ${s.products_desc}`);
	y -= 6;
	line("If undelivered, return to:", 8);
	line(s.return_name);
	line(s.return_add);
	line(`${s.return_city}, ${s.return_state} ${s.return_pin}`);
	return Buffer.from(await doc.save());
}
