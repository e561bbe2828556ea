/**
 * The 4 × 6 inch shipping label (288 × 432 pt), drawn with pdf-lib
 * (spec §4.4 `GET /v1/documents/label/{orderId}`; DOMAIN "Labels").
 *
 * Pure rendering: {@link LabelData} in, PDF out; no database, no service
 * calls. Contents, top to bottom: courier name, shipment direction and
 * routing / sort code; the AWB as a Code128 barcode and in words; the
 * consignee (name, address, city/state, pincode, phone); payment type
 * (PREPAID / COD) and the amount to collect in ₹; order number, order date,
 * declared value, weight (kg), dimensions (cm) and product; the order number as
 * a second Code128 when it fits; the return address; the seller (warehouse)
 * name and GSTIN.
 *
 * Bulk labels (`POST /v1/documents/label`, lib/documents/bulk.ts) use
 * {@link createLabelDocument} + {@link drawLabelPage} ({@link renderLabels}) to
 * put many labels into ONE document with the fonts embedded once (STACK-NOTES:
 * merging per-label PDFs repeats every font subset).
 *
 * Every text goes through lib/documents/font.ts {@link DocumentFonts}: split
 * into runs by script, each run drawn (and measured, for fitting and wrapping)
 * with its own Noto face, so names and addresses in Devanagari, Bengali,
 * Gurmukhi, Gujarati, Tamil, Telugu, Kannada and Malayalam, or mixing them
 * with Latin, print shaped and without tofu.
 */
import { PDFDocument, type PDFFont, type PDFPage, rgb } from "pdf-lib";
import type { ShipmentDirection } from "../contracts";
import { code128, drawCode128, isCode128Encodable } from "./barcode";
import { cleanText as cleanFontText, type DocumentFonts, embedDocumentFonts } from "./font";

/** Page size of a 4 × 6 inch label in PDF points. */
export const LABEL_SIZE: [number, number] = [288, 432];

/** An address block as printed. */
export interface LabelAddress {
	/** person or business name */
	name: string;
	/** street lines (already split; wrapped further when too wide) */
	lines: string[];
	city: string | null;
	state: string | null;
	pincode: string;
	/** printed in full (the delivery agent calls it); null when unknown */
	phone: string | null;
	/** contact person, printed beside the phone when distinct from `name` */
	contact?: string | null;
}

/** Everything printed on one label. Money in rupees, weight kg, dimensions cm. */
export interface LabelData {
	/** courier AWB (opaque; printable ASCII, validated by the caller) */
	awb_number: string;
	courier_name: string;
	/** courier sort / routing code, e.g. "PNQ/VAD"; null when the courier gave none */
	routing_code: string | null;
	/** forward, or reverse (a return picked up from the customer) */
	direction: ShipmentDirection;
	payment: "PREPAID" | "COD";
	/** rupees to collect on delivery; 0 for prepaid */
	cod_amount: number;
	/** rupees */
	declared_value: number;
	/** kg */
	weight_kg: number;
	/** cm, null when not all three were given */
	dimensions_cm: { length: number; width: number; height: number } | null;
	product_name: string;
	product_sku: string | null;
	/** merchant's order reference (`customer_order_no`) */
	order_no: string;
	order_id: number;
	/** ISO-8601 timestamp of the order; printed as an IST calendar date */
	order_date: string;
	/** where the parcel goes (forward: the consignee; reverse: the warehouse) */
	ship_to: LabelAddress;
	/** forward: return address if undelivered; reverse: where it is picked up */
	from: LabelAddress | null;
	/** seller of record (pickup warehouse); null when unknown */
	seller: { name: string; gstin: string | null } | null;
}

/** A label document being built: one or more pages sharing embedded fonts. */
export interface LabelDocument {
	doc: PDFDocument;
	fonts: DocumentFonts;
}

const BLACK = rgb(0, 0, 0);
const WHITE = rgb(1, 1, 1);
const GREY = rgb(0.35, 0.35, 0.35);
const MARGIN = 8;

const inrFormat = new Intl.NumberFormat("en-IN", { minimumFractionDigits: 2, maximumFractionDigits: 2 });
const dateFormat = new Intl.DateTimeFormat("en-IN", {
	timeZone: "Asia/Kolkata",
	day: "2-digit",
	month: "short",
	year: "numeric",
});

/** `₹1,23,456.50` (Indian digit grouping, 2 decimals). */
export function formatRupees(rupees: number): string {
	return `₹${inrFormat.format(Number.isFinite(rupees) ? rupees : 0)}`;
}

/** IST calendar date of an ISO timestamp, e.g. `21 Nov 2026`; the input unchanged when unparsable. */
export function formatIstDate(iso: string): string {
	const d = new Date(iso);
	return Number.isNaN(d.getTime()) ? iso : dateFormat.format(d);
}

/** A number with at most `digits` decimals, trailing zeros dropped (`0.5`, `12`). */
function num(n: number, digits = 3): string {
	return String(Number(n.toFixed(digits)));
}

/** Single-line printable text (lib/documents/font.ts `cleanText`: NFC, control characters become spaces, whitespace collapses). */
export const cleanText = cleanFontText;

/**
 * Width of `text` in ONE font (no script runs). Kept for callers that draw
 * Latin with pdf-lib directly; documents use {@link DocumentFonts.width}, which
 * measures each script run with its own face.
 */
export function measure(font: PDFFont, text: string, size: number): number {
	return font.widthOfTextAtSize(text, size);
}

/**
 * `text` cut (by grapheme) and ended with "…" to fit `maxWidth` in ONE font.
 * Kept for callers that draw Latin with pdf-lib directly; documents use
 * {@link DocumentFonts.fit} (per-script runs).
 */
export function fitText(font: PDFFont, text: string, size: number, maxWidth: number): string {
	if (measure(font, text, size) <= maxWidth) return text;
	const g = [...graphemeSegmenter.segment(text)].map((s) => s.segment);
	let lo = 0;
	let hi = g.length;
	while (lo < hi) {
		const mid = Math.ceil((lo + hi) / 2);
		if (measure(font, `${g.slice(0, mid).join("").trimEnd()}…`, size) <= maxWidth) lo = mid;
		else hi = mid - 1;
	}
	return `${g.slice(0, lo).join("").trimEnd()}…`;
}

const graphemeSegmenter = new Intl.Segmenter("en", { granularity: "grapheme" });

/**
 * The merchant-supplied texts a label prints, by weight (the fixed captions
 * are Latin): {@link createLabelDocument} embeds the script faces they need.
 * Kept next to {@link drawLabelPage}: a field drawn there in a weight must be
 * listed here in that weight (else its script falls back to the other weight).
 */
export function labelTexts(data: LabelData): { regular: string[]; bold: string[] } {
	const bold = [
		data.courier_name,
		data.routing_code ?? "",
		data.ship_to.name,
		data.ship_to.pincode,
		data.ship_to.phone ?? "",
	];
	const regular = [
		...data.ship_to.lines,
		data.ship_to.city ?? "",
		data.ship_to.state ?? "",
		data.order_no,
		data.product_name,
		data.product_sku ?? "",
		data.seller?.name ?? "",
		data.seller?.gstin ?? "",
	];
	if (data.from) {
		bold.push(data.from.name);
		regular.push(
			...data.from.lines,
			data.from.city ?? "",
			data.from.state ?? "",
			data.from.pincode,
			data.from.contact ?? "",
			data.from.phone ?? "",
		);
	}
	return { regular, bold };
}

/**
 * Starts a label document for `labels` (metadata set; the base fonts and the
 * script faces their texts need embedded once, subset). A bulk document
 * passes every label it will draw.
 */
export async function createLabelDocument(labels: readonly LabelData[] = []): Promise<LabelDocument> {
	const doc = await PDFDocument.create();
	doc.setTitle(labels.length > 1 ? "Shipping labels" : "Shipping label");
	doc.setCreator("merchant-shipping-api");
	doc.setProducer("merchant-shipping-api (pdf-lib)");
	const texts = labels.map(labelTexts);
	const fonts = await embedDocumentFonts(doc, {
		regular: texts.flatMap((t) => t.regular),
		bold: texts.flatMap((t) => t.bold),
	});
	return { doc, fonts };
}

/**
 * Renders one label as a complete single-page PDF (bytes). Written without
 * object streams: compressing the handful of objects of one page cost ≈ 3 ms
 * of CPU (of ≈ 9) to save ≈ 1.6 kB; a bulk document keeps them (its hundreds
 * of page objects compress well, ≈ 55 kB less for 200 labels).
 */
export async function renderLabel(data: LabelData): Promise<Uint8Array> {
	const ld = await createLabelDocument([data]);
	drawLabelPage(ld, data);
	return ld.doc.save({ useObjectStreams: false });
}

/** Renders `labels` as ONE document, one page each in the given order (fonts embedded once). */
export async function renderLabels(labels: readonly LabelData[]): Promise<Uint8Array> {
	const ld = await createLabelDocument(labels);
	for (const data of labels) drawLabelPage(ld, data);
	return ld.doc.save();
}

interface TextOptions {
	bold?: boolean;
	color?: typeof BLACK;
	/** cut with "…" to this width */
	maxWidth?: number;
}

/** Text drawing helper bound to a page. */
class Pen {
	constructor(
		readonly page: PDFPage,
		readonly fonts: DocumentFonts,
	) {}
	/**
	 * Draws `s` (fitted to `opts.maxWidth`) with its left edge at `x`, or at
	 * `x(width)` for aligned text (measured only then); returns the drawn text.
	 */
	private draw(
		s: string,
		x: number | ((width: number) => number),
		y: number,
		size: number,
		opts: TextOptions,
	): string {
		const weight = opts.bold ? "bold" : "regular";
		const t = opts.maxWidth ? this.fonts.fit(s, size, opts.maxWidth, weight) : s;
		if (!t) return t;
		const left = typeof x === "number" ? x : x(this.fonts.width(t, size, weight));
		this.fonts.draw(this.page, t, { x: left, y, size, weight, color: opts.color ?? BLACK });
		return t;
	}
	text(s: string, x: number, y: number, size: number, opts: TextOptions = {}) {
		return this.draw(s, x, y, size, opts);
	}
	width(s: string, size: number, bold = false): number {
		return this.fonts.width(s, size, bold ? "bold" : "regular");
	}
	/** right-aligned at `right` */
	textRight(s: string, right: number, y: number, size: number, opts: TextOptions = {}) {
		this.draw(s, (w) => right - w, y, size, opts);
	}
	centered(s: string, cx: number, y: number, size: number, bold = false, maxWidth?: number) {
		this.draw(s, (w) => cx - w / 2, y, size, { bold, maxWidth });
	}
	rule(y: number, x0 = MARGIN, x1 = LABEL_SIZE[0] - MARGIN, thickness = 0.8) {
		this.page.drawLine({ start: { x: x0, y }, end: { x: x1, y }, thickness, color: BLACK });
	}
}

function cityLine(a: LabelAddress): string {
	return [a.city, a.state].map(cleanText).filter(Boolean).join(", ");
}

/** The printable street lines of an address, cleaned, empty ones dropped. */
function streetLines(a: LabelAddress): string[] {
	return a.lines.map(cleanText).filter(Boolean);
}

/**
 * Head of an address block (ship-to, return / pickup-from): the grey section
 * heading, then the addressee's name in bold at `nameSize` (cut to the label's
 * inner width). Returns the y below them.
 */
function addressHead(pen: Pen, heading: string, name: string, nameSize: number, y: number): number {
	const x = MARGIN + 2;
	pen.text(heading, x, y - 9, 7, { bold: true, color: GREY });
	y -= 9;
	pen.text(cleanText(name), x, y - nameSize - 1, nameSize, {
		bold: true,
		maxWidth: LABEL_SIZE[0] - 2 * MARGIN - 4,
	});
	return y - nameSize - 2;
}

/** One label page being drawn: the page, its pen, and the inner box between the margins (PDF points). */
interface Sheet {
	ld: LabelDocument;
	page: PDFPage;
	pen: Pen;
	/** page width */
	W: number;
	left: number;
	right: number;
	/** right − left */
	inner: number;
}

/** Section 1, from the top `y`: courier name, direction, the routing code boxed at the right. Returns the y below its rule. */
function drawCourierHead(s: Sheet, data: LabelData, y: number): number {
	const { page, pen, left, right, inner } = s;
	const routing = cleanText(data.routing_code);
	let routingWidth = 0;
	if (routing) {
		const size = 15;
		const tw = Math.min(pen.width(routing, size, true), 120);
		routingWidth = tw + 10;
		page.drawRectangle({ x: right - routingWidth, y: y - 26, width: routingWidth, height: 24, color: BLACK });
		pen.text(routing, right - routingWidth + 5, y - 20, size, { bold: true, color: WHITE, maxWidth: 120 });
	}
	const headW = inner - routingWidth - 6;
	pen.text(cleanText(data.courier_name), left + 2, y - 14, 13, { bold: true, maxWidth: headW });
	pen.text(data.direction === "reverse" ? "REVERSE PICKUP" : "FORWARD", left + 2, y - 25, 7, {
		color: GREY,
		maxWidth: headW,
	});
	y -= 30;
	pen.rule(y);
	return y;
}

/** Section 2: the AWB as a Code 128 barcode over the inner width, and in words. Returns the y below its rule. */
function drawAwb(s: Sheet, data: LabelData, y: number): number {
	const { page, pen, left, inner, W } = s;
	const awbSym = code128(data.awb_number);
	const barH = 60;
	drawCode128(page, awbSym, {
		x: left,
		y: y - 8 - barH,
		width: inner,
		height: barH,
		maxModule: 1.6,
		minModule: 0.55,
	});
	y -= 8 + barH;
	pen.centered(`AWB ${data.awb_number}`, W / 2, y - 13, 11, true, inner);
	y -= 19;
	pen.rule(y);
	return y;
}

/** Section 3: where the parcel goes: name, street lines (3 at most), city, PIN and phone. Returns the y below its rule. */
function drawShipTo(s: Sheet, data: LabelData, y: number): number {
	const { ld, pen, left, right, inner } = s;
	const to = data.ship_to;
	y = addressHead(pen, data.direction === "reverse" ? "DELIVER TO (RETURN)" : "SHIP TO", to.name, 11, y);
	for (const line of ld.fonts.wrap(streetLines(to).join(", "), 8.5, inner - 4, 3)) {
		pen.text(line, left + 2, y - 10, 8.5);
		y -= 10.5;
	}
	const toCity = cityLine(to);
	if (toCity) {
		pen.text(toCity, left + 2, y - 10, 8.5, { maxWidth: inner - 4 });
		y -= 10.5;
	}
	pen.text(`PIN ${cleanText(to.pincode)}`, left + 2, y - 15, 13, { bold: true });
	const phone = cleanText(to.phone);
	if (phone) pen.textRight(`Ph: ${phone}`, right - 2, y - 14, 10, { bold: true, maxWidth: inner / 2 });
	y -= 19;
	pen.rule(y);
	return y;
}

/** Section 4: COD (boxed, with the amount to collect) or PREPAID. Returns the y below its rule. */
function drawPayment(s: Sheet, data: LabelData, y: number): number {
	const { page, pen, left, right, inner } = s;
	const cod = data.payment === "COD";
	if (cod) {
		page.drawRectangle({ x: left, y: y - 28, width: 70, height: 28, color: BLACK });
		pen.text("COD", left + 14, y - 21, 18, { bold: true, color: WHITE });
		pen.textRight(`Collect ${formatRupees(data.cod_amount)}`, right - 2, y - 20, 14, {
			bold: true,
			maxWidth: inner - 76,
		});
	} else {
		pen.text("PREPAID", left + 2, y - 21, 18, { bold: true });
		pen.textRight("Do not collect cash", right - 2, y - 19, 9);
	}
	y -= 28;
	pen.rule(y);
	return y;
}

/** Section 5: order number, date, id, value, weight, dimensions in two columns, then the item (2 lines at most). Returns the y below. */
function drawOrderDetails(s: Sheet, data: LabelData, y: number): number {
	const { ld, pen, left, inner } = s;
	const colX = left + inner / 2 + 4;
	const halfW = inner / 2 - 6;
	const rows: Array<[string, string]> = [
		[`Order: ${cleanText(data.order_no)}`, `Value: ${formatRupees(data.declared_value)}`],
		[`Date: ${formatIstDate(data.order_date)}`, `Weight: ${num(data.weight_kg)} kg`],
		[
			`Order ID: ${data.order_id}`,
			data.dimensions_cm
				? `Dim: ${num(data.dimensions_cm.length, 1)}×${num(data.dimensions_cm.width, 1)}×${num(data.dimensions_cm.height, 1)} cm`
				: "Dim: —",
		],
	];
	y -= 2;
	for (const [a, b] of rows) {
		pen.text(a, left + 2, y - 9, 8, { maxWidth: halfW });
		pen.text(b, colX, y - 9, 8, { maxWidth: halfW });
		y -= 10.5;
	}
	const sku = cleanText(data.product_sku);
	const product = `Item: ${cleanText(data.product_name)}${sku ? ` (SKU ${sku})` : ""}`;
	for (const line of ld.fonts.wrap(product, 8, inner - 4, 2)) {
		pen.text(line, left + 2, y - 9, 8);
		y -= 10;
	}
	y -= 2;
	return y;
}

/** Section 6: the order number as a barcode (only when it is printable ASCII and fits). Returns the y below its rule. */
function drawOrderNoBarcode(s: Sheet, data: LabelData, y: number): number {
	const { page, pen, left, inner, W } = s;
	const orderNo = cleanText(data.order_no);
	if (isCode128Encodable(orderNo)) {
		const sym = code128(orderNo);
		const bh = 30;
		const drawn = drawCode128(page, sym, {
			x: left,
			y: y - 4 - bh,
			width: inner,
			height: bh,
			maxModule: 1.2,
			minModule: 0.6,
		});
		if (drawn) {
			pen.centered(orderNo, W / 2, y - 4 - bh - 9, 7, false, inner);
			y -= 4 + bh + 12;
		}
	}
	pen.rule(y);
	return y;
}

/** Section 7: the return address (forward) or where a return is picked up (reverse), with contact and phone. Returns the y below. */
function drawFrom(s: Sheet, data: LabelData, from: LabelAddress, y: number): number {
	const { ld, pen, left, inner } = s;
	y = addressHead(
		pen,
		data.direction === "reverse" ? "PICKUP FROM" : "IF UNDELIVERED, RETURN TO",
		from.name,
		8,
		y,
	);
	const fromText = [...streetLines(from), cityLine(from), `PIN ${cleanText(from.pincode)}`]
		.filter(Boolean)
		.join(", ");
	for (const line of ld.fonts.wrap(fromText, 7.5, inner - 4, 2)) {
		pen.text(line, left + 2, y - 8.5, 7.5);
		y -= 9.5;
	}
	const contact = cleanText(from.contact);
	const fromPhone = cleanText(from.phone);
	const contactLine = [
		contact && contact !== cleanText(from.name) ? contact : "",
		fromPhone ? `Ph: ${fromPhone}` : "",
	]
		.filter(Boolean)
		.join("  ");
	if (contactLine) {
		pen.text(contactLine, left + 2, y - 8.5, 7.5, { maxWidth: inner - 4 });
		y -= 9.5;
	}
	return y;
}

/** Section 8: the seller of record and GSTIN, on one line (never below 10 pt from the bottom). */
function drawSeller(s: Sheet, seller: NonNullable<LabelData["seller"]>, y: number): void {
	const gstin = cleanText(seller.gstin);
	const text = `Seller: ${cleanText(seller.name)}${gstin ? `   GSTIN: ${gstin}` : ""}`;
	s.pen.text(text, s.left + 2, Math.max(y - 10, 10), 7.5, { maxWidth: s.inner - 4 });
}

/**
 * Draws one label on a new page of `ld.doc`: a border, then its sections
 * top to bottom (each step above draws one and answers the y below it).
 * Throws an Error when the AWB is not printable ASCII (the caller validates
 * AWBs before rendering).
 */
export function drawLabelPage(ld: LabelDocument, data: LabelData): PDFPage {
	const [W, H] = LABEL_SIZE;
	const page = ld.doc.addPage(LABEL_SIZE);
	const right = W - MARGIN;
	const s: Sheet = { ld, page, pen: new Pen(page, ld.fonts), W, left: MARGIN, right, inner: right - MARGIN };
	page.drawRectangle({ x: 4, y: 4, width: W - 8, height: H - 8, borderColor: BLACK, borderWidth: 1 });

	let y = drawCourierHead(s, data, H - MARGIN);
	y = drawAwb(s, data, y);
	y = drawShipTo(s, data, y);
	y = drawPayment(s, data, y);
	y = drawOrderDetails(s, data, y);
	y = drawOrderNoBarcode(s, data, y);
	if (data.from) y = drawFrom(s, data, data.from, y);
	if (data.seller) drawSeller(s, data.seller, y);
	return page;
}
