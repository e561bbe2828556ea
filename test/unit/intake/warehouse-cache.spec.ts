/**
 * intake service: the warehouse resolution cache (lib/intake/warehouse-cache.ts) and warehouses.changed.
 * Broker, fake warehouses and body builders: ./setup.ts.
 */
import assert from "node:assert/strict";
import { WarehouseCache } from "../../../lib/intake/warehouse-cache";
import { newSender } from "../../helpers/broker";
import { eventually } from "../../helpers/poll";
import {
	broker,
	create,
	failure,
	forwardBody,
	resolveCount,
	resolveGates,
	rowsFor,
	useIntake,
	warehouseOf,
	warehouseOwner,
	withField,
} from "./setup";

describe("intake service", () => {
	useIntake();

	describe("warehouse resolution cache", () => {
		it("serves a resolved warehouse from the cache until warehouses.changed evicts it; misses are not cached", async () => {
			const s = newSender();
			const wh = warehouseOf(s);
			assert.equal((await create(s, forwardBody(wh))).statusCode, 201);
			assert.equal((await create(s, forwardBody(wh))).statusCode, 201);
			assert.equal(resolveCount(wh), 1, "the second create is served from the cache");
			warehouseOwner.delete(wh); // retired at warehouses…
			await broker().broadcast("warehouses.changed", { sender_id: s, id: wh }); // …which says so
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
			await eventually(() => resolveCount(wh) === 1, { what: "the lookup", ms: 5000, every: 5 });
			// the fake has decided "yes"; the warehouse is deleted before its answer arrives
			warehouseOwner.delete(wh);
			await broker().broadcast("warehouses.changed", { sender_id: s, id: wh });
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
