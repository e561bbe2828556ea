/**
 * `GET /v1/shipping/couriers` (`booking.couriers`) and `PATCH
 * /v1/shipping/couriers/priority` (`booking.setPriority`): spec §2.8, §4.2,
 * §5 roles, §7 errors. Real booking service and PostgreSQL, fake rates card
 * and coverage (./setup.ts).
 */
import { strict as assert } from "node:assert";
import { SHIPMENT_TYPE_MSG } from "../../../lib/contracts";
import { exec, getSequelize, select } from "../../../lib/platform/db";
import { as, newSender, rejects } from "../../helpers/broker";
import { callAs, callRaw } from "../../helpers/call";
import { freshId } from "../../helpers/fixtures";
import { bodyOf, COURIERS, down, fakeCoverage, useBookingBroker } from "./setup";

type Dir = "forward" | "reverse";

/** The fake card's active couriers of a direction in default order. */
function card(direction: Dir) {
	return COURIERS.filter((c) => c.active && (direction === "forward" ? c.forward : c.reverse)).sort(
		(a, b) => a.default_priority - b.default_priority || a.logistic_id - b.logistic_id,
	);
}
const cardIds = (d: Dir) => card(d).map((c) => c.logistic_id);
const ranked = (ids: number[]) => ids.map((logistic_id, i) => ({ logistic_id, priority: i + 1 }));

describe("booking: GET /v1/shipping/couriers and PATCH /v1/shipping/couriers/priority", () => {
	const broker = useBookingBroker();
	const get = (sender: number, params: Record<string, unknown> = {}) =>
		callAs(broker(), "booking.couriers", params, as(sender));
	const patch = (sender: number, body: unknown, role: Parameters<typeof as>[1] = "merchant") =>
		callRaw(broker(), "booking.setPriority", body, as(sender, role));
	const fails = async (fn: () => Promise<unknown>) => bodyOf(await rejects(fn));
	const storedRows = (sender: number) =>
		select<{ direction: string; logistic_id: number; priority: number }>(
			getSequelize(),
			"SELECT direction, logistic_id, priority FROM booking.rankings WHERE sender_id = $1 ORDER BY direction, priority",
			[sender],
		);

	it("answers the default ranking with every part of the answer (shipment_type absent = 0)", async () => {
		const s = newSender();
		const res = await get(s);
		const cov = fakeCoverage("forward");
		assert.deepEqual(Object.keys(res).sort(), [
			"data",
			"restrictions",
			"rules",
			"shipments_30d",
			"strategy",
			"unique_pincodes",
		]);
		assert.deepEqual(
			res.data,
			card("forward").map((c, i) => ({
				logistic_id: c.logistic_id,
				logistic_name: c.logistic_name,
				enabled: true,
				priority: i + 1,
				serviceable_pincodes: cov.couriers[String(c.logistic_id)],
			})),
		);
		assert.deepEqual(res.strategy, {
			mode: "priority",
			source: "default",
			shipment_type: 0,
			direction: "forward",
		});
		assert.equal(res.unique_pincodes, cov.unique_pincodes);
		assert.deepEqual(
			res.rules,
			card("forward").map((c) => ({
				logistic_id: c.logistic_id,
				logistic_name: c.logistic_name,
				forward: c.forward,
				reverse: c.reverse,
				cod: c.cod,
				max_weight_kg: cov.limits[String(c.logistic_id)].max_weight_kg,
				mode: "surface",
				zones: ["A", "B", "C", "D"],
			})),
		);
		assert.deepEqual(res.restrictions, {
			reorder_only: true,
			cod_couriers: card("forward")
				.filter((c) => c.cod)
				.map((c) => c.logistic_id)
				.sort((a, b) => a - b),
			reverse_couriers: [],
		});
		assert.equal(res.shipments_30d, 0);
		assert.deepEqual(await get(s, { shipment_type: "0" }), res);
	});

	it("shipment_type 1 and 2 answer the reverse ranking; anything else is 400", async () => {
		const s = newSender();
		for (const st of ["1", "2", 2, " 1 "]) {
			const res = await get(s, { shipment_type: st });
			assert.deepEqual(
				res.data.map((c) => c.logistic_id),
				cardIds("reverse"),
			);
			assert.equal(res.strategy.direction, "reverse");
			assert.equal(res.strategy.shipment_type, Number(st));
			assert.deepEqual(res.restrictions.cod_couriers, []);
			assert.deepEqual(res.restrictions.reverse_couriers, cardIds("reverse"));
		}
		for (const st of ["3", "-1", "abc", "", "0.5", null, true]) {
			const { status, body } = await fails(() => get(s, { shipment_type: st }));
			assert.equal(status, 400, `shipment_type ${JSON.stringify(st)}`);
			assert.deepEqual(body, { error: SHIPMENT_TYPE_MSG, message: SHIPMENT_TYPE_MSG });
		}
	});

	it("PATCH stores the order and answers the re-read ranking; GET shows it", async () => {
		const s = newSender();
		const want = [...cardIds("forward")].reverse();
		const res = await patch(s, { shipment_type: 0, order: ranked(want), sender_id: s + 1 });
		assert.deepEqual(
			res.data.map((c) => [c.logistic_id, c.priority]),
			want.map((id, i) => [id, i + 1]),
		);
		assert.deepEqual(res.strategy, {
			mode: "priority",
			source: "account",
			shipment_type: 0,
			direction: "forward",
		});
		assert.deepEqual(await get(s, { shipment_type: "0" }), res);
		assert.deepEqual(
			await storedRows(s),
			want.map((logistic_id, i) => ({ direction: "forward", logistic_id, priority: i + 1 })),
		);
		assert.deepEqual(await storedRows(s + 1), [], "a sender_id in the body never switches accounts");
		// priorities given out of order, ids and priorities as digit strings
		const order = cardIds("forward").map((id, i, all) => ({
			logistic_id: String(id),
			priority: String(all.length - i),
		}));
		const again = await patch(s, { shipment_type: "0", order: [...order].reverse() });
		assert.deepEqual(
			again.data.map((c) => c.logistic_id),
			[...cardIds("forward")].reverse(),
		);
	});

	it("PATCH reverse (shipment_type 1) leaves the forward ranking alone, and one account never touches another", async () => {
		const a = newSender();
		const b = newSender();
		const fwd = [...cardIds("forward")].reverse();
		await patch(a, { shipment_type: 0, order: ranked(fwd) });
		const rev = await patch(a, { shipment_type: 1, order: ranked(cardIds("reverse")) });
		assert.equal(rev.strategy.direction, "reverse");
		assert.equal(rev.strategy.shipment_type, 1);
		assert.deepEqual(
			(await get(a)).data.map((c) => c.logistic_id),
			fwd,
		);
		const other = await get(b);
		assert.equal(other.strategy.source, "default");
		assert.deepEqual(
			other.data.map((c) => c.logistic_id),
			cardIds("forward"),
		);
		await patch(b, { shipment_type: 0, order: ranked(cardIds("forward")) });
		assert.deepEqual(
			(await get(a)).data.map((c) => c.logistic_id),
			fwd,
		);
	});

	it("refuses what is not a reorder of the card: duplicate_logistic, unknown_logistic, incomplete_ranking", async () => {
		const s = newSender();
		const ids = cardIds("forward");
		const n = ids.length;
		const before = ranked([...ids].reverse());
		await patch(s, { shipment_type: 0, order: before });

		const dup = await fails(() =>
			patch(s, { shipment_type: 0, order: [...ranked(ids), { logistic_id: ids[1], priority: n + 1 }] }),
		);
		assert.equal(dup.status, 400);
		assert.equal(dup.body.error, "duplicate_logistic");
		assert.deepEqual(dup.body.logistic_ids, [ids[1]]);
		assert.match(dup.body.message, new RegExp(`logistic_id ${ids[1]}`));

		// 6 is retired, 3 does reverse only, 99 does not exist
		for (const stranger of [6, 3, 99]) {
			const order = ranked(ids).map((r, i) => (i === 0 ? { ...r, logistic_id: stranger } : r));
			const unk = await fails(() => patch(s, { shipment_type: 0, order }));
			assert.equal(unk.status, 400, `courier ${stranger}`);
			assert.equal(unk.body.error, "unknown_logistic");
			assert.deepEqual(unk.body.logistic_ids, [stranger]);
		}

		const missing = await fails(() => patch(s, { shipment_type: 0, order: ranked(ids.slice(0, -1)) }));
		assert.equal(missing.status, 400);
		assert.equal(missing.body.error, "incomplete_ranking");
		assert.deepEqual(missing.body.missing, [ids[n - 1]]);
		assert.match(missing.body.message, /missing: /);
		assert.ok(missing.body.message.includes(card("forward")[n - 1].logistic_name));

		const gap = ranked(ids).map((r, i) => (i === n - 1 ? { ...r, priority: n + 1 } : r));
		const notPerm = await fails(() => patch(s, { shipment_type: 0, order: gap }));
		assert.equal(notPerm.body.error, "incomplete_ranking");
		assert.match(notPerm.body.message, new RegExp(`permutation of 1\\.\\.${n} \\(out of range: ${n + 1}\\)`));
		const twice = ranked(ids).map((r, i) => (i === 1 ? { ...r, priority: 1 } : r));
		const rep = await fails(() => patch(s, { shipment_type: 0, order: twice }));
		assert.equal(rep.body.error, "incomplete_ranking");
		assert.match(rep.body.message, /repeated: 1\)/);
		assert.deepEqual(
			rep.body.priorities,
			twice.map((r) => r.priority),
		);

		// a reverse courier list sent as forward, and the forward list sent as reverse
		const wrongCard = await fails(() => patch(s, { shipment_type: 1, order: ranked(ids) }));
		assert.equal(wrongCard.body.error, "unknown_logistic");

		// nothing was written by the refused requests
		assert.deepEqual(
			(await storedRows(s)).map((r) => [r.logistic_id, r.priority]),
			before.sort((x, y) => x.priority - y.priority).map((r) => [r.logistic_id, r.priority]),
		);
	});

	it("answers validation_failed with details for a malformed body", async () => {
		const s = newSender();
		const ids = cardIds("forward");
		const cases: [unknown, string[]][] = [
			[{ order: ranked(ids) }, ["shipment_type: is required"]],
			[{ shipment_type: 2, order: ranked(ids) }, ["shipment_type: must be 0 (forward) or 1 (reverse)"]],
			[{ shipment_type: "x", order: ranked(ids) }, ["shipment_type: must be 0 (forward) or 1 (reverse)"]],
			[{ shipment_type: 0 }, ["order: is required"]],
			[{ shipment_type: 0, order: [] }, ["order: must be a non-empty array of {logistic_id, priority}"]],
			[
				{ shipment_type: 0, order: { 1: 1 } },
				["order: must be a non-empty array of {logistic_id, priority}"],
			],
			[
				{ shipment_type: 0, order: [{ logistic_id: 1, priority: 1 }, 7, { logistic_id: "x", priority: 0 }] },
				[
					"order[1]: must be an object {logistic_id, priority}",
					"order[2].logistic_id: must be a positive integer",
					"order[2].priority: must be a positive integer",
				],
			],
			[{}, ["shipment_type: is required", "order: is required"]],
		];
		for (const [body, details] of cases) {
			const { status, body: err } = await fails(() => patch(s, body));
			assert.equal(status, 400, JSON.stringify(body));
			assert.equal(err.error, "validation_failed", JSON.stringify(body));
			assert.deepEqual(err.details, details, JSON.stringify(body));
		}
		const many = Array.from({ length: 101 }, (_, i) => ({ logistic_id: i + 1, priority: i + 1 }));
		const big = await fails(() => patch(s, { shipment_type: 0, order: many }));
		assert.deepEqual(big.body.details, ["order: at most 100 couriers"]);
		assert.deepEqual(await storedRows(s), []);
	});

	it("roles: read-only roles get 403 Read-only role, a role without courier.rank 403 forbidden; reads are open", async () => {
		const s = newSender();
		const body = { shipment_type: 0, order: ranked(cardIds("forward")) };
		for (const role of ["merchant_finance", "merchant_support", "merchant_staff"] as const) {
			const { status, body: err } = await fails(() => patch(s, body, role));
			assert.equal(status, 403, role);
			assert.equal(err.error, "Read-only role", role);
			assert.equal((await get(s)).data.length, cardIds("forward").length, `${role} may read`);
		}
		// §5 has no writing role without courier.rank today: a role outside the table stands in for one.
		const meta = as(s);
		meta.meta.user = { ...meta.meta.user, role: "merchant_packer" as never, caps: [], read_only: false };
		const forbidden = bodyOf(await rejects(() => callAs(broker(), "booking.setPriority", body, meta)));
		assert.equal(forbidden.status, 403);
		assert.equal(forbidden.body.error, "forbidden");
		assert.equal(forbidden.body.cap, "courier.rank");
		const ops = await patch(s, body, "merchant_ops");
		assert.equal(ops.strategy.source, "account");
		const anon = await rejects(() => callAs(broker(), "booking.couriers", {}));
		assert.equal(anon.code, 401);
		assert.deepEqual(await storedRows(s).then((r) => r.length), cardIds("forward").length);
	});

	it("shipments_30d counts the account's bookings of the direction booked in the last 30 days", async () => {
		const s = newSender();
		const db = getSequelize();
		const add = async (sender: number, direction: Dir, state: string, bookedDaysAgo: number | null) => {
			await exec(
				db,
				`INSERT INTO booking.attempts (order_id, sender_id, logistic_id, courier_name, mode, state, direction, booked_at)
				 VALUES ($1, $2, 1, 'Sandbox Express', 'auto', $3, $4,
				         CASE WHEN $5::int IS NULL THEN NULL ELSE now() - make_interval(days => $5::int) END)`,
				[freshId(), sender, state, direction, bookedDaysAgo],
			);
		};
		await add(s, "forward", "booked", 0);
		await add(s, "forward", "booked", 29);
		await add(s, "forward", "booked", 31); // too old
		await add(s, "forward", "cancelled", 2); // cancelled since
		await add(s, "forward", "failed", null); // never booked
		await add(s, "forward", "queued", null);
		await add(s, "reverse", "booked", 3);
		await add(s + 1, "forward", "booked", 1); // another account
		assert.equal((await get(s)).shipments_30d, 2);
		assert.equal((await get(s, { shipment_type: "1" })).shipments_30d, 1);
	});

	it("answers 503 rate_unavailable when rates cannot be reached (GET and PATCH), writing nothing", async () => {
		const s = newSender();
		for (const action of ["rates.listCouriers", "rates.coverage"]) {
			down.add(action);
			try {
				const g = await fails(() => get(s));
				assert.equal(g.status, 503, action);
				assert.equal(g.body.error, "rate_unavailable");
			} finally {
				down.delete(action);
			}
		}
		down.add("rates.listCouriers");
		try {
			const p = await fails(() => patch(s, { shipment_type: 0, order: ranked(cardIds("forward")) }));
			assert.equal(p.status, 503);
			assert.equal(p.body.error, "rate_unavailable");
		} finally {
			down.delete("rates.listCouriers");
		}
		assert.deepEqual(await storedRows(s), []);
	});
});
