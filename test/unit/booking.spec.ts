/**
 * booking service against the real simulator over HTTP, real PostgreSQL and
 * Redis (BullMQ), with fakes of intake, warehouses and rates faithful to
 * lib/contracts.ts.
 */
import assert from "node:assert/strict";
import { ServiceBroker } from "moleculer";
import { outboxRetryLater } from "../../lib/booking/store";
import { loadConfig } from "../../lib/config";
import type {
	BookingUpdate,
	CourierInfo,
	OrderRecord,
	Quote,
	QuoteParams,
	QuoteResult,
	WarehouseRow,
} from "../../lib/contracts";
import { adapterFor, type CourierAddress } from "../../lib/couriers";
import { exec, getSequelize, select } from "../../lib/db";
import { loadServiceSchema } from "../../lib/system";
import brokerOptions from "../../moleculer.config";
import { as, newSender, rejects } from "../helpers/broker";
import { freePort } from "../helpers/net";

async function waitFor<T>(
	fn: () => Promise<T | undefined | null | false>,
	what: string,
	ms = 15_000,
): Promise<T> {
	const end = Date.now() + ms;
	for (;;) {
		const v = await fn();
		if (v) return v;
		if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
		await new Promise((r) => setTimeout(r, 50));
	}
}

// ---- fakes ---------------------------------------------------------------

const COURIERS: CourierInfo[] = [
	{
		logistic_id: 1,
		logistic_name: "Sandbox Express",
		adapter: "sandbox",
		code: "sbx-express",
		forward: true,
		reverse: false,
		cod: true,
		default_priority: 1,
		active: true,
	},
	{
		logistic_id: 2,
		logistic_name: "Sandbox Surface",
		adapter: "sandbox",
		code: "sbx-surface",
		forward: true,
		reverse: false,
		cod: true,
		default_priority: 2,
		active: true,
	},
	{
		logistic_id: 3,
		logistic_name: "Sandbox Reverse",
		adapter: "sandbox",
		code: "sbx-reverse",
		forward: false,
		reverse: true,
		cod: false,
		default_priority: 3,
		active: true,
	},
	{
		logistic_id: 4,
		logistic_name: "Sandbox Lite",
		adapter: "sandbox",
		code: "sbx-lite",
		forward: true,
		reverse: false,
		cod: false,
		default_priority: 4,
		active: true,
	},
	// A courier whose API is unreachable (the simulator answers 404 for its code).
	{
		logistic_id: 5,
		logistic_name: "Broken Courier",
		adapter: "sandbox",
		code: "sbx-nosuch",
		forward: true,
		reverse: false,
		cod: true,
		default_priority: 9,
		active: true,
	},
	{
		logistic_id: 6,
		logistic_name: "Retired Courier",
		adapter: "sandbox",
		code: "sbx-express",
		forward: true,
		reverse: false,
		cod: true,
		default_priority: 10,
		active: false,
	},
	// A courier on the rate card that this build has no adapter for.
	{
		logistic_id: 7,
		logistic_name: "Unwired Courier",
		adapter: "nosuch",
		code: "unwired",
		forward: true,
		reverse: false,
		cod: true,
		default_priority: 11,
		active: true,
	},
];
/** Lanes nobody prices. */
const UNPRICED = new Set(["799999"]);

function fakeQuote(p: QuoteParams): QuoteResult {
	const data: Quote[] = [];
	const dropped: QuoteResult["dropped_couriers"] = [];
	const reverse = p.operation === "reverse";
	for (const c of COURIERS) {
		if (!c.active || (p.logistic_id && p.logistic_id !== c.logistic_id)) continue;
		const drop = (reason: string, detail: string) =>
			dropped.push({ logistic_id: c.logistic_id, logistic_name: c.logistic_name, reason, detail });
		if (reverse ? !c.reverse : !c.forward)
			drop(reverse ? "reverse_not_supported" : "forward_not_supported", "direction");
		else if (p.order_type === 1 && !c.cod) drop("cod_config_missing", `${c.logistic_name} has no COD`);
		else if (UNPRICED.has(p.to_pin) || (c.logistic_id === 1 && p.to_pin.startsWith("78")))
			drop("no_rate_card", `no rate for ${p.to_pin}`);
		else
			data.push({
				logistic_id: c.logistic_id,
				courier_name: c.logistic_name,
				total: 118 + c.logistic_id,
				cod_charge: p.order_type === 1 ? 30 : 0,
				freight_charge: 70 + c.logistic_id,
				shipping_charge_tax: 18,
				zone: "D",
				weight: 0.5,
				rto_charge: 70,
				performance: null,
			});
	}
	// rates answers cheapest first; the AUTO ranking must not depend on this order.
	data.sort((a, b) => b.total - a.total);
	return { data, dropped_couriers: dropped };
}

const orders = new Map<number, OrderRecord>();
const warehouses = new Map<number, WarehouseRow & { sender_id: number }>();
const updates: BookingUpdate[] = [];
/** order_id → number of applyBookingUpdate calls to fail before acknowledging. */
const intakeFailures = new Map<number, number>();
/** Fake actions ("rates.quote", …) that currently fail as if their service were unreachable. */
const down = new Set<string>();

let nextId = 500_000 + Math.floor(Math.random() * 100_000) * 10;
function id(): number {
	nextId += 1;
	return nextId;
}

function addWarehouse(sender_id: number): WarehouseRow {
	const wid = id();
	const w: WarehouseRow & { sender_id: number } = {
		sender_id,
		id: wid,
		warehouse_name: "Main Warehouse",
		contact_person_name: "Asha Rao",
		contact_no: "9876543210",
		contact_email: null,
		address_line_1: "12 MG Road, Shivajinagar",
		address_line_2: null,
		city: "Bengaluru",
		state: "Karnataka",
		pincode: "560001",
		gstin: null,
		warehouse_type: "fulfillment_pickup",
		is_return_same: true,
		return_contact_person_name: null,
		return_contact_no: null,
		return_address_line_1: null,
		return_address_line_2: null,
		return_city: null,
		return_state: null,
		return_pincode: null,
		active: true,
		retired: false,
		is_default: true,
		warehouse_code: `WH${sender_id}-${wid}`,
		courier_registered: false,
		shipped_30d: 0,
	};
	warehouses.set(wid, w);
	return w;
}

function addOrder(
	sender_id: number,
	over: Partial<OrderRecord> = {},
	receiver: Partial<OrderRecord["receiver"]> = {},
): OrderRecord {
	const wh = addWarehouse(sender_id);
	const oid = id();
	const o: OrderRecord = {
		order_id: oid,
		sender_id,
		customer_order_no: `ORD-${oid}`,
		shipment_type: 0,
		channel: "shopify",
		order_type: 0,
		pickup_address_id: wh.id,
		rto_address_id: null,
		receiver: {
			name: "Ravi Kumar",
			address_1: "Flat 4, Andheri East",
			city: "Mumbai",
			state: "Maharashtra",
			pincode: "400069",
			mobile_no: "9123456780",
			...receiver,
		},
		product: {
			product_name: "Cotton kurta",
			physical_weight: 0.5,
			declared_order_total: 799,
			cod_amount: null,
		},
		state: "not_shipped",
		status: "new",
		awb_number: null,
		courier: null,
		logistic_id: null,
		failure_reason: null,
		created_at: new Date().toISOString(),
		...over,
	};
	orders.set(oid, o);
	return o;
}

const fakes = [
	{
		name: "intake",
		actions: {
			getOrder(ctx: any) {
				const o = orders.get(Number(ctx.params.order_id));
				return o && o.sender_id === Number(ctx.params.sender_id) ? structuredClone(o) : null;
			},
			applyBookingUpdate(ctx: any) {
				const u = ctx.params as BookingUpdate;
				const left = intakeFailures.get(u.order_id) ?? 0;
				if (left > 0) {
					intakeFailures.set(u.order_id, left - 1);
					throw new Error("intake is down");
				}
				updates.push(structuredClone(u));
				return { applied: true };
			},
		},
	},
	{
		name: "warehouses",
		actions: {
			resolve(ctx: any) {
				const w = warehouses.get(Number(ctx.params.id));
				if (!w || w.sender_id !== Number(ctx.params.sender_id) || !w.active) return null;
				const { sender_id: _s, ...row } = w;
				return row;
			},
		},
	},
	{
		name: "rates",
		actions: {
			quote: (ctx: any) => fakeQuote(ctx.params),
			listCouriers(ctx: any) {
				const st = ctx.params.shipment_type;
				return COURIERS.filter((c) => c.active && (st === undefined || (st === 0 ? c.forward : c.reverse)));
			},
			getCourier: (ctx: any) =>
				COURIERS.find((c) => c.logistic_id === Number(ctx.params.logistic_id)) ?? null,
		},
	},
];

// ---- helpers --------------------------------------------------------------

function bodyOf(err: any): { status: number; body: any } {
	return { status: err.code, body: err.data?.body };
}

async function book(broker: ServiceBroker, sender: number, params: Record<string, unknown>) {
	const opts = as(sender);
	const res: any = await broker.call("booking.book", params, opts);
	return { res, status: (opts.meta as any).$statusCode };
}

function finalUpdate(order_id: number): BookingUpdate | undefined {
	return updates.filter((u) => u.order_id === order_id && u.seq === 2).at(-1);
}

async function settled(order_id: number): Promise<BookingUpdate> {
	return waitFor(async () => finalUpdate(order_id), `order ${order_id} settled`);
}

async function attemptsOf(order_id: number): Promise<any[]> {
	return select(getSequelize(), "SELECT * FROM booking.attempts WHERE order_id = $1 ORDER BY attempt_id", [
		order_id,
	]);
}

async function simPackages(order_no: string): Promise<any[]> {
	return select(getSequelize(), "SELECT * FROM simulator.packages WHERE client_order_no = $1", [order_no]);
}

async function simCalls(refnum: string, endpoint: string, outcomes?: string[]): Promise<number> {
	const rows = await select<{ n: string }>(
		getSequelize(),
		"SELECT count(*) AS n FROM simulator.calls WHERE refnum = $1 AND endpoint = $2 AND ($3::text[] IS NULL OR outcome = ANY($3::text[]))",
		[refnum, endpoint, outcomes ?? null],
	);
	return Number(rows[0].n);
}

const ACCEPTED = ["booked", "duplicate"];

/** The warehouse as a courier address (pickup and return leg alike). */
function courierAddressOf(wh: WarehouseRow): CourierAddress {
	return {
		name: "Asha",
		phone: "9876543210",
		address_1: wh.address_line_1,
		city: wh.city,
		state: wh.state,
		pincode: wh.pincode,
	};
}

/** Inserts an attempt the way `book` does, but without its outbox (as after a lost job). */
async function insertAttempt(
	o: OrderRecord,
	logistic_id: number,
	state = "queued",
	extra = "",
): Promise<number> {
	const c = COURIERS.find((x) => x.logistic_id === logistic_id)!;
	const { rows } = await exec<{ attempt_id: string }>(
		getSequelize(),
		`INSERT INTO booking.attempts (order_id, sender_id, logistic_id, courier_name, mode, state, updated_at ${extra ? ", ambiguous" : ""})
		 VALUES ($1, $2, $3, $4, 'forced', $5, now() - interval '1 hour' ${extra ? ", true" : ""}) RETURNING attempt_id`,
		[o.order_id, o.sender_id, logistic_id, c.logistic_name, state],
	);
	return Number(rows[0].attempt_id);
}

// ---- tests ------------------------------------------------------------------

describe("booking service", function () {
	this.timeout(40_000);
	let broker: ServiceBroker;

	before(async () => {
		Object.assign(process.env, {
			SANDBOX: "1",
			SANDBOX_COURIER_PORT: String(await freePort()),
			SANDBOX_COURIER_DELAY_MS: "10",
			SANDBOX_COURIER_TIMEOUT_MS: "400",
			SANDBOX_COURIER_HANG_MS: "1200",
			BOOKING_BACKOFF_MS: "50",
			BOOKING_RELAY_MS: "100",
			BOOKING_RELAY_BACKOFF_MS: "50",
			BOOKING_SWEEP_MS: "300",
			BOOKING_SWEEP_AFTER_MS: "5000",
		});
		delete process.env.SANDBOX_COURIER_URL;
		broker = new ServiceBroker(
			brokerOptions(
				{ ...loadConfig(), transporter: undefined },
				{ logger: process.env.TEST_LOGS ? undefined : false },
			),
		);
		broker.createService(loadServiceSchema("simulator"));
		broker.createService(loadServiceSchema("booking"));
		for (const f of fakes) {
			const actions = Object.entries(f.actions).map(([name, handler]) => [
				name,
				(ctx: any) => {
					if (down.has(`${f.name}.${name}`)) throw new Error(`${f.name} is unreachable`);
					return (handler as (ctx: any) => unknown)(ctx);
				},
			]);
			broker.createService({ name: f.name, actions: Object.fromEntries(actions) });
		}
		await broker.start();
	});

	after(async () => {
		await broker?.stop();
		for (const k of [
			"SANDBOX_COURIER_TIMEOUT_MS",
			"SANDBOX_COURIER_HANG_MS",
			"BOOKING_BACKOFF_MS",
			"BOOKING_RELAY_MS",
		]) {
			delete process.env[k];
		}
	});

	describe("POST /v1/shipping/book", () => {
		it("forced: answers 202 {status, idem_key} without an AWB, then books within seconds", async () => {
			const s = newSender();
			const o = addOrder(s);
			const { res, status } = await book(broker, s, { order_id: o.order_id, logistic_id: 1 });
			assert.equal(status, 202);
			assert.deepEqual(Object.keys(res).sort(), ["idem_key", "status"]);
			assert.equal(res.status, "queued");
			assert.match(res.idem_key, /^bk_\d+$/);
			assert.ok(!JSON.stringify(res).match(/\d{12,}/), "no AWB in the answer");
			// durable before the answer
			const [row] = await attemptsOf(o.order_id);
			assert.equal(row.idem_key, res.idem_key);
			assert.equal(row.mode, "forced");
			assert.equal(Number(row.logistic_id), 1);
			assert.deepEqual(row.charges, {
				freight_charge: 7100,
				cod_charge: 0,
				shipping_charge_tax: 1800,
				total: 11900,
				rto_charge: 7000,
				zone: "D",
				weight: 0.5,
			});
			const first = updates.find((u) => u.order_id === o.order_id && u.seq === 1);
			assert.equal(first?.state, "booking_in_progress");
			assert.equal(first?.status, "booking_queued");

			const done = await settled(o.order_id);
			assert.equal(done.state, "booked");
			assert.equal(done.status, "booked");
			assert.match(done.awb_number!, /^\d{14}$/);
			assert.equal(done.courier, "Sandbox Express");
			assert.equal(done.logistic_id, 1);
			assert.equal(done.attempt_id, Number(row.attempt_id));
			const [after] = await attemptsOf(o.order_id);
			assert.equal(after.state, "booked");
			assert.equal(after.awb_number, done.awb_number);
			assert.equal(after.routing_code, "BOM/400");
			const pk = await simPackages(o.customer_order_no);
			assert.equal(pk.length, 1);
			assert.equal(pk[0].waybill, done.awb_number);
			assert.equal(pk[0].refnum, String(row.attempt_id));

			const ship: any = await broker.call("booking.getShipment", { sender_id: s, order_id: o.order_id });
			assert.equal(ship.awb_number, done.awb_number);
			assert.equal(ship.courier_name, "Sandbox Express");
			assert.equal(ship.routing_code, "BOM/400");
			assert.deepEqual(ship.charges, {
				freight_charge: 71,
				cod_charge: 0,
				shipping_charge_tax: 18,
				total: 119,
			});
			assert.equal(
				await broker.call("booking.getShipment", { sender_id: s + 1, order_id: o.order_id }),
				null,
			);
		});

		it("AUTO: answers {status, mode:'auto', idem_key} and takes the top-ranked courier that prices the lane", async () => {
			const s = newSender();
			const o = addOrder(s);
			const { res, status } = await book(broker, s, { order_id: String(o.order_id) });
			assert.equal(status, 202);
			assert.equal(res.status, "queued");
			assert.equal(res.mode, "auto");
			assert.match(res.idem_key, /^bk_\d+$/);
			assert.equal((await settled(o.order_id)).courier, "Sandbox Express");
			assert.equal((await attemptsOf(o.order_id))[0].mode, "auto");

			// Express does not price 78xxxx: the next in the ranking does.
			const o2 = addOrder(s, {}, { pincode: "781001", city: "Guwahati", state: "Assam" });
			await book(broker, s, { order_id: o2.order_id, logistic_id: null });
			const d2 = await settled(o2.order_id);
			assert.equal(d2.courier, "Sandbox Surface");
			assert.match(d2.awb_number!, /^\d{15}$/);

			// COD skips couriers without COD; a reverse order goes to the reverse courier.
			const o3 = addOrder(s, { shipment_type: 1, customer_order_no: `RET-${id()}-R` });
			await book(broker, s, { order_id: o3.order_id });
			const d3 = await settled(o3.order_id);
			assert.equal(d3.courier, "Sandbox Reverse");
			assert.match(d3.awb_number!, /^\d{12}$/);
			const [pk] = await simPackages(o3.customer_order_no);
			assert.equal(pk.payment_mode, "Pickup");
		});

		it("400 when order_id is missing or not a positive integer", async () => {
			const s = newSender();
			for (const bad of [
				undefined,
				null,
				"",
				"abc",
				"12a",
				" 12",
				1.5,
				0,
				-3,
				true,
				[1],
				{ id: 1 },
				2 ** 60,
			]) {
				const err = await rejects(() => book(broker, s, bad === undefined ? {} : { order_id: bad }));
				assert.deepEqual(
					bodyOf(err),
					{
						status: 400,
						body: {
							error: "order_id must be a positive integer",
							message: "order_id must be a positive integer",
						},
					},
					`order_id ${JSON.stringify(bad)}`,
				);
			}
		});

		it("400 validation_failed when logistic_id is present but not a positive integer", async () => {
			const s = newSender();
			const o = addOrder(s);
			for (const bad of [0, -1, 1.5, "x", "", true]) {
				const err = await rejects(() => book(broker, s, { order_id: o.order_id, logistic_id: bad }));
				assert.equal(err.code, 400);
				assert.equal(err.data.body.error, "validation_failed");
				assert.deepEqual(err.data.body.details, ["logistic_id: must be a positive integer"]);
			}
			assert.equal((await attemptsOf(o.order_id)).length, 0);
		});

		it("403 for another sender's order and for an order that does not exist (same answer)", async () => {
			const owner = newSender();
			const o = addOrder(owner);
			const other = newSender();
			const expected = {
				status: 403,
				body: {
					error: "cannot create booking for another sender",
					message: "cannot create booking for another sender",
				},
			};
			assert.deepEqual(bodyOf(await rejects(() => book(broker, other, { order_id: o.order_id }))), expected);
			// naming the owner as sender_id in the body changes nothing (spec §1 rule 3)
			assert.deepEqual(
				bodyOf(await rejects(() => book(broker, other, { order_id: o.order_id, sender_id: owner }))),
				expected,
			);
			assert.deepEqual(bodyOf(await rejects(() => book(broker, other, { order_id: 987654321 }))), expected);
			assert.equal((await attemptsOf(o.order_id)).length, 0);
		});

		it("403 Read-only role for read-only roles (refused on purpose, spec §5 rule 3)", async () => {
			const s = newSender();
			const o = addOrder(s);
			for (const role of ["merchant_finance", "merchant_support", "merchant_staff"] as const) {
				const err = await rejects(() => broker.call("booking.book", { order_id: o.order_id }, as(s, role)));
				assert.equal(err.code, 403);
				assert.equal(err.data.body.error, "Read-only role");
			}
			const ok = await book(broker, s, { order_id: o.order_id });
			assert.equal(ok.status, 202);
			const ops = addOrder(s);
			assert.equal((await book(broker, s, { order_id: ops.order_id, logistic_id: 2 })).status, 202);
			await settled(o.order_id);
			await settled(ops.order_id);
		});

		it("401 without an account", async () => {
			const err = await rejects(() => broker.call("booking.book", { order_id: 1 }));
			assert.equal(err.code, 401);
		});

		it("400 unknown_logistic, 422 lane_not_priced (forced and AUTO)", async () => {
			const s = newSender();
			const o = addOrder(s);
			for (const lid of [99, 6]) {
				const err = await rejects(() => book(broker, s, { order_id: o.order_id, logistic_id: lid }));
				assert.equal(err.code, 400);
				assert.equal(err.data.body.error, "unknown_logistic");
			}
			const ne = addOrder(s, {}, { pincode: "781001" });
			const e1 = await rejects(() => book(broker, s, { order_id: ne.order_id, logistic_id: 1 }));
			assert.equal(e1.code, 422);
			assert.equal(e1.data.body.error, "lane_not_priced");
			assert.match(e1.data.body.message, /Sandbox Express does not price this lane.*no rate for 781001/);
			const cod = addOrder(s, {
				order_type: 1,
				product: { product_name: "Saree", physical_weight: 1, declared_order_total: 1500, cod_amount: 1500 },
			});
			const e2 = await rejects(() => book(broker, s, { order_id: cod.order_id, logistic_id: 4 }));
			assert.equal(e2.data.body.error, "lane_not_priced");
			assert.match(e2.data.body.message, /no COD/);
			const none = addOrder(s, {}, { pincode: "799999" });
			const e3 = await rejects(() => book(broker, s, { order_id: none.order_id }));
			assert.equal(e3.code, 422);
			assert.equal(e3.data.body.error, "lane_not_priced");
			for (const x of [o, ne, cod, none]) assert.equal((await attemptsOf(x.order_id)).length, 0);
		});

		it("400 unsupported_channel for B2B / multi-box orders", async () => {
			const s = newSender();
			const o = addOrder(s, { channel: "B2B" });
			const err = await rejects(() => book(broker, s, { order_id: o.order_id }));
			assert.equal(err.code, 400);
			assert.equal(err.data.body.error, "unsupported_channel");
			const boxes = addOrder(s, { no_of_boxes: 3 } as any);
			assert.equal(
				(await rejects(() => book(broker, s, { order_id: boxes.order_id }))).data.body.error,
				"unsupported_channel",
			);
		});

		it("400 invalid_pickup_address when the order's warehouse is no longer active", async () => {
			const s = newSender();
			const o = addOrder(s);
			warehouses.get(o.pickup_address_id!)!.active = false;
			const err = await rejects(() => book(broker, s, { order_id: o.order_id }));
			assert.equal(err.code, 400);
			assert.equal(err.data.body.error, "invalid_pickup_address");
		});

		it("503 rate_unavailable / service_unavailable when a collaborator is unreachable; nothing committed", async () => {
			const s = newSender();
			const o = addOrder(s);
			const cases: [string, Record<string, unknown>, string, string][] = [
				["rates.getCourier", { logistic_id: 1 }, "rate_unavailable", "rates"],
				["rates.quote", { logistic_id: 1 }, "rate_unavailable", "rates"],
				["rates.listCouriers", {}, "rate_unavailable", "rates"],
				["rates.quote", {}, "rate_unavailable", "rates"],
				["intake.getOrder", {}, "service_unavailable", "intake"],
				["warehouses.resolve", { logistic_id: 2 }, "service_unavailable", "warehouses"],
			];
			for (const [action, extra, error, service] of cases) {
				down.add(action);
				try {
					const err = await rejects(() => book(broker, s, { order_id: o.order_id, ...extra }));
					assert.deepEqual(
						bodyOf(err),
						{ status: 503, body: { error, message: `${service} is unavailable; retry` } },
						action,
					);
				} finally {
					down.delete(action);
				}
			}
			assert.equal((await attemptsOf(o.order_id)).length, 0);
			assert.equal((await book(broker, s, { order_id: o.order_id })).status, 202, "retry succeeds");
			await settled(o.order_id);
		});

		it("409 booking_in_progress for concurrent requests, 409 already_booked once booked", async () => {
			const s = newSender();
			// SIMULATE_TIMEOUT keeps the booking in progress for a while.
			const o = addOrder(s, {}, { name: "Meera SIMULATE_TIMEOUT" });
			const results = await Promise.allSettled([
				book(broker, s, { order_id: o.order_id }),
				book(broker, s, { order_id: o.order_id, logistic_id: 2 }),
				book(broker, s, { order_id: o.order_id }),
			]);
			const ok = results.filter((r) => r.status === "fulfilled");
			const no = results.filter((r) => r.status === "rejected") as PromiseRejectedResult[];
			assert.equal(ok.length, 1);
			assert.equal(no.length, 2);
			for (const r of no) {
				assert.equal(r.reason.code, 409);
				assert.equal(r.reason.data.body.error, "booking_in_progress");
				assert.equal(r.reason.data.body.state, "booking_in_progress");
				assert.ok(r.reason.data.body.message);
			}
			await settled(o.order_id);
			const err = await rejects(() => book(broker, s, { order_id: o.order_id }));
			assert.deepEqual(
				{ code: err.code, error: err.data.body.error, state: err.data.body.state },
				{ code: 409, error: "already_booked", state: "booked" },
			);
			assert.equal((await attemptsOf(o.order_id)).length, 1);
		});
	});

	describe("worker", () => {
		it("courier refusal → failed with the courier's words; a failed order can be booked again", async () => {
			const s = newSender();
			const o = addOrder(s, {}, { pincode: "999999" });
			await book(broker, s, { order_id: o.order_id, logistic_id: 1 });
			const done = await settled(o.order_id);
			assert.equal(done.state, "failed");
			assert.equal(done.status, "booking_failed");
			assert.equal(done.failure_reason, "Sandbox Express refused: Non serviceable pincode 999999");
			const [row] = await attemptsOf(o.order_id);
			assert.equal(row.state, "failed");
			assert.equal(row.awb_number, null);
			assert.equal(row.failure_reason, done.failure_reason);
			assert.equal(await broker.call("booking.getShipment", { sender_id: s, order_id: o.order_id }), null);

			o.receiver.pincode = "400069";
			const again = await book(broker, s, { order_id: o.order_id });
			assert.equal(again.status, 202);
			assert.notEqual(again.res.idem_key, `bk_${row.attempt_id}`);
			await waitFor(async () => finalUpdate(o.order_id)?.state === "booked", "re-booking");
			const rows = await attemptsOf(o.order_id);
			assert.deepEqual(
				rows.map((r) => r.state),
				["failed", "booked"],
			);
			assert.equal((await simPackages(o.customer_order_no)).length, 1);
		});

		it("SIMULATE_REFUSE → failed with the courier's words", async () => {
			const s = newSender();
			const o = addOrder(s, {}, { name: "Kiran SIMULATE_REFUSE" });
			await book(broker, s, { order_id: o.order_id, logistic_id: 2 });
			const done = await settled(o.order_id);
			assert.equal(done.state, "failed");
			assert.equal(
				done.failure_reason,
				"Sandbox Surface refused: Shipment rejected by the courier (SIMULATE_REFUSE)",
			);
		});

		it("SIMULATE_TIMEOUT → look-up by reference reconciles → booked, exactly one AWB at the simulator", async () => {
			const s = newSender();
			const o = addOrder(s, {}, { name: "Meera SIMULATE_TIMEOUT" });
			await book(broker, s, { order_id: o.order_id, logistic_id: 1 });
			const done = await settled(o.order_id);
			assert.equal(done.state, "booked");
			const [row] = await attemptsOf(o.order_id);
			const pk = await simPackages(o.customer_order_no);
			assert.equal(pk.length, 1);
			assert.equal(pk[0].waybill, done.awb_number);
			assert.equal(
				await simCalls(String(row.attempt_id), "create", ACCEPTED),
				1,
				"reconciled without a second create",
			);
			assert.ok((await simCalls(String(row.attempt_id), "lookup")) >= 1);
			assert.equal(row.tries, 1);
		});

		it("SIMULATE_5XX → released, retried with backoff, then booked", async () => {
			const s = newSender();
			const o = addOrder(s, {}, { name: "Dev SIMULATE_5XX" });
			await book(broker, s, { order_id: o.order_id, logistic_id: 2 });
			const done = await settled(o.order_id);
			assert.equal(done.state, "booked");
			assert.match(done.awb_number!, /^\d{15}$/);
			const [row] = await attemptsOf(o.order_id);
			const calls = await select(
				getSequelize(),
				"SELECT endpoint, outcome FROM simulator.calls WHERE refnum = $1 ORDER BY id",
				[String(row.attempt_id)],
			);
			assert.equal(row.tries, 2, JSON.stringify({ row, calls }));
			assert.match(row.last_error, /HTTP 503/);
			assert.equal(await simCalls(String(row.attempt_id), "create", ["503"]), 1);
			assert.equal(await simCalls(String(row.attempt_id), "create", ["booked"]), 1);
			assert.equal((await simPackages(o.customer_order_no)).length, 1);
		});

		it("courier unreachable on every try → failed in plain words after the last try", async () => {
			const s = newSender();
			const o = addOrder(s);
			await book(broker, s, { order_id: o.order_id, logistic_id: 5 });
			const done = await settled(o.order_id);
			assert.equal(done.state, "failed");
			assert.equal(
				done.failure_reason,
				"Broken Courier could not be reached after 6 tries; no AWB was issued",
			);
			const [row] = await attemptsOf(o.order_id);
			assert.equal(row.tries, 6);
			assert.equal(row.ambiguous, true);
		});

		it("job redelivery is idempotent: processAttempt twice (and concurrently) → one AWB", async () => {
			const s = newSender();
			const o = addOrder(s);
			await book(broker, s, { order_id: o.order_id, logistic_id: 1 });
			const done = await settled(o.order_id);
			const [row] = await attemptsOf(o.order_id);
			for (let i = 0; i < 2; i++) {
				const r: any = await broker.call("booking.processAttempt", { attempt_id: row.attempt_id });
				assert.deepEqual(r, {
					attempt_id: Number(row.attempt_id),
					state: "booked",
					awb_number: done.awb_number,
				});
			}
			assert.equal(await simCalls(String(row.attempt_id), "create", ACCEPTED), 1);

			// Two deliveries of the same job at once: one claims, the other backs off.
			const o2 = addOrder(s);
			const aid = await insertAttempt(o2, 2);
			const both = await Promise.allSettled([
				broker.call("booking.processAttempt", { attempt_id: aid }),
				broker.call("booking.processAttempt", { attempt_id: aid }),
			]);
			const ok = both.filter((r) => r.status === "fulfilled").map((r: any) => r.value);
			assert.ok(ok.length >= 1);
			for (const r of both.filter((x) => x.status === "rejected") as PromiseRejectedResult[]) {
				assert.match(r.reason.message, /being processed by another worker/);
			}
			const booked = await waitFor(
				async () => (await attemptsOf(o2.order_id))[0].awb_number,
				"concurrent booking",
			);
			assert.equal((await simPackages(o2.customer_order_no)).length, 1);
			assert.equal((await simPackages(o2.customer_order_no))[0].waybill, booked);
			assert.equal(await simCalls(String(aid), "create", ACCEPTED), 1);
		});

		it("a courier without an integration → failed in plain words, without a courier call", async () => {
			const s = newSender();
			const o = addOrder(s);
			const { status } = await book(broker, s, { order_id: o.order_id, logistic_id: 7 });
			assert.equal(status, 202);
			const done = await settled(o.order_id);
			assert.equal(done.state, "failed");
			assert.equal(done.failure_reason, "Unwired Courier has no courier integration");
			const [row] = await attemptsOf(o.order_id);
			assert.equal(row.tries, 1, "not retried");
			assert.equal(row.ambiguous, false);
		});

		it("an earlier ambiguous attempt at a courier without an integration is settled, not retried", async () => {
			const s = newSender();
			const o = addOrder(s);
			await insertAttempt(o, 7, "failed", "ambiguous");
			await book(broker, s, { order_id: o.order_id, logistic_id: 1 });
			const done = await settled(o.order_id);
			assert.equal(done.state, "booked");
			const [old, cur] = await attemptsOf(o.order_id);
			assert.equal(old.ambiguous, false);
			assert.equal(old.last_error, "courier has no integration");
			assert.equal(cur.tries, 1);
		});

		it("unsupported_channel in the worker too", async () => {
			const s = newSender();
			const o = addOrder(s, { channel: "b2b" });
			const aid = await insertAttempt(o, 1);
			const r: any = await broker.call("booking.processAttempt", { attempt_id: aid });
			assert.equal(r.state, "failed");
			const [row] = await attemptsOf(o.order_id);
			assert.match(
				row.failure_reason,
				/^unsupported_channel: B2B \/ multi-box consignments are not supported/,
			);
			assert.equal(await simCalls(String(aid), "create"), 0);
		});

		it("an earlier attempt left ambiguous is looked up and its late AWB cancelled before re-booking", async () => {
			const s = newSender();
			const o = addOrder(s);
			const wh = warehouses.get(o.pickup_address_id!)!;
			const ghost = await insertAttempt(o, 1, "failed", "ambiguous");
			// The courier booked the earlier attempt after all (its answer was lost).
			const express = adapterFor(COURIERS[0]);
			const whAddress = courierAddressOf(wh);
			await express.registerWarehouse({
				warehouse_code: wh.warehouse_code,
				warehouse_name: wh.warehouse_name,
				address: whAddress,
				return_address: whAddress,
			});
			const late = await express.book({
				reference: String(ghost),
				order_no: o.customer_order_no,
				shipment_type: 0,
				payment: "prepaid",
				cod_amount: 0,
				declared_value: 799,
				weight_kg: 0.5,
				product_description: "Cotton kurta",
				pickup_location_code: wh.warehouse_code,
				pickup: whAddress,
				consignee: {
					name: "Ravi",
					phone: "9123456780",
					address_1: "Flat 4, Andheri East",
					city: "Mumbai",
					state: "Maharashtra",
					pincode: "400069",
				},
				return_address: whAddress,
			});
			await book(broker, s, { order_id: o.order_id, logistic_id: 2 });
			const done = await settled(o.order_id);
			assert.equal(done.state, "booked");
			assert.notEqual(done.awb_number, late.awb_number);
			const pk = await simPackages(o.customer_order_no);
			assert.equal(pk.length, 2);
			const live = pk.filter((p) => p.cancelled_at === null);
			assert.equal(live.length, 1, "one live AWB");
			assert.equal(live[0].waybill, done.awb_number);
			const [old] = await attemptsOf(o.order_id);
			assert.equal(old.ambiguous, false);
			assert.match(old.last_error, new RegExp(`late AWB ${late.awb_number} cancelled`));
		});
	});

	describe("durability", () => {
		it("outbox: an intake that fails is retried until it acknowledges", async () => {
			const s = newSender();
			const o = addOrder(s);
			intakeFailures.set(o.order_id, 3);
			const { status } = await book(broker, s, { order_id: o.order_id, logistic_id: 1 });
			assert.equal(status, 202);
			const done = await settled(o.order_id);
			assert.equal(done.state, "booked");
			assert.equal(intakeFailures.get(o.order_id), 0);
			const [row] = await attemptsOf(o.order_id);
			const box = await waitFor(async () => {
				const rows = await select<any>(
					getSequelize(),
					"SELECT * FROM booking.outbox WHERE kind = 'order_update' AND (payload->>'attempt_id')::bigint = $1 ORDER BY id",
					[row.attempt_id],
				);
				return rows.length === 2 && rows.every((r) => r.delivered_at) ? rows : undefined;
			}, "outbox delivered");
			assert.ok(updates.some((u) => u.order_id === o.order_id && u.seq === 1));
			assert.ok(box.reduce((n, r) => n + Number(r.tries), 0) >= 5, "3 failed deliveries + 2 successful ones");
			const enq = await select<any>(
				getSequelize(),
				"SELECT * FROM booking.outbox WHERE kind = 'enqueue_booking' AND (payload->>'attempt_id')::bigint = $1",
				[row.attempt_id],
			);
			assert.ok(enq[0].delivered_at);
		});

		it("sweeper: a queued attempt whose job was lost is re-enqueued and booked", async () => {
			const s = newSender();
			const o = addOrder(s);
			const aid = await insertAttempt(o, 1);
			const done = await settled(o.order_id);
			assert.equal(done.state, "booked");
			assert.equal(done.attempt_id, aid);
			assert.equal((await simPackages(o.customer_order_no)).length, 1);
		});

		it("outbox backoff: a failed delivery is due again after base · 2^(tries-1), at most 60 s", async () => {
			const db = getSequelize();
			// Not due for an hour, so the running relay never takes it.
			const { rows } = await exec<{ id: string }>(
				db,
				`INSERT INTO booking.outbox (kind, payload, next_attempt_at)
				 VALUES ('order_update', '{}'::jsonb, now() + interval '1 hour') RETURNING id`,
			);
			const id = Number(rows[0].id);
			try {
				for (const [tries, want] of [
					[1, 10_000],
					[2, 20_000],
					[3, 40_000],
					[20, 60_000],
				]) {
					await outboxRetryLater(db, { id, kind: "order_update", payload: {}, tries }, "intake down", 10_000);
					const [r] = await select<{ ms: string; last_error: string }>(
						db,
						"SELECT EXTRACT(EPOCH FROM next_attempt_at - now()) * 1000 AS ms, last_error FROM booking.outbox WHERE id = $1",
						[id],
					);
					assert.ok(Number(r.ms) > want - 2000 && Number(r.ms) <= want, `tries ${tries}: ${r.ms} ms`);
					assert.equal(r.last_error, "intake down");
				}
			} finally {
				await exec(db, "UPDATE booking.outbox SET delivered_at = now() WHERE id = $1", [id]);
			}
		});

		it("ops actions: relayOutbox and sweep answer counts", async () => {
			const r: any = await broker.call("booking.relayOutbox");
			assert.equal(typeof r.delivered, "number");
			assert.deepEqual(Object.keys(r).sort(), ["delivered", "failed"]);
			assert.ok(Number.isInteger(r.delivered) && Number.isInteger(r.failed) && r.failed >= 0);
			const w: any = await broker.call("booking.sweep");
			assert.equal(typeof w.enqueued, "number");
			assert.deepEqual(Object.keys(w), ["enqueued"]);
			assert.ok(Number.isInteger(w.enqueued) && w.enqueued >= 0);
		});
	});
});
