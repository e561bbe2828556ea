/**
 * intake service (spec §2.1, §2.2, §2.4, §3, §4.1, §4.3 status, §7): real
 * PostgreSQL; the `warehouses` collaborator is a small fake exposing
 * `warehouses.resolve {sender_id, id} -> WarehouseRow | null` (lib/contracts.ts).
 */
import assert from "node:assert/strict";
import type { ServiceBroker } from "moleculer";
import { userFor } from "../../lib/auth";
import type { BookingUpdate, WarehouseUsage } from "../../lib/contracts";
import { getSequelize, select } from "../../lib/db";
import { errorBodyOf } from "../../lib/errors";
import {
	codeString,
	INDIAN_PINCODE,
	isPlainObject,
	normaliseMobile,
	PHONE_10_DIGITS,
	PINCODE_FORMAT,
	parseBool,
	parsePositiveInt,
} from "../../lib/fields";
import { insertOrder } from "../../lib/intake/store";
import { parseOrderInput } from "../../lib/intake/validation";
import { WarehouseCache } from "../../lib/intake/warehouse-cache";
import { as, newSender, rejects, startBroker } from "../helpers/broker";

/** Warehouses the fake `warehouses.resolve` knows: id → owning sender. */
const warehouseOwner = new Map<number, number>();
/** Every call the fake `warehouses.resolve` received. */
const resolveCalls: Array<{ sender_id: number; id: number }> = [];
/** Warehouse id → promise the fake awaits after deciding its answer (holds a lookup in flight). */
const resolveGates = new Map<number, Promise<void>>();
const resolveCount = (id: number) => resolveCalls.filter((c) => c.id === id).length;

/** Polls `cond` until true (fails after 5 s). */
async function waitFor(cond: () => boolean, what: string): Promise<void> {
	const end = Date.now() + 5000;
	while (!cond()) {
		if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
		await new Promise((r) => setTimeout(r, 5));
	}
}
let nextWarehouse = 500_000 + Math.floor(Math.random() * 1000) * 100;

/** Registers a fresh active warehouse of `sender` in the fake and returns its id. */
function warehouseOf(sender: number): number {
	nextWarehouse += 1;
	warehouseOwner.set(nextWarehouse, sender);
	return nextWarehouse;
}

/** A valid forward create body (§2.1). */
function forwardBody(
	pickup: number,
	ref = `ORD-${Math.random().toString(36).slice(2, 10)}`,
): Record<string, any> {
	return {
		customer_order_no: ref,
		channel: "shopify",
		receiver: {
			name: "Asha Verma",
			address_1: "14, 2nd Cross, Indiranagar",
			address_2: "Near metro",
			city: "Bengaluru",
			state: "Karnataka",
			pincode: "560038",
			mobile_no: "9876543210",
		},
		product: {
			product_name: "Cotton kurta",
			product_sku: "KRT-M-BLU",
			physical_weight: 0.45,
			declared_order_total: 1299.5,
			cod_amount: 1299.5,
			length: 30,
			width: 20,
			height: 4,
		},
		order: { pickup_address_id: pickup, order_type: 1, order_date: "2025-01-15", order_from_source: "web" },
	};
}

/** A valid reverse create body (§2.2). */
function reverseBody(pickup: number, ref: string): Record<string, any> {
	const b = forwardBody(pickup, ref);
	b.product.cod_amount = undefined;
	b.order = {
		pickup_address_id: pickup,
		order_type: 0,
		forward_source: "tekipost",
		old_fwd_awb_no: "1490841234567",
		return_address: { name: "Main WH", city: "Pune", pincode: "411001" },
	};
	return b;
}

/** Deep-sets `path` (dot separated) in a copy of `body`; `undefined` deletes. */
function withField(body: Record<string, any>, path: string, value: unknown): Record<string, any> {
	const copy = structuredClone(body);
	const keys = path.split(".");
	let o = copy;
	for (const k of keys.slice(0, -1)) o = o[k];
	if (value === undefined) delete o[keys[keys.length - 1]];
	else o[keys[keys.length - 1]] = value;
	return copy;
}

/** Expects `p` to fail with an ApiError; returns `{status, body}`. */
async function failure(p: () => Promise<unknown>): Promise<{ status: number; body: Record<string, any> }> {
	const err = await rejects(p);
	const eb = errorBodyOf(err);
	assert.ok(eb, `expected an ApiError, got ${err?.name}: ${err?.message}`);
	return eb as { status: number; body: Record<string, any> };
}

async function rowsFor(sender: number): Promise<Array<Record<string, any>>> {
	return select(getSequelize(), `SELECT * FROM intake.orders WHERE sender_id = $1 ORDER BY order_id`, [
		sender,
	]);
}

describe("intake service", () => {
	let broker: ServiceBroker;

	/** Creates a forward order as `sender` and returns `{result, statusCode}`. */
	async function create(sender: number, body: Record<string, any>, action = "intake.createOrder") {
		const opts = as(sender);
		const result = (await broker.call(action, body, opts)) as Record<string, any>;
		return { result, statusCode: (opts.meta as any).$statusCode as number | undefined };
	}

	async function book(sender: number, order_id: number, u: Partial<BookingUpdate> = {}) {
		return broker.call("intake.applyBookingUpdate", {
			order_id,
			sender_id: sender,
			attempt_id: 1,
			seq: 2,
			state: "booked",
			status: "booked",
			awb_number: `AWB${order_id}`,
			courier: "Sandbox Express",
			logistic_id: 3,
			...u,
		});
	}

	const cacheTtlEnv = process.env.INTAKE_WAREHOUSE_CACHE_MS;
	before(async () => {
		// a TTL longer than the run: cache hits and misses below are deterministic
		process.env.INTAKE_WAREHOUSE_CACHE_MS = "600000";
		broker = await startBroker(["intake"]);
		broker.createService({
			name: "warehouses",
			actions: {
				resolve: {
					params: { sender_id: "number", id: "number" },
					async handler(ctx: any) {
						const { sender_id, id } = ctx.params;
						resolveCalls.push({ sender_id, id });
						const owned = warehouseOwner.get(id) === sender_id;
						await resolveGates.get(id);
						if (!owned) return null;
						return { id, warehouse_name: `WH ${id}`, pincode: "411001", active: true, retired: false };
					},
				},
			},
		});
		await broker.waitForServices(["warehouses"]);
	});

	after(async () => {
		await broker?.stop();
		if (cacheTtlEnv === undefined) delete process.env.INTAKE_WAREHOUSE_CACHE_MS;
		else process.env.INTAKE_WAREHOUSE_CACHE_MS = cacheTtlEnv;
	});

	describe("intake.createOrder (POST /v1/intake/order)", () => {
		it("answers 201 {order_id}, then 200 {order_id, deduped:true} for the same customer_order_no", async () => {
			const s = newSender();
			const body = forwardBody(warehouseOf(s));
			const first = await create(s, body);
			assert.equal(first.statusCode, 201);
			assert.deepEqual(Object.keys(first.result), ["order_id"]);
			assert.ok(Number.isSafeInteger(first.result.order_id) && first.result.order_id > 0);
			const again = await create(s, { ...body, receiver: { ...body.receiver, name: "Someone Else" } });
			assert.equal(again.statusCode, 200);
			assert.deepEqual(again.result, { order_id: first.result.order_id, deduped: true });
			const rows = await rowsFor(s);
			assert.equal(rows.length, 1);
			assert.equal(rows[0].receiver_name, "Asha Verma");
		});

		it("stores the normalised order: paise, kg, cm, state not_shipped / status new", async () => {
			const s = newSender();
			const wh = warehouseOf(s);
			const body = forwardBody(wh, "  INV/2025#77.a_b-c  ");
			body.receiver.mobile_no = "+91 98450-12345";
			body.receiver.pincode = 560038;
			body.product.physical_weight = "1.25";
			body.product.declared_order_total = "999.99";
			body.product.cod_amount = 500;
			body.order.order_type = "1";
			body.order.pickup_address_id = String(wh);
			body.extra_top_level = { ignored: true };
			const { result } = await create(s, body);
			const [row] = await rowsFor(s);
			assert.equal(Number(row.order_id), result.order_id);
			assert.equal(row.customer_order_no, "INV/2025#77.a_b-c");
			assert.equal(row.receiver_mobile_no, "9845012345");
			assert.equal(row.receiver_pincode, "560038");
			assert.equal(Number(row.physical_weight), 1.25);
			assert.equal(Number(row.declared_order_total_paise), 99999);
			assert.equal(Number(row.cod_amount_paise), 50000);
			assert.equal(row.order_type, 1);
			assert.equal(row.shipment_type, 0);
			assert.equal(Number(row.pickup_address_id), wh);
			assert.equal(row.state, "not_shipped");
			assert.equal(row.status, "new");
			assert.equal(row.awb_number, null);
			// 2025-01-15 is an IST calendar day
			assert.equal(new Date(row.order_date).toISOString(), "2025-01-14T18:30:00.000Z");

			const rec: any = await broker.call("intake.getOrder", { sender_id: s, order_id: result.order_id });
			assert.equal(rec.order_id, result.order_id);
			assert.equal(rec.product.declared_order_total, 999.99);
			assert.equal(rec.product.cod_amount, 500);
			assert.equal(rec.receiver.mobile_no, "9845012345");
			assert.equal(rec.reverse, null);
			assert.equal(rec.state, "not_shipped");
			assert.equal(
				await broker.call("intake.getOrder", { sender_id: newSender(), order_id: result.order_id }),
				null,
			);
		});

		it("prepaid orders accept cod_amount absent or 0 and store 0", async () => {
			const s = newSender();
			const wh = warehouseOf(s);
			const a = withField(withField(forwardBody(wh), "order.order_type", 0), "product.cod_amount", undefined);
			const b = withField(withField(forwardBody(wh), "order.order_type", 0), "product.cod_amount", 0);
			await create(s, a);
			await create(s, b);
			const rows = await rowsFor(s);
			assert.deepEqual(
				rows.map((r) => [r.order_type, Number(r.cod_amount_paise)]),
				[
					[0, 0],
					[0, 0],
				],
			);
		});

		it("ten concurrent identical creates make exactly one order and all answer its order_id", async () => {
			const s = newSender();
			const body = forwardBody(warehouseOf(s));
			const answers = await Promise.all(Array.from({ length: 10 }, () => create(s, body)));
			const ids = new Set(answers.map((a) => a.result.order_id));
			assert.equal(ids.size, 1);
			assert.equal(answers.filter((a) => a.statusCode === 201).length, 1);
			assert.equal(answers.filter((a) => a.result.deduped === true && a.statusCode === 200).length, 9);
			const rows = await rowsFor(s);
			assert.equal(rows.length, 1);
			assert.equal(Number(rows[0].order_id), [...ids][0]);
		});

		// [field path, bad value, field named in details]; undefined = missing
		const badFields: Array<[string, unknown, string]> = [
			["customer_order_no", undefined, "customer_order_no"],
			["customer_order_no", "", "customer_order_no"],
			["customer_order_no", "A".repeat(51), "customer_order_no"],
			["customer_order_no", "has space", "customer_order_no"],
			["customer_order_no", { x: 1 }, "customer_order_no"],
			["channel", 42, "channel"],
			["channel", "c".repeat(51), "channel"],
			["receiver", undefined, "receiver"],
			["receiver", "Asha", "receiver"],
			["receiver.name", undefined, "receiver.name"],
			["receiver.name", "   ", "receiver.name"],
			["receiver.name", "n".repeat(101), "receiver.name"],
			["receiver.name", "bad\u0000name", "receiver.name"],
			["receiver.address_1", undefined, "receiver.address_1"],
			["receiver.address_1", "ab", "receiver.address_1"],
			["receiver.address_1", "a".repeat(256), "receiver.address_1"],
			["receiver.address_2", "a".repeat(256), "receiver.address_2"],
			["receiver.landmark", 7, "receiver.landmark"],
			["receiver.city", "c".repeat(101), "receiver.city"],
			["receiver.state", "s".repeat(101), "receiver.state"],
			["receiver.pincode", undefined, "receiver.pincode"],
			["receiver.pincode", "56003", "receiver.pincode"],
			["receiver.pincode", "5600381", "receiver.pincode"],
			["receiver.pincode", "056003", "receiver.pincode"],
			["receiver.pincode", "56A038", "receiver.pincode"],
			["receiver.mobile_no", undefined, "receiver.mobile_no"],
			["receiver.mobile_no", "12345", "receiver.mobile_no"],
			["receiver.mobile_no", "5876543210", "receiver.mobile_no"],
			["receiver.mobile_no", "98765432101", "receiver.mobile_no"],
			["product", undefined, "product"],
			["product", [{ product_name: "a" }, { product_name: "b" }], "product"],
			["product.product_name", undefined, "product.product_name"],
			["product.product_name", "p".repeat(256), "product.product_name"],
			["product.product_sku", "s".repeat(101), "product.product_sku"],
			["product.physical_weight", undefined, "product.physical_weight"],
			["product.physical_weight", 0, "product.physical_weight"],
			["product.physical_weight", -1, "product.physical_weight"],
			["product.physical_weight", 50.5, "product.physical_weight"],
			["product.physical_weight", "heavy", "product.physical_weight"],
			["product.physical_weight", 0.0001, "product.physical_weight"],
			["product.declared_order_total", undefined, "product.declared_order_total"],
			["product.declared_order_total", -5, "product.declared_order_total"],
			["product.declared_order_total", 10.123, "product.declared_order_total"],
			["product.declared_order_total", true, "product.declared_order_total"],
			["product.cod_amount", undefined, "product.cod_amount"],
			["product.cod_amount", 0, "product.cod_amount"],
			["product.cod_amount", 1299.51, "product.cod_amount"],
			["product.cod_amount", 1.005, "product.cod_amount"],
			["product.cod_amount", "lots", "product.cod_amount"],
			["product.length", 0, "product.length"],
			["product.width", 301, "product.width"],
			["product.height", "tall", "product.height"],
			["order", undefined, "order"],
			["order.pickup_address_id", undefined, "order.pickup_address_id"],
			["order.pickup_address_id", 0, "order.pickup_address_id"],
			["order.pickup_address_id", -3, "order.pickup_address_id"],
			["order.pickup_address_id", 1.5, "order.pickup_address_id"],
			["order.pickup_address_id", "abc", "order.pickup_address_id"],
			["order.rto_address_id", "x", "order.rto_address_id"],
			["order.order_type", undefined, "order.order_type"],
			["order.order_type", 2, "order.order_type"],
			["order.order_type", "COD", "order.order_type"],
			["order.order_date", "2025-02-30", "order.order_date"],
			["order.order_date", "15/01/2025", "order.order_date"],
			["order.order_date", "2999-01-01", "order.order_date"],
			["order.order_date", 20250115, "order.order_date"],
			["order.order_from_source", "x".repeat(51), "order.order_from_source"],
		];
		for (const [path, value, field] of badFields) {
			it(`400 validation_failed naming ${field} for ${path} = ${JSON.stringify(value)?.slice(0, 30)}`, async () => {
				const s = newSender();
				const body = withField(forwardBody(warehouseOf(s)), path, value);
				const { status, body: err } = await failure(() => create(s, body));
				assert.equal(status, 400);
				assert.equal(err.error, "validation_failed");
				assert.equal(typeof err.message, "string");
				assert.ok(Array.isArray(err.details) && err.details.length >= 1, JSON.stringify(err));
				assert.ok(
					err.details.some((d: string) => d.startsWith(`${field}: `)),
					`details ${JSON.stringify(err.details)} should name ${field}`,
				);
				assert.equal((await rowsFor(s)).length, 0);
			});
		}

		it("prepaid with a cod_amount above 0 is refused", async () => {
			const s = newSender();
			const body = withField(forwardBody(warehouseOf(s)), "order.order_type", 0);
			const { body: err } = await failure(() => create(s, body));
			assert.equal(err.error, "validation_failed");
			assert.deepEqual(err.details, [
				"product.cod_amount: must be absent or 0 for prepaid orders (order_type 0)",
			]);
		});

		it("reports every failing field at once", async () => {
			const s = newSender();
			let body = forwardBody(warehouseOf(s));
			body = withField(body, "receiver.pincode", "12");
			body = withField(body, "receiver.mobile_no", "123");
			body = withField(body, "product.physical_weight", 0);
			body = withField(body, "order.order_type", 5);
			const { status, body: err } = await failure(() => create(s, body));
			assert.equal(status, 400);
			assert.equal(err.error, "validation_failed");
			assert.deepEqual(
				err.details.map((d: string) => d.split(":")[0]),
				["receiver.pincode", "receiver.mobile_no", "product.physical_weight", "order.order_type"],
			);
			assert.ok(err.details[0].startsWith("receiver.pincode: must be 6 digits"));
		});

		it("400 invalid_pickup_address for an unknown or another merchant's warehouse (same answer)", async () => {
			const s = newSender();
			const other = newSender();
			const unknown = await failure(() => create(s, forwardBody(987_654_321)));
			const foreign = await failure(() => create(s, forwardBody(warehouseOf(other))));
			for (const f of [unknown, foreign]) {
				assert.equal(f.status, 400);
				assert.equal(f.body.error, "invalid_pickup_address");
				assert.equal(typeof f.body.message, "string");
			}
			assert.equal(unknown.body.message, foreign.body.message);
			const rto = await failure(() =>
				create(s, withField(forwardBody(warehouseOf(s)), "order.rto_address_id", warehouseOf(other))),
			);
			assert.equal(rto.status, 400);
			assert.equal(rto.body.error, "invalid_pickup_address");
			assert.match(rto.body.message, /rto_address_id/);
			assert.equal((await rowsFor(s)).length, 0);
			// own rto warehouse is fine
			const wh = warehouseOf(s);
			const ok = await create(s, withField(forwardBody(warehouseOf(s)), "order.rto_address_id", wh));
			assert.equal(ok.statusCode, 201);
			assert.equal(Number((await rowsFor(s))[0].rto_address_id), wh);
		});

		it("403 when the body names another sender; the caller's own sender_id is ignored", async () => {
			const s = newSender();
			const wh = warehouseOf(s);
			for (const body of [
				{ ...forwardBody(wh), sender_id: s + 1 },
				{ ...forwardBody(wh), sender_id: "abc" },
				withField(forwardBody(wh), "order.sender_id", s + 7),
			]) {
				const { status, body: err } = await failure(() => create(s, body));
				assert.equal(status, 403);
				assert.deepEqual(err, {
					error: "cannot create order for another sender",
					message: "cannot create order for another sender",
				});
			}
			assert.equal((await rowsFor(s)).length, 0);
			const own = await create(s, { ...forwardBody(wh), sender_id: String(s) });
			assert.equal(own.statusCode, 201);
			const rows = await rowsFor(s);
			assert.equal(rows.length, 1);
			assert.equal(Number(rows[0].sender_id), s);
		});

		it("400 unsupported_channel for B2B / multi-box inputs", async () => {
			const s = newSender();
			const wh = warehouseOf(s);
			const variants = [
				{ ...forwardBody(wh), boxes: [{ weight: 5 }, { weight: 6 }] },
				{ ...forwardBody(wh), packages: [{ weight: 5 }] },
				withField(forwardBody(wh), "order.is_b2b", true),
				withField(forwardBody(wh), "product.no_of_boxes", 3),
				withField(forwardBody(wh), "order.number_of_boxes", "2"),
				withField(forwardBody(wh), "channel", "B2B"),
			];
			for (const body of variants) {
				const { status, body: err } = await failure(() => create(s, body));
				assert.equal(status, 400);
				assert.equal(err.error, "unsupported_channel", JSON.stringify(body));
				assert.equal(typeof err.message, "string");
			}
			assert.equal((await rowsFor(s)).length, 0);
			// one box is a plain B2C order
			const one = await create(s, withField(forwardBody(wh), "product.no_of_boxes", 1));
			assert.equal(one.statusCode, 201);
		});

		it("403 Read-only role for read-only roles, before the handler runs", async () => {
			const s = newSender();
			const wh = warehouseOf(s);
			for (const role of ["merchant_finance", "merchant_support", "merchant_staff"] as const) {
				for (const action of ["intake.createOrder", "intake.createReverse"]) {
					// an invalid body: the role check must answer before validation
					const { status, body } = await failure(() => broker.call(action, {}, as(s, role)));
					assert.equal(status, 403);
					assert.equal(body.error, "Read-only role");
				}
				const { status } = await failure(() =>
					broker.call("intake.createOrder", forwardBody(wh), as(s, role)),
				);
				assert.equal(status, 403);
			}
			assert.equal((await rowsFor(s)).length, 0);
			// other write roles may create
			for (const role of ["merchant_admin", "merchant_ops"] as const) {
				const opts = as(s, role);
				await broker.call("intake.createOrder", forwardBody(wh), opts);
				assert.equal((opts.meta as any).$statusCode, 201);
			}
		});

		it("403 forbidden naming orders.write for a writing role without the capability; 401 without a user", async () => {
			const s = newSender();
			const user = { ...userFor(s, "merchant_ops"), role: "merchant_custom" as any, caps: [] };
			const { status, body } = await failure(() =>
				broker.call("intake.createOrder", forwardBody(warehouseOf(s)), { meta: { user } }),
			);
			assert.equal(status, 403);
			assert.equal(body.error, "forbidden");
			assert.equal(body.cap, "orders.write");
			const anon = await failure(() => broker.call("intake.createOrder", forwardBody(warehouseOf(s))));
			assert.equal(anon.status, 401);
			assert.equal(anon.body.error, "Authentication required");
			assert.equal((await rowsFor(s)).length, 0);
		});
	});

	describe("intake.createReverse (POST /v1/intake/reverse)", () => {
		it("stores the return under customer_order_no + -R, next to the forward order of the same number", async () => {
			const s = newSender();
			const wh = warehouseOf(s);
			const fwd = await create(s, forwardBody(wh, "SO-1001"));
			const rev = await create(s, reverseBody(wh, "SO-1001"), "intake.createReverse");
			assert.equal(rev.statusCode, 201);
			assert.deepEqual(Object.keys(rev.result), ["order_id"]);
			assert.notEqual(rev.result.order_id, fwd.result.order_id);
			const rows = await rowsFor(s);
			assert.deepEqual(
				rows.map((r) => [r.customer_order_no, r.shipment_type, r.order_type]),
				[
					["SO-1001", 0, 1],
					["SO-1001-R", 1, 0],
				],
			);
			assert.equal(rows[1].forward_source, "tekipost");
			assert.equal(rows[1].old_fwd_awb_no, "1490841234567");
			assert.deepEqual(rows[1].return_address, { name: "Main WH", city: "Pune", pincode: "411001" });
			assert.equal(Number(rows[1].cod_amount_paise), 0);

			const again = await create(s, reverseBody(wh, "SO-1001"), "intake.createReverse");
			assert.equal(again.statusCode, 200);
			assert.deepEqual(again.result, { order_id: rev.result.order_id, deduped: true });

			const st: any = await broker.call("intake.status", { order_no: "SO-1001-R" }, as(s));
			assert.equal(st.order_no, "SO-1001-R");
			const rec: any = await broker.call("intake.getOrder", { sender_id: s, order_id: rev.result.order_id });
			assert.equal(rec.shipment_type, 1);
			assert.equal(rec.customer_order_no, "SO-1001-R");
			assert.equal(rec.reverse.forward_source, "tekipost");
		});

		it("reverse_pickup_address_id is the order's warehouse and must be the caller's", async () => {
			const s = newSender();
			const wh = warehouseOf(s);
			const back = warehouseOf(s);
			const body = withField(reverseBody(wh, "RV-1"), "order.reverse_pickup_address_id", back);
			await create(s, body, "intake.createReverse");
			const [row] = await rowsFor(s);
			assert.equal(Number(row.pickup_address_id), back);
			assert.equal(Number(row.reverse_pickup_address_id), back);
			// only reverse_pickup_address_id given
			const only = withField(
				withField(reverseBody(wh, "RV-2"), "order.pickup_address_id", undefined),
				"order.reverse_pickup_address_id",
				back,
			);
			assert.equal((await create(s, only, "intake.createReverse")).statusCode, 201);
			const foreign = withField(
				reverseBody(wh, "RV-3"),
				"order.reverse_pickup_address_id",
				warehouseOf(newSender()),
			);
			const f = await failure(() => create(s, foreign, "intake.createReverse"));
			assert.equal(f.status, 400);
			assert.equal(f.body.error, "invalid_pickup_address");
			const neither = withField(reverseBody(wh, "RV-4"), "order.pickup_address_id", undefined);
			const n = await failure(() => create(s, neither, "intake.createReverse"));
			assert.equal(n.body.error, "validation_failed");
			assert.ok(n.body.details.some((d: string) => d.startsWith("order.pickup_address_id: ")));
		});

		const badReverse: Array<[string, unknown, string]> = [
			["order.forward_source", undefined, "order.forward_source"],
			["order.forward_source", "shiprocket", "order.forward_source"],
			["order.forward_source", "TEKIPOST", "order.forward_source"],
			["order.old_fwd_awb_no", undefined, "order.old_fwd_awb_no"],
			["order.old_fwd_awb_no", "", "order.old_fwd_awb_no"],
			["order.old_fwd_awb_no", "9".repeat(51), "order.old_fwd_awb_no"],
			["order.old_fwd_awb_no", "AWB 123", "order.old_fwd_awb_no"],
			["order.order_type", 1, "order.order_type"],
			["product.cod_amount", 100, "product.cod_amount"],
			["order.return_address", "Pune", "order.return_address"],
			["order.return_address.pincode", "4110", "order.return_address.pincode"],
			["order.reverse_pickup_address_id", "zero", "order.reverse_pickup_address_id"],
			["receiver.pincode", "4110", "receiver.pincode"],
		];
		for (const [path, value, field] of badReverse) {
			it(`400 validation_failed naming ${field} for ${path} = ${JSON.stringify(value)?.slice(0, 30)}`, async () => {
				const s = newSender();
				const body = withField(reverseBody(warehouseOf(s), "RV-BAD"), path, value);
				const { status, body: err } = await failure(() => create(s, body, "intake.createReverse"));
				assert.equal(status, 400);
				assert.equal(err.error, "validation_failed");
				assert.ok(
					err.details.some((d: string) => d.startsWith(`${field}: `)),
					`details ${JSON.stringify(err.details)} should name ${field}`,
				);
				assert.equal((await rowsFor(s)).length, 0);
			});
		}

		it("old_fwd_awb_no of exactly 50 characters is accepted", async () => {
			const s = newSender();
			const body = withField(reverseBody(warehouseOf(s), "RV-50"), "order.old_fwd_awb_no", "7".repeat(50));
			assert.equal((await create(s, body, "intake.createReverse")).statusCode, 201);
		});

		it("403 another sender and B2B refusal apply to returns too", async () => {
			const s = newSender();
			const wh = warehouseOf(s);
			const other = await failure(() =>
				create(s, { ...reverseBody(wh, "RV-S"), sender_id: s + 1 }, "intake.createReverse"),
			);
			assert.equal(other.status, 403);
			assert.equal(other.body.error, "cannot create order for another sender");
			const b2b = await failure(() =>
				create(s, { ...reverseBody(wh, "RV-B"), boxes: [{}, {}] }, "intake.createReverse"),
			);
			assert.equal(b2b.body.error, "unsupported_channel");
		});

		it("409 reference_in_use when a forward order already holds the -R reference (and vice versa)", async () => {
			const s = newSender();
			const wh = warehouseOf(s);
			const fwd = await create(s, forwardBody(wh, "X-9-R"));
			const clash = await failure(() => create(s, reverseBody(wh, "X-9"), "intake.createReverse"));
			assert.equal(clash.status, 409);
			assert.equal(clash.body.error, "reference_in_use");
			await create(s, reverseBody(wh, "Y-9"), "intake.createReverse");
			const clash2 = await failure(() => create(s, forwardBody(wh, "Y-9-R")));
			assert.equal(clash2.status, 409);
			assert.equal(clash2.body.error, "reference_in_use");
			const rows = await rowsFor(s);
			assert.deepEqual(
				rows.map((r) => [Number(r.order_id) === fwd.result.order_id, r.customer_order_no, r.shipment_type]),
				[
					[true, "X-9-R", 0],
					[false, "Y-9-R", 1],
				],
			);
		});
	});

	describe("intake.status (GET /v1/orders/status)", () => {
		it("400 order_no is required when absent or empty", async () => {
			const s = newSender();
			for (const params of [{}, { order_no: "" }, { order_no: "   " }]) {
				const { status, body } = await failure(() => broker.call("intake.status", params, as(s)));
				assert.equal(status, 400);
				assert.deepEqual(body, { error: "order_no is required", message: "order_no is required" });
			}
		});

		it("404 order_not_found for an unknown reference and for another merchant's", async () => {
			const s = newSender();
			const other = newSender();
			await create(other, forwardBody(warehouseOf(other), "SHARED-REF-1"));
			for (const order_no of ["NOPE-1", "SHARED-REF-1"]) {
				const { status, body } = await failure(() => broker.call("intake.status", { order_no }, as(s)));
				assert.equal(status, 404);
				assert.equal(body.error, "order_not_found");
				assert.equal(typeof body.message, "string");
			}
			// a sender_id param changes nothing (§1 rule 3)
			const spoof = await failure(() =>
				broker.call("intake.status", { order_no: "SHARED-REF-1", sender_id: String(other) }, as(s)),
			);
			assert.equal(spoof.status, 404);
		});

		it("answers the §2.4 record; read-only roles may read it", async () => {
			const s = newSender();
			await create(s, forwardBody(warehouseOf(s), "ST-1"));
			const st: any = await broker.call("intake.status", { order_no: "ST-1" }, as(s, "merchant_staff"));
			assert.deepEqual(Object.keys(st).sort(), [
				"awb_number",
				"courier",
				"created_at",
				"failure_reason",
				"order_no",
				"state",
				"status",
			]);
			assert.equal(st.order_no, "ST-1");
			assert.equal(st.state, "not_shipped");
			assert.equal(st.status, "new");
			assert.equal(st.awb_number, null);
			assert.equal(st.courier, null);
			assert.equal(st.failure_reason, null);
			assert.ok(!Number.isNaN(Date.parse(st.created_at)));
			const anon = await failure(() => broker.call("intake.status", { order_no: "ST-1" }));
			assert.equal(anon.status, 401);
		});

		it("shows awb_number and courier once booked, failure_reason once failed", async () => {
			const s = newSender();
			const { result } = await create(s, forwardBody(warehouseOf(s), "ST-2"));
			const id = result.order_id;
			await book(s, id, {
				seq: 1,
				state: "booking_in_progress",
				status: "booking_queued",
				awb_number: undefined,
				courier: undefined,
				logistic_id: undefined,
			});
			let st: any = await broker.call("intake.status", { order_no: "ST-2" }, as(s));
			assert.equal(st.state, "booking_in_progress");
			assert.equal(st.status, "booking_queued");
			assert.equal(st.awb_number, null);

			assert.deepEqual(await book(s, id, { seq: 2 }), { applied: true });
			st = await broker.call("intake.status", { order_no: "ST-2" }, as(s));
			assert.equal(st.state, "booked");
			assert.equal(st.status, "booked");
			assert.equal(st.awb_number, `AWB${id}`);
			assert.equal(st.courier, "Sandbox Express");
			assert.equal(st.failure_reason, null);

			const { result: r3 } = await create(s, forwardBody(warehouseOf(s), "ST-3"));
			await book(s, r3.order_id, {
				state: "failed",
				status: "booking_failed",
				awb_number: null,
				courier: null,
				failure_reason: "No courier serves pincode 560038 for COD",
			});
			st = await broker.call("intake.status", { order_no: "ST-3" }, as(s));
			assert.equal(st.state, "failed");
			assert.equal(st.awb_number, null);
			assert.equal(st.courier, null);
			assert.equal(st.failure_reason, "No courier serves pincode 560038 for COD");
		});
	});

	describe("intake.applyBookingUpdate", () => {
		it("applies only newer (attempt_id, seq); re-delivery and stale updates answer {applied:false}", async () => {
			const s = newSender();
			const { result } = await create(s, forwardBody(warehouseOf(s)));
			const id = result.order_id;
			const queued = {
				seq: 1,
				state: "booking_in_progress",
				status: "booking_queued",
				awb_number: null,
				courier: null,
				logistic_id: null,
			} as const;
			assert.deepEqual(await book(s, id, queued), { applied: true });
			assert.deepEqual(await book(s, id, { seq: 2 }), { applied: true });
			assert.deepEqual(await book(s, id, { seq: 2 }), { applied: false }); // re-delivered
			assert.deepEqual(await book(s, id, queued), { applied: false }); // stale: arrives late
			let [row] = await rowsFor(s);
			assert.equal(row.state, "booked");
			assert.equal(row.awb_number, `AWB${id}`);
			assert.equal(row.logistic_id, 3);
			assert.ok(row.booked_at);
			const bookedAt = new Date(row.booked_at).getTime();

			// later status of the same attempt keeps the AWB when it is omitted
			assert.deepEqual(
				await book(s, id, {
					seq: 3,
					status: "manifested",
					awb_number: undefined,
					courier: undefined,
					logistic_id: undefined,
				}),
				{ applied: true },
			);
			[row] = await rowsFor(s);
			assert.equal(row.status, "manifested");
			assert.equal(row.awb_number, `AWB${id}`);
			assert.equal(new Date(row.booked_at).getTime(), bookedAt);

			// an older attempt never overwrites a newer one
			assert.deepEqual(
				await book(s, id, {
					attempt_id: 2,
					seq: 1,
					state: "booking_in_progress",
					status: "booking_queued",
					awb_number: undefined,
					courier: undefined,
					logistic_id: undefined,
				}),
				{ applied: true },
			);
			[row] = await rowsFor(s);
			assert.equal(row.state, "booking_in_progress");
			assert.equal(row.awb_number, null); // new attempt: AWB of the old one cleared
			assert.deepEqual(await book(s, id, { attempt_id: 1, seq: 9, state: "booked" }), { applied: false });
			[row] = await rowsFor(s);
			assert.equal(row.state, "booking_in_progress");
			assert.equal(Number(row.booking_attempt_id), 2);
			assert.equal(row.booking_seq, 1);
		});

		it("does not touch another sender's order; rejects malformed updates", async () => {
			const s = newSender();
			const { result } = await create(s, forwardBody(warehouseOf(s)));
			assert.deepEqual(await book(newSender(), result.order_id), { applied: false });
			assert.equal((await rowsFor(s))[0].state, "not_shipped");
			const err = await rejects(() => book(s, result.order_id, { state: "shipped" as any }));
			assert.equal(err.name, "ValidationError");
			assert.equal((await rowsFor(s))[0].state, "not_shipped");
		});
	});

	describe("warehouse queries", () => {
		it("warehouseUsage counts open orders shipping from the warehouse", async () => {
			const s = newSender();
			const wh = warehouseOf(s);
			const otherWh = warehouseOf(s);
			const ids: number[] = [];
			for (let i = 0; i < 6; i++) ids.push((await create(s, forwardBody(wh))).result.order_id);
			await create(s, forwardBody(otherWh)); // another warehouse
			const foreign = newSender();
			await book(s, ids[1]); // booked: awaiting pickup
			await book(s, ids[2], {
				state: "failed",
				status: "booking_failed",
				awb_number: null,
				failure_reason: "refused",
			}); // unshipped
			await book(s, ids[3], {
				seq: 1,
				state: "booking_in_progress",
				status: "booking_queued",
				awb_number: null,
			}); // unshipped
			await book(s, ids[4], { seq: 3, status: "delivered" }); // closed
			await book(s, ids[5], { seq: 3, status: "in_transit" }); // picked up
			const usage = (await broker.call("intake.warehouseUsage", {
				sender_id: s,
				warehouse_id: wh,
			})) as WarehouseUsage;
			assert.deepEqual(usage, {
				count: 4,
				unshipped: 3,
				awaiting_pickup: 1,
				order_ids: [ids[3], ids[2], ids[1], ids[0]],
			});
			assert.deepEqual(await broker.call("intake.warehouseUsage", { sender_id: foreign, warehouse_id: wh }), {
				count: 0,
				unshipped: 0,
				awaiting_pickup: 0,
				order_ids: [],
			});
		});

		it("warehouseUsage lists at most 20 order_ids, newest first", async () => {
			const s = newSender();
			const wh = warehouseOf(s);
			const ids: number[] = [];
			for (let i = 0; i < 23; i++) ids.push((await create(s, forwardBody(wh))).result.order_id);
			const usage = (await broker.call("intake.warehouseUsage", {
				sender_id: s,
				warehouse_id: wh,
			})) as WarehouseUsage;
			assert.equal(usage.count, 23);
			assert.equal(usage.unshipped, 23);
			assert.deepEqual(usage.order_ids, ids.slice(-20).reverse());
		});

		it("adoptOrphanOrders gives the sender's unbooked orders with no warehouse this one", async () => {
			const s = newSender();
			const other = newSender();
			const db = getSequelize();
			const orphan = (ref: string) => {
				const input = parseOrderInput(forwardBody(1, ref), "forward");
				input.order.pickup_address_id = null; // internal callers may create orders with no warehouse
				return input;
			};
			const a = await insertOrder(db, s, orphan("ORPH-1"));
			const b = await insertOrder(db, s, orphan("ORPH-2"));
			const booked = await insertOrder(db, s, orphan("ORPH-3"));
			await book(s, booked.order_id);
			const theirs = await insertOrder(db, other, orphan("ORPH-1"));
			const placed = await create(s, forwardBody(warehouseOf(s), "PLACED-1"));
			const wh = warehouseOf(s);
			assert.deepEqual(await broker.call("intake.adoptOrphanOrders", { sender_id: s, warehouse_id: wh }), {
				count: 2,
			});
			const rows = await select<{ order_id: string; pickup_address_id: string | null }>(
				db,
				`SELECT order_id, pickup_address_id FROM intake.orders WHERE order_id IN ($1, $2, $3, $4, $5) ORDER BY order_id`,
				[a.order_id, b.order_id, booked.order_id, theirs.order_id, placed.result.order_id],
			);
			const byId = new Map(
				rows.map((r) => [
					Number(r.order_id),
					r.pickup_address_id === null ? null : Number(r.pickup_address_id),
				]),
			);
			assert.equal(byId.get(a.order_id), wh);
			assert.equal(byId.get(b.order_id), wh);
			assert.equal(byId.get(booked.order_id), null);
			assert.equal(byId.get(theirs.order_id), null);
			assert.notEqual(byId.get(placed.result.order_id), wh);
			assert.deepEqual(await broker.call("intake.adoptOrphanOrders", { sender_id: s, warehouse_id: wh }), {
				count: 0,
			});
		});

		it("shippedCounts counts orders booked since a time per pickup warehouse", async () => {
			const s = newSender();
			const whA = warehouseOf(s);
			const whB = warehouseOf(s);
			const a1 = (await create(s, forwardBody(whA))).result.order_id;
			const a2 = (await create(s, forwardBody(whA))).result.order_id;
			const a3 = (await create(s, forwardBody(whA))).result.order_id;
			const b1 = (await create(s, forwardBody(whB))).result.order_id;
			await create(s, forwardBody(whB)); // never booked
			for (const id of [a1, a2, a3, b1]) await book(s, id);
			// a3 was booked 40 days ago
			await getSequelize().query(
				`UPDATE intake.orders SET booked_at = now() - interval '40 days' WHERE order_id = $1`,
				{
					bind: [a3],
				},
			);
			const since = new Date(Date.now() - 30 * 86_400_000).toISOString();
			assert.deepEqual(await broker.call("intake.shippedCounts", { sender_id: s, since }), {
				[String(whA)]: 2,
				[String(whB)]: 1,
			});
			const future = new Date(Date.now() + 3_600_000).toISOString();
			assert.deepEqual(await broker.call("intake.shippedCounts", { sender_id: s, since: future }), {});
			assert.deepEqual(await broker.call("intake.shippedCounts", { sender_id: newSender(), since }), {});
		});
	});

	describe("warehouse resolution cache", () => {
		it("serves a resolved warehouse from the cache until warehouses.changed evicts it; misses are not cached", async () => {
			const s = newSender();
			const wh = warehouseOf(s);
			assert.equal((await create(s, forwardBody(wh))).statusCode, 201);
			assert.equal((await create(s, forwardBody(wh))).statusCode, 201);
			assert.equal(resolveCount(wh), 1, "the second create is served from the cache");
			warehouseOwner.delete(wh); // retired at warehouses…
			await broker.broadcast("warehouses.changed", { sender_id: s, id: wh }); // …which says so
			const gone = await failure(() => create(s, forwardBody(wh)));
			assert.equal(gone.status, 400);
			assert.equal(gone.body.error, "invalid_pickup_address");
			assert.equal(resolveCount(wh), 2);
			await failure(() => create(s, forwardBody(wh)));
			assert.equal(resolveCount(wh), 3, "a miss is asked again");
			assert.equal((await rowsFor(s)).length, 2);
		});

		it("does not cache an answer that was in flight when warehouses.changed arrived", async () => {
			const s = newSender();
			const wh = warehouseOf(s);
			let release!: () => void;
			resolveGates.set(
				wh,
				new Promise<void>((r) => {
					release = r;
				}),
			);
			const pending = create(s, forwardBody(wh));
			await waitFor(() => resolveCount(wh) === 1, "the lookup");
			// the fake has decided "yes"; the warehouse is deleted before its answer arrives
			warehouseOwner.delete(wh);
			await broker.broadcast("warehouses.changed", { sender_id: s, id: wh });
			resolveGates.delete(wh);
			release();
			assert.equal((await pending).statusCode, 201, "answered as of the lookup");
			const after = await failure(() => create(s, forwardBody(wh)));
			assert.equal(after.body.error, "invalid_pickup_address", "the pre-delete answer was not cached");
			assert.equal(resolveCount(wh), 2);
		});

		it("looks a warehouse named twice (pickup and RTO) up once", async () => {
			const s = newSender();
			const wh = warehouseOf(s);
			const res = await create(s, withField(forwardBody(wh), "order.rto_address_id", wh));
			assert.equal(res.statusCode, 201);
			assert.equal(resolveCount(wh), 1);
			const [row] = await rowsFor(s);
			assert.equal(Number(row.pickup_address_id), wh);
			assert.equal(Number(row.rto_address_id), wh);
		});

		it("WarehouseCache: TTL, eviction, disabled, keyed by sender, bounded", async () => {
			const c = new WarehouseCache(60_000);
			assert.equal(c.has(1, 2), false);
			c.remember(1, 2, c.begin());
			assert.equal(c.has(1, 2), true);
			assert.equal(c.has(9, 2), false, "another sender's id is another entry");
			c.evict(1, 2);
			assert.equal(c.has(1, 2), false);

			const since = c.begin();
			c.evict(7, 7); // any eviction while a lookup is in flight voids it
			c.remember(1, 2, since);
			assert.equal(c.has(1, 2), false);

			const off = new WarehouseCache(0);
			off.remember(1, 2, off.begin());
			assert.equal(off.has(1, 2), false, "TTL 0 disables the cache");

			const short = new WarehouseCache(1);
			short.remember(1, 2, short.begin());
			await new Promise((r) => setTimeout(r, 20));
			assert.equal(short.has(1, 2), false, "expired");

			const small = new WarehouseCache(60_000, 2);
			for (const id of [1, 2, 3]) small.remember(1, id, small.begin());
			assert.deepEqual(
				[1, 2, 3].map((id) => small.has(1, id)),
				[false, false, true],
				"emptied when full, never over its bound",
			);
		});
	});
});

describe("lib/fields", () => {
	it("parsePositiveInt reads JSON integers and plain digit strings only", () => {
		const cases: Array<[unknown, number | null]> = [
			[5, 5],
			["42", 42],
			[" 7 ", 7],
			["9007199254740991", 9007199254740991],
			[0, null],
			["0", null],
			[-3, null],
			["-3", null],
			["+7", null],
			[1.5, null],
			["1.5", null],
			["007", null],
			["1e3", null],
			["", null],
			[null, null],
			[true, null],
			[2 ** 53, null],
			["9007199254740993", null],
		];
		for (const [v, want] of cases) assert.equal(parsePositiveInt(v), want, JSON.stringify(v));
	});

	it("parseBool reads true/false, 1/0 and their strings; nothing else", () => {
		for (const v of [true, 1, "1", "true", " TRUE "]) assert.equal(parseBool(v), true, JSON.stringify(v));
		for (const v of [false, 0, "0", "false", "False"]) assert.equal(parseBool(v), false, JSON.stringify(v));
		for (const v of [undefined, null, "", "yes", 2, "2", {}, []]) assert.equal(parseBool(v), undefined);
	});

	it("codeString, normaliseMobile, isPlainObject and the formats", () => {
		assert.equal(codeString(" 560038 "), "560038");
		assert.equal(codeString(560038), "560038");
		assert.equal(codeString(1.5), undefined);
		assert.equal(codeString(null), undefined);
		assert.equal(normaliseMobile("+91 98450-12345"), "9845012345");
		assert.equal(normaliseMobile("09845012345"), "9845012345");
		assert.equal(normaliseMobile("(984) 501.2345"), "9845012345");
		assert.equal(normaliseMobile("5845012345"), null);
		assert.equal(normaliseMobile("98450123456"), null);
		assert.equal(isPlainObject({}), true);
		assert.equal(isPlainObject([]), false);
		assert.equal(isPlainObject(null), false);
		assert.ok(PINCODE_FORMAT.test("012345") && !PINCODE_FORMAT.test("12345"));
		assert.ok(INDIAN_PINCODE.test("560038") && !INDIAN_PINCODE.test("012345"));
		assert.ok(PHONE_10_DIGITS.test("9876543210") && !PHONE_10_DIGITS.test("+919876543210"));
	});
});
