/**
 * Input rules of `POST /v1/shipping/book` (spec §4.2, §7).
 *
 * Decisions where the spec says nothing:
 * - `order_id` and `logistic_id` accept a JSON integer or a string of digits
 *   (`12`, `"12"`; lib/shared/fields.ts `parsePositiveInt`, untrimmed); anything else
 *   (`1.5`, `"12a"`, `" 12"`, `"007"`, `true`, `0`, `-3`, beyond 2^53) is malformed.
 * - `logistic_id` absent or `null` means AUTO; any other non-positive-integer
 *   value is 400 `validation_failed` with `details`.
 * - Any other body key (including `sender_id`) is ignored (spec §1 rule 3).
 */

import { fail, validationFailed } from "../platform/errors";
import { parsePositiveInt } from "../shared/fields";

export interface BookInput {
	order_id: number;
	/** undefined = AUTO */
	logistic_id?: number;
}

/**
 * Validates the book body.
 * @throws ApiError 400 `order_id must be a positive integer` (missing or malformed order_id)
 * @throws ApiError 400 `validation_failed` with details `logistic_id: must be a positive integer`
 */
export function parseBookInput(body: unknown): BookInput {
	const b = body && typeof body === "object" && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
	const order_id = parsePositiveInt(b.order_id, { trim: false });
	if (order_id === null) throw fail("order_id must be a positive integer");
	if (b.logistic_id === undefined || b.logistic_id === null) return { order_id };
	const logistic_id = parsePositiveInt(b.logistic_id, { trim: false });
	if (logistic_id === null) throw validationFailed(["logistic_id: must be a positive integer"]);
	return { order_id, logistic_id };
}

/** What `POST /v1/shipping/book/sync` asks (§4.2): a book input plus the operation. */
export interface BookSyncInput extends BookInput {
	/** `book` (default) books a forward order, `reverse` a return order. */
	operation: "book" | "reverse";
}

/**
 * Validates the book/sync body (spec §4.2, §7). Same id rules as
 * {@link parseBookInput}; `operation` absent or null means `book`.
 * @throws ApiError 400 `order_id and logistic_id must be positive integers`
 *   (order_id missing or malformed, or logistic_id given and malformed; §7 row of book/sync)
 * @throws ApiError 400 `validation_failed` with details: `operation` not `book`/`reverse`;
 *   `reverse` without `logistic_id` (AUTO books forward shipments only)
 */
export function parseBookSyncInput(body: unknown): BookSyncInput {
	const b = body && typeof body === "object" && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
	const order_id = parsePositiveInt(b.order_id, { trim: false });
	const auto = b.logistic_id === undefined || b.logistic_id === null;
	const logistic_id = auto ? undefined : parsePositiveInt(b.logistic_id, { trim: false });
	if (order_id === null || logistic_id === null)
		throw fail("order_id and logistic_id must be positive integers");
	const op = b.operation ?? "book";
	if (op !== "book" && op !== "reverse") {
		throw validationFailed(["operation: must be book or reverse"]);
	}
	if (op === "reverse" && logistic_id === undefined) {
		throw validationFailed([
			"logistic_id: required for operation reverse (AUTO books forward shipments only)",
		]);
	}
	return logistic_id === undefined ? { order_id, operation: op } : { order_id, logistic_id, operation: op };
}
