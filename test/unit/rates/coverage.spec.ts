/**
 * `rates.coverage` (spec §2.8 `serviceable_pincodes`, `unique_pincodes`;
 * lib/rates/coverage.ts) against the real pincode directory and the seeded
 * sandbox rules, and `pincode.all`. Expected numbers are computed here from
 * the rows in the database (directory pincodes, couriers, serviceability,
 * rate cards), never hard-coded.
 */
import { strict as assert } from "node:assert";
import type { ResultOf } from "../../../lib/contracts";
import { exec, getSequelize, select } from "../../../lib/platform/db";
import { rejects } from "../../helpers/broker";
import { callAs, callRaw } from "../../helpers/call";
import { useRates } from "./setup";

type Dir = "forward" | "reverse";
type Coverage = ResultOf<"rates.coverage">;
interface Rule {
	logistic_id: number;
	pincode_prefix: string;
	applies_to: string;
	serviceable: boolean;
}

/** What the database says, read afresh. */
async function seededFacts() {
	const db = getSequelize();
	const pins = (await select<{ pincode: string }>(db, "SELECT pincode FROM pincode.pincodes")).map(
		(r) => r.pincode,
	);
	const couriers = await select<{
		logistic_id: number;
		forward: boolean;
		reverse: boolean;
		active: boolean;
		mode: string;
		max_weight_kg: string | null;
	}>(db, "SELECT logistic_id, forward, reverse, active, mode, max_weight_kg FROM rates.couriers");
	const rules = await select<Rule>(
		db,
		"SELECT logistic_id, pincode_prefix, applies_to, serviceable FROM rates.serviceability",
	);
	const cards = await select<{ logistic_id: number; zone: string; direction: string }>(
		db,
		"SELECT logistic_id, zone, direction FROM rates.rate_cards",
	);
	return { pins, couriers, rules, cards };
}

/**
 * Whether a courier with `rules` serves `pin` at `end`: walking from the
 * six-digit prefix down, the first length with a rule for that end decides
 * (all its rules must say serviceable); no rule at all → served.
 */
function served(rules: Rule[], pin: string, end: string): boolean {
	for (let len = pin.length; len >= 1; len--) {
		const hit = rules.filter(
			(r) => r.pincode_prefix === pin.slice(0, len) && (r.applies_to === end || r.applies_to === "both"),
		);
		if (hit.length) return hit.every((r) => r.serviceable);
	}
	return true;
}

/** The expected `rates.coverage` answer for `direction`, from the database rows. */
async function expectedCoverage(direction: Dir): Promise<Coverage> {
	const { pins, couriers, rules, cards } = await seededFacts();
	const end = direction === "forward" ? "delivery" : "pickup";
	const out: Coverage = { couriers: {}, unique_pincodes: 0, limits: {} };
	const union = new Set<string>();
	for (const c of couriers) {
		if (!c.active || !(direction === "forward" ? c.forward : c.reverse)) continue;
		const mine = rules.filter((r) => r.logistic_id === c.logistic_id);
		const ok = pins.filter((p) => served(mine, p, end));
		for (const p of ok) union.add(p);
		out.couriers[String(c.logistic_id)] = ok.length;
		out.limits[String(c.logistic_id)] = {
			max_weight_kg: c.max_weight_kg === null ? null : Number(c.max_weight_kg),
			mode: c.mode as "air" | "surface",
			zones: cards
				.filter((k) => k.logistic_id === c.logistic_id && k.direction === direction)
				.map((k) => k.zone.trim() as "A")
				.sort(),
		};
	}
	out.unique_pincodes = union.size;
	return out;
}

describe("rates.coverage (internal) and pincode.all", () => {
	const t = useRates();
	const coverage = (direction: unknown) => callRaw(t.broker, "rates.coverage", { direction });
	const sorted = (c: Coverage) => JSON.parse(JSON.stringify(c, Object.keys(c).sort()));

	it("pincode.all answers every directory pincode once, six digits, ascending", async () => {
		const all = await callAs(t.broker, "pincode.all", {});
		const { pins } = await seededFacts();
		assert.ok(pins.length > 15_000, `the India Post directory is loaded (${pins.length})`);
		assert.equal(all.length, pins.length);
		assert.equal(new Set(all).size, all.length);
		assert.ok(all.every((p) => /^\d{6}$/.test(p)));
		assert.deepEqual(all, [...pins].sort());
	});

	it("counts the pincodes each forward courier serves at the delivery end, and their union", async () => {
		const want = await expectedCoverage("forward");
		const got = await coverage("forward");
		assert.deepEqual(got.couriers, want.couriers);
		assert.equal(got.unique_pincodes, want.unique_pincodes);
		assert.deepEqual(got.limits, want.limits);
		// the seed has couriers without any rule (all pincodes) and one with exclusions
		const counts = Object.values(got.couriers);
		assert.ok(
			counts.some((n) => n < got.unique_pincodes),
			"an excluding rule lowers a count",
		);
		assert.ok(Math.max(...counts) <= got.unique_pincodes);
	});

	it("counts reverse couriers at the pickup end", async () => {
		const want = await expectedCoverage("reverse");
		const got = await coverage("reverse");
		assert.deepEqual(sorted(got), sorted(want));
		assert.ok(Object.keys(got.couriers).length >= 1);
	});

	it("is cached, recomputed after a catalog reload (pickup vs delivery rules) and after pincode.changed", async () => {
		const first = await coverage("reverse");
		assert.equal(await coverage("reverse"), first, "the second answer is the cached one");
		const db = getSequelize();
		const [rev] = await select<{ logistic_id: number }>(
			db,
			"SELECT logistic_id FROM rates.couriers WHERE active AND reverse ORDER BY default_priority, logistic_id LIMIT 1",
		);
		const id = rev.logistic_id;
		try {
			// a pickup exclusion counts for reverse (the customer is the pickup end); a delivery one does not
			await exec(
				db,
				`INSERT INTO rates.serviceability (logistic_id, pincode_prefix, applies_to, serviceable, note)
				 VALUES ($1, '11', 'pickup', false, 'coverage spec'), ($1, '56', 'delivery', false, 'coverage spec'),
				        ($1, '110001', 'both', true, 'coverage spec')`,
				[id],
			);
			await callAs(t.broker, "rates.reload", {});
			const after = await coverage("reverse");
			const want = await expectedCoverage("reverse");
			assert.deepEqual(after.couriers, want.couriers);
			assert.equal(after.unique_pincodes, want.unique_pincodes);
			const { pins } = await seededFacts();
			const lost = pins.filter((p) => p.startsWith("11") && p !== "110001").length;
			assert.ok(lost > 0);
			assert.equal(after.couriers[String(id)], first.couriers[String(id)] - lost);
		} finally {
			await exec(db, "DELETE FROM rates.serviceability WHERE note = 'coverage spec'");
			await callAs(t.broker, "rates.reload", {});
		}
		const restored = await coverage("reverse");
		assert.deepEqual(restored, first);
		await callAs(t.broker, "pincode.reload", {});
		const fresh = await coverage("reverse");
		assert.notEqual(fresh, restored, "pincode.changed drops the cached counts");
		assert.deepEqual(fresh, first);
	});

	it("refuses a direction outside forward / reverse", async () => {
		for (const d of ["sideways", 0, undefined]) {
			const err = await rejects(() => coverage(d));
			assert.equal(err.name, "ValidationError", String(d));
		}
	});
});
