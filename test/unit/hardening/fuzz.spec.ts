/**
 * Property test (fast-check) over the body of EVERY JSON write route of the
 * gateway (issue 12 "a fuzz test over every write route's body that asserts no
 * 5xx"): plausible bodies with hostile values spliced in (nested arrays and
 * objects, control characters, hex / exponent / signed numbers, huge and
 * negative numbers, arrays in place of scalars, random keys including
 * `__proto__`), whole random JSON values, and raw texts nested past the cap.
 * Every answer is < 500 and, when an error, in the spec's envelope. Real
 * gateway and services over real NATS; ~20 s.
 */
import { strict as assert } from "node:assert";
import fc from "fast-check";
import { API_ALIASES } from "../../../lib/gateway/routes";
import { assertEnvelope, send, useWorld, type World, WRITE_ROUTES } from "./setup";

/** Runs per route (× 21 routes): keeps the file near 20 s on a laptop. */
const RUNS = Number(process.env.FUZZ_RUNS || 40);

/** Strings a validator must survive: control characters, number spellings, unicode, long text. */
const hostileString = fc.oneof(
	fc.string({ maxLength: 40 }),
	fc.string({ unit: "binary", maxLength: 40 }),
	fc.constantFrom(
		"0x10",
		"1e3",
		"+16",
		"-1",
		" 16 ",
		"16.0",
		"Infinity",
		"NaN",
		"",
		"   ",
		"\u0000",
		"a\u0000b",
		"\u007f\u0085\u009f",
		"__proto__",
		"9007199254740993",
		"😀".repeat(300),
	),
	fc.string({
		unit: fc.constantFrom(..."\u0000\u0001\t\n\r\u001b\u001f\u007f\u0085\u009f a0"),
		minLength: 1,
		maxLength: 20,
	}),
);

/** Arrays nested `d` deep (0–40: around the gateway's cap of 32). */
const nested = fc
	.tuple(fc.integer({ min: 1, max: 40 }), fc.constantFrom<unknown>(1, "x", null, {}))
	.map(([d, leaf]) => {
		let v: unknown = leaf;
		for (let i = 0; i < d; i++) v = [v];
		return v;
	});

/** Any value a JSON body can hold, biased to the hostile ones. */
const hostileValue: fc.Arbitrary<unknown> = fc.oneof(
	hostileString,
	fc.integer(),
	fc.double(),
	fc.constantFrom(0, -1, 1.5, 2 ** 53, 1e308, -0, true, false, null),
	nested,
	fc.array(hostileString, { maxLength: 3 }),
	fc.jsonValue({ maxDepth: 4 }),
	fc.dictionary(hostileString, fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 }),
);

/** Paths (`a` or `a.b`) of the plain-object leaves and blocks of `body`. */
function pathsOf(body: Record<string, unknown>): string[] {
	const out: string[] = [];
	for (const [k, v] of Object.entries(body)) {
		out.push(k);
		if (v && typeof v === "object" && !Array.isArray(v))
			for (const k2 of Object.keys(v)) out.push(`${k}.${k2}`);
	}
	return out;
}

/** `body` with the value at `path` replaced (a deep copy of the two levels touched). */
function splice(body: Record<string, unknown>, path: string, value: unknown): Record<string, unknown> {
	const out: Record<string, unknown> = { ...body };
	const [a, b] = path.split(".");
	if (b === undefined) out[a] = value;
	else out[a] = { ...(out[a] as Record<string, unknown>), [b]: value };
	return out;
}

/** A request body: the route's base body mutated, a random object, a random JSON value, or a raw text. */
function bodyFor(base: Record<string, unknown>): fc.Arbitrary<unknown> {
	const paths = pathsOf(base);
	if (paths.length === 0) paths.push("order_id", "comment", "x");
	const mutated = fc
		.array(fc.tuple(fc.constantFrom(...paths), hostileValue), { minLength: 1, maxLength: 4 })
		.map((edits) => edits.reduce((b, [p, v]) => splice(b, p, v), base));
	const extraKeys = fc
		.dictionary(
			fc.oneof(hostileString, fc.constantFrom("__proto__", "constructor", "sender_id")),
			hostileValue,
			{
				maxKeys: 4,
			},
		)
		.map((extra) => ({ ...base, ...extra }));
	const deepText = fc
		.tuple(fc.integer({ min: 30, max: 20_000 }), fc.boolean())
		.map(([d, arr]) => (arr ? `${"[".repeat(d)}1${"]".repeat(d)}` : `${'{"a":'.repeat(d)}1${"}".repeat(d)}`));
	const raw = fc.oneof(
		// a value nested past the cap, in a known field or an unknown key (as text: JSON.stringify would recurse)
		fc
			.tuple(fc.constantFrom(...paths, "unknown_key"), deepText)
			.map(([p, deep]) => JSON.stringify(splice(base, p, "__DEEP__")).replace('"__DEEP__"', deep)),
		fc.constantFrom('{"a":1', "[1,2]", '"text"', "null", '{"__proto__":{"polluted":1}}', "\u0000"),
	);
	return fc.oneof(
		{ weight: 5, arbitrary: mutated },
		{ weight: 2, arbitrary: extraKeys },
		{ weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
		{ weight: 1, arbitrary: raw.map((text) => ({ raw: text })) },
	);
}

describe("hardening: fuzz of every write route's body (no 5xx, envelope shape)", function () {
	this.timeout(120_000);
	const w: World = useWorld("hardening-fuzz");

	it("covers every POST / PATCH alias of the JSON API route", () => {
		const aliases = Object.keys(API_ALIASES).filter((k) => k.startsWith("POST ") || k.startsWith("PATCH "));
		const covered = new Set(WRITE_ROUTES.map((r) => r.key));
		assert.deepEqual(
			aliases.filter((k) => !covered.has(k)),
			[],
		);
	});

	for (const route of WRITE_ROUTES) {
		it(route.key, async () => {
			const path = route.path(w);
			await fc.assert(
				fc.asyncProperty(bodyFor(route.body(w)), async (body) => {
					const text =
						body && typeof body === "object" && "raw" in body && typeof body.raw === "string"
							? body.raw
							: JSON.stringify(body);
					const a = await send(w, route.method, path, text);
					assertEnvelope(a, path);
				}),
				{ numRuns: RUNS },
			);
		});
	}

	it("the process-wide Object prototype was never polluted", () => {
		assert.equal(({} as Record<string, unknown>).polluted, undefined);
	});
});
