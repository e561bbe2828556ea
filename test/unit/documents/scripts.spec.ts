/**
 * Indian scripts on labels (issue 8; lib/documents/font.ts): consignee names and addresses in the
 * eight scripts render shaped, with their own Noto face, without a .notdef glyph, and extract as
 * typed (ActualText); mixed-script names use every run's face; measuring uses each run's face.
 * Labels come from the real documents service (./setup.ts fakes); the checks parse the PDF itself.
 */
import assert from "node:assert/strict";
import { inflateSync } from "node:zlib";
import {
	PDFArray,
	PDFDict,
	PDFDocument,
	PDFName,
	type PDFObject,
	PDFRawStream,
	PDFRef,
	type PDFStream,
	StandardFonts,
} from "pdf-lib";
import {
	embedDocumentFonts,
	FONT_FILES,
	MISSING_GLYPH_TEXT,
	scriptFamiliesIn,
} from "../../../lib/documents/font";
import { newSender } from "../../helpers/broker";
import { address } from "../../helpers/fixtures";
import { book, download, orderRecord, pdfText, requireTools, useDocuments, warehouseRow } from "./setup";

/** A name and a street line in each script (real words, with conjuncts and pre-base / split vowels). */
const SCRIPTS: Array<{ script: string; face: string; name: string; street: string }> = [
	{ script: "Devanagari", face: "NotoSansDevanagari", name: "रवि क्षत्रिय", street: "शिवाजी नगर, प्लॉट १२" },
	{ script: "Bengali", face: "NotoSansBengali", name: "সুমন বন্দ্যোপাধ্যায়", street: "কলকাতা রোড ১২" },
	{ script: "Gurmukhi", face: "NotoSansGurmukhi", name: "ਗੁਰਪ੍ਰੀਤ ਸਿੰਘ", street: "ਅੰਮ੍ਰਿਤਸਰ ਰੋਡ" },
	{ script: "Gujarati", face: "NotoSansGujarati", name: "કિરણ પટેલ", street: "અમદાવાદ સ્ટેશન રોડ" },
	{ script: "Tamil", face: "NotoSansTamil", name: "ரவி குமார்", street: "சென்னை கோயில் தெரு" },
	{ script: "Telugu", face: "NotoSansTelugu", name: "వెంకట రమణ", street: "హైదరాబాద్ స్ట్రీట్" },
	{ script: "Kannada", face: "NotoSansKannada", name: "ಮಂಜುನಾಥ ಗೌಡ", street: "ಬೆಂಗಳೂರು ರಸ್ತೆ" },
	{ script: "Malayalam", face: "NotoSansMalayalam", name: "അനിൽ കുമാർ", street: "കൊച്ചി റോഡ്" },
];

/** A booked order of a fresh account whose consignee is `name` at `street`. */
function scriptOrder(name: string, street: string, over: { product_name?: string } = {}) {
	const sender = newSender();
	const w = warehouseRow(sender);
	const o = orderRecord(
		sender,
		{
			pickup_address_id: w.id,
			consignee: address({
				name,
				phone: "9876543210",
				address_1: street,
				address_2: null,
				landmark: null,
				city: "Bengaluru",
				state: "Karnataka",
				pincode: "560001",
			}),
		},
		over,
	);
	book(o);
	return { sender, order: o };
}

function lookup(doc: PDFDocument, obj: PDFObject | undefined): PDFObject | undefined {
	return obj instanceof PDFRef ? doc.context.lookup(obj) : obj;
}

/** Decoded bytes of a content stream (pdf-lib writes them Flate-compressed). */
function streamText(stream: PDFStream): string {
	if (!(stream instanceof PDFRawStream)) throw new Error("unexpected stream type");
	const filter = stream.dict.get(PDFName.of("Filter"));
	const raw = Buffer.from(stream.contents);
	return (filter ? inflateSync(raw) : raw).toString("latin1");
}

/** What the page's text operators use: per font (BaseFont name), the glyph ids drawn. */
interface GlyphUse {
	font: string;
	gids: number[];
}

/**
 * Reads page 1's content streams: every `Tf` selects a font resource (resolved to its BaseFont),
 * every hex string inside a `Tj` / `TJ` of a text object (BT … ET) holds 2-byte glyph ids of it
 * (Identity-H). `/ActualText <…>` strings of marked content sit outside text objects.
 */
async function glyphUse(pdf: Buffer): Promise<GlyphUse[]> {
	const doc = await PDFDocument.load(pdf);
	const page = doc.getPage(0);
	const resources = lookup(doc, page.node.get(PDFName.of("Resources"))) as PDFDict;
	const fonts = lookup(doc, resources.get(PDFName.of("Font"))) as PDFDict;
	const baseFont = (key: string) => {
		const dict = lookup(doc, fonts.get(PDFName.of(key))) as PDFDict;
		return String(dict.get(PDFName.of("BaseFont"))).replace(/^\//, "");
	};
	const contents = lookup(doc, page.node.get(PDFName.of("Contents")));
	const streams = contents instanceof PDFArray ? contents.asArray().map((r) => lookup(doc, r)) : [contents];
	const text = streams.map((s) => streamText(s as PDFStream)).join("\n");
	const out: GlyphUse[] = [];
	let current: GlyphUse | null = null;
	for (const block of text.match(/BT[\s\S]*?ET/g) ?? []) {
		const tokens = block.match(/\/[^\s/<>[\]()]+\s+[\d.]+\s+Tf|<[0-9A-Fa-f]*>/g) ?? [];
		for (const t of tokens) {
			if (t.endsWith("Tf")) {
				current = { font: baseFont(t.slice(1).split(/\s+/)[0]), gids: [] };
				out.push(current);
			} else {
				assert.ok(current, "glyphs drawn before any Tf");
				const hex = t.slice(1, -1);
				for (let i = 0; i < hex.length; i += 4) current.gids.push(Number.parseInt(hex.slice(i, i + 4), 16));
			}
		}
	}
	return out;
}

/** The fonts (BaseFont names) that drew at least one glyph, and whether any glyph was .notdef (id 0). */
async function fontsAndNotdef(pdf: Buffer) {
	const use = await glyphUse(pdf);
	return {
		fonts: new Set(use.filter((u) => u.gids.length).map((u) => u.font.replace(/-\d+$/, ""))),
		notdef: use.filter((u) => u.gids.includes(0)).map((u) => u.font),
	};
}

describe("labels in Indian scripts (lib/documents/font.ts)", () => {
	useDocuments();

	describe("each script renders with its own Noto face, shaped, no .notdef", () => {
		for (const s of SCRIPTS) {
			it(`${s.script}: "${s.name}" / "${s.street}"`, async function () {
				requireTools(this, ["pdftotext"]);
				const { sender, order } = scriptOrder(s.name, s.street);
				const { pdf } = await download(sender, order.order_id);
				const { fonts, notdef } = await fontsAndNotdef(pdf);
				assert.deepEqual(notdef, [], `.notdef drawn with ${notdef.join(", ")}`);
				// the name is bold, the street regular: each weight of the script's face draws glyphs
				if (s.face === "NotoSansDevanagari") {
					assert.deepEqual([...fonts].sort(), ["NotoSansDevanagari-Bold", "NotoSansDevanagari-Regular"]);
				} else {
					assert.ok(fonts.has(`${s.face}-Bold`), `no ${s.face}-Bold in ${[...fonts]}`);
					assert.ok(fonts.has(`${s.face}-Regular`), `no ${s.face}-Regular in ${[...fonts]}`);
				}
				const text = pdfText(pdf, `script-${s.script}`);
				assert.ok(text.includes(s.name), `"${s.name}" not extracted:\n${text}`);
				assert.ok(text.includes(s.street), `"${s.street}" not extracted:\n${text}`);
			});
		}
	});

	it("a mixed-script name renders every run with its own face, without tofu", async function () {
		requireTools(this, ["pdftotext"]);
		const name = "Ravi रवि ரவி সুমন ਸਿੰਘ";
		const { sender, order } = scriptOrder(name, "12 MG Road");
		const { pdf } = await download(sender, order.order_id);
		const use = await glyphUse(pdf);
		const { fonts, notdef } = await fontsAndNotdef(pdf);
		assert.deepEqual(notdef, []);
		for (const f of [
			"NotoSansDevanagari-Bold",
			"NotoSansTamil-Bold",
			"NotoSansBengali-Bold",
			"NotoSansGurmukhi-Bold",
		])
			assert.ok(fonts.has(f), `no glyphs drawn with ${f}: ${[...fonts]}`);
		// only the weights used are embedded: these scripts appear only in the (bold) name
		assert.ok(!use.some((u) => /NotoSans(Tamil|Bengali|Gurmukhi)-Regular/.test(u.font)));
		const doc = await PDFDocument.load(pdf);
		const embedded = doc.context
			.enumerateIndirectObjects()
			.map(([, o]) => o)
			.filter(
				(o): o is PDFDict =>
					o instanceof PDFDict && o.get(PDFName.of("Type")) === PDFName.of("FontDescriptor"),
			)
			.map((d) => String(d.get(PDFName.of("FontName"))).replace(/^\/|-\d+$/g, ""))
			.sort();
		assert.deepEqual(embedded, [
			"NotoSansBengali-Bold",
			"NotoSansDevanagari-Bold",
			"NotoSansDevanagari-Regular",
			"NotoSansGurmukhi-Bold",
			"NotoSansTamil-Bold",
		]);
		assert.ok(pdfText(pdf, "mixed").includes(name));
	});

	it("a character no face covers prints as '?' (never .notdef), the rest as typed", async function () {
		requireTools(this, ["pdftotext"]);
		const { sender, order } = scriptOrder("Asha 😀 آشا", "12 MG Road", { product_name: "Kurta 中文" });
		const { pdf } = await download(sender, order.order_id);
		assert.deepEqual((await fontsAndNotdef(pdf)).notdef, []);
		const text = pdfText(pdf, "unsupported");
		assert.ok(text.includes(`Asha ${MISSING_GLYPH_TEXT} ${MISSING_GLYPH_TEXT.repeat(3)}`), text);
		assert.ok(text.includes(`Kurta ${MISSING_GLYPH_TEXT.repeat(2)}`), text);
	});

	it("the .notdef check can fail: Tamil drawn with a face lacking it is caught", async () => {
		const doc = await PDFDocument.create();
		const fonts = await embedDocumentFonts(doc);
		doc.addPage([200, 100]).drawText("ரவி", { x: 10, y: 50, size: 12, font: fonts.regular });
		const pdf = Buffer.from(await doc.save());
		assert.deepEqual((await fontsAndNotdef(pdf)).notdef.length, 1);
		const helvetica = await PDFDocument.create();
		const f = await helvetica.embedFont(StandardFonts.Helvetica);
		assert.throws(() => f.encodeText("ரவி"), /cannot encode/i);
	});

	describe("measuring, fitting and wrapping use each run's own face", () => {
		let fonts: Awaited<ReturnType<typeof embedDocumentFonts>>;
		before(async () => {
			fonts = await embedDocumentFonts(await PDFDocument.create(), {
				regular: SCRIPTS.map((s) => `${s.name} ${s.street}`),
			});
		});

		it("embeds the faces the texts need, and no more", () => {
			assert.deepEqual(fonts.embedded().sort(), [
				"base:bold",
				"base:regular",
				"bengali:regular",
				"gujarati:regular",
				"gurmukhi:regular",
				"kannada:regular",
				"malayalam:regular",
				"tamil:regular",
				"telugu:regular",
			]);
			assert.deepEqual([...scriptFamiliesIn("Ravi रवि ரவி")], ["tamil"]);
			assert.ok(Object.keys(FONT_FILES).length === 8);
		});

		it("splits a mixed name into runs by script, neutral characters staying in their run", () => {
			const runs = fonts.runs("Ravi रवि, ரவி 12 সুমন");
			assert.deepEqual(
				runs.map((r) => [r.face.family, r.text]),
				[
					["base", "Ravi "],
					["base", "रवि, "],
					["tamil", "ரவி 12 "],
					["bengali", "সুমন"],
				],
			);
		});

		it("a width is the sum of its runs' widths, each with its own face", () => {
			const text = "Ravi ரவி";
			const runs = fonts.runs(text);
			assert.equal(runs.length, 2);
			// each run shaped by fontkit with its face (GPOS advances included), at 10 pt
			const sum = runs.reduce(
				(w, r) =>
					w +
					(r.face.raw.layout(r.text).positions.reduce((a, p) => a + p.xAdvance, 0) * 10) /
						r.face.raw.unitsPerEm,
				0,
			);
			assert.ok(Math.abs(fonts.width(text, 10) - sum) < 0.01, `${fonts.width(text, 10)} vs ${sum}`);
			// measured with the base face alone, the Tamil letters would be .notdef boxes of another width
			assert.notEqual(Math.round(fonts.regular.widthOfTextAtSize(text, 10) * 100), Math.round(sum * 100));
		});

		it("fits and wraps script text within the width, by grapheme, with '…'", () => {
			for (const s of SCRIPTS) {
				const long = `${s.street} ${s.name} ${s.street} ${s.name} ${s.street}`;
				const cut = fonts.fit(long, 10, 120);
				assert.ok(cut.endsWith("…"), cut);
				assert.ok(fonts.width(cut, 10) <= 120, `${s.script}: ${cut} is ${fonts.width(cut, 10)} wide`);
				const lines = fonts.wrap(long, 10, 120, 2);
				assert.equal(lines.length, 2);
				for (const l of lines) assert.ok(fonts.width(l, 10) <= 120, `${s.script}: "${l}" too wide`);
				assert.ok(lines[1].endsWith("…"));
			}
		});
	});
});
