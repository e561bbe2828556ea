/** `warehouses` service — PATCH /v1/warehouses/:id: partial updates, return leg, versions, warehouses.changed. Broker and fakes: ./setup.ts. */
import { strict as assert } from "node:assert";
import { getSequelize } from "../../../lib/platform/db";
import { WAREHOUSES_MIGRATIONS } from "../../../lib/warehouses/migrations";
import { newSender, rejects } from "../../helpers/broker";
import { eventually } from "../../helpers/poll";
import { expectInvalid, fake, RETURN_BLOCK, ROW_FIELDS, useWarehouses, valid } from "./setup";

describe("warehouses: PATCH /v1/warehouses/:id", function () {
	this.timeout(60_000);
	const h = useWarehouses();
	const { create, update, remove, rowOf } = h;

	it("updates the fields sent and answers the full row", async () => {
		const sender = newSender();
		const id = (await create(sender, valid({ warehouse_name: "Before" }))).data.id;
		const res = await update(sender, id, {
			warehouse_name: "After",
			contact_no: "9000000001",
			warehouse_type: "fulfillment",
			gstin: null,
			sender_id: newSender(),
		});
		for (const f of ROW_FIELDS) assert.ok(f in res.data, `row has ${f}`);
		assert.equal(res.data.id, id);
		assert.equal(res.data.warehouse_name, "After");
		assert.equal(res.data.contact_no, "9000000001");
		assert.equal(res.data.return_contact_no, "9000000001", "mirrored return leg follows");
		assert.equal(res.data.return_warehouse_name, "After");
		assert.equal(res.data.warehouse_type, "fulfillment");
		assert.equal(res.data.gstin, null);
		assert.equal(res.data.city, "Bengaluru", "fields not sent are kept");
		const row = await rowOf(id);
		assert.equal(Number(row.sender_id), sender);
		assert.equal(row.warehouse_name, "After");
		assert.equal(row.version, 2, "courier-visible change bumps the version");
	});

	it("answers the row as committed and broadcasts warehouses.changed", async () => {
		const sender = newSender();
		const id = (await create(sender, valid())).data.id;
		const res = await update(sender, id, { city: "Mysuru", warehouse_type: "fulfillment" });
		const row = await rowOf(id);
		assert.equal(res.data.city, "Mysuru");
		assert.equal(res.data.return_city, "Mysuru");
		assert.equal(res.data.warehouse_type, "fulfillment");
		assert.equal(res.data.updated_at, new Date(row.updated_at).toISOString());
		assert.equal(res.data.created_at, new Date(row.created_at).toISOString());
		assert.equal(res.data.warehouse_code, row.warehouse_code);
		assert.equal(res.data.is_default, true);
		assert.deepEqual(
			res.data.courier_registrations.map((r: any) => r.logistic_id),
			[1, 3],
		);
		await eventually(async () => fake.changes.filter((c) => c.sender_id === sender && c.id === id).length, {
			ok: (n) => n === 1,
			what: "warehouses.changed after PATCH",
			ms: 25_000,
		});
	});

	it("does not bump the version for changes a courier does not see", async () => {
		const sender = newSender();
		const id = (await create(sender, valid())).data.id;
		await update(sender, id, { warehouse_type: "fulfillment", is_default: true });
		assert.equal((await rowOf(id)).version, 1);
		await update(sender, id, { city: "Bengaluru" });
		assert.equal((await rowOf(id)).version, 1, "same value is no change");
	});

	it("switches is_return_same off keeping the mirrored copy, or with a new return block", async () => {
		const sender = newSender();
		const id = (await create(sender, valid())).data.id;
		const kept = await update(sender, id, { is_return_same: false });
		assert.equal(kept.data.is_return_same, false);
		assert.equal(kept.data.return_city, "Bengaluru");
		const moved = await update(sender, id, {
			city: "Mysuru",
			return_city: "Mumbai",
			return_pincode: "400001",
		});
		assert.equal(moved.data.city, "Mysuru");
		assert.equal(moved.data.return_city, "Mumbai");
		assert.equal(moved.data.return_pincode, "400001");
		const back = await update(sender, id, { is_return_same: "1" });
		assert.equal(back.data.return_city, "Mysuru");
		assert.equal(back.data.return_pincode, "560001");
	});

	it("with is_return_same false the merged return block needs return_warehouse_name, like every required return_* field", async () => {
		const sender = newSender();
		const db = getSequelize();
		// an independent return leg: the name cannot be cleared or blanked
		const sep = (await create(sender, valid({ is_return_same: false, ...RETURN_BLOCK }))).data.id;
		await expectInvalid(update(sender, sep, { return_warehouse_name: null }), [
			"return_warehouse_name: is required",
		]);
		await expectInvalid(update(sender, sep, { return_warehouse_name: "  " }), [
			"return_warehouse_name: is required",
		]);
		await expectInvalid(update(sender, sep, { return_warehouse_name: "R" }), [
			"return_warehouse_name: must be at least 3 characters",
		]);
		assert.equal((await rowOf(sep)).return_warehouse_name, "Returns Desk", "nothing changed");
		// switching a mirrored warehouse off keeps the mirrored name (the merged block is complete) …
		const mirrored = (await create(sender, valid({ warehouse_name: "Mirror Hub" }))).data.id;
		const off = await update(sender, mirrored, { is_return_same: false });
		assert.equal(off.data.return_warehouse_name, "Mirror Hub");
		// … and a switch that sends a null name with it is refused, the stored row untouched
		await update(sender, mirrored, { is_return_same: true });
		await expectInvalid(update(sender, mirrored, { is_return_same: false, return_warehouse_name: null }), [
			"return_warehouse_name: is required",
		]);
		assert.equal((await rowOf(mirrored)).is_return_same, true);
		// a stored return block without a name (a row as the store holds it, name cleared by SQL): switching
		// to false with the rest merged from the stored values still requires the name; sending it completes it
		await db.query(`UPDATE warehouses.warehouses SET return_warehouse_name = NULL WHERE id = $1`, {
			bind: [mirrored],
		});
		await expectInvalid(update(sender, mirrored, { is_return_same: false }), [
			"return_warehouse_name: is required",
		]);
		const done = await update(sender, mirrored, {
			is_return_same: false,
			return_warehouse_name: "Returns Bay",
		});
		assert.equal(done.data.is_return_same, false);
		assert.equal(done.data.return_warehouse_name, "Returns Bay");
		assert.equal(done.data.return_city, "Bengaluru", "the other return_* fields merged from the stored row");
	});

	it("migration 0002 names the stored return legs that have none (the pickup's name, the one they used)", async () => {
		const sender = newSender();
		const db = getSequelize();
		const id = (
			await create(sender, valid({ warehouse_name: "Legacy Hub", is_return_same: false, ...RETURN_BLOCK }))
		).data.id;
		await db.query(`UPDATE warehouses.warehouses SET return_warehouse_name = NULL WHERE id = $1`, {
			bind: [id],
		});
		const version = (await rowOf(id)).version;
		const m = WAREHOUSES_MIGRATIONS.find((x) => x.name === "0002_return_warehouse_name");
		assert.ok(m);
		await db.transaction((transaction) => m.up({ sequelize: db, schema: "warehouses", transaction }));
		const row = await rowOf(id);
		assert.equal(row.return_warehouse_name, "Legacy Hub");
		assert.equal(row.version, version, "nothing a courier sees changed");
		// a PATCH of another field validates again
		const r = await update(sender, id, { city: "Mysuru" });
		assert.equal(r.data.return_warehouse_name, "Legacy Hub");
	});

	it("validates the fields sent, with return_ prefixed messages", async () => {
		const sender = newSender();
		const id = (await create(sender, valid({ is_return_same: false, ...RETURN_BLOCK }))).data.id;
		await expectInvalid(update(sender, id, { contact_no: "123", pincode: "12" }), [
			"contact_no: must be 10 digits",
			"pincode: must be 6 digits",
		]);
		await expectInvalid(update(sender, id, { return_contact_no: "123", return_city: null }), [
			"return_contact_no: must be 10 digits",
			"return_city: is required",
		]);
		await expectInvalid(update(sender, id, { warehouse_name: null }), ["warehouse_name: is required"]);
		await expectInvalid(update(sender, id, { pincode: "999999" }), ["pincode: not a known Indian pincode"]);
		await expectInvalid(update(sender, id, { is_return_same: "nope" }), [
			"is_return_same: must be a boolean",
		]);
		await expectInvalid(update(sender, id, {}), ["body: no updatable field"]);
		assert.equal((await rowOf(id)).version, 1, "nothing changed");
	});

	it("rejects a name another warehouse of the account holds", async () => {
		const sender = newSender();
		await create(sender, valid({ warehouse_name: "Taken" }));
		const id = (await create(sender, valid())).data.id;
		await expectInvalid(update(sender, id, { warehouse_name: "TAKEN" }), ["warehouse_name: already exists"]);
		const ok = await update(sender, id, { warehouse_name: "Free Name" });
		assert.equal(ok.data.warehouse_name, "Free Name");
	});

	it("answers 404 not_found for foreign, missing, retired and malformed ids", async () => {
		const sender = newSender();
		const foreign = (await create(newSender(), valid())).data.id;
		const retired = (await create(sender, valid())).data.id;
		await remove(sender, retired);
		for (const id of [foreign, 987654321, retired, "abc", "1.5", 0, -3]) {
			const err = await rejects(() => update(sender, id, { city: "Pune" }));
			assert.equal(err.code, 404, `id ${id}`);
			assert.equal(err.data.body.error, "not_found");
			assert.equal(typeof err.data.body.message, "string");
		}
		assert.equal((await rowOf(foreign)).city, "Bengaluru");
	});
});
