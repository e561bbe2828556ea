/**
 * The bulk upload's multipart body, read by intake itself (issue 10, issue 25;
 * spec §4.1; docs/decisions/0073-bulk-parts-any-order.md). The gateway
 * hands the raw request body over as `ctx.stream` (a moleculer-web `stream`
 * alias; over NATS it crosses in chunks) with its `Content-Type`; the shared
 * reader (lib/shared/multipart.ts `readMultipartForm`, @fastify/busboy) parses
 * it with this route's bounds ({@link BULK_FORM_LIMITS}), so the form's parts
 * may come in ANY order: the fields are collected whenever they arrive and
 * nothing is decided before the body ends, except the size (413 as soon as
 * the file passes 25 MB).
 *
 * The file part is counted while it streams and kept in memory (at most
 * {@link BULK_MAX_BYTES}, as before issue 25: the bytes checks and the one
 * transaction that stores job + file need the whole file); nothing is written
 * to PostgreSQL here, so a refused upload leaves nothing behind.
 */

import type { Readable } from "node:stream";
import { BULK_MAX_BYTES } from "../../contracts/http/intake-bulk-input";
import { type ApiError, failWith } from "../../platform/errors";
import { type FormFile, type MultipartLimits, readMultipartForm } from "../../shared/multipart";

export type { FormFile } from "../../shared/multipart";

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

/**
 * Bounds of the upload body: one file of at most 25 MB, a few small fields,
 * the whole body at most {@link BULK_MAX_BODY_BYTES}; too large is 413
 * `file_too_large` ({@link fileTooLarge}).
 */
export const BULK_FORM_LIMITS: MultipartLimits = {
	maxFiles: 1,
	maxFileBytes: BULK_MAX_BYTES,
	maxBodyBytes: BULK_MAX_BODY_BYTES,
	fields: 10,
	fieldNameSize: 100,
	fieldSize: 1024,
	parts: 12,
	tooLarge: fileTooLarge,
};

/** What the body held. */
export interface UploadForm {
	/** the non-file fields, in the order they came (a name may repeat) */
	fields: Array<[name: string, value: string]>;
	/** the file part (`import_file` expected; any other name is "no import_file"), or null when none came */
	file: FormFile | null;
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
export async function readUploadForm(stream: Readable, contentType: string): Promise<UploadForm> {
	const { fields, files } = await readMultipartForm(stream, contentType, BULK_FORM_LIMITS);
	return { fields, file: files[0] ?? null };
}
