/**
 * Code128 barcodes drawn as vector rectangles (STACK-NOTES "Documents";
 * DOMAIN "Labels").
 *
 * bwip-js `raw()` gives the symbol as alternating bar / space widths in
 * modules; each bar becomes one filled rectangle on the PDF page, which is
 * faster and sharper than embedding a PNG. About ten module widths of quiet
 * zone are kept clear on each side, or scanners will not read the symbol.
 */
import { raw } from "bwip-js";
import {
	fill,
	type PDFOperator,
	type PDFPage,
	popGraphicsState,
	pushGraphicsState,
	rectangle,
	rgb,
	setFillingColor,
} from "pdf-lib";

/** Clear modules required on each side of a Code128 symbol. */
export const QUIET_ZONE_MODULES = 10;

/** A Code128 symbol: bar/space widths in modules, bar first. */
export interface Code128Symbol {
	value: string;
	/** alternating bar, space, bar… widths in modules */
	widths: number[];
	/** total width of the symbol in modules, quiet zones excluded */
	modules: number;
}

/** True when `value` only holds characters Code128 (set B / C) prints without escapes (ASCII 0x20–0x7E). */
export function isCode128Encodable(value: string): boolean {
	return value.length > 0 && /^[\x20-\x7e]+$/.test(value);
}

/**
 * Encodes `value` as Code128 (bwip-js picks sets B/C, so digit runs are
 * compact). Throws an Error when the value is empty or not printable ASCII.
 */
export function code128(value: string): Code128Symbol {
	if (!isCode128Encodable(value)) throw new Error("Code128 needs printable ASCII");
	const [sym] = raw("code128", value, {}) as Array<{ sbs?: number[] }>;
	if (!sym?.sbs?.length) throw new Error("bwip-js returned no Code128 bars");
	const widths = sym.sbs;
	return { value, widths, modules: widths.reduce((a, b) => a + b, 0) };
}

/** Where and how large to draw a symbol (PDF points, origin bottom-left). */
export interface BarcodeBox {
	/** left edge of the available area (quiet zones are taken from this area) */
	x: number;
	/** bottom of the bars */
	y: number;
	/** available width including both quiet zones */
	width: number;
	/** bar height */
	height: number;
	/** widest module to use (pt); default 2 */
	maxModule?: number;
	/** narrowest module still printable/scannable (pt); default 0.6 (≈ 1.7 dots at 203 dpi) */
	minModule?: number;
}

/** Placement of a drawn symbol. */
export interface DrawnBarcode {
	/** left of the first bar */
	x: number;
	/** width of the bars only */
	width: number;
	moduleWidth: number;
}

/**
 * Module width (pt) that fits `sym` plus quiet zones into `box`, or null when
 * even `minModule` is too wide.
 */
export function fitModuleWidth(
	sym: Code128Symbol,
	box: Pick<BarcodeBox, "width" | "maxModule" | "minModule">,
): number | null {
	const max = box.maxModule ?? 2;
	const min = box.minModule ?? 0.6;
	const mw = Math.min(max, box.width / (sym.modules + 2 * QUIET_ZONE_MODULES));
	return mw >= min ? mw : null;
}

/**
 * Draws `sym` centred in `box`, leaving at least {@link QUIET_ZONE_MODULES}
 * modules clear on each side, as ONE filled path of `re` rectangles (a
 * `drawRectangle` per bar — graphics state, colour, transform, fill — was the
 * largest part of a 200-label document). Coordinates rounded to 1/1000 pt,
 * far below a printer dot. Returns the placement, or null (nothing drawn)
 * when the symbol does not fit at `minModule`. Used by labels and manifests.
 */
export function drawCode128(page: PDFPage, sym: Code128Symbol, box: BarcodeBox): DrawnBarcode | null {
	const mw = fitModuleWidth(sym, box);
	if (mw === null) return null;
	const width = sym.modules * mw;
	const left = box.x + (box.width - width) / 2;
	const ops: PDFOperator[] = [pushGraphicsState(), setFillingColor(rgb(0, 0, 0))];
	let x = left;
	for (let i = 0; i < sym.widths.length; i++) {
		const w = sym.widths[i] * mw;
		if (i % 2 === 0) ops.push(rectangle(round3(x), box.y, round3(w), box.height));
		x += w;
	}
	ops.push(fill(), popGraphicsState());
	page.pushOperators(...ops);
	return { x: left, width, moduleWidth: mw };
}

/** `n` rounded to 1/1000 pt (shorter numbers in the content stream). */
function round3(n: number): number {
	return Math.round(n * 1000) / 1000;
}
