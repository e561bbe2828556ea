/** `warehouses` service — access (§5): read-only roles, the warehouses.write capability, 401. Broker and fakes: ./setup.ts. */
import { strict as assert } from "node:assert";
import { type Role, userFor } from "../../../lib/platform/auth";
import { as, newSender, rejects } from "../../helpers/broker";
import { callAs } from "../../helpers/call";
import { useWarehouses, valid } from "./setup";

describe("warehouses: access (§5)", function () {
	this.timeout(60_000);
	const h = useWarehouses();
	const { create, update, remove, rowOf } = h;

	for (const role of ["merchant_finance", "merchant_support", "merchant_staff"] as Role[]) {
		it(`refuses writes by read-only role ${role} with 403 Read-only role`, async () => {
			const sender = newSender();
			const { data } = await create(sender, valid());
			for (const call of [
				() => create(sender, valid(), role),
				() => update(sender, data.id, { city: "Pune" }, role),
				() => remove(sender, data.id, role),
			]) {
				const err = await rejects(call);
				assert.equal(err.code, 403);
				assert.equal(err.data.body.error, "Read-only role");
			}
			assert.equal((await rowOf(data.id)).city, "Bengaluru");
			const listed = await callAs(h.broker(), "warehouses.list", {}, as(sender, role));
			assert.equal(listed.data.length, 1);
		});
	}

	it("refuses a role without warehouses.write with 403 forbidden naming the capability", async () => {
		const sender = newSender();
		const user = {
			...userFor(sender, "merchant"),
			role: "merchant_viewer" as Role,
			caps: [],
			read_only: false,
		};
		const err = await rejects(() => callAs(h.broker(), "warehouses.create", valid(), { meta: { user } }));
		assert.equal(err.code, 403);
		assert.deepEqual(
			{ error: err.data.body.error, cap: err.data.body.cap },
			{ error: "forbidden", cap: "warehouses.write" },
		);
	});

	it("merchant_ops may write; no user → 401", async () => {
		const res = await create(newSender(), valid(), "merchant_ops");
		assert.ok(res.data.id > 0);
		const err = await rejects(() => callAs(h.broker(), "warehouses.list", {}));
		assert.equal(err.code, 401);
	});
});
