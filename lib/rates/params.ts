/**
 * Parsing of the two ways into the quote engine, both ending in one internal
 * {@link LaneQuery}:
 * - `GET /v1/shipping/serviceable` (spec §4.2): the spec's query names
 *   (`order_type`, `collectable_amount`, `operation`), values arriving as
 *   strings, converted here at the edge ({@link paymentModeOf});
 * - `rates.quote` (lib/contracts/rates.ts {@link QuoteParams}): the internal
 *   names (`payment_mode`, `cod_amount`, `direction`, `logistic_id`).
 */
import { type HttpParams, type PaymentMode, paymentModeOf, type QuoteParams } from "../contracts";
import { DIRECTION, LANE_RULES, RATES_ROUTES, REQUIRED_MESSAGE, RUPEES } from "../contracts/http/rates";
import { fail } from "../platform/errors";
import { assertValid, compile } from "../platform/validate";
import { scalarOrMarker } from "../shared/fields";
import { KeptParses } from "../shared/kept-parses";
import type { LaneQuery } from "./quote";

/** The query validator of `GET /v1/shipping/serviceable`: its route definition's schema. */
const checkServiceable = compile(RATES_ROUTES["rates.serviceable"].query);

const checkQuote = compile({
	...LANE_RULES,
	cod_amount: RUPEES,
	payment_mode: { type: "enum", values: ["prepaid", "cod"] satisfies PaymentMode[], optional: true },
	direction: DIRECTION,
	logistic_id: { type: "number", integer: true, positive: true, optional: true },
});

/** The query of `GET /v1/shipping/serviceable` once validated (spec §4.2 names; a type, so a validated record converts to it). */
type ServiceableQuery = {
	from_pin: string;
	to_pin: string;
	physical_weight: number;
	volumetric_weight?: number;
	collectable_amount?: number;
	order_type?: unknown;
	operation?: LaneQuery["direction"];
};

const blank = (v: unknown) => v === undefined || v === null || (typeof v === "string" && v.trim() === "");

/** A plain decimal as text: optional minus, digits, optional fraction (no `+`, hex, exponent, `Infinity`). */
const PLAIN_DECIMAL = /^-?\d{1,15}(?:\.\d{1,15})?$/;
/** Keys read as numbers (kg, rupees, ids); the others are pins and enums. */
const NUMERIC_KEYS = new Set([
	"physical_weight",
	"volumetric_weight",
	"collectable_amount",
	"cod_amount",
	"logistic_id",
]);
/** Keys read as 6-digit codes. */
const PIN_KEYS = new Set(["from_pin", "to_pin"]);

/**
 * The strict reading of one value before the validator sees it (issue 12;
 * replaces fastest-validator's `convert`, which read `"0x10"` as 16 kg,
 * `"1e3"` as 1000 and an array as its `String()`): a number key's plain
 * decimal string (surrounding whitespace ignored) becomes its number, any
 * other string stays a string (→ `must be a number.`); a pin sent as a JSON
 * number becomes its digits; an object or array becomes a flat marker that
 * every rule refuses without reading it.
 */
function strictValue(key: string, value: unknown): unknown {
	const v = scalarOrMarker(value);
	if (NUMERIC_KEYS.has(key) && typeof v === "string") {
		const s = v.trim();
		return PLAIN_DECIMAL.test(s) ? Number(s) : v;
	}
	if (PIN_KEYS.has(key) && typeof v === "number") return String(v);
	return v;
}

/**
 * The non-blank values of `keys` in `raw` (blank optional values count as
 * absent; other keys such as `sender_id` are dropped). Throws 400
 * `{error: REQUIRED_MESSAGE, message: same}` when `from_pin`, `to_pin` or
 * `physical_weight` is missing or blank.
 */
function presentValues(raw: unknown, keys: readonly string[]): Record<string, unknown> {
	const src = (raw && typeof raw === "object" ? raw : {}) as Readonly<Record<string, unknown>>;
	if (blank(src.from_pin) || blank(src.to_pin) || blank(src.physical_weight)) throw fail(REQUIRED_MESSAGE);
	const v: Record<string, unknown> = {};
	for (const k of keys) if (!blank(src[k])) v[k] = strictValue(k, src[k]);
	return v;
}

/**
 * Validates the query of `GET /v1/shipping/serviceable` (spec §4.2; strings
 * from the query string) and converts it to the internal lane query.
 * - any of `from_pin`, `to_pin`, `physical_weight` missing or blank → 400
 *   `{error:"from_pin, to_pin and physical_weight are required", message: same}`;
 * - numbers are plain decimals (`"1.5"`; never `"0x10"`, `"1e3"`, `"+1"`: those are
 *   `must be a number.`);
 * - malformed (pins not `^\d{6}$`, weights (kg) not finite numbers,
 *   physical_weight ≤ 0, volumetric_weight < 0, collectable_amount (rupees) < 0
 *   or not a number, operation other than "forward"/"reverse") → 400
 *   `validation_failed` with `details` (one string per field);
 * - `order_type` 1 (number or "1") means COD, anything else prepaid (§4.2);
 *   `collectable_amount` is the COD amount; `operation` the direction (default forward);
 * - blank optional values count as absent; unknown keys (e.g. `sender_id`) are ignored.
 *
 * The lane query answered is frozen; one parsed from the same values is answered again (issue 32: a lane is asked
 * many times; lib/shared/kept-parses.ts, {@link SERVICEABLE_KEPT} sets of values kept).
 */
export function parseServiceableQuery(raw: HttpParams): LaneQuery {
	return parsedLanes.get(raw, parseServiceableAnew);
}

/** The keys of the query of `GET /v1/shipping/serviceable` (spec §4.2). */
const SERVICEABLE_KEYS = [
	"from_pin",
	"to_pin",
	"physical_weight",
	"volumetric_weight",
	"collectable_amount",
	"order_type",
	"operation",
] as const;

/** Most distinct serviceable queries kept parsed before the store starts over. */
const SERVICEABLE_KEPT = 10_000;

/** Parsed serviceable queries by their values ({@link parseServiceableQuery}). */
const parsedLanes = new KeptParses<LaneQuery>(SERVICEABLE_KEYS, SERVICEABLE_KEPT);

/** {@link parseServiceableQuery} itself: the values checked, the lane query made and frozen. */
function parseServiceableAnew(raw: HttpParams): LaneQuery {
	const v = presentValues(raw, SERVICEABLE_KEYS);
	assertValid(checkServiceable, v);
	const q = v as ServiceableQuery;
	return Object.freeze(
		laneQuery({
			from_pin: q.from_pin,
			to_pin: q.to_pin,
			physical_weight: q.physical_weight,
			volumetric_weight: q.volumetric_weight,
			payment_mode: paymentModeOf(q.order_type),
			cod_amount: q.collectable_amount,
			direction: q.operation,
		}),
	);
}

/**
 * Validates `rates.quote` params ({@link QuoteParams}; internal callers send
 * numbers, numeric strings are converted) and applies the defaults. Throws 400
 * REQUIRED_MESSAGE as {@link parseServiceableQuery}, and 400
 * `validation_failed` with `details` for malformed values (pins, weights,
 * `cod_amount` < 0, `payment_mode` not prepaid/cod, `direction` not
 * forward/reverse, `logistic_id` not a positive integer).
 */
export function parseQuoteParams(raw: QuoteParams): LaneQuery {
	const v = presentValues(raw, [
		"from_pin",
		"to_pin",
		"physical_weight",
		"volumetric_weight",
		"cod_amount",
		"payment_mode",
		"direction",
		"logistic_id",
	]);
	assertValid(checkQuote, v);
	return laneQuery(v as Readonly<QuoteParams>);
}

/** {@link QuoteParams} with the defaults: volumetric 0 kg, prepaid, COD amount ₹0, forward. */
function laneQuery(p: QuoteParams): LaneQuery {
	return {
		from_pin: p.from_pin,
		to_pin: p.to_pin,
		physical_weight: p.physical_weight,
		volumetric_weight: p.volumetric_weight ?? 0,
		payment_mode: p.payment_mode ?? "prepaid",
		cod_amount: p.cod_amount ?? 0,
		direction: p.direction ?? "forward",
		logistic_id: p.logistic_id,
	};
}
