/** `warehouses` service — courier registration with the sandbox simulator: jobs, refusals, the sweeper. Broker and fakes: ./setup.ts. */
import { strict as assert } from "node:assert";
import { getSequelize, select } from "../../../lib/platform/db";
import { newSender } from "../../helpers/broker";
import { callAs } from "../../helpers/call";
import { eventually } from "../../helpers/poll";
import { fake, useWarehouses, valid } from "./setup";

describe("warehouses: courier registration (sandbox simulator)", function () {
	this.timeout(60_000);
	const h = useWarehouses();
	const { create, list, update, rowOf } = h;
	const db = () => getSequelize();

	const regsOf = (id: number) =>
		select<any>(
			db(),
			"SELECT logistic_id, version, status, reason, courier_location_id FROM warehouses.courier_registrations WHERE warehouse_id = $1 ORDER BY logistic_id",
			[id],
		);
	const listed = async (sender: number, id: number) => {
		const row = (await list(sender)).data.find((r) => r.id === id);
		assert.ok(row, `warehouse ${id} is listed`);
		return row;
	};

	it("registers a new warehouse with every active courier; courier_registered turns true", async () => {
		const sender = newSender();
		const id = (await create(sender, valid())).data.id;
		const pending = await regsOf(id);
		assert.deepEqual(
			pending.map((r) => r.logistic_id),
			[1, 3],
			"pending rows committed with the warehouse",
		);
		const row = await eventually(() => listed(sender, id), {
			ok: (r) => r.courier_registered === true,
			what: "registration",
			ms: 25_000,
		});
		assert.deepEqual(
			row.courier_registrations.map((r: any) => [r.logistic_id, r.status, r.reason]),
			[
				[1, "registered", null],
				[3, "registered", null],
			],
		);
		const regs = await regsOf(id);
		for (const r of regs) {
			assert.equal(r.version, 1);
			assert.equal(r.courier_location_id, `WH${sender}-${id}`);
		}
		const sim = await select<any>(
			db(),
			"SELECT courier_code FROM simulator.pickup_locations WHERE name = $1 ORDER BY courier_code",
			[`WH${sender}-${id}`],
		);
		assert.deepEqual(
			sim.map((s) => s.courier_code),
			["sbx-express", "sbx-reverse"],
		);
		// what the couriers got is the warehouse other services resolve (its pickup and return legs)
		const resolved = await callAs(h.broker(), "warehouses.resolve", { sender_id: sender, id });
		assert.ok(resolved, "the warehouse resolves");
		const [registered] = await select<any>(
			db(),
			"SELECT payload FROM simulator.pickup_locations WHERE name = $1 AND courier_code = 'sbx-express'",
			[resolved.warehouse_code],
		);
		assert.equal(registered.payload.address, resolved.pickup.address_1);
		assert.equal(registered.payload.return_pin, resolved.return_to.pincode);
	});

	it("re-registers after an address change (new version)", async () => {
		const sender = newSender();
		const id = (await create(sender, valid())).data.id;
		await eventually(() => listed(sender, id), {
			ok: (r) => r.courier_registered === true,
			what: "first registration",
			ms: 25_000,
		});
		const res = await update(sender, id, { address_line_1: "99 Residency Road, Ashok Nagar" });
		assert.equal((await rowOf(id)).version, 2);
		assert.equal(typeof res.data.courier_registered, "boolean");
		await eventually(() => listed(sender, id), {
			ok: (r) => r.courier_registered === true,
			what: "second registration",
			ms: 25_000,
		});
		const regs = await regsOf(id);
		assert.deepEqual(
			regs.map((r) => [r.version, r.status]),
			[
				[2, "registered"],
				[2, "registered"],
			],
		);
		const [sim] = await select<any>(
			db(),
			"SELECT payload FROM simulator.pickup_locations WHERE name = $1 AND courier_code = 'sbx-express'",
			[`WH${sender}-${id}`],
		);
		assert.equal(sim.payload.address, "99 Residency Road, Ashok Nagar");
	});

	it("records a refusal with the courier's words", async () => {
		const sender = newSender();
		const id = (await create(sender, valid({ pincode: "111111" }))).data.id;
		const row = await eventually(() => listed(sender, id), {
			ok: (r) => r.courier_registrations.every((c: any) => c.status === "refused"),
			what: "refusal",
			ms: 25_000,
		});
		assert.equal(row.courier_registered, false);
		for (const c of row.courier_registrations)
			assert.match(c.reason ?? "", /Pickup not serviceable at pincode 111111/);
		const regs = await regsOf(id);
		assert.deepEqual(
			regs.map((r) => r.status),
			["refused", "refused"],
		);
	});

	it("registers a warehouse created while the courier list was unavailable once rates is back", async () => {
		const sender = newSender();
		fake.ratesDown = true;
		const refusedBefore = fake.refusedCourierLists;
		const id = (await create(sender, valid())).data.id;
		assert.deepEqual(
			(await regsOf(id)).map((r) => [r.logistic_id, r.status]),
			[[0, "pending"]],
			"placeholder row keeps the registration durable",
		);
		// the create and the job's first attempt both found rates down
		await eventually(() => fake.refusedCourierLists, {
			ok: (n) => n >= refusedBefore + 2,
			what: "the registration job's attempt while rates is down",
		});
		fake.ratesDown = false;
		await eventually(() => listed(sender, id), {
			ok: (r) => r.courier_registered === true,
			what: "registration after retry",
			ms: 25_000,
		});
		assert.deepEqual(
			(await regsOf(id)).map((r) => r.logistic_id),
			[1, 3],
		);
	});

	it("the sweeper re-enqueues stale pending registrations (job lost with Redis)", async () => {
		const sender = newSender();
		const id = (await create(sender, valid({ pincode: "122001" }))).data.id;
		await eventually(() => listed(sender, id), {
			ok: (r) => r.courier_registered === true,
			what: "first registration",
			ms: 25_000,
		});
		// Simulate a committed change whose job never reached Redis, two minutes ago.
		await db().query(
			`UPDATE warehouses.warehouses SET version = 5, address_line_1 = '7 Sohna Road, Sector 49', updated_at = now() - interval '2 minutes' WHERE id = $1`,
			{ bind: [id] },
		);
		await db().query(
			`UPDATE warehouses.courier_registrations SET version = 5, status = 'pending', updated_at = now() - interval '2 minutes' WHERE warehouse_id = $1`,
			{ bind: [id] },
		);
		assert.equal((await listed(sender, id)).courier_registered, false);
		const swept = await callAs(h.broker(), "warehouses.sweepRegistrations", {});
		assert.ok(swept.enqueued >= 1);
		await eventually(() => listed(sender, id), {
			ok: (r) => r.courier_registered === true,
			what: "swept registration",
			ms: 25_000,
		});
		assert.deepEqual(
			(await regsOf(id)).map((r) => [r.version, r.status]),
			[
				[5, "registered"],
				[5, "registered"],
			],
		);
	});

	it("a full sweep registers warehouses missing a row for an active courier", async () => {
		const sender = newSender();
		const id = (await create(sender, valid({ pincode: "600001" }))).data.id;
		await eventually(() => listed(sender, id), {
			ok: (r) => r.courier_registered === true,
			what: "first registration",
			ms: 25_000,
		});
		await db().query(
			"DELETE FROM warehouses.courier_registrations WHERE warehouse_id = $1 AND logistic_id = 3",
			{
				bind: [id],
			},
		);
		await db().query(
			"UPDATE warehouses.warehouses SET updated_at = now() - interval '2 minutes' WHERE id = $1",
			{
				bind: [id],
			},
		);
		assert.equal((await listed(sender, id)).courier_registered, false);
		const swept = await callAs(h.broker(), "warehouses.sweepRegistrations", { full: true });
		assert.ok(swept.enqueued >= 1);
		await eventually(() => listed(sender, id), {
			ok: (r) => r.courier_registered === true,
			what: "registration of the new courier",
			ms: 25_000,
		});
	});
});
