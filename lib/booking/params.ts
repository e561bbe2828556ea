/**
 * Input rules of `POST /v1/shipping/book` (spec §4.2, §7).
 *
 * Decisions where the spec says nothing:
 * - `order_id` and `logistic_id` accept a JSON integer or a string of digits
 *   (`12`, `"12"`; lib/fields.ts `parsePositiveInt`, untrimmed); anything else
 *   (`1.5`, `"12a"`, `" 12"`, `"007"`, `true`, `0`, `-3`, beyond 2^53) is malformed.
 * - `logistic_id` absent or `null` means AUTO; any other non-positive-integer
 *   value is 400 `validation_failed` with `details`.
 * - Any other body key (including `sender_id`) is ignored (spec §1 rule 3).
 */

import { apiError, validationFailed } from "../errors";
import { parsePositiveInt } from "../fields";

export interface BookInput {
	order_id: number;
	/** undefined = AUTO */
	logistic_id?: number;
}

const ORDER_ID_MSG = "order_id must be a positive integer";

/**
 * Validates the book body.
 * @throws ApiError 400 `order_id must be a positive integer` (missing or malformed order_id)
 * @throws ApiError 400 `validation_failed` with details `logistic_id: must be a positive integer`
 */
export function parseBookInput(body: unknown): BookInput {
	const b = body && typeof body === "object" && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
	const order_id = parsePositiveInt(b.order_id, { trim: false });
	if (order_id === null) throw apiError(400, ORDER_ID_MSG, ORDER_ID_MSG);
	if (b.logistic_id === undefined || b.logistic_id === null) return { order_id };
	const logistic_id = parsePositiveInt(b.logistic_id, { trim: false });
	if (logistic_id === null) throw validationFailed(["logistic_id: must be a positive integer"]);
	return { order_id, logistic_id };
}
