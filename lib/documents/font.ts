/**
 * Label fonts (STACK-NOTES "Documents").
 *
 * pdf-lib's standard fonts (Helvetica) use WinAnsi and cannot encode "₹" or
 * Devanagari, so labels embed Noto Sans Devanagari (Latin + ₹ + Devanagari,
 * OFL-1.1) from the `@expo-google-fonts/noto-sans-devanagari` package, loaded
 * from node_modules, subsetted per document through `@pdf-lib/fontkit`.
 *
 * Cost (measured on 2 shared cores): re-parsing the two fonts for every label
 * made a label ≈ 33 ms, so the TTF bytes are read once per process and the
 * parsed fontkit font is cached (a parsed font is only read when a document
 * subsets it, so one instance is safely shared by every document). Shaping is
 * the next cost: fontkit's `layout()` runs the full OpenType pipeline (≈ 0.5 ms
 * per string with this font) although pdf-lib only uses the resulting glyph ids
 * and advance widths, so text in simple scripts (Latin, punctuation, currency
 * signs such as ₹) takes the plain cmap path `glyphsForString()` (≈ 3 µs; same
 * glyphs, as this font applies no default Latin ligatures), and only text with
 * complex-script characters (Devanagari and the like) is shaped.
 */
// @pdf-lib/fontkit 1.1.1 is compiled with regenerator; shaping Hindi needs the runtime first.
import "regenerator-runtime/runtime";
import { readFileSync } from "node:fs";
import fontkit from "@pdf-lib/fontkit";
import type { PDFDocument, PDFFont } from "pdf-lib";

/** Module paths (resolved in node_modules) of the two weights labels use. */
export const LABEL_FONT_FILES = {
	regular: "@expo-google-fonts/noto-sans-devanagari/400Regular/NotoSansDevanagari_400Regular.ttf",
	bold: "@expo-google-fonts/noto-sans-devanagari/700Bold/NotoSansDevanagari_700Bold.ttf",
} as const;

/** The embedded fonts of one label document. */
export interface LabelFonts {
	regular: PDFFont;
	bold: PDFFont;
}

interface FontBytes {
	regular: Uint8Array;
	bold: Uint8Array;
}

type FontkitFont = ReturnType<typeof fontkit.create>;

/** Characters whose glyphs need no shaping: Latin (with extensions), general punctuation (not ZWJ/ZWNJ), currency, letterlike, arrows. */
const SIMPLE_TEXT =
	/^[\u0020-\u007e\u00a0-\u02ff\u2010-\u2027\u2030-\u205e\u20a0-\u20cf\u2100-\u214f\u2190-\u21ff]*$/;

/** True when `text` can be mapped to glyphs without OpenType shaping. */
export function isSimpleText(text: string): boolean {
	return SIMPLE_TEXT.test(text);
}

/** Wraps a parsed font so `layout()` skips shaping for simple text (see the module notes). */
function withFastLayout(font: FontkitFont): FontkitFont {
	const layout = (text: string, features?: Parameters<FontkitFont["layout"]>[1]) =>
		isSimpleText(text)
			? ({ glyphs: font.glyphsForString(text) } as ReturnType<FontkitFont["layout"]>)
			: font.layout(text, features);
	return new Proxy(font, {
		get(target, prop) {
			return prop === "layout" ? layout : Reflect.get(target, prop, target);
		},
	});
}

let bytesCache: FontBytes | undefined;
const parsedCache = new WeakMap<Uint8Array, FontkitFont>();

/**
 * The TTF bytes of the label fonts, read from node_modules on first use and
 * kept for the life of the process. Throws when the font package is missing.
 */
export function labelFontBytes(): FontBytes {
	if (!bytesCache) {
		bytesCache = {
			regular: new Uint8Array(readFileSync(require.resolve(LABEL_FONT_FILES.regular))),
			bold: new Uint8Array(readFileSync(require.resolve(LABEL_FONT_FILES.bold))),
		};
	}
	return bytesCache;
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
			font = withFastLayout(fontkit.create(buffer));
			parsedCache.set(buffer, font);
		}
		return font;
	},
};

/** Reads and parses the label fonts now (called on service start so the first label is not slow). */
export function warmLabelFonts(): void {
	const b = labelFontBytes();
	cachingFontkit.create(b.regular);
	cachingFontkit.create(b.bold);
}

/**
 * Embeds the regular and bold label fonts into `doc`, subsetted (only the
 * glyphs drawn end up in the file). Call once per document; a bulk document
 * with many pages reuses the returned fonts.
 */
export async function embedLabelFonts(doc: PDFDocument): Promise<LabelFonts> {
	const b = labelFontBytes();
	doc.registerFontkit(cachingFontkit);
	const [regular, bold] = await Promise.all([
		doc.embedFont(b.regular, { subset: true }),
		doc.embedFont(b.bold, { subset: true }),
	]);
	return { regular, bold };
}
