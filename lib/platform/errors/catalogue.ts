/**
 * The error catalogue (issue 26; docs/decisions/0090-error-catalogue.md):
 * every error code the API answers, ONCE, with its HTTP status, its message
 * (a fixed text, or a builder taking typed arguments where the text embeds
 * data), a one-line description and the spec section it implements.
 *
 * The key is the code exactly as it stands on the wire: the §2.11 `error`
 * (snake_case codes, and the spec's §7 codes that are whole sentences such as
 * `order not found`), the §5.6 auth bodies' `error`, or the documents 409
 * `code`. The `body` of an entry says which shape {@link fail} (lib/platform/errors)
 * builds:
 * - `envelope` (default): `{error: <code>, message, ...extra}` (spec §2.11)
 * - `extra_first`: `{error: <code>, ...extra, message}` (the §5 403 `forbidden`
 *   body, `{error, cap, message}`)
 * - `no_message`: `{error: <code>, ...extra}`; the message is only the error's
 *   text in logs (spec §5.6 401 bodies)
 * - `documents_conflict`: `{code: <code>, message, ...extra}` (spec §7
 *   exception, `/v1/documents/*` 409)
 * - `documents_message`: `{message}` with no code at all (spec §7 exception,
 *   `/v1/documents/*` 400/404); such an entry's key is an identifier of ours
 *   (`documents.*`) that never reaches the wire
 *
 * No code is answered with two statuses (checked when the catalogue was made:
 * every former literal site of a code used the same status), so `status` is
 * one number. `internal` marks a code the served OpenAPI document does not
 * describe, with the reason (test/unit/errors/catalogue.spec.ts checks every
 * other code is documented there, and every code the document names is here).
 *
 * This module imports nothing: every layer may use it.
 */

/** Shape of the answer body of a code (see the module notes). */
export type BodyShape =
	| "envelope"
	| "extra_first"
	| "no_message"
	| "documents_conflict"
	| "documents_message";

/** One catalogue entry. */
export interface CatalogueEntry {
	/** HTTP status of every answer carrying this code */
	readonly status: number;
	/** the fixed message, or a builder of it from typed arguments */
	readonly message: string | ((...args: never[]) => string);
	/** when the code is answered, in one line (also reused verbatim by OpenAPI texts) */
	readonly description: string;
	/** the spec section (merchant-shipping-api.md §N) or the decision record it implements */
	readonly spec: string;
	/** body shape, default `envelope` */
	readonly body?: BodyShape;
	/** set when the served OpenAPI document does not describe the code: why */
	readonly internal?: string;
}

/** Message of a collaborator service that did not answer (lib/contracts/call.ts). */
export function unreachableText(service: string): string {
	return `${service} is unavailable; retry`;
}

/** Message of 400 `validation_failed` from its details: the text itself, the only detail, or `Validation failed`. */
function validationText(details: string | readonly string[]): string {
	if (typeof details === "string") return details;
	return details.length === 1 ? details[0] : "Validation failed";
}

/** The `code` values of the 401 `Invalid or expired token` body (spec §5.6; lib/platform/auth.ts). */
export const TOKEN_FAILURES = {
	token_expired: "the token's `exp` has passed",
	token_invalid:
		"the token is malformed, not signed by the identity provider's key, or has the wrong issuer/audience",
	token_claims: "a required claim is missing or malformed",
	account_missing: "the token names no merchant account",
	role_unknown: "the token's role is not one the API knows",
	jwks_unavailable: "the identity provider's key set could not be fetched (the provider's fault, retry)",
} as const;

/** A `code` of the 401 `Invalid or expired token` body. */
export type TokenFailure = keyof typeof TOKEN_FAILURES;

/** Every error code, once. */
export const CATALOGUE = {
	// -----------------------------------------------------------------------
	// §2.11 / gateway: answers of any route
	// -----------------------------------------------------------------------
	validation_failed: {
		status: 400,
		message: validationText,
		description:
			"one or more fields failed validation; `details` lists one `<field>: <reason>` per failure (the message is the only detail, or `Validation failed`)",
		spec: "§2.11, §7",
	},
	invalid_json: {
		status: 400,
		message: (what: "not_json" | "not_object" = "not_json") =>
			what === "not_json" ? "Request body is not valid JSON" : "Request body must be a JSON object",
		description: "the body is not JSON, or not a JSON object",
		spec: "§2.11 (gateway)",
	},
	body_too_deep: {
		status: 400,
		message: (max: number) => `Request body is nested deeper than ${max} levels`,
		description: "objects/arrays nested deeper than 32 levels, refused before parsing",
		spec: "§2.11 (gateway)",
	},
	ambiguous_parameter: {
		status: 400,
		message: (name: string, where: "query_and_body" | "form_twice" = "query_and_body") =>
			where === "query_and_body"
				? `'${name}' is given both in the query string and in the body; send it once`
				: `'${name}' is given more than once in the form; send it once`,
		description: "a key given both in the query string and in the body (or twice in a form)",
		spec: "§2.11 (gateway)",
	},
	invalid_body: {
		status: 400,
		message: (why: "unreadable" | "undecodable" = "unreadable") =>
			why === "unreadable"
				? "The request body could not be read"
				: "The request body does not decode with its Content-Encoding",
		description:
			"the body could not be read, or its bytes do not decode with the declared `Content-Encoding`",
		spec: "§2.11 (gateway)",
	},
	bad_request: {
		status: 400,
		message: "Malformed path parameter",
		description: "an undecodable path parameter such as `%ZZ`",
		spec: "§2.11 (gateway)",
	},
	payload_too_large: {
		status: 413,
		message: "Request body exceeds the 1 MB limit",
		description: "the JSON body is over 1 MB (spec §8).",
		spec: "§8",
	},
	unsupported_media_type: {
		status: 415,
		message: "Unsupported body charset or content encoding",
		description:
			"the body's `charset` is not UTF-8 (JSON bodies are UTF-8, RFC 8259 §8.1; a courier push keeps its raw bytes whatever the charset), or its `Content-Encoding` is not one of identity, gzip, deflate, br, zstd. Bytes that do not decode with a supported encoding are 400 `invalid_body`.",
		spec: "§2.11 (gateway)",
	},
	not_found: {
		status: 404,
		message: (what: "route" | "warehouse" | { courier: string } = "route") =>
			what === "route"
				? "Route not found"
				: what === "warehouse"
					? "Warehouse not found"
					: `no courier "${what.courier}" pushes scans here`,
		description:
			"no route has this path; a warehouse not the caller's (or deleted); a courier push for a courier without an integration",
		spec: "§7 (warehouse delete), §2.11",
	},
	method_not_allowed: {
		status: 405,
		message: (method: string, path: string) => `Method ${method} is not allowed on ${path}`,
		description:
			"the path exists for other methods, listed in `Allow` (an `OPTIONS` request is answered 204 with `Allow`).",
		spec: "§2.11 (gateway)",
	},
	rate_limited: {
		status: 429,
		message: (who: "account" | "address" | "login", retryAfter: number) =>
			who === "login"
				? `Too many login attempts; retry after ${retryAfter} s`
				: `Too many requests for this ${who}; retry after ${retryAfter} s`,
		description:
			"over the per-account or per-address request limit (or the dev IdP's login limit); retry after `Retry-After` seconds",
		spec: "docs/decisions/0036-rate-limits.md",
	},
	invalid_idempotency_key: {
		status: 400,
		message: "Idempotency-Key must be 1 to 255 printable ASCII characters",
		description: "the `Idempotency-Key` header is not 1 to 255 printable ASCII characters",
		spec: "docs/decisions/0074-idempotency-keys.md",
	},
	idempotency_key_reused: {
		status: 422,
		message:
			"This Idempotency-Key was already used with a different request (method, path, query or body); use a new key",
		description:
			"this `Idempotency-Key` was used with another request (method, path, query or body) within 24 hours; use a new key.",
		spec: "docs/decisions/0074-idempotency-keys.md",
	},
	idempotency_key_in_use: {
		status: 409,
		message: "A request with this Idempotency-Key is still being processed; retry after Retry-After seconds",
		description:
			"a request with this `Idempotency-Key` is still running; retry after `Retry-After` seconds (its answer is then replayed).",
		spec: "docs/decisions/0074-idempotency-keys.md",
	},
	service_unavailable: {
		status: 503,
		message: (what: "any" | "idempotency" | "warehouse_usage" = "any") =>
			what === "any"
				? "A required service is temporarily unavailable; retry"
				: what === "idempotency"
					? "Idempotency keys are unavailable right now; retry"
					: "Cannot check the warehouse's open orders right now; retry",
		description:
			"a service behind the route is not reachable right now (answered at once, never after a long wait); retry after `Retry-After` seconds (spec §7; issue 12).",
		spec: "§7",
	},
	not_ready: {
		status: 503,
		message: (missing: readonly string[]) => `Waiting for: ${missing.join(", ")}`,
		description: "the readiness probe: services not yet reachable, listed in `missing`",
		spec: "§2.11 (health)",
	},
	internal_error: {
		status: 500,
		message: "Internal error",
		description:
			"an unexpected server error, logged with the `request_id` the body carries; never a stack trace",
		spec: "§2.11, §7",
	},

	// -----------------------------------------------------------------------
	// §5: authentication and roles
	// -----------------------------------------------------------------------
	"Authentication required": {
		status: 401,
		message: "Authentication required",
		description: "no bearer token, or a malformed `Authorization` header",
		spec: "§5.6",
		body: "no_message",
	},
	"Invalid or expired token": {
		status: 401,
		message: (code: TokenFailure) => `Invalid or expired token (${code})`,
		description: "the bearer token failed verification; `code` says why (TOKEN_FAILURES)",
		spec: "§5.6",
		body: "no_message",
	},
	"Read-only role": {
		status: 403,
		message: "Read-only roles cannot change orders",
		description: "a read-only role (merchant_finance, merchant_support, merchant_staff) on a write route",
		spec: "§5 rule 1",
	},
	forbidden: {
		status: 403,
		message: (cap: string) => `This action needs the ${cap} capability`,
		description: "the role lacks the route's capability, named in `cap`",
		spec: "§5 rule 2",
		body: "extra_first",
	},
	"cannot create order for another sender": {
		status: 403,
		message: "cannot create order for another sender",
		description: "the order body names a sender other than the caller",
		spec: "§7 (intake order)",
	},
	"cannot create booking for another sender": {
		status: 403,
		message: "cannot create booking for another sender",
		description: "the order to book is not the caller's",
		spec: "§7 (book)",
	},
	"cannot cancel for another sender": {
		status: 403,
		message: "cannot cancel for another sender",
		description: "the order to cancel is not the caller's",
		spec: "§7 (cancel)",
	},

	// -----------------------------------------------------------------------
	// orders and intake (§4.1, §4.3)
	// -----------------------------------------------------------------------
	"order not found": {
		status: 404,
		message: (where: "order" | "ndr" = "order") =>
			where === "order" ? "order not found" : "order not found (no NDR case for this order on your account)",
		description: "no such order on the caller's account (order detail, tracking, unshipped edit, hide, NDR)",
		spec: "§7",
	},
	order_not_found: {
		status: 404,
		message: "No order with this order_no on your account",
		description: "no order with that reference on the account (orders status); never means not yet booked",
		spec: "§7 (orders status)",
	},
	"order_no is required": {
		status: 400,
		message: "order_no is required",
		description: "`order_no` absent or empty (orders status)",
		spec: "§7 (orders status)",
	},
	"bucket: unrecognised": {
		status: 400,
		message: (buckets: readonly string[]) => `bucket: unrecognised (one of ${buckets.join(", ")})`,
		description: "the orders list `bucket` is not one of the list",
		spec: "§7 (orders list)",
	},
	"cursor: unrecognised shape": {
		status: 400,
		message: "cursor: unrecognised shape",
		description: "a cursor the service did not issue (or issued for another account, list or filter)",
		spec: "§4.8, §7",
	},
	invalid_pickup_address: {
		status: 400,
		message: (what: { field: string } | "order_warehouse") =>
			what === "order_warehouse"
				? "the order's pickup warehouse is not one of your active warehouses; set one before booking"
				: `${what.field} is not one of your warehouses (unknown, retired, or another account's)`,
		description: "a pickup / return warehouse id that is not one of the caller's active warehouses",
		spec: "§7 (intake order, intake bulk, book)",
	},
	unsupported_channel: {
		status: 400,
		message: (why: string) => `B2B / multi-box consignments are not supported (${why})`,
		description: "a B2B or multi-box consignment (the field named in the message)",
		spec: "§4.1",
	},
	reference_in_use: {
		status: 409,
		message: (reference: string, direction: "forward" | "reverse") =>
			`The reference ${reference} is already used by a ${direction === "reverse" ? "return" : "forward"} order; use another customer_order_no`,
		description: "the order's reference is already used by another order of the account",
		spec: "§4.1",
	},
	"order_type: must be 0 (prepaid) or 1 (COD)": {
		status: 400,
		message: "order_type: must be 0 (prepaid) or 1 (COD)",
		description: "unshipped list `order_type` other than 0 or 1 (body `field`)",
		spec: "§7 (unshipped list)",
	},
	"amount_min: must be a rupee amount": {
		status: 400,
		message: "amount_min: must be a rupee amount",
		description: "unshipped list `amount_min` not a plain decimal (body `field`)",
		spec: "§7 (unshipped list)",
	},
	"amount_max: must be a rupee amount": {
		status: 400,
		message: "amount_max: must be a rupee amount",
		description: "unshipped list `amount_max` not a plain decimal (body `field`)",
		spec: "§7 (unshipped list)",
	},
	"shipment_type: must be 0 (forward) or 1 (reverse)": {
		status: 400,
		message: "shipment_type: must be 0 (forward) or 1 (reverse)",
		description: "unshipped counts `shipment_type` other than 0 or 1 (body `field`)",
		spec: "§7 (unshipped counts)",
	},
	not_editable: {
		status: 409,
		message: (words = "The order changed while it was edited; try again.") => words,
		description:
			"the unshipped order can no longer be edited (`reason`: booked, booking_in_progress, cancelled, hidden, expired), or changed while it was edited",
		spec: "§3, §7 (unshipped edit)",
	},

	// -----------------------------------------------------------------------
	// bulk intake (§4.1, §2.3)
	// -----------------------------------------------------------------------
	"sender_address_id (pickup warehouse) required": {
		status: 400,
		message: "sender_address_id (pickup warehouse) required",
		description: "the bulk upload's `sender_address_id` is absent or empty",
		spec: "§7 (intake bulk)",
	},
	"not found": {
		status: 404,
		message: "not found",
		description: "not the caller's bulk job (or no such job); an unknown template format",
		spec: "§7 (intake jobs)",
	},
	invalid_multipart: {
		status: 400,
		message: (why?: string) =>
			why === undefined
				? "Expected a multipart/form-data body"
				: `Expected a multipart/form-data body with an import_file part (${why})`,
		description: "the upload is not a well-formed multipart/form-data body",
		spec: "§4.1 (intake bulk)",
	},
	import_file_required: {
		status: 400,
		message: "import_file (a CSV or XLSX file part) required",
		description: "the upload has no `import_file` part",
		spec: "§4.1 (intake bulk)",
	},
	file_type_mismatch: {
		status: 400,
		message: (ext: string, type: string) => `import_file is named .${ext} but sent as ${type}`,
		description: "the file's extension and its declared type disagree",
		spec: "§4.1 (intake bulk)",
	},
	unsupported_file_type: {
		status: 415,
		message: "import_file must be a .csv or .xlsx file (see the templates)",
		description: "the file is neither CSV nor XLSX",
		spec: "§4.1 (intake bulk)",
	},
	empty_file: {
		status: 400,
		message: "import_file is empty",
		description: "the file has no bytes",
		spec: "§4.1 (intake bulk)",
	},
	file_content_mismatch: {
		status: 400,
		message: (format: "csv" | "xlsx", why?: string) =>
			format === "csv"
				? "import_file is named or typed CSV but is not UTF-8 text"
				: `import_file is named or typed XLSX but is not an XLSX workbook${why ? `: ${why}` : ""}`,
		description: "the file's bytes are not what its name or type claims",
		spec: "§4.1 (intake bulk)",
	},
	file_refused: {
		status: 400,
		message: (why: string) => `import_file refused: ${why}`,
		description: "an XLSX workbook over the reader's limits (`limits`)",
		spec: "§4.1 (intake bulk)",
	},
	file_too_large: {
		status: 413,
		message: "import_file exceeds the 25 MB limit (26214400 bytes)",
		description: "the file is over 25 MB (`limit_bytes`)",
		spec: "§8",
	},
	not_in_review: {
		status: 409,
		message: (row: number, outcome: string) => `row ${row} is not waiting for review (outcome: ${outcome})`,
		description: "a bulk row decision for a row not waiting for review",
		spec: "§2.3",
	},

	// -----------------------------------------------------------------------
	// booking, couriers, tracking, cancel (§4.2, §4.3)
	// -----------------------------------------------------------------------
	"order_id must be a positive integer": {
		status: 400,
		message: "order_id must be a positive integer",
		description: "book: `order_id` missing or malformed",
		spec: "§7 (book)",
	},
	"order_id and logistic_id must be positive integers": {
		status: 400,
		message: "order_id and logistic_id must be positive integers",
		description: "book/sync: an id malformed",
		spec: "§7 (book/sync)",
	},
	already_booked: {
		status: 409,
		message: (order_id: number) => `order ${order_id} is already booked; cancel it before booking again`,
		description: "the order is already booked (`state`)",
		spec: "§3, §4.2",
	},
	booking_in_progress: {
		status: 409,
		message: (order_id: number) => `a booking of order ${order_id} is already in progress`,
		description: "a booking of the order is already running (`state`)",
		spec: "§3, §4.2",
	},
	unknown_logistic: {
		status: 400,
		message: (ids: readonly number[], direction?: string) =>
			direction === undefined
				? `logistic_id ${ids.join(", ")} is not a courier on the active rate card`
				: `logistic_id ${ids.join(", ")} ${ids.length > 1 ? "are not couriers" : "is not a courier"} on the active rate card for ${direction} shipments`,
		description: "a courier not on the active rate card",
		spec: "§7 (couriers priority, book)",
	},
	lane_not_priced: {
		status: 422,
		message: (text: string) => text,
		description:
			"no courier on the rate card prices the lane (the message names the lane or the courier's reason)",
		spec: "§7 (serviceable, book)",
	},
	booking_failed: {
		status: 422,
		message: (why: { reason: string | null } | "cancelled") =>
			why === "cancelled"
				? "the booking was cancelled while the courier was booking it"
				: (why.reason ?? "booking failed"),
		description: "the courier refused the booking (the message is the courier's words)",
		spec: "§7 (book/sync)",
	},
	"shipment_type must be 0 (forward), 1 or 2 (reverse)": {
		status: 400,
		message: "shipment_type must be 0 (forward), 1 or 2 (reverse)",
		description: "couriers: `shipment_type` other than 0, 1 or 2",
		spec: "§7 (couriers)",
	},
	duplicate_logistic: {
		status: 400,
		message: (ids: readonly number[]) => `logistic_id ${ids.join(", ")} listed more than once`,
		description: "a courier appears twice in the ranking (`logistic_ids`)",
		spec: "§7 (couriers priority)",
	},
	incomplete_ranking: {
		status: 400,
		message: (why: { direction: string; missing: string } | { n: number; why: string }) =>
			"missing" in why
				? `every courier of the active ${why.direction} rate card must be ranked exactly once; missing: ${why.missing}`
				: `priorities must be a permutation of 1..${why.n} (${why.why})`,
		description: "not every courier on the card ranked (`missing`), or priorities not 1..n (`priorities`)",
		spec: "§7 (couriers priority)",
	},
	invalid_signature: {
		status: 401,
		message: (why: "mismatch" | "replay" = "mismatch") =>
			why === "mismatch"
				? "the webhook signature is missing, does not match the body, or its timestamp is outside the accepted window"
				: "this push was already received (a replayed signature)",
		description:
			"a courier push or a message provider's callback whose signature (or token) is missing, wrong, outside the window, or replayed",
		spec: "§4.3 (courier pushes)",
	},
	too_many_test_messages: {
		status: 429,
		message: (n: number) => `at most ${n} test messages an hour; try again later`,
		description: "more test messages in the last hour than an account may send (buyer messages, issue 29)",
		spec: "docs/decisions/0109-buyer-messages.md",
	},
	not_booked: {
		status: 409,
		message: (order_id: number) => `order ${order_id} has no booked shipment: book it first`,
		description: "a sandbox scan for an order with no booked shipment",
		spec: "§4.3 (sandbox)",
	},
	not_sandbox_courier: {
		status: 409,
		message: (order_id: number, courier: string) =>
			`order ${order_id} is booked with ${courier}, which is not a sandbox courier`,
		description: "a sandbox scan for a shipment of a real courier",
		spec: "§4.3 (sandbox)",
	},
	courier_unavailable: {
		status: 503,
		message: (text: { scan: string } | { courier: string; awb: string; why: string }) =>
			"scan" in text
				? `${text.scan} could not be asked for the scan; the poller folds it later`
				: `${text.courier}: the label of ${text.awb} could not be fetched: ${text.why}`,
		description: "the courier could not be reached (sandbox scan, label capture); retry",
		spec: "§7",
	},
	not_cancellable: {
		status: 409,
		message: (order_id: number, why: string) => `order ${order_id} cannot be cancelled: ${why}`,
		description: "no live booking to cancel (none, failed, or with another courier)",
		spec: "§3, §4.2",
	},
	cancel_failed: {
		status: 422,
		message: (
			why: { refused: string } | { no_integration: string; awb: string } | { not_done: string; awb: string },
		) =>
			"refused" in why
				? why.refused
				: "no_integration" in why
					? `${why.no_integration} has no courier integration here; AWB ${why.awb} cannot be cancelled through the API`
					: `${why.not_done} did not cancel AWB ${why.awb}`,
		description: "the courier refused the cancellation (the message is the courier's words)",
		spec: "§7 (cancel)",
	},
	cancel_unavailable: {
		status: 503,
		message: (why: { courier: string; awb: string } | { order_id: number }) =>
			"courier" in why
				? `${why.courier} could not be reached to cancel AWB ${why.awb}; the booking is unchanged, retry`
				: `the booking of order ${why.order_id} kept changing while it was being cancelled; retry`,
		description: "the courier could not be reached to cancel; retry",
		spec: "§7 (cancel)",
	},
	invalid_remittance_file: {
		status: 400,
		message: (why: string) => `remittance file: ${why}`,
		description:
			"a courier remittance file that cannot be read as a whole (its header lacks a column, it is not CSV, it is larger than 8 MB); lines that cannot be read are exceptions instead",
		spec: "ours (docs/decisions/0102-cod-remittance.md)",
	},
	remittance_not_found: {
		status: 404,
		message: "remittance not found",
		description: "no such payout on the caller's account (missing and another account's alike)",
		spec: "ours (docs/decisions/0104-cod-payouts.md)",
	},
	payout_already_paid: {
		status: 409,
		message: (utr: string) => `the payout was already marked paid with UTR ${utr}`,
		description: "the payout is paid with another UTR (the same UTR again answers the payout)",
		spec: "ours (docs/decisions/0104-cod-payouts.md)",
	},
	invalid_weight_file: {
		status: 400,
		message: (why: string) => `weight file: ${why}`,
		description:
			"a courier weight file that cannot be read as a whole (its header lacks a column, it is not CSV, it is larger than 8 MB); lines that cannot be read are exceptions instead",
		spec: "ours (docs/decisions/0105-weight-discrepancies.md)",
	},
	pickup_not_found: {
		status: 404,
		message: "pickup request not found",
		description: "no such pickup request on the caller's account (missing and another account's alike)",
		spec: "ours (docs/decisions/0107-pickup-requests.md)",
	},
	invalid_pickup_date: {
		status: 400,
		message: (why: string) => why,
		description:
			"the pickup day or slot cannot be asked for: in the past, more than 7 days ahead, a Sunday or holiday for that courier at the warehouse, today after the courier's cut-off, or a slot already begun (`next_pickup_date` says the first day that can)",
		spec: "ours (docs/decisions/0107-pickup-requests.md)",
	},
	pickup_exists: {
		status: 409,
		message: (day: string) =>
			`a pickup is already requested for this warehouse and courier on ${day}: change that one (PATCH) instead`,
		description: "a live pickup request for the same warehouse, courier and day exists (`pickup` is it)",
		spec: "ours (docs/decisions/0107-pickup-requests.md)",
	},
	pickup_not_changeable: {
		status: 409,
		message: (id: number, status: string) =>
			`pickup request ${id} is ${status}: only a requested or scheduled pickup can be changed or cancelled`,
		description:
			"the pickup was collected, missed or cancelled (`status` says which); a collected pickup cannot be cancelled",
		spec: "ours (docs/decisions/0107-pickup-requests.md)",
	},
	pickup_failed: {
		status: 422,
		message: (words: string) => words,
		description:
			"the courier refused the pickup request, its change or its cancellation (the message is the courier's words), or takes no pickup requests through its API",
		spec: "§2.11 status classes (422: the courier refused); docs/decisions/0107-pickup-requests.md",
	},
	pickup_unavailable: {
		status: 503,
		message: (courier: string) => `${courier} could not be reached; the pickup request is unchanged, retry`,
		description: "the courier could not be reached to change or cancel a pickup; nothing changed",
		spec: "ours (docs/decisions/0107-pickup-requests.md)",
	},
	discrepancy_not_found: {
		status: 404,
		message: "weight discrepancy not found",
		description:
			"no such weight discrepancy (or image of its dispute) on the caller's account (missing and another account's alike)",
		spec: "ours (docs/decisions/0105-weight-discrepancies.md)",
	},
	discrepancy_not_open: {
		status: 409,
		message: (id: number, status: string) =>
			`weight discrepancy ${id} is ${status}: only an open one can be accepted or disputed`,
		description: "the discrepancy was accepted, disputed or closed before (`status` says which)",
		spec: "ours (docs/decisions/0105-weight-discrepancies.md)",
	},
	discrepancy_not_disputed: {
		status: 409,
		message: (id: number, status: string) =>
			`weight discrepancy ${id} is ${status}: only a disputed one can be resolved`,
		description:
			"ops resolve only disputed discrepancies; one resolved with the other outcome stays as it is",
		spec: "ours (docs/decisions/0105-weight-discrepancies.md)",
	},
	invalid_dispute: {
		status: 400,
		message: (why: string) => `dispute: ${why}`,
		description:
			"the dispute form: not multipart/form-data, no or too long a `reason`, no image or more than 5, an image that is not a JPEG or PNG by its bytes or cannot be decoded",
		spec: "ours (docs/decisions/0105-weight-discrepancies.md)",
	},
	image_too_large: {
		status: 413,
		message: (limit: number) => `an image of a dispute exceeds ${limit} bytes`,
		description: "an image of a dispute is over 5 MB (`limit_bytes`)",
		spec: "ours (docs/decisions/0105-weight-discrepancies.md)",
	},
	credit_limit_exceeded: {
		status: 409,
		message: (need: number | string, outstanding: number | string, limit: number | string) =>
			`this booking (₹${need}) would take the account's outstanding ₹${outstanding} beyond its credit limit of ₹${limit}`,
		description:
			"the booking would take the account beyond its credit limit (`credit_limit`, `outstanding`, `needed`)",
		spec: "§4.2 (wallet)",
	},

	// -----------------------------------------------------------------------
	// rates and pincode (§4.2, §4.7)
	// -----------------------------------------------------------------------
	"from_pin, to_pin and physical_weight are required": {
		status: 400,
		message: "from_pin, to_pin and physical_weight are required",
		description: "serviceable: one of the three missing",
		spec: "§7 (serviceable)",
	},
	rate_unavailable: {
		status: 503,
		message: "Pricing is temporarily unavailable; retry",
		description:
			"the pricing engine is unreachable; retry (also `rates is unavailable; retry` when the rates service does not answer a booking)",
		spec: "§7 (serviceable)",
	},
	"pincode must be 6 digits": {
		status: 400,
		message: "pincode must be 6 digits",
		description: "not six digits after whitespace is stripped",
		spec: "§7 (pincode)",
	},
	lookup_failed: {
		status: 502,
		message: "Pincode lookup is unavailable; retry",
		description: "the pincode lookup is unavailable; retry",
		spec: "§7 (pincode)",
	},

	// -----------------------------------------------------------------------
	// NDR (§4.6)
	// -----------------------------------------------------------------------
	bad_tab: {
		status: 400,
		message: (tabs: readonly string[]) => `tab: required, one of ${tabs.join(", ")}`,
		description: "ndr list: `tab` not one of the accepted tabs (listed in the message)",
		spec: "§7 (ndr list)",
	},
	bad_date: {
		status: 400,
		message: "date_from: must be a real calendar date YYYY-MM-DD",
		description: "ndr list: not `YYYY-MM-DD` or not a real calendar date",
		spec: "§7 (ndr list)",
	},
	empty_comment: {
		status: 400,
		message: (why: "missing" | "blank") =>
			why === "missing" ? "comment: required, 1 to 255 characters" : "comment: must not be blank",
		description: "ndr comment: absent or blank",
		spec: "§7 (ndr comment)",
	},
	comment_too_long: {
		status: 400,
		message: (max: number) => `comment: at most ${max} characters`,
		description: "ndr comment: over 255 characters",
		spec: "§7 (ndr comment)",
	},
	invalid_ndr_act: {
		status: 400,
		message: (acts: readonly string[]) => `ndr_act must be one of ${acts.join(", ")}`,
		description: "`ndr_act` not one of the three values",
		spec: "§7 (shipping ndr)",
	},
	reattempt_failed: {
		status: 422,
		message: (why: { refused: string } | { courier: string; awb: string }) =>
			"refused" in why
				? why.refused
				: `${why.courier} has no courier integration here; NDR actions on AWB ${why.awb} cannot be sent through the API`,
		description: "the courier refused the NDR action (the message is the courier's words)",
		spec: "§7 (shipping ndr)",
	},
	ndr_unavailable: {
		status: 503,
		message: (courier: string, act: string, awb: string) =>
			`${courier} could not be reached to send ${act} for AWB ${awb}; retry`,
		description: "the courier could not be reached for the NDR action; retry",
		spec: "§7 (shipping ndr)",
	},
	no_open_ndr: {
		status: 409,
		message: (order_id: number) =>
			`order ${order_id} has no open NDR case: an action is possible only after a failed delivery and before the shipment is delivered or returned`,
		description: "an NDR action for an order with no open NDR case",
		spec: "§4.6",
	},
	ndr_attempt_changed: {
		status: 409,
		message: (attempts: number) =>
			`a newer delivery attempt failed since this page was shown (attempt ${attempts}): answer again`,
		description: "a buyer's answer to a failed delivery that is no longer the latest attempt (issue 29)",
		spec: "docs/decisions/0110-buyer-ndr-answers.md",
		internal:
			"answered by ndr.buyerAnswer to the tracking page, which shows the form again (409 HTML); never a JSON answer of the API",
	},
	ndr_attempts_exhausted: {
		status: 409,
		message: (attempts: number, awb: string) =>
			`${attempts} delivery attempts failed for AWB ${awb}: the shipment is being returned (RTO)`,
		description: "every delivery attempt failed: the shipment is being returned",
		spec: "§4.6",
	},

	// -----------------------------------------------------------------------
	// warehouses (§4.5)
	// -----------------------------------------------------------------------
	warehouse_in_use: {
		status: 409,
		message: (count: number | string) => `${count} open order(s) still ship from this warehouse`,
		description:
			"orders still ship from the warehouse (`count`, `unshipped`, `awaiting_pickup`, `order_ids`)",
		spec: "§7 (warehouse delete)",
	},

	// -----------------------------------------------------------------------
	// webhooks (ours)
	// -----------------------------------------------------------------------
	url_not_allowed: {
		status: 422,
		message: (why: string) => `The webhook URL is not allowed: ${why}`,
		description: "the webhook URL is not allowed (scheme, credentials, length, a private address)",
		spec: "docs/decisions/0044-merchant-webhooks.md",
	},
	webhook_not_found: {
		status: 404,
		message: "webhook not found",
		description: "no such endpoint on the caller's account (missing and another account's alike).",
		spec: "docs/decisions/0044-merchant-webhooks.md",
	},
	delivery_not_found: {
		status: 404,
		message: "delivery not found",
		description: "no such delivery of the endpoint",
		spec: "docs/decisions/0044-merchant-webhooks.md",
	},
	webhook_limit_reached: {
		status: 409,
		message: (max: number) => `An account has at most ${max} webhook endpoints; delete one first`,
		description: "the account has the maximum number of endpoints.",
		spec: "docs/decisions/0044-merchant-webhooks.md",
	},
	webhook_disabled: {
		status: 409,
		message: "The endpoint is disabled: enable it first (PATCH enabled: true)",
		description: "the endpoint is disabled (re-enable it first).",
		spec: "docs/decisions/0044-merchant-webhooks.md",
	},

	// -----------------------------------------------------------------------
	// documents (§4.4; §7 exception: 409 `{code, message}`, 400/404 `{message}`)
	// -----------------------------------------------------------------------
	not_ready_to_ship: {
		status: 409,
		message: (what: "single" | "manifest" | { batch: readonly number[] }) =>
			what === "single"
				? "order is not booked yet"
				: what === "manifest"
					? "some packages are not ready to ship"
					: `orders not booked yet: ${what.batch.join(", ")}`,
		description:
			"packages not ready to ship (not booked); a manifest lists `order_ids` and `already_manifested_order_ids`",
		spec: "§7 (manifest, label)",
		body: "documents_conflict",
	},
	carrier_label_missing: {
		status: 409,
		message: (pending: boolean, batch?: readonly number[]) =>
			batch === undefined
				? pending
					? "the courier issues its own label for this shipment and it has not been captured yet; retry shortly"
					: "the courier issues its own label for this shipment and it was not captured"
				: `${
						pending
							? "the courier issues its own label for these orders and it has not been captured yet; retry shortly"
							: "the courier issues its own label for these orders and it was not captured"
					}: ${batch.join(", ")}`,
		description: "the courier issues its own label and it was not captured (yet: `Retry-After`)",
		spec: "§7 (label, bulk labels)",
		body: "documents_conflict",
	},
	carrier_label_unmergeable: {
		status: 409,
		message: (batch: readonly number[]) =>
			`the courier's own label file of these orders cannot be merged into one PDF; download them one at a time: ${batch.join(", ")}`,
		description: "bulk labels: a courier's own label file cannot be merged into one PDF",
		spec: "§4.4 (bulk labels)",
		body: "documents_conflict",
	},
	already_manifested: {
		status: 409,
		message: "one or more AWBs are already on a manifest",
		description: "one or more AWBs already on a manifest (`manifest_nos`)",
		spec: "§7 (manifest)",
		body: "documents_conflict",
	},
	"documents.not_found": {
		status: 404,
		message: "not found",
		description: "label, link or manifest: not the caller's, or no such order/manifest",
		spec: "§7 (label by order)",
		body: "documents_message",
	},
	"documents.orders_not_found": {
		status: 404,
		message: (ids: readonly number[]) => `orders not found: ${ids.join(", ")}`,
		description: "bulk labels / manifest: orders not the caller's or missing",
		spec: "§7 (documents exception)",
		body: "documents_message",
	},
	"documents.bad_order_id": {
		status: 400,
		message: "orderId must be a positive integer",
		description: "label by order: the path id is not a positive integer",
		spec: "§7 (documents exception)",
		body: "documents_message",
	},
	"documents.bad_schedule_pickup": {
		status: 400,
		message: "schedule_pickup must be a boolean",
		description: "manifest: `schedule_pickup` present and not true or false",
		spec: "ours (docs/decisions/0107-pickup-requests.md)",
		body: "documents_message",
	},
	"documents.bad_order_ids": {
		status: 400,
		message: (why: "required" | "empty" | "too_many" | { item: number }) =>
			why === "required"
				? "order_ids is required: an array of 1 to 200 positive integers"
				: why === "empty"
					? "order_ids must not be empty"
					: why === "too_many"
						? "max 200 orders per request"
						: `order_ids[${why.item}] must be a positive integer`,
		description:
			"bulk labels / manifest: `order_ids` missing, empty, over 200, or an item not a positive integer",
		spec: "§7, §8",
		body: "documents_message",
	},

	// -----------------------------------------------------------------------
	// development identity provider (zero-setup start only)
	// -----------------------------------------------------------------------
	invalid_request: {
		status: 400,
		message: (why: { not_string: string } | "not_flat" | "missing") =>
			why === "not_flat"
				? "the request body must be a flat object"
				: why === "missing"
					? "email and password are required"
					: `${why.not_string} must be a string`,
		description: "dev IdP login: a malformed token request (RFC 6749 §5.2)",
		spec: "docs/decisions/0045-tokens-dev-idp.md",
		internal: "the development identity provider's OAuth-style login, outside /v1 and the served document",
	},
	unsupported_grant_type: {
		status: 400,
		message: "grant_type must be password",
		description: "dev IdP login: a grant type other than password (RFC 6749 §5.2)",
		spec: "docs/decisions/0045-tokens-dev-idp.md",
		internal: "the development identity provider's OAuth-style login, outside /v1 and the served document",
	},
	invalid_grant: {
		status: 400,
		message: "Invalid login credentials",
		description: "dev IdP login: wrong email or password (RFC 6749 §5.2)",
		spec: "docs/decisions/0045-tokens-dev-idp.md",
		internal: "the development identity provider's OAuth-style login, outside /v1 and the served document",
	},
} as const satisfies Record<string, CatalogueEntry>;

/** A catalogued error code (or, for `documents_message` entries, our identifier of the message). */
export type ErrorCode = keyof typeof CATALOGUE;

/** The HTTP status of code `C`. */
export type StatusOf<C extends ErrorCode> = (typeof CATALOGUE)[C]["status"];

/** The arguments of code `C`'s message builder (`[]` for a fixed message). */
export type MessageArgs<C extends ErrorCode> = (typeof CATALOGUE)[C]["message"] extends (
	...a: infer A
) => string
	? A
	: [];

/** Codes answered 503 when a collaborator does not answer (lib/contracts/call.ts `unavailable`). */
export type UnreachableCode =
	| "service_unavailable"
	| "cancel_unavailable"
	| "ndr_unavailable"
	| "rate_unavailable";

/** The catalogue entry of `code` (typed loosely, for code that walks the catalogue). */
export function entryOf(code: ErrorCode): CatalogueEntry {
	return CATALOGUE[code];
}

/** The message of `code` with `args` (the fixed message, or the builder's result). */
export function messageOf<C extends ErrorCode>(code: C, ...args: MessageArgs<C>): string {
	const m = entryOf(code).message;
	return typeof m === "string" ? m : (m as (...a: MessageArgs<C>) => string)(...args);
}

/** True when `s` is a catalogued code. */
export function isErrorCode(s: string): s is ErrorCode {
	return Object.hasOwn(CATALOGUE, s);
}
