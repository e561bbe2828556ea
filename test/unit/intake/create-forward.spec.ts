/**
 * intake service: POST /v1/intake/order (spec §2.1, §4.1, §7): validation, storage, warehouse ownership, sender and role checks, B2B refusal.
 * Broker, fake warehouses and body builders: ./setup.ts.
 */
import assert from "node:assert/strict";
import type { OrderRecord } from "../../../lib/contracts";
import { userFor } from "../../../lib/platform/auth";
import { as, newSender } from "../../helpers/broker";
import { callAs } from "../../helpers/call";
import { broker, create, failure, forwardBody, rowsFor, useIntake, warehouseOf, withField } from "./setup";

describe("intake service", () => {
	useIntake();

	describe("intake.createOrder (POST /v1/intake/order)", () => {
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

			const rec: any = await callAs(broker(), "intake.getOrder", { sender_id: s, order_id: result.order_id });
			assert.equal(rec.order_id, result.order_id);
			assert.equal(rec.product.declared_order_total, 999.99);
			assert.equal(rec.product.cod_amount, 500);
			assert.equal(rec.consignee.phone, "9845012345");
			assert.equal(rec.direction, "forward");
			assert.equal(rec.payment_mode, "cod");
			assert.equal(rec.reverse, null);
			assert.equal(rec.state, "not_shipped");
			assert.equal(
				await callAs(broker(), "intake.getOrder", { sender_id: newSender(), order_id: result.order_id }),
				null,
			);
		});

		it("the buyer's optional e-mail is stored lower-cased (issue 29); blank counts as absent", async () => {
			const s = newSender();
			const body = withField(
				forwardBody(warehouseOf(s), "EML-1"),
				"receiver.email",
				" Ravi.Kumar@Example.IN ",
			);
			const { result } = await create(s, body);
			const order = (await broker().call("intake.getOrder", {
				sender_id: s,
				order_id: result.order_id,
			})) as OrderRecord | null;
			assert.equal(order?.consignee.email, "ravi.kumar@example.in");
			const blank = withField(forwardBody(warehouseOf(s), "EML-2"), "receiver.email", "  ");
			const r2 = await create(s, blank);
			const o2 = (await broker().call("intake.getOrder", {
				sender_id: s,
				order_id: r2.result.order_id,
			})) as OrderRecord | null;
			assert.equal(o2?.consignee.email, null);
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
			["receiver.email", "not-an-address", "receiver.email"],
			["receiver.email", "a b@example.in", "receiver.email"],
			["receiver.email", 42, "receiver.email"],
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
					const { status, body } = await failure(() => broker().call(action, {}, as(s, role)));
					assert.equal(status, 403);
					assert.equal(body.error, "Read-only role");
				}
				const { status } = await failure(() =>
					callAs(broker(), "intake.createOrder", forwardBody(wh), as(s, role)),
				);
				assert.equal(status, 403);
			}
			assert.equal((await rowsFor(s)).length, 0);
			// other write roles may create
			for (const role of ["merchant_admin", "merchant_ops"] as const) {
				const opts = as(s, role);
				await callAs(broker(), "intake.createOrder", forwardBody(wh), opts);
				assert.equal((opts.meta as any).$statusCode, 201);
			}
		});

		it("403 forbidden naming orders.write for a writing role without the capability; 401 without a user", async () => {
			const s = newSender();
			const user = { ...userFor(s, "merchant_ops"), role: "merchant_custom" as any, caps: [] };
			const { status, body } = await failure(() =>
				callAs(broker(), "intake.createOrder", forwardBody(warehouseOf(s)), { meta: { user } }),
			);
			assert.equal(status, 403);
			assert.equal(body.error, "forbidden");
			assert.equal(body.cap, "orders.write");
			const anon = await failure(() => callAs(broker(), "intake.createOrder", forwardBody(warehouseOf(s))));
			assert.equal(anon.status, 401);
			assert.equal(anon.body.error, "Authentication required");
			assert.equal((await rowsFor(s)).length, 0);
		});
	});
});
