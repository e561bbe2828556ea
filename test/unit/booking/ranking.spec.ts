/**
 * Per-account AUTO ranking (spec §2.8; lib/booking/ranking.ts): `rankCouriers`
 * over the stored `booking.rankings` rows (real PostgreSQL) and the fake rates
 * card of ./setup.ts; `applyRanking` and `pickAuto` as pure functions.
 */
import { strict as assert } from "node:assert";
import { applyRanking, pickAuto, rankCouriers } from "../../../lib/booking/ranking";
import { rankingOf, replaceRanking } from "../../../lib/booking/store/rankings";
import type { CourierInfo, Quote } from "../../../lib/contracts";
import { getSequelize } from "../../../lib/platform/db";
import { newSender, rejects } from "../../helpers/broker";
import { courier } from "../../helpers/fixtures";
import { COURIERS, down, useBookingBroker } from "./setup";

/** Active couriers of a direction on the fake card, in the default order (priority, then id). */
function defaultOrder(direction: "forward" | "reverse"): number[] {
	return COURIERS.filter((c) => c.active && (direction === "forward" ? c.forward : c.reverse))
		.sort((a, b) => a.default_priority - b.default_priority || a.logistic_id - b.logistic_id)
		.map((c) => c.logistic_id);
}

describe("booking: per-account courier ranking (rankCouriers)", () => {
	const broker = useBookingBroker();
	const db = () => getSequelize();
	const ids = (list: CourierInfo[]) => list.map((c) => c.logistic_id);

	it("answers the card's active couriers in default order when the account never ranked", async () => {
		const s = newSender();
		const fwd = await rankCouriers(db(), broker(), s, "forward");
		assert.deepEqual(ids(fwd), defaultOrder("forward"));
		assert.ok(!ids(fwd).includes(6), "an inactive courier is never ranked");
		assert.ok(fwd.every((c) => c.forward && c.active));
		assert.deepEqual(ids(await rankCouriers(db(), broker(), s, "reverse")), defaultOrder("reverse"));
	});

	it("follows the account's rows; couriers without a row come after, by default priority", async () => {
		const s = newSender();
		const [first, second] = [4, 2];
		await replaceRanking(db(), s, "forward", [
			{ logistic_id: first, priority: 1 },
			{ logistic_id: second, priority: 2 },
		]);
		const rest = defaultOrder("forward").filter((id) => id !== first && id !== second);
		assert.deepEqual(ids(await rankCouriers(db(), broker(), s, "forward")), [first, second, ...rest]);
	});

	it("ignores rows of couriers no longer on the card (inactive, other direction)", async () => {
		const s = newSender();
		// 6 is retired, 3 does reverse only: their forward rows are stale
		await replaceRanking(db(), s, "forward", [
			{ logistic_id: 6, priority: 1 },
			{ logistic_id: 3, priority: 2 },
			{ logistic_id: 5, priority: 3 },
		]);
		const got = ids(await rankCouriers(db(), broker(), s, "forward"));
		assert.deepEqual(got, [5, ...defaultOrder("forward").filter((id) => id !== 5)]);
	});

	it("keeps accounts and directions apart", async () => {
		const a = newSender();
		const b = newSender();
		const reversed = [...defaultOrder("forward")].reverse();
		await replaceRanking(
			db(),
			a,
			"forward",
			reversed.map((logistic_id, i) => ({ logistic_id, priority: i + 1 })),
		);
		await replaceRanking(db(), a, "reverse", [{ logistic_id: 3, priority: 1 }]);
		assert.deepEqual(ids(await rankCouriers(db(), broker(), a, "forward")), reversed);
		assert.deepEqual(ids(await rankCouriers(db(), broker(), b, "forward")), defaultOrder("forward"));
		// replacing the reverse ranking leaves the forward rows alone
		await replaceRanking(db(), a, "reverse", [{ logistic_id: 3, priority: 1 }]);
		assert.deepEqual(
			(await rankingOf(db(), a, "forward")).map((r) => r.logistic_id),
			reversed,
		);
		assert.deepEqual(await rankingOf(db(), b, "forward"), []);
	});

	it("replaceRanking replaces the whole direction (dropped couriers' rows go)", async () => {
		const s = newSender();
		await replaceRanking(db(), s, "forward", [
			{ logistic_id: 1, priority: 2 },
			{ logistic_id: 2, priority: 1 },
			{ logistic_id: 6, priority: 3 },
		]);
		await replaceRanking(db(), s, "forward", [
			{ logistic_id: 2, priority: 2 },
			{ logistic_id: 1, priority: 1 },
		]);
		assert.deepEqual(await rankingOf(db(), s, "forward"), [
			{ logistic_id: 1, priority: 1 },
			{ logistic_id: 2, priority: 2 },
		]);
	});

	it("concurrent replacements end with one of them whole, never a mix", async () => {
		const s = newSender();
		const x = defaultOrder("forward").map((logistic_id, i) => ({ logistic_id, priority: i + 1 }));
		const n = x.length;
		const y = x.map((r) => ({ logistic_id: r.logistic_id, priority: n + 1 - r.priority }));
		await Promise.all([
			replaceRanking(db(), s, "forward", x),
			replaceRanking(db(), s, "forward", y),
			replaceRanking(db(), s, "forward", x),
		]);
		const got = await rankingOf(db(), s, "forward");
		const sorted = (rows: typeof x) => [...rows].sort((p, q) => p.priority - q.priority);
		assert.ok(
			JSON.stringify(got) === JSON.stringify(sorted(x)) || JSON.stringify(got) === JSON.stringify(sorted(y)),
			JSON.stringify(got),
		);
	});

	it("raises the rates call's 503 when rates is unreachable", async () => {
		down.add("rates.listCouriers");
		try {
			const err = await rejects(() =>
				rankCouriers(db(), broker(), newSender(), "forward", { unavailable: "rate_unavailable" }),
			);
			assert.equal(err.code, 503);
			assert.equal(err.data?.body?.error, "rate_unavailable");
		} finally {
			down.delete("rates.listCouriers");
		}
	});
});

describe("booking: applyRanking / pickAuto (pure)", () => {
	const card = [
		courier(1, "A", "a", { default_priority: 2 }),
		courier(2, "B", "b", { default_priority: 1 }),
		courier(3, "C", "c", { default_priority: 1 }),
		courier(4, "D", "d", { default_priority: 5 }),
	];
	const quote = (logistic_id: number): Quote => ({
		logistic_id,
		courier_name: `c${logistic_id}`,
		total: 100,
		cod_charge: 0,
		freight_charge: 85,
		shipping_charge_tax: 15,
		zone: "D",
		weight: 0.5,
		rto_charge: 85,
		performance: null,
		edd: null,
		edd_range: null,
	});

	it("default order: default priority, then logistic_id", () => {
		const r = applyRanking(card, []);
		assert.equal(r.ranked, false);
		assert.deepEqual(
			r.couriers.map((c) => c.logistic_id),
			[2, 3, 1, 4],
		);
	});

	it("ranked first by stored priority, the rest after by default priority", () => {
		const r = applyRanking(card, [
			{ logistic_id: 4, priority: 1 },
			{ logistic_id: 1, priority: 2 },
			{ logistic_id: 99, priority: 3 },
		]);
		assert.equal(r.ranked, true);
		assert.deepEqual(
			r.couriers.map((c) => c.logistic_id),
			[4, 1, 2, 3],
		);
		const stale = applyRanking(card, [{ logistic_id: 99, priority: 1 }]);
		assert.equal(stale.ranked, false, "rows of couriers off the card do not count");
	});

	it("pickAuto takes the first ranked courier that prices the lane, whatever the quotes' order", () => {
		const ranked = applyRanking(card, [{ logistic_id: 4, priority: 1 }]).couriers;
		assert.equal(pickAuto(ranked, [quote(1), quote(4), quote(2)])?.courier.logistic_id, 4);
		assert.equal(pickAuto(ranked, [quote(1), quote(3)])?.courier.logistic_id, 3);
		assert.equal(pickAuto(ranked, [quote(9)]), null);
	});
});
