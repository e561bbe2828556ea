/**
 * fastest-validator helpers that turn validator failures into the spec's
 * envelopes (§2.11 `details` strings such as `receiver.pincode: must be 6 digits`).
 */
import Validator, { type ValidationError, type ValidationSchema } from "fastest-validator";
import { type ApiError, validationFailed } from "./errors";

const v = new Validator({
	useNewCustomCheckerFunction: true,
	messages: {
		stringPattern: "'{field}' is malformed",
	},
});

/**
 * The shared validator instance behind {@link compile} (the broker's own
 * validator is a separate default instance). Not imported anywhere yet.
 */
export const validator = v;

export type Check = (value: unknown) => true | ValidationError[] | Promise<true | ValidationError[]>;

/** Compiles a schema once; call the result per request. `$$strict: "remove"` is recommended. */
export function compile(schema: ValidationSchema): Check {
	return v.compile(schema) as Check;
}

/**
 * Renders one validator failure as `field: message`, dropping the field name
 * the message starts with (`The 'a' field is required.` → `a: is required.`,
 * `'a' is malformed` → `a: is malformed`); quoted values later in the message
 * (`must contain the 'x' text`) are kept.
 */
export function describe(e: ValidationError): string {
	const msg = String(e.message ?? e.type)
		.replace(/^The '([^']+)' field /, "")
		.replace(/^'([^']+)' /, "");
	return `${e.field}: ${msg}`;
}

/**
 * Runs a compiled check; throws `onFail(details)` (default 400
 * `validation_failed` with `details`) on failure. Mutates `value` when the
 * schema converts or strips fields.
 */
export function assertValid(
	check: Check,
	value: unknown,
	onFail: (details: string[], errors: ValidationError[]) => ApiError = (d) => validationFailed(d),
): void {
	const res = check(value);
	if (res === true) return;
	if (res instanceof Promise) throw new Error("async validation schemas are not supported here");
	throw onFail(res.map(describe), res);
}
