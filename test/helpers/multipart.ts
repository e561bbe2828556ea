/**
 * Hand-made multipart/form-data bodies for the specs of the upload routes and
 * the multipart reader (RFC 7578 framing), so a test controls the part order,
 * the names and the bytes exactly (a `FormData` does not let it).
 */

/** One part of a body: a field, or a file. */
export type Part =
	| { name: string; value: string }
	| { name: string; filename: string; type: string; bytes: Buffer };

/** The bytes of a multipart/form-data body holding `parts` in the given order, delimited by `boundary`. */
export function multipartBody(parts: Part[], boundary: string): Buffer {
	const out: Buffer[] = [];
	for (const p of parts) {
		if ("value" in p) {
			out.push(
				Buffer.from(
					`--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"\r\n\r\n${p.value}\r\n`,
				),
			);
		} else {
			out.push(
				Buffer.from(
					`--${boundary}\r\nContent-Disposition: form-data; name="${p.name}"; filename="${p.filename}"\r\nContent-Type: ${p.type}\r\n\r\n`,
				),
				p.bytes,
				Buffer.from("\r\n"),
			);
		}
	}
	out.push(Buffer.from(`--${boundary}--\r\n`));
	return Buffer.concat(out);
}
