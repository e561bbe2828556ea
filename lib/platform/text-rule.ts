/**
 * The edge text rule (issue 31; docs/decisions/0079-edge-text-rule.md): ONE
 * check, run by the gateway before any action is called, over every string a
 * client sends in the query, the path parameters and the JSON (or form) body:
 * values AND keys, at any depth.
 *
 * A string is refused when it contains
 * - a control character (Unicode general category Cc: U+0000–U+001F,
 *   U+007F–U+009F) other than TAB (U+0009), LF (U+000A) and CR (U+000D), which
 *   free text (a comment, a description) may carry; U+0000 in particular,
 *   which PostgreSQL cannot store in a text column (`invalid byte sequence
 *   for encoding "UTF8": 0x00`);
 * - an unpaired UTF-16 surrogate (U+D800–U+DFFF alone; a JSON body can spell
 *   one as `"\ud800"`), which is not Unicode text: PostgreSQL refuses it in
 *   `jsonb`, and UTF-8 encoding silently turns it into U+FFFD elsewhere.
 *
 * A key is refused, too, when it names a property every JavaScript object inherits ({@link BUILT_IN_KEYS}:
 * `toString`, `valueOf`, `constructor`, `__proto__`, …; docs/decisions/0128-built-in-property-keys.md).
 *
 * Fields keep their own, stricter rules (e.g. lib/shared/fields.ts `CONTROL_CHARS`
 * refuses TAB/LF/CR too in names and addresses); this rule only guarantees that
 * no string past the gateway can make a database or a log line fail.
 *
 * The refusal is 400 `validation_failed` in the §2.11 envelope, with one
 * `details` entry per offending field (spec §7; `{message}` under
 * /v1/documents/, as every gateway-made 400 there):
 * `comment: must not contain control characters`,
 * `order.items[0].name: must not contain unpaired surrogates`,
 * `order: keys must not contain control characters` (a nested key),
 * `parameter names: must not contain control characters` (a top-level key of
 * the body or the query).
 *
 * The one rule for every string that enters the system: the gateway applies
 * it to what it parses (lib/gateway/text-rule.ts `assertCleanText`), intake
 * to the bulk upload's multipart form (lib/intake/bulk/api.ts, the form is
 * parsed there), booking to the text fields of a courier push
 * (lib/booking/tracking.ts, the body is signed raw and parsed there).
 */
/** Control characters refused at the edge: category Cc ("not (not Cc, or TAB / LF / CR)"). */
const CONTROL = /[^\P{Cc}\t\n\r]/u;
/** An unpaired surrogate (in `u` mode a valid pair is one astral code point, never category Cs). */
const LONE_SURROGATE = /\p{Cs}/u;

/** Detail text for a string with a refused control character (the wording of the field validators). */
export const CONTROL_MESSAGE = "must not contain control characters";
/** Detail text for a string with an unpaired UTF-16 surrogate. */
export const SURROGATE_MESSAGE = "must not contain unpaired surrogates";

/**
 * Keys refused at any depth: the names of the properties every JavaScript object inherits (`toString`,
 * `valueOf`, `constructor`, `__proto__`, …; `Object.prototype`'s own names). A parsed JSON object with such an own
 * key is no longer an ordinary object to code that converts or inspects it: `{"toString": ""}` makes `String()` of
 * it, or of an array holding it, throw (fastest-validator's error messages did, answering 500), and `__proto__`
 * replaces the prototype of an object it is assigned onto. No field of the API is named so
 * (docs/decisions/0128-built-in-property-keys.md).
 */
export const BUILT_IN_KEYS: ReadonlySet<string> = new Set(Object.getOwnPropertyNames(Object.prototype));

/** Detail text for an object with a key in {@link BUILT_IN_KEYS}. */
export const BUILT_IN_KEY_MESSAGE =
	"must not name a built-in property of objects (toString, constructor, __proto__, …)";

/** Most `details` entries one refusal lists (a hostile body can hold thousands of bad strings). */
export const MAX_TEXT_DETAILS = 20;

/**
 * Why `s` breaks the edge text rule: {@link CONTROL_MESSAGE},
 * {@link SURROGATE_MESSAGE}, or undefined when `s` is clean. Linear time.
 */
export function textProblem(s: string): string | undefined {
	if (CONTROL.test(s)) return CONTROL_MESSAGE;
	if (LONE_SURROGATE.test(s)) return SURROGATE_MESSAGE;
	return undefined;
}

/** True when `s` passes the edge text rule (no refused control character, no unpaired surrogate). */
export function isCleanText(s: string): boolean {
	return textProblem(s) === undefined;
}

/** A key as it appears in a detail path: itself when it is a plain name, else `[<JSON string>]`. */
function segment(parent: string, key: string): string {
	if (/^[A-Za-z_$][\w$-]*$/.test(key)) return parent ? `${parent}.${key}` : key;
	return `${parent}[${JSON.stringify(key.length > 40 ? `${key.slice(0, 40)}…` : key)}]`;
}

/**
 * The `details` entries (`<path>: <problem>`) of every string in `value` that
 * breaks the rule: string values at any depth (path `a.b[2].c`, a top-level
 * string is named by `root`) and object keys (`<path of the object>: keys
 * must not contain …`, or `parameter names: …` at the top level; the key
 * itself is never echoed). Walks iteratively (no recursion: the gateway bounds
 * JSON nesting at 32, but this must be safe on any value), own enumerable
 * keys only; stops after {@link MAX_TEXT_DETAILS} entries. Empty when clean.
 * A key in {@link BUILT_IN_KEYS} is refused too, unless `opts.builtInKeys` is false.
 *
 * @param value a parsed JSON value, a query object, params…
 * @param root name of the top level in the detail paths ("" for a params object whose keys are field names)
 * @param opts.builtInKeys false: keys named like `Object.prototype`'s properties pass (the development IdP's token
 *   route, which answers such a body itself in OAuth's words)
 */
export function textViolations(value: unknown, root = "", opts: { builtInKeys?: boolean } = {}): string[] {
	const refuseBuiltIn = opts.builtInKeys !== false;
	const out: string[] = [];
	const stack: [unknown, string][] = [[value, root]];
	while (stack.length > 0 && out.length < MAX_TEXT_DETAILS) {
		const [v, path] = stack.pop() as [unknown, string];
		if (typeof v === "string") {
			const p = textProblem(v);
			if (p) out.push(`${path || "value"}: ${p}`);
		} else if (Array.isArray(v)) {
			for (let i = v.length - 1; i >= 0; i--) stack.push([v[i], `${path}[${i}]`]);
		} else if (v !== null && typeof v === "object" && !Buffer.isBuffer(v)) {
			const keys = Object.keys(v);
			let keyProblem: string | undefined;
			for (let i = keys.length - 1; i >= 0; i--) {
				const k = keys[i];
				const p = refuseBuiltIn && BUILT_IN_KEYS.has(k) ? BUILT_IN_KEY_MESSAGE : textProblem(k);
				if (p) keyProblem ??= p;
				else stack.push([(v as Record<string, unknown>)[k], segment(path, k)]);
			}
			if (keyProblem) out.push(path ? `${path}: keys ${keyProblem}` : `parameter names: ${keyProblem}`);
		}
	}
	return [...new Set(out)];
}
