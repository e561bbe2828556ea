/**
 * Estimated delivery dates (issue 28; lib/shared/calendar.ts, lib/rates/quote.ts,
 * `GET /v1/shipping/edd`; docs/decisions/0106-working-days-and-edd.md) on the
 * real rates and pincode services with the sandbox seed: every priced quote
 * row of a lane carries `edd` and `edd_range` computed from the courier's
 * pickup rules and transit days (read back from the database, the clock
 * frozen in IST through `quoteLane`'s `now`), a lane's observed transit
 * replacing the card's once it has 20 delivered shipments, and the storefront
 * route's earliest estimate with its cache headers and 304.
 */
import { strict as assert } from "node:assert";
import type { EddAnswer, PincodeInfo } from "../../../lib/contracts";
import { exec, getSequelize, select } from "../../../lib/platform/db";
import { loadCatalog } from "../../../lib/rates/catalog";
import { quoteLane } from "../../../lib/rates/quote";
import { estimateDelivery, minutesOf } from "../../../lib/shared/calendar";
import { as, useGatewayWith } from "../../helpers/broker";
import { callRaw } from "../../helpers/call";
import { useDevIdp } from "../../helpers/devidp";
import { useRates } from "./setup";

const ist = (local: string) => new Date(`${local}+05:30`);

/** The pincode facts the quote engine is given (state decides the holidays). */
const DELHI: PincodeInfo = {
	found: true,
	pincode: "110001",
	city: "New Delhi",
	state: "Delhi",
	metro: "Delhi NCR",
};
const BENGALURU: PincodeInfo = {
	found: true,
	pincode: "560001",
	city: "Bangalore",
	state: "Karnataka",
	metro: "Bengaluru",
};

describe("estimated delivery dates", () => {
	const t = useRates();

	/** A courier's seeded pickup rules and transit days of a zone. */
	async function seededOf(id: number, zone: string) {
		const [c] = await select<{ pickup_cutoff: string; pickup_weekdays: number[] }>(
			getSequelize(),
			"SELECT pickup_cutoff, pickup_weekdays FROM rates.couriers WHERE logistic_id = $1",
			[id],
		);
		const [tr] = await select<{ min_days: number; max_days: number }>(
			getSequelize(),
			"SELECT min_days, max_days FROM rates.transit_days WHERE logistic_id = $1 AND zone = $2 AND direction = 'forward'",
			[id, zone],
		);
		return {
			rules: { weekdays: c.pickup_weekdays.map(Number), cutoff_minutes: minutesOf(c.pickup_cutoff) ?? -1 },
			transit: { min: Number(tr.min_days), max: Number(tr.max_days) },
		};
	}

	it("every priced quote row carries the estimate of its courier's pickup rules and transit days", async () => {
		const snap = await loadCatalog(getSequelize());
		const now = ist("2026-08-12T15:30:00"); // a Wednesday, after every sandbox cut-off
		const lane = {
			from_pin: "110001",
			to_pin: "560001",
			physical_weight: 0.5,
			volumetric_weight: 0,
			payment_mode: "prepaid" as const,
			cod_amount: 0,
			direction: "forward" as const,
		};
		const res = quoteLane(snap, DELHI, BENGALURU, lane, now);
		assert.ok(res.data.length >= 2, JSON.stringify(res.dropped_couriers));
		for (const q of res.data) {
			const s = await seededOf(q.logistic_id, q.zone);
			const want = estimateDelivery(s.rules, s.transit, "Delhi", "Karnataka", now);
			assert.equal(q.edd, want.edd, `courier ${q.logistic_id}`);
			assert.deepEqual(q.edd_range, want.edd_range);
			// picked up Thursday 13 August; Independence Day (Saturday 15) and Sunday 16 are not transit days
			assert.equal(want.pickup_date, "2026-08-13");
			assert.ok(q.edd && q.edd > "2026-08-13");
		}
		// through the action as well: the rows answer both members
		const live = await t.serviceable({ from_pin: "110001", to_pin: "560001", physical_weight: "0.5" });
		for (const q of live.data) {
			assert.match(String(q.edd), /^\d{4}-\d{2}-\d{2}$/);
			assert.ok(q.edd_range && q.edd_range.min_days <= q.edd_range.max_days);
		}
	});

	it("a lane with 20 delivered shipments of a courier promises their observed 80th percentile", async () => {
		const db = getSequelize();
		const from = "110002";
		const to = "560002";
		const tats = [...Array(20).fill(2), ...Array(5).fill(6)];
		for (const [i, tat] of tats.entries())
			await callRaw(t.broker, "rates.recordLaneOutcome", {
				attempt_id: 9_000_000 + Math.floor(Math.random() * 1_000_000) * 100 + i,
				logistic_id: 1,
				from_pin: from,
				to_pin: to,
				outcome: "delivered",
				tat_days: tat,
			});
		const snap = await loadCatalog(db);
		// the lane's rows go now: other specs expect lane_performance empty
		await exec(db, "DELETE FROM rates.lane_outcomes WHERE from_pin = $1 AND to_pin = $2", [from, to]);
		await exec(db, "DELETE FROM rates.lane_performance WHERE from_pin = $1 AND to_pin = $2", [from, to]);
		// 20 × 2 days and 5 × 6 days: the 80th percentile (continuous) of the 25 is 2 + 0.2 × 4 = 2.8, rounded up to 3
		const p80 = 2.8;
		assert.equal(snap.learned.get(`1:${from}:${to}`), 3);
		const now = ist("2026-08-12T15:30:00");
		const res = quoteLane(
			snap,
			{ ...DELHI, pincode: from },
			{ ...BENGALURU, pincode: to },
			{
				from_pin: from,
				to_pin: to,
				physical_weight: 0.5,
				volumetric_weight: 0,
				payment_mode: "prepaid",
				cod_amount: 0,
				direction: "forward",
				logistic_id: 1,
			},
			now,
		);
		const s = await seededOf(1, res.data[0].zone);
		const learned = estimateDelivery(s.rules, s.transit, "Delhi", "Karnataka", now, Math.ceil(Number(p80)));
		assert.equal(res.data[0].edd, learned.edd);
	});

	describe("GET /v1/shipping/edd", () => {
		const auth = useDevIdp();
		const g = useGatewayWith(["pincode", "rates"]);

		it("answers the earliest estimate with cache headers; the same ETag answers 304; bad pins are 400", async () => {
			const token = await auth.tokenFor(t.sender);
			const r = await fetch(`${g.base}/v1/shipping/edd?from_pin=110001&to_pin=560001&payment_mode=cod`, {
				headers: { authorization: `Bearer ${token}` },
			});
			const body = (await r.json()) as EddAnswer;
			assert.equal(r.status, 200, JSON.stringify(body));
			assert.equal(body.serviceable, true);
			assert.equal(body.payment_mode, "cod");
			const quote = await callRaw(
				t.broker,
				"rates.serviceable",
				{
					from_pin: "110001",
					to_pin: "560001",
					physical_weight: "0.5",
					order_type: "1",
					collectable_amount: "0",
				},
				as(t.sender),
			);
			const earliest = quote.data
				.map((q) => q.edd)
				.filter((e): e is string => !!e)
				.sort()[0];
			assert.equal(body.edd, earliest, "the earliest row's date");
			const cache = r.headers.get("cache-control") ?? "";
			const maxAge = Number(/max-age=(\d+)/.exec(cache)?.[1]);
			assert.match(cache, /^private, max-age=\d+$/);
			assert.ok(maxAge <= 3600 && maxAge >= 0, cache);
			assert.ok(Date.parse(body.valid_until) - Date.now() <= 3600_000 + 1000);
			const etag = r.headers.get("etag");
			assert.match(String(etag), /^"[A-Za-z0-9_-]+"$/);
			const again = await fetch(`${g.base}/v1/shipping/edd?from_pin=110001&to_pin=560001&payment_mode=cod`, {
				headers: { authorization: `Bearer ${token}`, "if-none-match": String(etag) },
			});
			assert.equal(again.status, 304);
			assert.equal(await again.text(), "");
			const bad = await fetch(`${g.base}/v1/shipping/edd?from_pin=11001&to_pin=560001`, {
				headers: { authorization: `Bearer ${token}` },
			});
			assert.equal(bad.status, 400);
			assert.equal(((await bad.json()) as { error: string }).error, "validation_failed");
			const card = await fetch(`${g.base}/v1/shipping/edd?from_pin=110001&to_pin=560001&payment_mode=card`, {
				headers: { authorization: `Bearer ${token}` },
			});
			assert.equal(card.status, 400, "payment_mode is prepaid or cod");
			const prepaid = await fetch(`${g.base}/v1/shipping/edd?from_pin=110001&to_pin=560001`, {
				headers: { authorization: `Bearer ${token}` },
			});
			assert.equal(((await prepaid.json()) as EddAnswer).payment_mode, "prepaid", "the default");
			const none = await fetch(`${g.base}/v1/shipping/edd?from_pin=110001&to_pin=999999`, {
				headers: { authorization: `Bearer ${token}` },
			});
			const noneBody = (await none.json()) as EddAnswer;
			assert.equal(none.status, 200);
			assert.deepEqual([noneBody.serviceable, noneBody.edd, noneBody.logistic_id], [false, null, null]);
		});
	});
});
