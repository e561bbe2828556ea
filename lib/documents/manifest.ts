/**
 * The courier handover manifest PDF (spec §4.4 `POST /v1/documents/manifest`,
 * §3 manifest row), drawn with pdf-lib on A4 portrait (595 × 842 pt).
 *
 * Pure rendering: {@link ManifestSection}s in, ONE PDF out (fonts embedded
 * once, subsetted: lib/documents/font.ts); no database, no service calls.
 * Each section (one courier, one pickup warehouse, one manifest number)
 * starts on a new page: title, manifest number, courier, date and time in
 * IST, the pickup warehouse (name, address, phone); then a table with one row
 * per parcel: serial number, the AWB as a Code128 barcode with its text,
 * order number, consignee name, destination pincode, weight (kg) and the COD
 * amount to collect (₹, "—" for prepaid); continuation pages repeat a short
 * header and the table head; after the last row the totals (parcels, COD
 * parcels, prepaid parcels, COD total) and two signature boxes (seller who
 * hands over, the courier's pickup agent who receives). Every page carries
 * "<manifest no> · page i of n" (pages counted per section).
 */
import { PDFDocument, type PDFPage, rgb } from "pdf-lib";
import { code128, drawCode128 } from "./barcode";
import { cleanText, type DocumentFonts, embedDocumentFonts } from "./font";
import { formatRupees } from "./label";

/** A4 portrait in PDF points. */
export const MANIFEST_PAGE: [number, number] = [595.28, 841.89];

/** One parcel row as printed. Money in rupees, weight in kg. */
export interface ManifestParcel {
	awb_number: string;
	order_no: string;
	consignee_name: string;
	/** destination pincode */
	pincode: string;
	weight_kg: number;
	/** rupees to collect on delivery; 0 for prepaid */
	cod_amount: number;
}

/** One section: one courier, one pickup warehouse, one manifest number. */
export interface ManifestSection {
	manifest_no: string;
	courier_name: string;
	/** pickup warehouse; null when unknown (printed as "—") */
	warehouse: { name: string; lines: string[]; phone: string | null } | null;
	/** when the manifest was made (ISO-8601); printed as IST date and time */
	created_at: string;
	parcels: ManifestParcel[];
}

const BLACK = rgb(0, 0, 0);
const GREY = rgb(0.35, 0.35, 0.35);
const LIGHT = rgb(0.92, 0.92, 0.92);
const MARGIN = 36;
const ROW_H = 38;
const HEAD_H = 16;
const FOOTER_H = 22;
/** height of the totals and signature block after the last row */
const CLOSING_H = 178;

const istDateTime = new Intl.DateTimeFormat("en-IN", {
	timeZone: "Asia/Kolkata",
	day: "2-digit",
	month: "short",
	year: "numeric",
	hour: "2-digit",
	minute: "2-digit",
	hour12: false,
});

/** `21 Nov 2026, 14:05 IST` from an ISO timestamp (the input unchanged when unparsable). */
export function formatIstDateTime(iso: string): string {
	const d = new Date(iso);
	return Number.isNaN(d.getTime()) ? iso : `${istDateTime.format(d)} IST`;
}

/** `0.75` kg style: at most 3 decimals, trailing zeros dropped. */
function kg(n: number): string {
	return String(Number((Number.isFinite(n) ? n : 0).toFixed(3)));
}

/** Table columns: title, width (pt), right-aligned. */
const COLUMNS = [
	{ key: "n", title: "#", width: 22, right: true },
	{ key: "awb", title: "AWB", width: 158, right: false },
	{ key: "order", title: "Order no", width: 92, right: false },
	{ key: "consignee", title: "Consignee", width: 116, right: false },
	{ key: "pin", title: "PIN", width: 44, right: false },
	{ key: "weight", title: "Wt (kg)", width: 36, right: true },
	{ key: "cod", title: "COD (₹)", width: 55.28, right: true },
] as const;

interface PenOptions {
	bold?: boolean;
	/** cut with "…" to this width (pt) */
	maxWidth?: number;
	grey?: boolean;
}

/** Text drawing bound to a page: every run with the face of its script (lib/documents/font.ts). */
class Pen {
	constructor(
		readonly page: PDFPage,
		readonly fonts: DocumentFonts,
	) {}
	private fitted(s: string, size: number, opts: PenOptions): string {
		const weight = opts.bold ? "bold" : "regular";
		return opts.maxWidth ? this.fonts.fit(s, size, opts.maxWidth, weight) : s;
	}
	/** Width (pt) of `s` at `size`. */
	width(s: string, size: number, bold = false): number {
		return this.fonts.width(s, size, bold ? "bold" : "regular");
	}
	/** Draws `s` with its left edge at `x`, baseline `y`, cut with "…" to `maxWidth` when given. */
	text(s: string, x: number, y: number, size: number, opts: PenOptions = {}) {
		const t = this.fitted(s, size, opts);
		if (t)
			this.fonts.draw(this.page, t, {
				x,
				y,
				size,
				weight: opts.bold ? "bold" : "regular",
				color: opts.grey ? GREY : BLACK,
			});
	}
	/** Draws `s` right-aligned at `right`. */
	textRight(s: string, right: number, y: number, size: number, opts: PenOptions = {}) {
		const t = this.fitted(s, size, opts);
		if (t) this.text(t, right - this.width(t, size, opts.bold), y, size, { ...opts, maxWidth: undefined });
	}
	rule(y: number, thickness = 0.6) {
		const [W] = MANIFEST_PAGE;
		this.page.drawLine({ start: { x: MARGIN, y }, end: { x: W - MARGIN, y }, thickness, color: BLACK });
	}
}

/** How many parcel rows fit on a page whose header ends at `top`. */
function rowsFitting(top: number): number {
	return Math.floor((top - HEAD_H - MARGIN - FOOTER_H) / ROW_H);
}

/** Draws the full section header (first page); returns the y below it. */
function drawHeader(pen: Pen, s: ManifestSection): number {
	const [W, H] = MANIFEST_PAGE;
	const right = W - MARGIN;
	const inner = W - 2 * MARGIN;
	let y = H - MARGIN;
	pen.text("COURIER HANDOVER MANIFEST", MARGIN, y - 16, 16, { bold: true });
	pen.textRight(s.manifest_no, right, y - 16, 13, { bold: true });
	y -= 24;
	pen.textRight(`Date: ${formatIstDateTime(s.created_at)}`, right, y - 10, 9);
	pen.text(`Courier: ${cleanText(s.courier_name)}`, MARGIN, y - 12, 12, {
		bold: true,
		maxWidth: inner * 0.6,
	});
	y -= 20;
	pen.rule(y);
	y -= 4;
	pen.text("PICKUP WAREHOUSE", MARGIN, y - 9, 7.5, { bold: true, grey: true });
	y -= 11;
	const w = s.warehouse;
	pen.text(w ? cleanText(w.name) : "—", MARGIN, y - 11, 11, { bold: true, maxWidth: inner });
	y -= 14;
	for (const line of (w?.lines ?? []).map(cleanText).filter(Boolean).slice(0, 3)) {
		pen.text(line, MARGIN, y - 9, 9, { maxWidth: inner });
		y -= 11;
	}
	const phone = cleanText(w?.phone);
	if (phone) {
		pen.text(`Ph: ${phone}`, MARGIN, y - 9, 9);
		y -= 11;
	}
	y -= 4;
	pen.rule(y);
	return y - 6;
}

/** Draws the short header of a continuation page; returns the y below it. */
function drawContinuation(pen: Pen, s: ManifestSection): number {
	const [W, H] = MANIFEST_PAGE;
	let y = H - MARGIN;
	pen.text(`HANDOVER MANIFEST ${s.manifest_no} (continued)`, MARGIN, y - 12, 11, { bold: true });
	pen.textRight(cleanText(s.courier_name), W - MARGIN, y - 12, 10, { bold: true, maxWidth: 200 });
	y -= 18;
	pen.text(`Pickup: ${s.warehouse ? cleanText(s.warehouse.name) : "—"}`, MARGIN, y - 9, 9, {
		maxWidth: W - 2 * MARGIN,
	});
	y -= 14;
	pen.rule(y);
	return y - 6;
}

/** Draws the table head at `y`; returns the y below it. */
function drawTableHead(pen: Pen, y: number): number {
	const [W] = MANIFEST_PAGE;
	pen.page.drawRectangle({ x: MARGIN, y: y - HEAD_H, width: W - 2 * MARGIN, height: HEAD_H, color: LIGHT });
	let x = MARGIN;
	for (const c of COLUMNS) {
		if (c.right) pen.textRight(c.title, x + c.width - 3, y - 11, 8, { bold: true });
		else pen.text(c.title, x + 3, y - 11, 8, { bold: true });
		x += c.width;
	}
	return y - HEAD_H;
}

/** Draws parcel row `n` (1-based) with its top at `y`. */
function drawRow(pen: Pen, n: number, p: ManifestParcel, y: number): void {
	const cells: Record<string, string> = {
		n: String(n),
		order: cleanText(p.order_no),
		consignee: cleanText(p.consignee_name),
		pin: cleanText(p.pincode),
		weight: kg(p.weight_kg),
		cod: p.cod_amount > 0 ? formatRupees(p.cod_amount).slice(1) : "—",
	};
	const textY = y - ROW_H / 2 - 3;
	let x = MARGIN;
	for (const c of COLUMNS) {
		if (c.key === "awb") {
			drawCode128(pen.page, code128(p.awb_number), {
				x,
				y: y - 25,
				width: c.width,
				height: 21,
				maxModule: 1,
				minModule: 0.6,
			});
			pen.text(p.awb_number, x + 12, y - 34, 8, { bold: true, maxWidth: c.width - 14 });
		} else if (c.right) {
			pen.textRight(cells[c.key], x + c.width - 3, textY, 8.5, { maxWidth: c.width - 5 });
		} else {
			pen.text(cells[c.key], x + 3, textY, 8.5, { maxWidth: c.width - 6 });
		}
		x += c.width;
	}
	pen.page.drawLine({
		start: { x: MARGIN, y: y - ROW_H },
		end: { x: MANIFEST_PAGE[0] - MARGIN, y: y - ROW_H },
		thickness: 0.3,
		color: GREY,
	});
}

/** A signature box at (x, top) of `width`. */
function signatureBox(pen: Pen, x: number, top: number, width: number, title: string, lines: string[]): void {
	const h = 104;
	pen.page.drawRectangle({ x, y: top - h, width, height: h, borderColor: BLACK, borderWidth: 0.8 });
	pen.text(title, x + 6, top - 13, 9, { bold: true, maxWidth: width - 12 });
	let y = top - 34;
	for (const l of lines) {
		pen.text(l, x + 6, y, 8.5);
		pen.page.drawLine({
			start: { x: x + 6 + pen.width(l, 8.5) + 4, y: y - 2 },
			end: { x: x + width - 8, y: y - 2 },
			thickness: 0.4,
			color: GREY,
		});
		y -= 22;
	}
}

/** Draws the totals and both signature boxes with their top at `y`. */
function drawClosing(pen: Pen, s: ManifestSection, y: number): void {
	const [W] = MANIFEST_PAGE;
	const inner = W - 2 * MARGIN;
	const cod = s.parcels.filter((p) => p.cod_amount > 0);
	const codTotal = cod.reduce((a, p) => a + Math.round(p.cod_amount * 100), 0) / 100;
	y -= 8;
	pen.text(`Total parcels: ${s.parcels.length}`, MARGIN, y - 12, 11, { bold: true });
	pen.textRight(`Total COD: ${formatRupees(codTotal)}`, W - MARGIN, y - 12, 11, { bold: true });
	y -= 16;
	pen.text(
		`COD parcels: ${cod.length}    Prepaid parcels: ${s.parcels.length - cod.length}`,
		MARGIN,
		y - 10,
		9,
	);
	y -= 22;
	const boxW = (inner - 12) / 2;
	signatureBox(pen, MARGIN, y, boxW, "Handed over by (seller)", ["Name:", "Signature:", "Date & time:"]);
	signatureBox(pen, MARGIN + boxW + 12, y, boxW, "Received by (courier pickup agent)", [
		"Name:",
		"Signature:",
		"Parcels received:",
	]);
}

/** Page layout of one section: how many rows go on each page (the closing block may need a page of its own). */
export function paginate(rows: number, firstTop: number, nextTop: number): number[] {
	const pages: number[] = [];
	let left = rows;
	let top = firstTop;
	for (;;) {
		const fit = rowsFitting(top);
		if (left <= fit) {
			pages.push(left);
			// the closing block below the rows, or on a page of its own
			const used = HEAD_H + left * ROW_H;
			if (top - used - CLOSING_H < MARGIN + FOOTER_H) pages.push(0);
			return pages;
		}
		pages.push(fit);
		left -= fit;
		top = nextTop;
	}
}

/** Height taken by the first-page header (measured once on a scratch draw is overkill: computed as drawn). */
function firstTopOf(s: ManifestSection): number {
	const lines = (s.warehouse?.lines ?? []).map(cleanText).filter(Boolean).slice(0, 3).length;
	const phone = cleanText(s.warehouse?.phone) ? 1 : 0;
	return MANIFEST_PAGE[1] - MARGIN - 24 - 20 - 4 - 11 - 14 - 11 * (lines + phone) - 4 - 6;
}

const CONT_TOP = MANIFEST_PAGE[1] - MARGIN - 18 - 14 - 6;

/** Draws one section (its pages) into `doc`. Throws an Error when an AWB is not printable ASCII. */
export function drawManifestSection(doc: PDFDocument, fonts: DocumentFonts, s: ManifestSection): void {
	const layout = paginate(s.parcels.length, firstTopOf(s), CONT_TOP);
	let next = 0;
	layout.forEach((count, i) => {
		const page = doc.addPage(MANIFEST_PAGE);
		const pen = new Pen(page, fonts);
		let y = i === 0 ? drawHeader(pen, s) : drawContinuation(pen, s);
		if (count > 0) {
			y = drawTableHead(pen, y);
			for (let k = 0; k < count; k++, next++) {
				drawRow(pen, next + 1, s.parcels[next], y);
				y -= ROW_H;
			}
		}
		if (i === layout.length - 1) drawClosing(pen, s, y);
		pen.text(`${s.manifest_no} · page ${i + 1} of ${layout.length}`, MARGIN, MARGIN - 14, 7.5, {
			grey: true,
		});
		pen.textRight(`${s.parcels.length} parcel(s)`, MANIFEST_PAGE[0] - MARGIN, MARGIN - 14, 7.5);
	});
}

/**
 * The merchant-supplied texts the sections print, by weight (the captions are
 * Latin): {@link embedDocumentFonts} embeds the script faces they need, once.
 * A field drawn in {@link drawManifestSection} in a weight is listed here in
 * that weight.
 */
export function manifestTexts(sections: readonly ManifestSection[]): { regular: string[]; bold: string[] } {
	const regular: string[] = [];
	const bold: string[] = [];
	for (const s of sections) {
		bold.push(s.courier_name, s.warehouse?.name ?? "");
		regular.push(
			s.courier_name,
			s.warehouse?.name ?? "",
			...(s.warehouse?.lines ?? []),
			s.warehouse?.phone ?? "",
		);
		for (const p of s.parcels) regular.push(p.order_no, p.consignee_name, p.pincode);
	}
	return { regular, bold };
}

/**
 * Renders every section into ONE PDF (fonts embedded once, subsetted) and
 * answers its bytes. Throws an Error when an AWB is not printable ASCII (the
 * caller validates AWBs first).
 */
export async function renderManifest(sections: ManifestSection[]): Promise<Uint8Array> {
	const doc = await PDFDocument.create();
	doc.setTitle(`Handover manifest ${sections.map((s) => s.manifest_no).join(", ")}`);
	doc.setCreator("merchant-shipping-api");
	doc.setProducer("merchant-shipping-api (pdf-lib)");
	const fonts = await embedDocumentFonts(doc, manifestTexts(sections));
	for (const s of sections) drawManifestSection(doc, fonts, s);
	return doc.save();
}
