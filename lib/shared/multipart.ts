/**
 * The multipart/form-data reader of every upload route (the gateway's `upload`
 * route, lib/gateway/upload.ts: the raw body crosses as the action's
 * `ctx.stream`, its `Content-Type` in the params; docs/decisions/0073-bulk-parts-any-order.md).
 * The serving service reads the body with {@link readMultipartForm} and its own
 * {@link MultipartLimits}: the bulk order upload (lib/intake/bulk/multipart.ts,
 * one file of 25 MB), a weight dispute's images (several small files).
 *
 * The body is parsed with @fastify/busboy (the parser moleculer-web itself
 * uses), so the form's parts may come in ANY order: the fields and files are
 * collected whenever they arrive and nothing is decided before the body ends,
 * except the sizes (413 as soon as a file passes its limit or the body its
 * own). File parts are counted while they stream and kept in memory (at most
 * `maxFiles` × `maxFileBytes`, within `maxBodyBytes`): the caller's checks
 * need whole files, and nothing is stored before the whole form is read.
 */

import type { Readable } from "node:stream";
import { Busboy, type BusboyFileStream } from "@fastify/busboy";
import { type ApiError, fail } from "../platform/errors";

/** The bounds of one upload route's form. Every count and size is checked while the body streams. */
export interface MultipartLimits {
	/** most file parts; one more is 400 `invalid_multipart` */
	readonly maxFiles: number;
	/** largest file part in bytes; one byte more is the 413 of {@link tooLarge} */
	readonly maxFileBytes: number;
	/**
	 * largest whole body in bytes (the files, the other parts, headers and
	 * boundaries), counted on the raw stream, so bytes busboy never hands over
	 * as a part (a preamble, junk between parts) cannot make the upload
	 * unbounded; one byte more is the 413 of {@link tooLarge}
	 */
	readonly maxBodyBytes: number;
	/** most non-file fields; one more is 400 `invalid_multipart` */
	readonly fields: number;
	/** longest field name in bytes; longer is 400 `invalid_multipart` */
	readonly fieldNameSize: number;
	/** longest field value in bytes; longer is 400 `invalid_multipart` */
	readonly fieldSize: number;
	/** most parts (fields and files together); one more is 400 `invalid_multipart` */
	readonly parts: number;
	/** the 413 answered when a file passes {@link maxFileBytes} or the body {@link maxBodyBytes} (the route's own code and details) */
	readonly tooLarge: () => ApiError;
	/**
	 * the 400 answered for a body that cannot be read or breaks a count above,
	 * `why` saying what was wrong (e.g. "more than 5 file parts"); default
	 * 400 `invalid_multipart` with `why` (a route with its own code passes its own)
	 */
	readonly invalid?: (why: string) => ApiError;
}

/** A file part of the form. */
export interface FormFile {
	/** the part's name (the route decides which names it accepts) */
	fieldname: string;
	/** the part's file name as sent ("" when none) */
	filename: string;
	/** the part's content type as sent ("" when none) */
	mimetype: string;
	/** the file's bytes (at most the route's `maxFileBytes`) */
	bytes: Buffer;
}

/** What the body held. */
export interface MultipartForm {
	/** the non-file fields, in the order they came (a name may repeat) */
	fields: Array<[name: string, value: string]>;
	/** the file parts, in the order they came (empty when none came) */
	files: FormFile[];
}

/** 400 `invalid_multipart` with what was wrong (the default of {@link MultipartLimits.invalid}). */
function invalidMultipart(why: string): ApiError {
	return fail("invalid_multipart", why);
}

/** A file part being read. */
interface PartInProgress {
	head: Omit<FormFile, "bytes">;
	chunks: Buffer[];
	size: number;
}

/**
 * Reads the multipart/form-data body `stream` (its `Content-Type` header in
 * `contentType`) to its end and answers its fields and its files, each in the
 * order they came. The parts may come in any order. Nothing but the bounds of
 * `limits` is checked here (the caller decides on the whole form once it is read).
 *
 * @throws `limits.tooLarge()` (a 413) as soon as a file part passes `limits.maxFileBytes`, or the whole body
 *   `limits.maxBodyBytes`
 * @throws 400 `invalid_multipart` (or `limits.invalid(why)`) when the body is not multipart/form-data, is
 *   malformed or cut short (the client went away), holds more than `limits.maxFiles` file parts, more than
 *   `limits.parts` parts or `limits.fields` fields, or a field name / value longer than its limit
 *
 * On any refusal the rest of `stream` is drained (read and dropped), so the
 * gateway can answer and the connection stays usable.
 */
export function readMultipartForm(
	stream: Readable,
	contentType: string,
	limits: MultipartLimits,
): Promise<MultipartForm> {
	const invalid = limits.invalid ?? invalidMultipart;
	return new Promise<MultipartForm>((resolve, reject) => {
		const fields: MultipartForm["fields"] = [];
		const parts: PartInProgress[] = [];
		let settled = false;
		let parser: ReturnType<typeof Busboy> | null = null;
		const refuse = (err: unknown) => {
			if (settled) return;
			settled = true;
			if (parser) stream.unpipe(parser);
			stream.off("error", onStreamError);
			// keep an error listener: a late stream error must not become an uncaught exception
			stream.on("error", () => undefined);
			if (!stream.readableEnded && !stream.destroyed) stream.resume();
			reject(err);
		};
		const onStreamError = (err: Error) => refuse(invalid(`the upload was interrupted: ${err.message}`));
		stream.on("error", onStreamError);
		let bodyBytes = 0;
		const countBody = (chunk: Buffer) => {
			bodyBytes += chunk.length;
			if (bodyBytes > limits.maxBodyBytes) {
				stream.off("data", countBody);
				refuse(limits.tooLarge());
			}
		};
		stream.on("data", countBody);
		// a body destroyed without an error or an end (the client went away) is refused too, never awaited forever
		stream.once("close", () => {
			if (!stream.readableEnded) refuse(invalid("the upload was interrupted"));
		});
		try {
			parser = Busboy({
				headers: { "content-type": contentType },
				limits: {
					files: limits.maxFiles,
					fileSize: limits.maxFileBytes,
					fields: limits.fields,
					fieldNameSize: limits.fieldNameSize,
					fieldSize: limits.fieldSize,
					parts: limits.parts,
				},
			});
		} catch (err) {
			refuse(invalid((err as Error).message));
			return;
		}
		parser.on("file", (fieldname: string, file: BusboyFileStream, filename: string, _enc, mimetype) => {
			const p: PartInProgress = {
				head: { fieldname, filename: filename ?? "", mimetype: mimetype ?? "" },
				chunks: [],
				size: 0,
			};
			parts.push(p);
			file.on("limit", () => refuse(limits.tooLarge()));
			file.on("data", (chunk: Buffer) => {
				if (settled) return;
				p.size += chunk.length;
				p.chunks.push(chunk);
			});
			file.on("error", (err: Error) => refuse(invalid(err.message)));
		});
		parser.on("field", (name: string, value: string, nameTruncated: boolean, valueTruncated: boolean) => {
			if (nameTruncated || valueTruncated) {
				refuse(
					invalid(
						`form field ${nameTruncated ? "name" : `${JSON.stringify(name)} value`} longer than ${
							nameTruncated ? limits.fieldNameSize : limits.fieldSize
						} bytes`,
					),
				);
				return;
			}
			fields.push([name, value]);
		});
		parser.on("filesLimit", () =>
			refuse(
				invalid(
					limits.maxFiles === 1 ? "more than one file part" : `more than ${limits.maxFiles} file parts`,
				),
			),
		);
		parser.on("fieldsLimit", () => refuse(invalid(`more than ${limits.fields} fields`)));
		parser.on("partsLimit", () => refuse(invalid(`more than ${limits.parts} parts`)));
		parser.on("error", (err: unknown) => refuse(invalid((err as Error)?.message ?? String(err))));
		parser.on("finish", () => {
			if (settled) return;
			settled = true;
			stream.off("error", onStreamError);
			resolve({
				fields,
				files: parts.map((p) => ({ ...p.head, bytes: Buffer.concat(p.chunks, p.size) })),
			});
		});
		stream.pipe(parser);
	});
}
