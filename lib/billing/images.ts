/**
 * The images of a weight dispute (issue 27; docs/decisions/0105-weight-discrepancies.md):
 * a JPEG or PNG, recognised by its first bytes (never by the name or the
 * declared type), decoded and written again by sharp (libvips): what is stored
 * is a real image of that format, turned upright by its EXIF orientation, with
 * no metadata at all (EXIF, GPS, XMP, comments and text chunks dropped:
 * sharp writes none unless asked).
 */
import { createHash } from "node:crypto";
import sharp from "sharp";
import { fail } from "../platform/errors";
import type { NewImage } from "./discrepancy-store";

/** Largest image decoded (pixels): 40 megapixels (a 5 MB photo is far below; a decompression bomb is not). */
export const MAX_IMAGE_PIXELS = 40_000_000;

/** The format of `bytes` by its signature: JPEG (FF D8 FF), PNG (89 50 4E 47 0D 0A 1A 0A), else null. */
export function imageTypeOf(bytes: Buffer): "image/jpeg" | "image/png" | null {
	if (bytes.length >= 3 && bytes[0] === 0xff && bytes[1] === 0xd8 && bytes[2] === 0xff) return "image/jpeg";
	const png = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
	if (bytes.length >= 8 && png.every((b, i) => bytes[i] === b)) return "image/png";
	return null;
}

/**
 * Image `bytes` (the `n`th of the form, for the error's words) as stored: its
 * format from its signature, decoded (at most {@link MAX_IMAGE_PIXELS}),
 * rotated upright, written again without metadata (JPEG quality 90; PNG
 * lossless), with its size in pixels and the SHA-256 of what is stored.
 * @throws 400 `invalid_dispute` when the bytes are not a JPEG or PNG, or cannot be decoded
 */
export async function cleanImage(bytes: Buffer, n: number): Promise<NewImage> {
	const type = imageTypeOf(bytes);
	if (!type) throw fail("invalid_dispute", `image ${n} is not a JPEG or PNG image (by its bytes)`);
	try {
		const img = sharp(bytes, { limitInputPixels: MAX_IMAGE_PIXELS, failOn: "error" }).rotate();
		const { data, info } = await (type === "image/jpeg" ? img.jpeg({ quality: 90 }) : img.png()).toBuffer({
			resolveWithObject: true,
		});
		return {
			content_type: type,
			width: info.width,
			height: info.height,
			bytes: data,
			sha256: createHash("sha256").update(data).digest("hex"),
		};
	} catch (err) {
		throw fail(
			"invalid_dispute",
			`image ${n} cannot be read as ${type === "image/jpeg" ? "JPEG" : "PNG"} (${(err as Error).message})`,
		);
	}
}
