/**
 * intake service: internal warehouse queries (warehouseUsage, adoptOrphanOrders, shippedCounts; §4.5, §2.9) and getOrder.
 * Broker, fake warehouses and body builders: ./setup.ts.
 */
import assert from "node:assert/strict";
import type { WarehouseUsage } from "../../../lib/contracts";
import { insertOrder } from "../../../lib/intake/store";
import { parseOrderInput } from "../../../lib/intake/validation";
import { getSequelize, select } from "../../../lib/platform/db";
import { newSender } from "../../helpers/broker";
import { callAs } from "../../helpers/call";
import { book, broker, create, forwardBody, useIntake, warehouseOf } from "./setup";

describe("intake service", () => {
	useIntake();

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
			const usage = (await callAs(broker(), "intake.warehouseUsage", {
				sender_id: s,
				warehouse_id: wh,
			})) as WarehouseUsage;
			assert.deepEqual(usage, {
				count: 4,
				unshipped: 3,
				awaiting_pickup: 1,
				order_ids: [ids[3], ids[2], ids[1], ids[0]],
			});
			assert.deepEqual(
				await callAs(broker(), "intake.warehouseUsage", { sender_id: foreign, warehouse_id: wh }),
				{
					count: 0,
					unshipped: 0,
					awaiting_pickup: 0,
					order_ids: [],
				},
			);
		});

		it("warehouseUsage lists at most 20 order_ids, newest first", async () => {
			const s = newSender();
			const wh = warehouseOf(s);
			const ids: number[] = [];
			for (let i = 0; i < 23; i++) ids.push((await create(s, forwardBody(wh))).result.order_id);
			const usage = (await callAs(broker(), "intake.warehouseUsage", {
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
			assert.deepEqual(
				await callAs(broker(), "intake.adoptOrphanOrders", { sender_id: s, warehouse_id: wh }),
				{
					count: 2,
				},
			);
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
			assert.deepEqual(
				await callAs(broker(), "intake.adoptOrphanOrders", { sender_id: s, warehouse_id: wh }),
				{
					count: 0,
				},
			);
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
			assert.deepEqual(await callAs(broker(), "intake.shippedCounts", { sender_id: s, since }), {
				[String(whA)]: 2,
				[String(whB)]: 1,
			});
			const future = new Date(Date.now() + 3_600_000).toISOString();
			assert.deepEqual(await callAs(broker(), "intake.shippedCounts", { sender_id: s, since: future }), {});
			assert.deepEqual(await callAs(broker(), "intake.shippedCounts", { sender_id: newSender(), since }), {});
		});
	});
});
