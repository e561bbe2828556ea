/**
 * Parsing of the serviceable / quote input (spec §4.2 `GET
 * /v1/shipping/serviceable`; lib/contracts.ts QuoteParams). Query-string
 * values arrive as strings; internal callers may send numbers.
 */
import { apiError } from "../errors";
import { assertValid, compile } from "../validate";
import type { LaneQuery } from "./quote";

/** Text of the §7 error for a missing from_pin, to_pin or physical_weight. */
export const REQUIRED_MESSAGE = "from_pin, to_pin and physical_weight are required";

/** Upper bounds that keep integer gram / paise arithmetic exact (not in the spec; documented in the README). */
export const MAX_WEIGHT_KG = 100_000;
export const MAX_COLLECTABLE_RUPEES = 1_000_000_000;

const pin = {
	type: "string",
	convert: true,
	pattern: /^[0-9]{6}$/,
	messages: { stringPattern: "The '{field}' field must be 6 digits" },
} as const;

const check = compile({
	$$strict: "remove",
	from_pin: pin,
	to_pin: pin,
	physical_weight: { type: "number", convert: true, positive: true, finite: true, max: MAX_WEIGHT_KG },
	volumetric_weight: {
		type: "number",
		convert: true,
		min: 0,
		finite: true,
		max: MAX_WEIGHT_KG,
		optional: true,
	},
	collectable_amount: {
		type: "number",
		convert: true,
		min: 0,
		finite: true,
		max: MAX_COLLECTABLE_RUPEES,
		optional: true,
	},
	order_type: { type: "any", optional: true },
	operation: {
		type: "enum",
		values: ["forward", "reverse"],
		optional: true,
		messages: { enumValue: "The '{field}' field must be forward or reverse" },
	},
	logistic_id: { type: "number", convert: true, integer: true, positive: true, optional: true },
});

const blank = (v: unknown) => v === undefined || v === null || (typeof v === "string" && v.trim() === "");

/**
 * Validates and normalises quote input.
 * - any of `from_pin`, `to_pin`, `physical_weight` missing or blank → 400
 *   `{error:"from_pin, to_pin and physical_weight are required", message: same}`;
 * - malformed (pins not `^\d{6}$`, weights not finite numbers, physical_weight
 *   ≤ 0, volumetric_weight < 0, collectable_amount < 0 or not a number,
 *   operation other than "forward"/"reverse", logistic_id not a positive
 *   integer) → 400 `validation_failed` with `details` (one string per field);
 * - `order_type` 1 (number or "1") means COD, anything else prepaid (§4.2);
 * - blank optional values count as absent; unknown keys (e.g. `sender_id`) are ignored.
 * @param allowLogisticId false for the public endpoint (no such query parameter)
 */
export function parseQuoteInput(raw: unknown, allowLogisticId: boolean): LaneQuery {
	const src = (raw && typeof raw === "object" ? raw : {}) as Record<string, unknown>;
	if (blank(src.from_pin) || blank(src.to_pin) || blank(src.physical_weight))
		throw apiError(400, REQUIRED_MESSAGE, REQUIRED_MESSAGE);
	const v: Record<string, unknown> = {};
	for (const k of [
		"from_pin",
		"to_pin",
		"physical_weight",
		"volumetric_weight",
		"collectable_amount",
		"order_type",
		"operation",
	])
		if (!blank(src[k])) v[k] = src[k];
	if (allowLogisticId && !blank(src.logistic_id)) v.logistic_id = src.logistic_id;
	assertValid(check, v);
	return {
		from_pin: v.from_pin as string,
		to_pin: v.to_pin as string,
		physical_weight: v.physical_weight as number,
		volumetric_weight: (v.volumetric_weight as number | undefined) ?? 0,
		cod: Number(v.order_type) === 1,
		collectable_amount: (v.collectable_amount as number | undefined) ?? 0,
		operation: (v.operation as "forward" | "reverse" | undefined) ?? "forward",
		logistic_id: v.logistic_id as number | undefined,
	};
}
