/**
 * API errors (spec §2.11 envelope and §7 codes).
 *
 * An {@link ApiError} carries the HTTP status in `code`, the stable machine code
 * in `type` and the exact response body in `data.body`, so the body survives
 * serialization across NATS (Moleculer rebuilds remote errors from
 * name/message/code/type/data) and the gateway can answer it verbatim.
 */
import { Errors } from "moleculer";

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
 * Builds the standard envelope. `details` is included when given and non-empty.
 * @param status HTTP status
 * @param error stable machine code (spec §7)
 * @param message human text
 */
export function apiError(
	status: number,
	error: string,
	message: string,
	extra: Record<string, unknown> = {},
): ApiError {
	return new ApiError(status, { error, message, ...extra });
}

/** 400 `validation_failed` with `details` (spec §7, intake and warehouses). */
export function validationFailed(details: string[]): ApiError {
	return apiError(400, "validation_failed", details.length === 1 ? details[0] : "Validation failed", {
		details,
	});
}

/**
 * Documents exception of §7: 400/404 answer `{message}` with no `error` key.
 */
export function documentsError(status: 400 | 404, message: string): ApiError {
	return new ApiError(status, { message });
}

/** Documents exception of §7: 409 answers `{code, message}`. */
export function documentsConflict(
	code: string,
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
