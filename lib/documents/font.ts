/**
 * Document fonts and text drawing for labels and manifests (STACK-NOTES
 * "Documents"; docs/decisions/0025-indian-scripts.md).
 *
 * pdf-lib's standard fonts (Helvetica) use WinAnsi and cannot encode "₹" or
 * any Indian script, so documents embed Noto Sans faces (OFL-1.1) from the
 * `@expo-google-fonts/noto-sans-<script>` packages, loaded from node_modules
 * and subset per document through `@pdf-lib/fontkit`:
 *
 * - the base family, Noto Sans Devanagari, covers Latin, "₹" and Devanagari
 *   and is always embedded (regular and bold);
 * - Bengali, Gurmukhi, Gujarati, Tamil, Telugu, Kannada and Malayalam each
 *   have their own Noto Sans family, embedded in a document only when a text
 *   of that weight needs it ({@link embedDocumentFonts} scans the texts first).
 *
 * Text is split into runs by script ({@link DocumentFonts.runs}; fontkit picks
 * its shaper from a run's script, so Latin and Devanagari are separate runs of
 * one face): a letter of one of those scripts takes its script's face, a Latin
 * or Devanagari letter the base face; spaces, digits, punctuation, "₹", dandas, ZWJ/ZWNJ and
 * combining marks stay in the run they follow when its face has a glyph for
 * them (else the base face). A character no face covers (emoji, a script
 * outside the list) prints as "?" rather than a tofu box (.notdef).
 *
 * Complex-script runs are shaped by fontkit (GSUB: conjuncts, reordered and
 * split matras; GPOS: mark and half-form positions). pdf-lib's own
 * `drawText` keeps only glyph ids and default advances, which breaks fonts
 * that place parts of a conjunct through GPOS (Noto Sans Bengali's ন্দ), so
 * {@link DocumentFonts.draw} writes the text operators itself: a `TJ` array
 * with the GPOS x adjustments and a text rise for y offsets, inside a marked
 * content span whose `/ActualText` is the run's logical text (copy, search and
 * `pdftotext` give the name as typed, not the visual glyph order). fontkit
 * 1.1.1 throws on a null GPOS anchor (Noto Sans Gurmukhi): such a run is
 * shaped again without positioning features, and unshaped as a last resort,
 * rather than failing the document.
 *
 * Cost (measured on 2 shared cores): the TTF bytes are read once per process
 * and each parsed fontkit font is cached and shared by every document (a
 * parsed font is only read when a document subsets it). Text in simple
 * scripts (Latin, punctuation, currency signs) takes the plain cmap path
 * `glyphsForString()` (≈ 3 µs; same glyphs, these fonts apply no default
 * Latin ligatures); complex runs are shaped once per (font, text) and kept in
 * a bounded cache, so the warehouse and seller lines of a 200-label batch are
 * shaped once.
 */
// @pdf-lib/fontkit 1.1.1 is compiled with regenerator; shaping Indic text needs the runtime first.
import "regenerator-runtime/runtime";
import { readFileSync } from "node:fs";
import fontkit from "@pdf-lib/fontkit";
import {
	beginText,
	type Color,
	endText,
	type PDFDocument,
	type PDFFont,
	PDFHexString,
	PDFName,
	PDFNumber,
	type PDFObject,
	PDFOperator,
	PDFOperatorNames,
	type PDFPage,
	popGraphicsState,
	pushGraphicsState,
	rgb,
	setFillingColor,
	setFontAndSize,
	setTextMatrix,
	setTextRise,
	showText,
} from "pdf-lib";

/** A font family of documents: `base` (Latin, ₹, Devanagari) or one Indian script's Noto Sans. */
export type FontFamily =
	| "base"
	| "bengali"
	| "gurmukhi"
	| "gujarati"
	| "tamil"
	| "telugu"
	| "kannada"
	| "malayalam";

/** The two weights documents use. */
export type FontWeight = "regular" | "bold";

const notoFiles = (script: string, name: string): Record<FontWeight, string> => ({
	regular: `@expo-google-fonts/noto-sans-${script}/400Regular/NotoSans${name}_400Regular.ttf`,
	bold: `@expo-google-fonts/noto-sans-${script}/700Bold/NotoSans${name}_700Bold.ttf`,
});

/** Module paths (resolved in node_modules) of every family and weight. */
export const FONT_FILES: Record<FontFamily, Record<FontWeight, string>> = {
	base: notoFiles("devanagari", "Devanagari"),
	bengali: notoFiles("bengali", "Bengali"),
	gurmukhi: notoFiles("gurmukhi", "Gurmukhi"),
	gujarati: notoFiles("gujarati", "Gujarati"),
	tamil: notoFiles("tamil", "Tamil"),
	telugu: notoFiles("telugu", "Telugu"),
	kannada: notoFiles("kannada", "Kannada"),
	malayalam: notoFiles("malayalam", "Malayalam"),
};

/** The base family's files (Latin + ₹ + Devanagari). */
export const LABEL_FONT_FILES = FONT_FILES.base;

/** Every family, base first. */
export const FONT_FAMILIES = Object.keys(FONT_FILES) as FontFamily[];

type FontkitFont = ReturnType<typeof fontkit.create>;
type Glyph = ReturnType<FontkitFont["glyphsForString"]>[number];

/**
 * A writing system that must be shaped on its own: fontkit picks its shaper
 * from the run's script, so Latin and Devanagari (one face) still go in
 * separate runs.
 */
export type Script = "latin" | "devanagari" | Exclude<FontFamily, "base">;

/** The family that draws each script. */
export const SCRIPT_FAMILY: Record<Script, FontFamily> = {
	latin: "base",
	devanagari: "base",
	bengali: "bengali",
	gurmukhi: "gurmukhi",
	gujarati: "gujarati",
	tamil: "tamil",
	telugu: "telugu",
	kannada: "kannada",
	malayalam: "malayalam",
};

/** Unicode blocks of each script (dandas U+0964/5 are shared: see {@link scriptOf}). */
const SCRIPT_BLOCKS: ReadonlyArray<readonly [number, number, Script]> = [
	[0x0900, 0x097f, "devanagari"],
	[0x0980, 0x09ff, "bengali"],
	[0x0a00, 0x0a7f, "gurmukhi"],
	[0x0a80, 0x0aff, "gujarati"],
	[0x0b80, 0x0bff, "tamil"],
	[0x0c00, 0x0c7f, "telugu"],
	[0x0c80, 0x0cff, "kannada"],
	[0x0d00, 0x0d7f, "malayalam"],
	[0xa8e0, 0xa8ff, "devanagari"], // Devanagari Extended
	[0x11fc0, 0x11fff, "tamil"], // Tamil Supplement
];

const LATIN_LETTER = /\p{Script=Latin}/u;

/**
 * The script a code point belongs to, or null for a neutral character (space,
 * digit, punctuation, symbol, danda, joiner, combining mark, or a script no
 * family covers) that follows the run it is in.
 */
export function scriptOf(cp: number): Script | null {
	if (cp < 0x80) return (cp >= 0x41 && cp <= 0x5a) || (cp >= 0x61 && cp <= 0x7a) ? "latin" : null;
	if (cp === 0x0964 || cp === 0x0965) return null;
	for (const [from, to, script] of SCRIPT_BLOCKS) if (cp >= from && cp <= to) return script;
	return LATIN_LETTER.test(String.fromCodePoint(cp)) ? "latin" : null;
}

/** The script families (base excluded) whose letters occur in `text`. */
export function scriptFamiliesIn(text: string): Set<FontFamily> {
	const out = new Set<FontFamily>();
	for (const ch of text) {
		const cp = ch.codePointAt(0) ?? 0;
		if (cp < 0x0980) continue;
		const s = scriptOf(cp);
		if (s && SCRIPT_FAMILY[s] !== "base") out.add(SCRIPT_FAMILY[s]);
	}
	return out;
}

/** Characters whose glyphs need no shaping: Latin (with extensions), general punctuation (not ZWJ/ZWNJ), currency, letterlike, arrows. */
const SIMPLE_TEXT =
	/^[\u0020-\u007e\u00a0-\u02ff\u2010-\u2027\u2030-\u205e\u20a0-\u20cf\u2100-\u214f\u2190-\u21ff]*$/;

/** True when `text` can be mapped to glyphs without OpenType shaping. */
export function isSimpleText(text: string): boolean {
	return SIMPLE_TEXT.test(text);
}

/** A shaped run: glyphs with their positions (font units), as fontkit's `layout` answers. */
export interface ShapedText {
	glyphs: Glyph[];
	positions: Array<{ xAdvance: number; xOffset: number; yOffset: number }>;
	/** sum of the x advances (font units) */
	advance: number;
	/** true when every glyph sits at its default advance without offsets (a plain `Tj` draws it) */
	plain: boolean;
}

/** fontkit's positioning features; switched off when a font's GPOS breaks fontkit (see the module notes). */
const NO_POSITIONING = {
	kern: false,
	mark: false,
	mkmk: false,
	abvm: false,
	blwm: false,
	dist: false,
	curs: false,
} as const;

const SHAPE_CACHE_MAX = 20_000;
const shapeCache = new WeakMap<FontkitFont, Map<string, ShapedText>>();

function toShaped(glyphs: Glyph[], positions?: ShapedText["positions"]): ShapedText {
	const pos = positions ?? glyphs.map((g) => ({ xAdvance: g.advanceWidth, xOffset: 0, yOffset: 0 }));
	let advance = 0;
	let plain = true;
	for (let i = 0; i < glyphs.length; i++) {
		const p = pos[i];
		advance += p.xAdvance;
		if (p.xOffset !== 0 || p.yOffset !== 0 || p.xAdvance !== glyphs[i].advanceWidth) plain = false;
	}
	return { glyphs, positions: pos, advance, plain };
}

/**
 * `text` shaped with `font` (the raw fontkit font, not the caching proxy):
 * simple text through the cmap, complex text through fontkit's full layout
 * (see the module notes for the fallbacks); cached per font and text (a text
 * is measured, fitted and encoded several times, and captions repeat on every
 * page).
 */
function shapeWith(font: FontkitFont, text: string): ShapedText {
	let cache = shapeCache.get(font);
	if (!cache) {
		cache = new Map();
		shapeCache.set(font, cache);
	}
	let shaped = cache.get(text);
	if (!shaped) {
		shaped = isSimpleText(text) ? toShaped(font.glyphsForString(text)) : shapeComplex(font, text);
		if (cache.size >= SHAPE_CACHE_MAX) cache.clear();
		cache.set(text, shaped);
	}
	return shaped;
}

function shapeComplex(font: FontkitFont, text: string): ShapedText {
	for (const features of [undefined, NO_POSITIONING]) {
		try {
			const run = font.layout(text, features);
			return toShaped(run.glyphs, run.positions);
		} catch {
			// fontkit bug on this font's tables: try without positioning, then unshaped
		}
	}
	return toShaped(font.glyphsForString(text));
}

/** The raw font behind each caching proxy (so shaping and pdf-lib share one cache). */
const rawFonts = new WeakMap<FontkitFont, FontkitFont>();

/**
 * Wraps a parsed font so pdf-lib's `layout()` calls (encoding and widths) get
 * the same cached shaping as {@link DocumentFonts.draw} (see the module notes).
 */
function withCachedLayout(font: FontkitFont): FontkitFont {
	const layout = (text: string) => {
		const s = shapeWith(font, text);
		return { glyphs: s.glyphs, positions: s.positions } as ReturnType<FontkitFont["layout"]>;
	};
	const proxy = new Proxy(font, {
		get(target, prop) {
			return prop === "layout" ? layout : Reflect.get(target, prop, target);
		},
	});
	rawFonts.set(proxy, font);
	return proxy;
}

const bytesCache = new Map<string, Uint8Array>();
const parsedCache = new WeakMap<Uint8Array, FontkitFont>();

/**
 * The TTF bytes of one family and weight, read from node_modules on first use
 * and kept for the life of the process. Throws when the font package is missing.
 */
export function fontBytes(family: FontFamily, weight: FontWeight): Uint8Array {
	const file = FONT_FILES[family][weight];
	let b = bytesCache.get(file);
	if (!b) {
		b = new Uint8Array(readFileSync(require.resolve(file)));
		bytesCache.set(file, b);
	}
	return b;
}

/** The TTF bytes of the base family (Latin + ₹ + Devanagari). */
export function labelFontBytes(): Record<FontWeight, Uint8Array> {
	return { regular: fontBytes("base", "regular"), bold: fontBytes("base", "bold") };
}

/**
 * A fontkit facade for `PDFDocument.registerFontkit` that parses each byte
 * array once and hands the same parsed font to every later document.
 */
export const cachingFontkit = {
	create(buffer: Uint8Array, postscriptName?: string): FontkitFont {
		if (postscriptName) return fontkit.create(buffer, postscriptName);
		let font = parsedCache.get(buffer);
		if (!font) {
			font = withCachedLayout(fontkit.create(buffer));
			parsedCache.set(buffer, font);
		}
		return font;
	},
};

/** A short text of each script family, shaped once at start so the first document using it is not slow. */
const WARM_TEXT: Record<FontFamily, string> = {
	base: "रवि क्षत्रिय",
	bengali: "বন্দ্যোপাধ্যায়",
	gurmukhi: "ਗੁਰਪ੍ਰੀਤ ਸਿੰਘ",
	gujarati: "કિરણ પટેલ",
	tamil: "சென்னை",
	telugu: "హైదరాబాద్",
	kannada: "ಬೆಂಗಳೂರು",
	malayalam: "കൊച്ചി",
};

/**
 * Reads and parses every family now and shapes a sample of each script
 * (called on service start, so the first label is not slow). Throws when a
 * font package is missing.
 */
export function warmLabelFonts(): void {
	for (const family of FONT_FAMILIES) {
		for (const weight of ["regular", "bold"] as const) {
			const font = cachingFontkit.create(fontBytes(family, weight));
			shapeWith(rawFonts.get(font) ?? font, WARM_TEXT[family]);
		}
	}
}

/** One embedded face of a document. */
export interface Face {
	family: FontFamily;
	weight: FontWeight;
	/** the embedded (subset) font */
	font: PDFFont;
	/** the parsed font pdf-lib embeds from (shared by every document) */
	kit: FontkitFont;
	/** the same font without the caching proxy (shaping, metrics) */
	raw: FontkitFont;
	/** true when the font has a glyph for the code point (memoized per font) */
	covers(cp: number): boolean;
}

const coverage = new WeakMap<FontkitFont, Map<number, boolean>>();

/** `font.hasGlyphForCodePoint`, memoized per font (it is asked for every character drawn). */
function coversWith(font: FontkitFont, cp: number): boolean {
	let m = coverage.get(font);
	if (!m) {
		m = new Map();
		coverage.set(font, m);
	}
	let c = m.get(cp);
	if (c === undefined) {
		c = font.hasGlyphForCodePoint(cp);
		m.set(cp, c);
	}
	return c;
}

/** A piece of text drawn with one face. */
export interface TextRun {
	face: Face;
	text: string;
}

/** Options of {@link DocumentFonts.draw}. */
export interface DrawTextOptions {
	/** left edge (pt) */
	x: number;
	/** baseline (pt) */
	y: number;
	/** font size (pt) */
	size: number;
	weight?: FontWeight;
	color?: Color;
}

/** Printed for a character no embedded face can draw. */
export const MISSING_GLYPH_TEXT = "?";

const BLACK = rgb(0, 0, 0);
const segmenter = new Intl.Segmenter("en", { granularity: "grapheme" });
const RUNS_CACHE_MAX = 5_000;

function graphemes(text: string): string[] {
	return [...segmenter.segment(text)].map((s) => s.segment);
}

/** Single-line printable text: NFC, control characters become spaces, whitespace collapses. */
export function cleanText(value: unknown): string {
	return String(value ?? "")
		.normalize("NFC")
		.replace(/\p{Cc}/gu, " ")
		.replace(/\s+/g, " ")
		.trim();
}

/**
 * The embedded faces of ONE document, and the text operations that use them
 * (run splitting, measuring, fitting, wrapping, drawing). Build it with
 * {@link embedDocumentFonts}; every page of the document shares it.
 */
export class DocumentFonts {
	private readonly pageKeys = new WeakMap<PDFPage, Map<PDFFont, PDFName>>();
	/** weight → family → the face drawing it (see `pick`) */
	private readonly table: Record<FontWeight, Record<FontFamily, Face>>;
	/** runs of recently split texts, per weight (a text is measured, fitted and drawn) */
	private readonly runsCache: Record<FontWeight, Map<string, TextRun[]>> = {
		regular: new Map(),
		bold: new Map(),
	};

	constructor(private readonly faces: ReadonlyMap<string, Face>) {
		if (!faces.get("base:regular") || !faces.get("base:bold")) throw new Error("base faces missing");
		const row = (weight: FontWeight) =>
			Object.fromEntries(FONT_FAMILIES.map((f) => [f, this.pick(f, weight)])) as Record<FontFamily, Face>;
		this.table = { regular: row("regular"), bold: row("bold") };
	}

	/** The base regular font (Latin, ₹, Devanagari). */
	get regular(): PDFFont {
		return this.baseFace("regular").font;
	}

	/** The base bold font. */
	get bold(): PDFFont {
		return this.baseFace("bold").font;
	}

	/** Keys (`family:weight`) of the faces embedded in this document. */
	embedded(): string[] {
		return [...this.faces.keys()];
	}

	private baseFace(weight: FontWeight): Face {
		const f = this.faces.get(`base:${weight}`);
		if (!f) throw new Error("base faces missing");
		return f;
	}

	/** The face of `family` at `weight`, else at the other weight, else the base face. */
	private pick(family: FontFamily, weight: FontWeight): Face {
		return (
			this.faces.get(`${family}:${weight}`) ??
			this.faces.get(`${family}:${weight === "bold" ? "regular" : "bold"}`) ??
			this.baseFace(weight)
		);
	}

	/**
	 * Splits `text` into runs by script (see the module notes); characters no
	 * face covers become {@link MISSING_GLYPH_TEXT}.
	 */
	runs(text: string, weight: FontWeight = "regular"): TextRun[] {
		const cache = this.runsCache[weight];
		let runs = cache.get(text);
		if (!runs) {
			runs = this.split(text, weight);
			if (cache.size >= RUNS_CACHE_MAX) cache.clear();
			cache.set(text, runs);
		}
		return runs;
	}

	private split(text: string, weight: FontWeight): TextRun[] {
		const faces = this.table[weight];
		const base = faces.base;
		const out: TextRun[] = [];
		let face: Face | null = null;
		/** script of the current run; null while it holds only neutral characters */
		let script: Script | null = null;
		let buf = "";
		for (const ch of text.normalize("NFC")) {
			const cp = ch.codePointAt(0) ?? 0;
			const s = scriptOf(cp);
			let next: Face = s ? faces[SCRIPT_FAMILY[s]] : face?.covers(cp) ? face : base;
			let c = ch;
			if (!next.covers(cp)) {
				c = MISSING_GLYPH_TEXT;
				next = face ?? base;
			}
			const sameRun = next === face && (s === null || script === null || s === script);
			if (!sameRun) {
				if (face && buf) out.push({ face, text: buf });
				face = next;
				script = null;
				buf = "";
			}
			if (s && c === ch) script = s;
			buf += c;
		}
		if (face && buf) out.push({ face, text: buf });
		return out;
	}

	/** Width (pt) of `text` at `size` pt: the sum of its runs, each measured (shaped) with its own face. */
	width(text: string, size: number, weight: FontWeight = "regular"): number {
		let w = 0;
		for (const run of this.runs(text, weight)) w += runWidth(run);
		return w * size;
	}

	/** `text` cut (by grapheme) and ended with "…" so it is at most `maxWidth` pt wide. */
	fit(text: string, size: number, maxWidth: number, weight: FontWeight = "regular"): string {
		if (this.width(text, size, weight) <= maxWidth) return text;
		const g = graphemes(text);
		let lo = 0;
		let hi = g.length;
		while (lo < hi) {
			const mid = Math.ceil((lo + hi) / 2);
			if (this.width(`${g.slice(0, mid).join("").trimEnd()}…`, size, weight) <= maxWidth) lo = mid;
			else hi = mid - 1;
		}
		return `${g.slice(0, lo).join("").trimEnd()}…`;
	}

	/**
	 * Greedy word wrap of `text` (cleaned) into at most `maxLines` lines of
	 * `maxWidth` pt (line width = sum of its words and spaces, each measured
	 * once with its runs' faces); an over-long word is broken by grapheme; the
	 * last line ends with "…" when text remains.
	 */
	wrap(
		text: string,
		size: number,
		maxWidth: number,
		maxLines: number,
		weight: FontWeight = "regular",
	): string[] {
		const words = cleanText(text).split(" ").filter(Boolean);
		const space = this.width(" ", size, weight);
		const lines: string[] = [];
		let current: string[] = [];
		let currentWidth = 0;
		const finish = (rest: string) => {
			lines[maxLines - 1] = this.fit(`${lines[maxLines - 1]}${rest}`, size, maxWidth, weight);
			return lines;
		};
		for (let i = 0; i < words.length; i++) {
			let word = words[i];
			let ww = this.width(word, size, weight);
			const extra = current.length ? space + ww : ww;
			if (currentWidth + extra <= maxWidth) {
				current.push(word);
				currentWidth += extra;
				continue;
			}
			if (current.length) {
				lines.push(current.join(" "));
				current = [];
				currentWidth = 0;
				if (lines.length === maxLines) return finish(` ${words.slice(i).join(" ")}`);
			}
			// the word alone is too wide: break it by grapheme
			while (ww > maxWidth) {
				const g = graphemes(word);
				let n = g.length - 1;
				while (n > 1 && this.width(g.slice(0, n).join(""), size, weight) > maxWidth) n--;
				lines.push(g.slice(0, n).join(""));
				word = g.slice(n).join("");
				ww = this.width(word, size, weight);
				if (lines.length === maxLines) return finish(`${word} ${words.slice(i + 1).join(" ")}`.trimEnd());
			}
			current = [word];
			currentWidth = ww;
		}
		if (current.length) {
			if (lines.length === maxLines) return finish(` ${current.join(" ")}`);
			lines.push(current.join(" "));
		}
		return lines;
	}

	/**
	 * Draws `text` (one line, not fitted) on `page` with its left edge at `x`
	 * and baseline at `y`, each run with its own face and shaping (see the
	 * module notes). Returns the drawn width (pt).
	 */
	draw(page: PDFPage, text: string, opts: DrawTextOptions): number {
		const { x, y, size } = opts;
		const ops: PDFOperator[] = [pushGraphicsState(), setFillingColor(opts.color ?? BLACK)];
		let pen = x;
		for (const run of this.runs(text, opts.weight ?? "regular")) {
			const { font, raw } = run.face;
			const shaped = shapeWith(raw, run.text);
			// registers the glyphs in the subset; same glyphs as `shaped` (one shaping cache)
			const hex = font.encodeText(run.text).toString().slice(1, -1);
			const complex = !isSimpleText(run.text);
			if (complex) {
				// inline property list: << /ActualText <FEFF…> >> (UTF-16BE hex, so plain ASCII in the stream)
				const props = `<</ActualText ${PDFHexString.fromText(run.text).toString()}>>`;
				ops.push(PDFOperator.of(PDFOperatorNames.BeginMarkedContentSequence, [PDFName.of("Span"), props]));
			}
			ops.push(
				beginText(),
				setFontAndSize(this.fontKey(page, font), size),
				setTextMatrix(1, 0, 0, 1, pen, y),
			);
			if (shaped.plain) ops.push(showText(PDFHexString.of(hex)));
			else ops.push(...positionedText(page, hex, shaped, size, raw.unitsPerEm));
			ops.push(endText());
			if (complex) ops.push(PDFOperator.of(PDFOperatorNames.EndMarkedContent));
			pen += (shaped.advance * size) / raw.unitsPerEm;
		}
		ops.push(popGraphicsState());
		page.pushOperators(...ops);
		return pen - x;
	}

	/** The page's resource name of `font` (one per page and font). */
	private fontKey(page: PDFPage, font: PDFFont): PDFName {
		let keys = this.pageKeys.get(page);
		if (!keys) {
			keys = new Map();
			this.pageKeys.set(page, keys);
		}
		let key = keys.get(font);
		if (!key) {
			key = page.node.newFontDictionary(font.name, font.ref);
			keys.set(font, key);
		}
		return key;
	}
}

/** Width of a run in em (shaping is cached per font and text). */
function runWidth(run: TextRun): number {
	const { raw } = run.face;
	return shapeWith(raw, run.text).advance / raw.unitsPerEm;
}

/**
 * `TJ` operators placing each glyph of `shaped` where GPOS put it: x offsets
 * and advances as `TJ` adjustments (thousandths of an em), y offsets as a
 * text rise. `hex` holds the subset glyph ids, 4 hex digits per glyph.
 */
function positionedText(
	page: PDFPage,
	hex: string,
	shaped: ShapedText,
	size: number,
	upm: number,
): PDFOperator[] {
	const k = 1000 / upm;
	const ops: PDFOperator[] = [];
	let items: PDFObject[] = [];
	let ids = "";
	let pending = 0;
	let rise = 0;
	const flushIds = () => {
		if (ids) items.push(PDFHexString.of(ids));
		ids = "";
	};
	const flushAdjust = () => {
		const n = Math.round(pending);
		if (n !== 0) {
			flushIds();
			items.push(PDFNumber.of(n));
		}
		pending = 0;
	};
	const flushShow = () => {
		flushIds();
		if (items.length)
			ops.push(PDFOperator.of(PDFOperatorNames.ShowTextAdjusted, [page.doc.context.obj(items)]));
		items = [];
	};
	for (let i = 0; i < shaped.glyphs.length; i++) {
		const p = shaped.positions[i];
		if (p.yOffset !== rise) {
			flushAdjust();
			flushShow();
			rise = p.yOffset;
			ops.push(setTextRise((rise * size) / upm));
		}
		pending -= p.xOffset * k;
		flushAdjust();
		ids += hex.slice(i * 4, i * 4 + 4);
		pending += (shaped.glyphs[i].advanceWidth + p.xOffset - p.xAdvance) * k;
	}
	flushAdjust();
	flushShow();
	if (rise !== 0) ops.push(setTextRise(0));
	return ops;
}

/** Texts a document will draw, by weight (only their scripts matter). */
export interface DocumentTexts {
	regular?: Iterable<string>;
	bold?: Iterable<string>;
}

/**
 * Embeds into `doc`, once, the faces needed to draw `texts`: the base family
 * (Latin, ₹, Devanagari) in both weights always, and each other script's Noto
 * Sans face only at the weights whose texts contain that script. Every face is
 * subset (only the glyphs drawn end up in the file). Call it ONCE per document
 * (a bulk document with many pages, a manifest with many rows) and draw every
 * page with the returned {@link DocumentFonts}; a text whose script was not
 * announced falls back to the same family's other weight, else prints "?".
 * Throws when a font package is missing.
 */
export async function embedDocumentFonts(
	doc: PDFDocument,
	texts: DocumentTexts = {},
): Promise<DocumentFonts> {
	doc.registerFontkit(cachingFontkit);
	const wanted: Array<[FontFamily, FontWeight]> = [
		["base", "regular"],
		["base", "bold"],
	];
	for (const weight of ["regular", "bold"] as const) {
		const families = new Set<FontFamily>();
		for (const t of texts[weight] ?? []) for (const f of scriptFamiliesIn(t)) families.add(f);
		for (const f of FONT_FAMILIES) if (families.has(f)) wanted.push([f, weight]);
	}
	const faces = await Promise.all(
		wanted.map(async ([family, weight]): Promise<[string, Face]> => {
			const bytes = fontBytes(family, weight);
			const font = await doc.embedFont(bytes, { subset: true });
			const kit = cachingFontkit.create(bytes);
			const raw = rawFonts.get(kit) ?? kit;
			const face: Face = { family, weight, font, kit, raw, covers: (cp) => coversWith(raw, cp) };
			return [`${family}:${weight}`, face];
		}),
	);
	return new DocumentFonts(new Map(faces));
}

/** The embedded fonts of one label document (the same object as {@link DocumentFonts}). */
export type LabelFonts = DocumentFonts;

/** {@link embedDocumentFonts} under its former name (labels). */
export const embedLabelFonts = embedDocumentFonts;
