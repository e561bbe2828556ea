/**
 * Integration: per-account courier rankings over real NATS, PostgreSQL and
 * Redis (spec §2.8, §4.2, §5, §7): `GET /v1/shipping/couriers` and `PATCH
 * /v1/shipping/couriers/priority` through the gateway, with booking running on
 * two nodes and rates / pincode on a third; then an AUTO booking books with
 * the merchant's first-ranked courier.
 */
import { strict as assert } from "node:assert";
import { rankCouriers } from "../../lib/booking/ranking";
import type { CourierInfo, ResultOf } from "../../lib/contracts";
import { SHIPMENT_TYPE_MSG } from "../../lib/contracts";
import { getSequelize, select } from "../../lib/platform/db";
import type { DevIdp } from "../../lib/platform/devidp";
import { as, newSender } from "../helpers/broker";
import { callAs } from "../helpers/call";
import { useCluster } from "../helpers/cluster";
import { freshRef, orderBody, warehouseBody } from "../helpers/fixtures";
import { client } from "../helpers/flow";
import { eventually } from "../helpers/poll";

describe("integration: courier rankings over NATS", function () {
	this.timeout(90_000);
	const cluster = useCluster(
		"rk",
		[
			["gateway"],
			["pincode", "rates", "warehouses"],
			["intake", "booking", "billing", "simulator"],
			["booking"],
		],
		["pincode", "rates", "warehouses", "intake", "booking", "billing"],
	);
	const brokers = cluster.brokers;
	/** the sandbox card's active couriers per direction, default order, as rates answers over NATS */
	const card: Record<"forward" | "reverse", CourierInfo[]> = { forward: [], reverse: [] };
	let coverage: Record<"forward" | "reverse", ResultOf<"rates.coverage">>;
	let base = "";
	let idp: DevIdp;

	before(async () => {
		base = cluster.base;
		idp = cluster.idp;
		for (const d of ["forward", "reverse"] as const) {
			card[d] = await callAs(brokers[3], "rates.listCouriers", { direction: d });
		}
		coverage = {
			forward: await callAs(brokers[2], "rates.coverage", { direction: "forward" }),
			reverse: await callAs(brokers[2], "rates.coverage", { direction: "reverse" }),
		};
	});

	const ids = (list: { logistic_id: number }[]) => list.map((c) => c.logistic_id);
	const ranked = (order: number[]) => order.map((logistic_id, i) => ({ logistic_id, priority: i + 1 }));

	it("GET answers the default ranking with coverage from the real directory; shipment_type 1/2 reverse, others 400", async () => {
		const api = client(base, await idp.tokenFor(newSender()));
		const res = await api.get("/v1/shipping/couriers");
		assert.equal(res.status, 200, JSON.stringify(res.body));
		assert.deepEqual(ids(res.body.data), ids(card.forward));
		for (const [i, c] of res.body.data.entries()) {
			assert.deepEqual(c, {
				logistic_id: card.forward[i].logistic_id,
				logistic_name: card.forward[i].logistic_name,
				enabled: true,
				priority: i + 1,
				serviceable_pincodes: coverage.forward.couriers[String(c.logistic_id)],
			});
			assert.ok(c.serviceable_pincodes > 15_000, "counted over the India Post directory");
		}
		assert.equal(res.body.unique_pincodes, coverage.forward.unique_pincodes);
		assert.deepEqual(res.body.strategy, {
			mode: "priority",
			source: "default",
			shipment_type: 0,
			direction: "forward",
		});
		assert.deepEqual(ids(res.body.rules), ids(card.forward));
		for (const r of res.body.rules) {
			assert.deepEqual(
				{ max_weight_kg: r.max_weight_kg, mode: r.mode, zones: r.zones },
				coverage.forward.limits[String(r.logistic_id)],
			);
		}
		assert.deepEqual(
			res.body.restrictions.cod_couriers,
			ids(card.forward.filter((c) => c.cod)).sort((a, b) => a - b),
		);
		assert.equal(res.body.shipments_30d, 0);

		for (const st of ["1", "2"]) {
			const rev = await api.get(`/v1/shipping/couriers?shipment_type=${st}`);
			assert.equal(rev.status, 200);
			assert.deepEqual(ids(rev.body.data), ids(card.reverse));
			assert.equal(rev.body.unique_pincodes, coverage.reverse.unique_pincodes);
			assert.equal(rev.body.strategy.shipment_type, Number(st));
		}
		for (const st of ["3", "x", "-1"]) {
			const bad = await api.get(`/v1/shipping/couriers?shipment_type=${st}`);
			assert.equal(bad.status, 400);
			assert.deepEqual(bad.body, { error: SHIPMENT_TYPE_MSG, message: SHIPMENT_TYPE_MSG });
		}
	});

	it("PATCH reorders per account and direction; every §7 error; roles", async () => {
		const a = newSender();
		const b = newSender();
		const api = client(base, await idp.tokenFor(a));
		const fwd = [...ids(card.forward)].reverse();
		const res = await api.patch("/v1/shipping/couriers/priority", { shipment_type: 0, order: ranked(fwd) });
		assert.equal(res.status, 200, JSON.stringify(res.body));
		assert.deepEqual(ids(res.body.data), fwd);
		assert.equal(res.body.strategy.source, "account");
		// the re-read ranking is what GET answers, on whichever booking node serves it
		for (let i = 0; i < 4; i++) assert.deepEqual((await api.get("/v1/shipping/couriers")).body, res.body);

		// reverse reorder leaves forward alone; another account keeps the default
		const rev = await api.patch("/v1/shipping/couriers/priority", {
			shipment_type: 1,
			order: ranked(ids(card.reverse)),
		});
		assert.equal(rev.status, 200);
		assert.equal(rev.body.strategy.direction, "reverse");
		assert.deepEqual(ids((await api.get("/v1/shipping/couriers?shipment_type=0")).body.data), fwd);
		const other = await client(base, await idp.tokenFor(b)).get("/v1/shipping/couriers");
		assert.deepEqual(ids(other.body.data), ids(card.forward));
		assert.equal(other.body.strategy.source, "default");
		// and the same ranking is what the AUTO walk reads on another node
		assert.deepEqual(ids(await rankCouriers(getSequelize(), brokers[1], a, "forward")), fwd);

		const all = ids(card.forward);
		const stranger = Math.max(...ids(card.forward), ...ids(card.reverse)) + 50;
		const cases: [unknown, number, string][] = [
			[
				{ shipment_type: 0, order: [...ranked(all), { logistic_id: all[0], priority: all.length + 1 }] },
				400,
				"duplicate_logistic",
			],
			[
				{
					shipment_type: 0,
					order: [...ranked(all.slice(1)), { logistic_id: stranger, priority: all.length }],
				},
				400,
				"unknown_logistic",
			],
			[{ shipment_type: 0, order: ranked(ids(card.reverse)) }, 400, "unknown_logistic"],
			[{ shipment_type: 0, order: ranked(all.slice(1)) }, 400, "incomplete_ranking"],
			[
				{ shipment_type: 0, order: ranked(all).map((r) => ({ ...r, priority: r.priority + 1 })) },
				400,
				"incomplete_ranking",
			],
			[{ shipment_type: 2, order: ranked(all) }, 400, "validation_failed"],
			[{ shipment_type: 0, order: "1,2,4" }, 400, "validation_failed"],
		];
		for (const [body, status, code] of cases) {
			const r = await api.patch("/v1/shipping/couriers/priority", body);
			assert.equal(r.status, status, JSON.stringify(body));
			assert.equal(r.body.error, code, JSON.stringify(r.body));
			assert.ok(r.body.message);
			assert.ok(r.headers.get("x-request-id"));
		}
		const ro = await client(base, await idp.tokenFor(a, "merchant_finance")).patch(
			"/v1/shipping/couriers/priority",
			{ shipment_type: 0, order: ranked(all) },
		);
		assert.equal(ro.status, 403);
		assert.equal(ro.body.error, "Read-only role");
		const anon = await client(base).get("/v1/shipping/couriers");
		assert.equal(anon.status, 401);
		// nothing the refused requests sent was stored
		const rows = await select<{ logistic_id: number }>(
			getSequelize(),
			"SELECT logistic_id FROM booking.rankings WHERE sender_id = $1 AND direction = 'forward' ORDER BY priority",
			[a],
		);
		assert.deepEqual(ids(rows.map((r) => ({ logistic_id: Number(r.logistic_id) }))), fwd);
		// a merchant_ops user may rank (courier.rank)
		const ops = await client(base, await idp.tokenFor(a, "merchant_ops")).patch(
			"/v1/shipping/couriers/priority",
			{ shipment_type: 0, order: ranked(all) },
		);
		assert.equal(ops.status, 200);
		assert.deepEqual(ids(ops.body.data), all);
	});

	it("an AUTO booking after a PATCH books with the merchant's first courier", async () => {
		const sender = newSender();
		const api = client(base, await idp.tokenFor(sender));
		// the order is COD: rank a COD courier that is not the default first at the top
		const defaultFirst = card.forward[0].logistic_id;
		const first = card.forward.find((c) => c.cod && c.logistic_id !== defaultFirst);
		assert.ok(first, "the sandbox card has a second COD courier");
		const order = [first.logistic_id, ...ids(card.forward).filter((id) => id !== first.logistic_id)];
		const p = await api.patch("/v1/shipping/couriers/priority", { shipment_type: 0, order: ranked(order) });
		assert.equal(p.status, 200, JSON.stringify(p.body));

		const wh = await api.post("/v1/warehouses", warehouseBody());
		assert.equal(wh.status, 201, JSON.stringify(wh.body));
		const no = freshRef();
		const created = await api.post("/v1/intake/order", orderBody(wh.body.data.id, no));
		assert.equal(created.status, 201, JSON.stringify(created.body));
		const book = await api.post("/v1/shipping/book", { order_id: created.body.order_id });
		assert.equal(book.status, 202, JSON.stringify(book.body));
		assert.equal(book.body.mode, "auto");
		const status = await eventually(
			async () => {
				const s = await api.get(`/v1/orders/status?order_no=${encodeURIComponent(no)}`);
				assert.notEqual(s.body.state, "failed", JSON.stringify(s.body));
				return s.body.state === "booked" ? s.body : undefined;
			},
			{ what: "the AUTO booking", ms: 20_000, every: 100 },
		);
		assert.equal(status.courier, first.logistic_name);
		const [attempt] = await select<{ logistic_id: number; mode: string }>(
			getSequelize(),
			"SELECT logistic_id, mode FROM booking.attempts WHERE order_id = $1 AND state = 'booked'",
			[created.body.order_id],
		);
		assert.equal(Number(attempt.logistic_id), first.logistic_id);
		assert.equal(attempt.mode, "auto");
		// booked within 30 days: counted for this account and direction only
		const after = await api.get("/v1/shipping/couriers");
		assert.equal(after.body.shipments_30d, 1);
		assert.equal((await api.get("/v1/shipping/couriers?shipment_type=1")).body.shipments_30d, 0);
		// the actions answer the same on either booking node
		for (const node of [brokers[2], brokers[3]]) {
			const direct = await callAs(node, "booking.couriers", { shipment_type: 0 }, as(sender));
			assert.deepEqual(direct, after.body);
		}
	});
});
