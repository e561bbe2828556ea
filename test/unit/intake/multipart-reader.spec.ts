/**
 * The multipart reader of every upload route (lib/shared/multipart.ts
 * `readMultipartForm`) with a form of several files (a weight dispute's shape:
 * a text field and up to N images), and the bulk upload's wrapper over it
 * (lib/intake/bulk/multipart.ts `readUploadForm`: one file, 413
 * `file_too_large`). Real multipart bodies: hand-made (RFC 7578 framing, the
 * parts in a chosen order) and the platform's own `FormData` serialisation.
 * No server, no database.
 */
import assert from "node:assert/strict";
import { once } from "node:events";
import { PassThrough, Readable } from "node:stream";
import { BULK_MAX_BYTES } from "../../../lib/contracts/http/intake-bulk-input";
import { BULK_FORM_LIMITS, BULK_MAX_BODY_BYTES, readUploadForm } from "../../../lib/intake/bulk/multipart";
import { ApiError, errorBodyOf } from "../../../lib/platform/errors";
import { type MultipartLimits, readMultipartForm } from "../../../lib/shared/multipart";
import { multipartBody, type Part } from "../../helpers/multipart";

const BOUNDARY = "----msa-reader-7f3a";
const CONTENT_TYPE = `multipart/form-data; boundary=${BOUNDARY}`;

/** {@link multipartBody} with this spec's boundary by default. */
const bodyOf = (parts: Part[], boundary = BOUNDARY): Buffer => multipartBody(parts, boundary);

/** `bytes` as a stream of `chunk`-byte pieces (a body arriving in several reads). */
function streamOf(bytes: Buffer, chunk = 16 * 1024): Readable {
	const pieces: Buffer[] = [];
	for (let i = 0; i < bytes.length; i += chunk) pieces.push(bytes.subarray(i, i + chunk));
	return Readable.from(pieces, { objectMode: false });
}

/** The 413 of the dispute-like limits: its own code and details. */
const imageTooLarge = () => new ApiError(413, { error: "image_too_large", limit_bytes: 1000 });

/** A dispute-like form: a `reason` field, at most 3 files of 1,000 bytes, a 10,000-byte body. */
const LIMITS: MultipartLimits = {
	maxFiles: 3,
	maxFileBytes: 1000,
	maxBodyBytes: 10_000,
	fields: 4,
	fieldNameSize: 50,
	fieldSize: 200,
	parts: 8,
	tooLarge: imageTooLarge,
};

const image = (n: number, size = 100): Part => ({
	name: "images",
	filename: `photo-${n}.jpg`,
	type: "image/jpeg",
	bytes: Buffer.alloc(size, n),
});
const reason: Part = { name: "reason", value: "the parcel weighed 480 g at pickup" };

/** The error `p` rejected with, as status and body. */
async function refusal(p: Promise<unknown>): Promise<{ status: number; body: Record<string, unknown> }> {
	const err = await p.then(
		() => assert.fail("expected a refusal"),
		(e: unknown) => e,
	);
	const got = errorBodyOf(err);
	assert.ok(got, `an API error, got ${String(err)}`);
	return got;
}

describe("multipart reader of the upload routes (lib/shared/multipart.ts)", () => {
	it("two files and a field, in any order: both files in the order they came, the field kept", async () => {
		const orders: Part[][] = [
			[reason, image(1), image(2)],
			[image(1), reason, image(2)],
			[image(1), image(2), reason],
		];
		for (const parts of orders) {
			const form = await readMultipartForm(streamOf(bodyOf(parts), 37), CONTENT_TYPE, LIMITS);
			assert.deepEqual(form.fields, [["reason", "the parcel weighed 480 g at pickup"]]);
			assert.deepEqual(
				form.files.map((f) => [f.fieldname, f.filename, f.mimetype, f.bytes.length, f.bytes[0]]),
				[
					["images", "photo-1.jpg", "image/jpeg", 100, 1],
					["images", "photo-2.jpg", "image/jpeg", 100, 2],
				],
			);
		}
	});

	it("a body serialised by the platform's FormData reads the same (files of exactly maxFileBytes accepted)", async () => {
		const fd = new FormData();
		fd.append("images", new Blob([Buffer.alloc(1000, 7)], { type: "image/png" }), "a.png");
		fd.append("reason", "too heavy");
		fd.append("images", new Blob([Buffer.alloc(3, 8)], { type: "image/jpeg" }), "b.jpg");
		const req = new Request("http://localhost/", { method: "POST", body: fd });
		const bytes = Buffer.from(await req.arrayBuffer());
		const form = await readMultipartForm(streamOf(bytes), req.headers.get("content-type") ?? "", LIMITS);
		assert.deepEqual(form.fields, [["reason", "too heavy"]]);
		assert.deepEqual(
			form.files.map((f) => [f.filename, f.mimetype, f.bytes.length]),
			[
				["a.png", "image/png", 1000],
				["b.jpg", "image/jpeg", 3],
			],
		);
		assert.ok(form.files[0].bytes.equals(Buffer.alloc(1000, 7)));
	});

	it("no file part: an empty list (the caller decides)", async () => {
		const form = await readMultipartForm(streamOf(bodyOf([reason])), CONTENT_TYPE, LIMITS);
		assert.deepEqual(form, { fields: [["reason", "the parcel weighed 480 g at pickup"]], files: [] });
	});

	it("one file part more than maxFiles: 400 invalid_multipart naming the limit", async () => {
		const { status, body } = await refusal(
			readMultipartForm(
				streamOf(bodyOf([reason, image(1), image(2), image(3), image(4)])),
				CONTENT_TYPE,
				LIMITS,
			),
		);
		assert.equal(status, 400);
		assert.equal(body.error, "invalid_multipart");
		assert.match(String(body.message), /\(more than 3 file parts\)$/);
	});

	it("a file over maxFileBytes: the 413 of tooLarge (its own code and details), the rest drained", async () => {
		const big = image(2, 1001);
		const stream = streamOf(bodyOf([image(1), big, reason]), 64);
		const { status, body } = await refusal(readMultipartForm(stream, CONTENT_TYPE, LIMITS));
		assert.equal(status, 413);
		assert.deepEqual(body, { error: "image_too_large", limit_bytes: 1000 });
		// the rest of the body is read and dropped: the stream reaches its end
		if (!stream.readableEnded) await once(stream, "end");
	});

	it("a body over maxBodyBytes outside any part (a junk preamble): the 413 of tooLarge, before the body ends", async () => {
		const stream = new PassThrough();
		const read = readMultipartForm(stream, CONTENT_TYPE, LIMITS);
		// never ended: the refusal must come from the count alone
		stream.write(Buffer.alloc(LIMITS.maxBodyBytes + 1, 0x61));
		const { status, body } = await refusal(read);
		assert.equal(status, 413);
		assert.equal(body.error, "image_too_large");
		stream.destroy();
	});

	it("malformed, cut short, not multipart, a field too long: 400 invalid_multipart", async () => {
		const whole = bodyOf([image(1), reason]);
		const cut = new PassThrough();
		const cutRead = readMultipartForm(cut, CONTENT_TYPE, LIMITS);
		cut.end(whole.subarray(0, whole.length - 30));
		const cases: Array<[string, Promise<unknown>, RegExp]> = [
			["cut before its closing boundary", cutRead, /Unexpected end of (multipart data|form)/i],
			["JSON", readMultipartForm(streamOf(Buffer.from('{"a":1}')), "application/json", LIMITS), /./],
			["no boundary", readMultipartForm(streamOf(whole), "multipart/form-data", LIMITS), /boundary/i],
			[
				"a field value over fieldSize",
				readMultipartForm(
					streamOf(bodyOf([{ name: "reason", value: "x".repeat(201) }])),
					CONTENT_TYPE,
					LIMITS,
				),
				/form field "reason" value longer than 200 bytes/,
			],
		];
		for (const [what, p, message] of cases) {
			const { status, body } = await refusal(p);
			assert.equal(status, 400, what);
			assert.equal(body.error, "invalid_multipart", what);
			assert.match(String(body.message), message, what);
		}
	});

	it("a route's own 400 (limits.invalid) replaces invalid_multipart, with the same words", async () => {
		const own: MultipartLimits = {
			...LIMITS,
			invalid: (why) => new ApiError(400, { error: "invalid_dispute", message: `dispute: ${why}` }),
		};
		const { status, body } = await refusal(
			readMultipartForm(streamOf(bodyOf([image(1), image(2), image(3), image(4)])), CONTENT_TYPE, own),
		);
		assert.equal(status, 400);
		assert.deepEqual(body, { error: "invalid_dispute", message: "dispute: more than 3 file parts" });
		const notMultipart = await refusal(
			readMultipartForm(streamOf(Buffer.from("{}")), "application/json", own),
		);
		assert.equal(notMultipart.body.error, "invalid_dispute");
	});

	it("a body destroyed mid-part (the client went away): 400 invalid_multipart, never awaited forever", async () => {
		const stream = new PassThrough();
		const read = readMultipartForm(stream, CONTENT_TYPE, LIMITS);
		stream.write(bodyOf([image(1)]).subarray(0, 150));
		setImmediate(() => stream.destroy());
		const { status, body } = await refusal(read);
		assert.equal(status, 400);
		assert.equal(body.error, "invalid_multipart");
		assert.match(String(body.message), /the upload was interrupted/);
	});
});

describe("the bulk upload's wrapper (lib/intake/bulk/multipart.ts readUploadForm)", () => {
	const csv: Part = {
		name: "import_file",
		filename: "orders.csv",
		type: "text/csv",
		bytes: Buffer.from("a,b\n1,2\n"),
	};
	const field: Part = { name: "sender_address_id", value: "12" };

	it("keeps its bounds: one file of 25 MB, a 26 MB body, 413 file_too_large", () => {
		assert.equal(BULK_FORM_LIMITS.maxFiles, 1);
		assert.equal(BULK_FORM_LIMITS.maxFileBytes, BULK_MAX_BYTES);
		assert.equal(BULK_FORM_LIMITS.maxBodyBytes, BULK_MAX_BODY_BYTES);
		assert.deepEqual(errorBodyOf(BULK_FORM_LIMITS.tooLarge())?.body, {
			error: "file_too_large",
			message: "import_file exceeds the 25 MB limit (26214400 bytes)",
			limit_bytes: BULK_MAX_BYTES,
		});
	});

	it("answers the file (or null) and the fields, in any order", async () => {
		for (const parts of [
			[csv, field],
			[field, csv],
		]) {
			const form = await readUploadForm(streamOf(bodyOf(parts)), CONTENT_TYPE);
			assert.deepEqual(form.fields, [["sender_address_id", "12"]]);
			assert.equal(form.file?.fieldname, "import_file");
			assert.equal(form.file?.bytes.toString(), "a,b\n1,2\n");
		}
		const none = await readUploadForm(streamOf(bodyOf([field])), CONTENT_TYPE);
		assert.equal(none.file, null);
	});

	it("two files: 400 invalid_multipart with the one-file words", async () => {
		const { status, body } = await refusal(readUploadForm(streamOf(bodyOf([csv, csv, field])), CONTENT_TYPE));
		assert.equal(status, 400);
		assert.equal(body.error, "invalid_multipart");
		assert.equal(
			body.message,
			"Expected a multipart/form-data body with an import_file part (more than one file part)",
		);
	});

	it("a body over BULK_MAX_BODY_BYTES outside any part: 413 file_too_large with limit_bytes", async () => {
		const stream = new PassThrough();
		const read = readUploadForm(stream, CONTENT_TYPE);
		stream.write(Buffer.alloc(BULK_MAX_BODY_BYTES + 1, 0x61));
		const { status, body } = await refusal(read);
		assert.equal(status, 413);
		assert.equal(body.error, "file_too_large");
		assert.equal(body.limit_bytes, BULK_MAX_BYTES);
		stream.destroy();
	});
});
