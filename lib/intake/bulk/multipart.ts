/**
 * The bulk upload's multipart body, read by intake itself (issue 10, issue 25;
 * spec §4.1; docs/decisions/0073-bulk-parts-any-order.md). The gateway
 * hands the raw request body over as `ctx.stream` (a moleculer-web `stream`
 * alias; over NATS it crosses in chunks) with its `Content-Type`; this module
 * parses it with @fastify/busboy (the parser moleculer-web itself uses), so
 * the form's parts may come in ANY order: the fields are collected whenever
 * they arrive and nothing is decided before the body ends, except the size
 * (413 as soon as the file passes 25 MB).
 *
 * The file part is counted while it streams and kept in memory (at most
 * {@link BULK_MAX_BYTES}, as before issue 25: the bytes checks and the one
 * transaction that stores job + file need the whole file); nothing is written
 * to PostgreSQL here, so a refused upload leaves nothing behind.
 */

import type { Readable } from "node:stream";
import { Busboy, type BusboyFileStream } from "@fastify/busboy";
import { BULK_MAX_BYTES } from "../../contracts/http/intake-bulk-input";
import { type ApiError, fail, failWith } from "../../platform/errors";

/** 413 `file_too_large`: the upload passed {@link BULK_MAX_BYTES}; nothing is stored. */
export function fileTooLarge(): ApiError {
	return failWith("file_too_large", { limit_bytes: BULK_MAX_BYTES });
}

/**
 * Largest whole body: the 25 MB file plus 1 MB for the form's other parts,
 * headers and boundaries. Counted on the raw stream, so bytes busboy never
 * hands over as a part (a preamble, junk between parts) cannot make the
 * upload unbounded either; past it: 413 `file_too_large`.
 */
export const BULK_MAX_BODY_BYTES = BULK_MAX_BYTES + 1024 * 1024;

/** busboy limits of the upload body: one file of at most 25 MB, a few small fields. */
export const BULK_FORM_LIMITS = {
	files: 1,
	fileSize: BULK_MAX_BYTES,
	fields: 10,
	fieldNameSize: 100,
	fieldSize: 1024,
	parts: 12,
} as const;

/** The file part of the form. */
export interface FormFile {
	/** the part's name (`import_file` expected; anything else is "no import_file") */
	fieldname: string;
	/** the part's file name as sent ("" when none) */
	filename: string;
	/** the part's content type as sent ("" when none) */
	mimetype: string;
	/** the file's bytes (at most {@link BULK_MAX_BYTES}) */
	bytes: Buffer;
}

/** What the body held. */
export interface UploadForm {
	/** the non-file fields, in the order they came (a name may repeat) */
	fields: Array<[name: string, value: string]>;
	/** the file part, or null when none came */
	file: FormFile | null;
}

/** 400 `invalid_multipart` with what was wrong. */
function invalidMultipart(why: string): ApiError {
	return fail("invalid_multipart", why);
}

/**
 * Reads the multipart/form-data body `stream` (its `Content-Type` header in
 * `contentType`) to its end and answers its fields and its file. The parts
 * may come in any order. Nothing but the size is checked here (the caller
 * decides on the whole form once it is read).
 *
 * @throws 413 `file_too_large` as soon as the file part passes {@link BULK_MAX_BYTES}, or the whole body
 *   {@link BULK_MAX_BODY_BYTES}
 * @throws 400 `invalid_multipart` when the body is not multipart/form-data, is malformed or cut short (the
 *   client went away), holds more than one file, more than {@link BULK_FORM_LIMITS} parts or fields, or a
 *   field name / value longer than its limit
 *
 * On any refusal the rest of `stream` is drained (read and dropped), so the
 * gateway can answer and the connection stays usable.
 */
export function readUploadForm(stream: Readable, contentType: string): Promise<UploadForm> {
	return new Promise<UploadForm>((resolve, reject) => {
		const fields: UploadForm["fields"] = [];
		let settled = false;
		let parser: ReturnType<typeof Busboy> | null = null;
		const fail = (err: unknown) => {
			if (settled) return;
			settled = true;
			if (parser) stream.unpipe(parser);
			stream.off("error", onStreamError);
			// keep an error listener: a late stream error must not become an uncaught exception
			stream.on("error", () => undefined);
			if (!stream.readableEnded && !stream.destroyed) stream.resume();
			reject(err);
		};
		const onStreamError = (err: Error) =>
			fail(invalidMultipart(`the upload was interrupted: ${err.message}`));
		stream.on("error", onStreamError);
		let bodyBytes = 0;
		const countBody = (chunk: Buffer) => {
			bodyBytes += chunk.length;
			if (bodyBytes > BULK_MAX_BODY_BYTES) {
				stream.off("data", countBody);
				fail(fileTooLarge());
			}
		};
		stream.on("data", countBody);
		// a body destroyed without an error or an end (the client went away) is refused too, never awaited forever
		stream.once("close", () => {
			if (!stream.readableEnded) fail(invalidMultipart("the upload was interrupted"));
		});
		try {
			parser = Busboy({ headers: { "content-type": contentType }, limits: BULK_FORM_LIMITS });
		} catch (err) {
			fail(invalidMultipart((err as Error).message));
			return;
		}
		let part: { head: Omit<FormFile, "bytes">; chunks: Buffer[]; size: number } | null = null;
		parser.on("file", (fieldname: string, file: BusboyFileStream, filename: string, _enc, mimetype) => {
			const p = {
				head: { fieldname, filename: filename ?? "", mimetype: mimetype ?? "" },
				chunks: [] as Buffer[],
				size: 0,
			};
			part = p;
			file.on("limit", () => fail(fileTooLarge()));
			file.on("data", (chunk: Buffer) => {
				if (settled) return;
				p.size += chunk.length;
				p.chunks.push(chunk);
			});
			file.on("error", (err: Error) => fail(invalidMultipart(err.message)));
		});
		parser.on("field", (name: string, value: string, nameTruncated: boolean, valueTruncated: boolean) => {
			if (nameTruncated || valueTruncated) {
				fail(
					invalidMultipart(
						`form field ${nameTruncated ? "name" : `${JSON.stringify(name)} value`} longer than ${
							nameTruncated ? BULK_FORM_LIMITS.fieldNameSize : BULK_FORM_LIMITS.fieldSize
						} bytes`,
					),
				);
				return;
			}
			fields.push([name, value]);
		});
		parser.on("filesLimit", () => fail(invalidMultipart("more than one file part")));
		parser.on("fieldsLimit", () => fail(invalidMultipart(`more than ${BULK_FORM_LIMITS.fields} fields`)));
		parser.on("partsLimit", () => fail(invalidMultipart(`more than ${BULK_FORM_LIMITS.parts} parts`)));
		parser.on("error", (err: unknown) => fail(invalidMultipart((err as Error)?.message ?? String(err))));
		parser.on("finish", () => {
			if (settled) return;
			settled = true;
			stream.off("error", onStreamError);
			const p = part as { head: Omit<FormFile, "bytes">; chunks: Buffer[]; size: number } | null;
			resolve({ fields, file: p ? { ...p.head, bytes: Buffer.concat(p.chunks, p.size) } : null });
		});
		stream.pipe(parser);
	});
}
