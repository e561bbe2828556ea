/**
 * HEAD wherever GET is served (RFC 9110 §9.3.2; issue 31;
 * docs/decisions/0079-edge-text-rule.md): the same status and headers as the
 * GET, no body.
 *
 * moleculer-web matches an alias by its exact method, so the gateway mounts a
 * `HEAD <path>` twin of every `GET <path>` alias ({@link withHead}): a HEAD runs
 * the same checks as the GET (route, bearer token → the same 401, account rate
 * limit, access rule) and calls the same action; `Allow` of a 405 lists HEAD
 * wherever it lists GET (it is built from the alias table). Node's HTTP server
 * never writes a body on a response to HEAD, but it only sets the
 * `Content-Length` a GET would get when the body goes through `res.end`:
 * {@link keepHeadLength} sets it from the bytes that are dropped.
 */
import type { ServerResponse } from "node:http";

/**
 * `aliases` with a `HEAD <path>` twin after each `GET <path>` entry (same
 * target: action name or function alias), in table order (moleculer-web keeps
 * the first matching alias, so the twins keep the GETs' precedence).
 */
export function withHead<V>(aliases: Record<string, V>): Record<string, V> {
	const out: Record<string, V> = {};
	for (const [key, target] of Object.entries(aliases)) {
		out[key] = target;
		if (key.startsWith("GET ")) out[`HEAD ${key.slice(4)}`] = target;
	}
	return out;
}

/**
 * For a response to HEAD: when the answer is written in one `res.end(body)`
 * (a JSON object, a Buffer, a plain-text 404) without a `Content-Length` of
 * its own, sets the one the GET would carry (the body's byte length; Node then
 * drops the body). A streamed answer (several writes: chunked on GET) gets none, as on GET.
 */
export function keepHeadLength(res: ServerResponse): void {
	const end = res.end;
	res.end = function (this: ServerResponse, ...args: unknown[]) {
		const [chunk, encoding] = args;
		const bodyless = this.statusCode === 204 || this.statusCode === 304;
		if (!this.headersSent && !bodyless && !this.hasHeader("content-length")) {
			if (typeof chunk === "string") {
				const enc = typeof encoding === "string" ? (encoding as BufferEncoding) : "utf8";
				this.setHeader("Content-Length", Buffer.byteLength(chunk, enc));
			} else if (chunk instanceof Uint8Array) this.setHeader("Content-Length", chunk.byteLength);
		}
		return (end as (...a: unknown[]) => ServerResponse).apply(this, args);
	} as ServerResponse["end"];
}
