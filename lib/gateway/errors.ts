/**
 * Maps any error reaching the gateway to an HTTP status and body (spec §2.11
 * envelope, §5.6 auth bodies, §7 codes and the documents exceptions).
 *
 * | Error                                                        | Status | Body                                                   |
 * |--------------------------------------------------------------|--------|--------------------------------------------------------|
 * | carries a contract body (`ApiError`, also across NATS)        | its    | verbatim (`errorBodyOf`)                               |
 * | {@link GatewayError} (made by the gateway itself)             | its    | `{error, message}` (`{message}` under /v1/documents/)  |
 * | Moleculer `ValidationError` of the routed action (422)        | 400    | `{error:"validation_failed", message, details}`        |
 * | `ValidationError` of a nested internal call (a server bug)    | 500    | as "anything else" below                               |
 * | body-parser: malformed JSON (`entity.parse.failed`)           | 400    | `{error:"invalid_json", message}`                      |
 * | body nested deeper than 32 levels (`entity.too.deep`, json-limits.ts) | 400 | `{error:"body_too_deep", message}`                |
 * | a key in both the query string and the JSON body (checkBody)  | 400    | `{error:"ambiguous_parameter", message}` (a GatewayError) |
 * | body-parser: body over the limit (`entity.too.large`)         | 413    | `{error:"payload_too_large", message}`                 |
 * | body-parser: unsupported charset / encoding; a JSON body in a charset other than UTF-8 (json-limits.ts) | 415 | `{error:"unsupported_media_type", message}` |
 * | body-parser: bytes that do not decode with their `Content-Encoding` (zlib / brotli / zstd errors) | 400 | `{error:"invalid_body", message}` |
 * | body-parser: other read failures (aborted, bad length, `entity.verify.failed`) | 400 | `{error:"invalid_body", message}`  |
 * | a string breaking the edge text rule (text-rule.ts)           | 400    | `{error:"validation_failed", message, details}` (a GatewayError) |
 * | undecodable path parameter (`%ZZ`)                            | 400    | `{error:"bad_request", message}`                       |
 * | moleculer-web `NotFoundError`                                 | 404    | `{error:"not_found", message:"Route not found"}`       |
 * | service missing / unavailable / timeout / rejected / queue    |        |                                                        |
 * | full / transporter (NATS) down                                | 503    | `{error:"service_unavailable", message}`               |
 * | anything else                                                 | 500    | `{error:"internal_error", message:"Internal error", request_id}` (logged, never a stack) |
 *
 * Under `/v1/documents/` (§7 exception), gateway-made 400 and 404 answers are
 * `{message}` with no `error` key; bodies thrown by the documents service are
 * passed through verbatim like every other contract body.
 */
import type { ValidationError } from "fastest-validator";
import { Errors } from "moleculer";
import {
	CATALOGUE,
	type ErrorBody,
	type ErrorCode,
	errorBodyOf,
	fail,
	failWith,
	type MessageArgs,
	messageOf,
	type StatusOf,
	validationFailed,
} from "../platform/errors";
import { describe } from "../platform/validate";
import { DOCUMENTS_PREFIX } from "./routes";

/**
 * An error the gateway itself answers (404 route, 405, bad body…), shaped per
 * path by {@link answerFor}. Made with {@link gatewayFail} from the error
 * catalogue (lib/platform/errors/catalogue.ts); the constructor takes a catalogued code
 * and its catalogue status.
 */
export class GatewayError<C extends ErrorCode = ErrorCode> extends Errors.MoleculerError {
	/**
	 * @param status HTTP status (the code's catalogue status)
	 * @param error stable machine code (§2.11 `error`), catalogued
	 * @param message human text
	 * @param details §2.11 `details` (e.g. the edge text rule's `comment: must not contain control characters`)
	 */
	constructor(status: StatusOf<C>, error: C, message: string, details?: string[]) {
		super(message, status, error, details ? { gateway: true, details } : { gateway: true });
		this.name = "GatewayError";
		this.retryable = false;
	}
}

/** A {@link GatewayError} of catalogued `code`: its status and message from the catalogue. */
export function gatewayFail<C extends ErrorCode>(code: C, ...args: MessageArgs<C>): GatewayError<C> {
	return new GatewayError<C>(CATALOGUE[code].status as StatusOf<C>, code, messageOf(code, ...args));
}

/** {@link gatewayFail} with §2.11 `details` (only `validation_failed` carries them). */
export function gatewayFailWith<C extends ErrorCode>(
	code: C,
	details: string[],
	...args: MessageArgs<C>
): GatewayError<C> {
	return new GatewayError<C>(CATALOGUE[code].status as StatusOf<C>, code, messageOf(code, ...args), details);
}

/** The HTTP answer for an error. */
export interface ErrorAnswer {
	status: number;
	body: ErrorBody;
	/** True when the error is unexpected and must be logged (with its stack, server-side only). */
	log: boolean;
}

/** Moleculer error types meaning "the service is not reachable right now; retry". */
const UNAVAILABLE_TYPES = new Set([
	"SERVICE_NOT_FOUND",
	"SERVICE_NOT_AVAILABLE",
	"REQUEST_TIMEOUT",
	"REQUEST_REJECTED",
	"REQUEST_SKIPPED",
	"QUEUE_FULL",
	"BAD_GATEWAY",
]);
/** Error class names meaning the same (moleculer-web's ServiceUnavailableError, the nats client's errors). */
const UNAVAILABLE_NAMES = new Set([
	"ServiceUnavailableError",
	"ServiceNotFoundError",
	"ServiceNotAvailableError",
	"RequestTimeoutError",
	"RequestRejectedError",
	"RequestSkippedError",
	"QueueIsFullError",
	"BrokerDisconnectedError",
	"NatsError",
]);

/** True when `err` means a collaborator service is unreachable (answered 503 `service_unavailable`). */
export function isUnavailable(err: { name?: unknown; type?: unknown }): boolean {
	return UNAVAILABLE_TYPES.has(err.type as string) || UNAVAILABLE_NAMES.has(err.name as string);
}

function envelope(
	status: number,
	error: string,
	message: string,
	path: string,
	details?: unknown,
): ErrorAnswer {
	if ((status === 400 || status === 404) && path.startsWith(DOCUMENTS_PREFIX)) {
		return { status, body: { message }, log: false };
	}
	return {
		status,
		body: Array.isArray(details) ? { error, message, details } : { error, message },
		log: false,
	};
}

/** The answer of a gateway-made error on `path`. */
function answerOf(e: GatewayError, path: string): ErrorAnswer {
	return envelope(e.code, String(e.type), e.message, path);
}

/**
 * True when `e` is a decompression failure of a request body: body-parser
 * pipes the body through node:zlib for `Content-Encoding: gzip | deflate | br
 * | zstd` and passes the stream's error on, which moleculer-web re-wraps as a
 * MoleculerError keeping only its message and its `code`: zlib's
 * `Z_DATA_ERROR` / `Z_BUF_ERROR` / …, brotli's `ERR__ERROR_FORMAT_…`, zstd's
 * `ZSTD_error_…` (string codes no Moleculer or contract error uses).
 */
function isDecodeError(e: ErrorLike): boolean {
	return typeof e.code === "string" && /^(?:Z_[A-Z_]+|ERR__ERROR_[A-Z0-9_]+|ZSTD_error_\w+)$/.test(e.code);
}

/** The fields of an error (Moleculer, body-parser, anything thrown) that {@link answerFor} reads. */
interface ErrorLike {
	name?: string;
	type?: string;
	code?: unknown;
	message?: string;
	/** Moleculer error data: `{gateway:true}` for a GatewayError, the failures of a ValidationError */
	data?: unknown;
}

/**
 * True when `e` is a broker `ValidationError` about the params of `action`
 * itself. The broker validator tags every failure with the action it guards;
 * a failure tagged with another action comes from an internal call the
 * service made with bad params, which is not the client's fault. Without
 * `action`, or for untagged failures, any `ValidationError` counts.
 */
function isClientValidationError(e: ErrorLike, action: string | undefined): boolean {
	if (e.name !== "ValidationError" && !(e.type === "VALIDATION_ERROR" && e.code === 422)) return false;
	if (action === undefined || !Array.isArray(e.data)) return true;
	return e.data.every((d: { action?: unknown } | null) => d?.action === undefined || d.action === action);
}

/**
 * Computes the answer for `err` on request `path` (no query string).
 * `requestId` is echoed in 500 bodies so a merchant can quote it. `action` is
 * the action the route called (when known), so a `ValidationError` raised by
 * one of its internal calls is answered 500 rather than blamed on the request.
 */
export function answerFor(err: unknown, path: string, requestId: string, action?: string): ErrorAnswer {
	const contract = errorBodyOf(err);
	if (contract && contract.status >= 400 && contract.status <= 599) {
		return { status: contract.status, body: contract.body, log: false };
	}
	const e = (err ?? {}) as ErrorLike;
	const gw = e.data as { gateway?: unknown; details?: unknown } | null;
	if (gw?.gateway === true && typeof e.code === "number") {
		return envelope(e.code, String(e.type), String(e.message), path, gw.details);
	}
	if (isClientValidationError(e, action)) {
		const details = Array.isArray(e.data)
			? e.data.map((d: ValidationError) => describe(d))
			: [String(e.message)];
		const { body } = errorBodyOf(validationFailed(details))!;
		const documents = path.startsWith(DOCUMENTS_PREFIX);
		return { status: 400, body: documents ? { message: body.message } : body, log: false };
	}
	switch (e.type) {
		case "entity.parse.failed":
			return answerOf(gatewayFail("invalid_json"), path);
		case "entity.too.deep":
			// the message of BodyTooDeepError (lib/gateway/json-limits.ts), itself from the catalogue
			return answerOf(
				new GatewayError(CATALOGUE.body_too_deep.status, "body_too_deep", String(e.message)),
				path,
			);
		case "entity.too.large":
			return answerOf(gatewayFail("payload_too_large"), path);
		case "charset.unsupported":
		case "encoding.unsupported":
			return answerOf(gatewayFail("unsupported_media_type"), path);
		case "request.aborted":
		case "request.size.invalid":
		case "stream.encoding.set":
		case "stream.not.readable":
		// a body parser's `verify` hook failed without saying why (ours always throw a typed error)
		case "entity.verify.failed":
			return answerOf(gatewayFail("invalid_body"), path);
		case "UNABLE_DECODE_PARAM":
			return answerOf(gatewayFail("bad_request"), path);
		case "NOT_FOUND":
			if (e.code === 404) return answerOf(gatewayFail("not_found"), path);
			break;
	}
	if (isDecodeError(e)) return answerOf(gatewayFail("invalid_body", "undecodable"), path);
	if (e.code === 413) return answerOf(gatewayFail("payload_too_large"), path);
	if (isUnavailable(e)) return { ...errorBodyOf(fail("service_unavailable"))!, log: false };
	return { ...errorBodyOf(failWith("internal_error", { request_id: requestId }))!, log: true };
}
