/**
 * API errors (spec §2.11 envelope and §7 codes). Every code, its status and
 * its message stand once in ./catalogue.ts; {@link fail} / {@link failWith}
 * build the answer of a code.
 *
 * An {@link ApiError} carries the HTTP status in `code`, the stable machine code
 * in `type` and the exact response body in `data.body`, so the body survives
 * serialization across NATS (Moleculer rebuilds remote errors from
 * name/message/code/type/data) and the gateway can answer it verbatim.
 */
import { Errors } from "moleculer";
import {
	type ErrorCode,
	entryOf,
	type MessageArgs,
	messageOf,
	type StatusOf,
	type UnreachableCode,
	unreachableText,
} from "./catalogue";

export {
	CATALOGUE,
	type CatalogueEntry,
	type ErrorCode,
	isErrorCode,
	type MessageArgs,
	messageOf,
	type StatusOf,
	TOKEN_FAILURES,
	type TokenFailure,
	type UnreachableCode,
} from "./catalogue";

/** A response body: the §2.11 envelope `{error, message, details?}` or a documented exception. */
export type ErrorBody = Record<string, unknown>;

/** An error whose HTTP status and body are part of the contract. */
export class ApiError extends Errors.MoleculerError {
	constructor(status: number, body: ErrorBody, message?: string) {
		const msg = message ?? String(body.message ?? body.error ?? "error");
		super(msg, status, String(body.error ?? body.code ?? "api_error"), { body });
		this.name = "ApiError";
		this.retryable = false;
	}
}

/**
 * The answer of catalogued error `code` (lib/platform/errors/catalogue.ts): its status,
 * and its body in the code's shape: `{error, message, ...extra}` (§2.11),
 * `{error, ...extra}` (§5.6 401), `{code, message, ...extra}` (§7 documents
 * 409) or `{message}` (§7 documents 400/404). `args` are the message
 * builder's (none for a fixed message).
 */
export function fail<C extends ErrorCode>(code: C, ...args: MessageArgs<C>): ApiError {
	return build(code, messageOf(code, ...args), {});
}

/**
 * {@link fail} with `extra` body fields after the message, in their order
 * (e.g. `details`, `field`, `logistic_ids`); the body's key order is part of
 * the byte-identical answers.
 */
export function failWith<C extends ErrorCode>(
	code: C,
	extra: Record<string, unknown>,
	...args: MessageArgs<C>
): ApiError {
	return build(code, messageOf(code, ...args), extra);
}

/** 503 `code` for collaborator `service` that did not answer (lib/contracts/call.ts). */
export function unreachable(code: UnreachableCode, service: string): ApiError {
	return build(code, unreachableText(service), {});
}

function build(code: ErrorCode, message: string, extra: Record<string, unknown>): ApiError {
	const { status, body = "envelope" } = entryOf(code);
	switch (body) {
		case "extra_first":
			return new ApiError(status, { error: code, ...extra, message });
		case "no_message":
			return new ApiError(status, { error: code, ...extra }, message);
		case "documents_conflict":
			return new ApiError(status, { code, message, ...extra });
		case "documents_message":
			return new ApiError(status, { message });
		default:
			return new ApiError(status, { error: code, message, ...extra });
	}
}

/**
 * Low-level form of {@link fail} with the message given by the caller: the
 * code must be catalogued and `status` must be its catalogue status. Kept for
 * tests and fakes that answer a catalogued code with their own words; the
 * services use {@link fail} / {@link failWith} (test/unit/errors/catalogue.spec.ts).
 */
export function apiError<C extends ErrorCode>(
	status: StatusOf<C>,
	error: C,
	message: string,
	extra: Record<string, unknown> = {},
): ApiError {
	return new ApiError(status, { error, message, ...extra });
}

/** 400 `validation_failed` with `details` (spec §7, intake and warehouses). */
export function validationFailed(details: string[]): ApiError {
	return failWith("validation_failed", { details }, details);
}

/** Low-level documents exception of §7 (tests, fakes): 400/404 answer `{message}` with no `error` key. */
export function documentsError(status: 400 | 404, message: string): ApiError {
	return new ApiError(status, { message });
}

/** Low-level documents exception of §7 (tests, fakes): 409 answers `{code, message}` with a catalogued `code`. */
export function documentsConflict(
	code: ErrorCode,
	message: string,
	extra: Record<string, unknown> = {},
): ApiError {
	return new ApiError(409, { code, message, ...extra });
}

/** Extracts the contractual body of an error that may have crossed the wire. */
export function errorBodyOf(err: unknown): { status: number; body: ErrorBody } | undefined {
	const e = err as { code?: unknown; data?: { body?: unknown } } | undefined;
	if (e && typeof e.code === "number" && e.data && typeof e.data.body === "object" && e.data.body) {
		return { status: e.code, body: e.data.body as ErrorBody };
	}
	return undefined;
}
