/**
 * Pickup requests at the courier (issue 28; docs/decisions/0107-pickup-requests.md): the
 * sandbox adapter's `requestPickup`, `reschedulePickup` and `cancelPickup` against the real
 * simulator over HTTP (lib/simulator/pickups.ts), each rule the simulator enforces seen as the
 * adapter's CourierRefused with the courier's words; and the Delhivery adapter having no
 * reschedule or cancel call (its published API has none).
 */
import assert from "node:assert/strict";
import type { ServiceBroker } from "moleculer";
import type { CourierInfo } from "../../lib/contracts";
import {
	adapterFor,
	CourierRefused,
	type PickupLocation,
	type PickupRequest,
	type SandboxAdapter,
} from "../../lib/couriers";
import { getSequelize, select } from "../../lib/platform/db";
import { addScan } from "../../lib/simulator/api";
import { rejects, startBroker } from "../helpers/broker";
import { useEnv } from "../helpers/env";
import { bookRequestFor, address as fixtureAddress, courier as fixtureCourier } from "../helpers/fixtures";
import { freePort } from "../helpers/net";

const run = Math.random().toString(36).slice(2, 8);
const WH = `WH-PICK-${run}`;
const courier: CourierInfo = fixtureCourier(1, "SBX Express", "sbx-express", { adapter: "sandbox" });
const address = fixtureAddress({ name: "Asha Traders" });
const location: PickupLocation = {
	warehouse_code: WH,
	warehouse_name: "Main",
	address,
	return_address: address,
};

/** The IST day of now plus `n` days. */
function istDayPlus(n: number): string {
	return new Date(Date.now() + 330 * 60_000 + n * 86_400_000).toISOString().slice(0, 10);
}

const req = (over: Partial<PickupRequest> = {}): PickupRequest => ({
	pickup_location_code: WH,
	date: istDayPlus(1),
	time: "10:00",
	expected_packages: 4,
	...over,
});

/** The simulator's row of a pickup id. */
async function simRow(id: string) {
	const [row] = await select<{ date: string; pickup_time: string; n: number; status: string }>(
		getSequelize(),
		`SELECT to_char(pickup_date, 'YYYY-MM-DD') AS date, pickup_time, expected_package_count AS n, status
		   FROM simulator.pickups WHERE pickup_id = $1::bigint`,
		[id],
	);
	return row;
}

describe("couriers: pickup requests (sandbox adapter against the simulator)", function () {
	this.timeout(30_000);
	let broker: ServiceBroker;
	const a = () => adapterFor(courier);
	useEnv({ SANDBOX: "1", SANDBOX_COURIER_DELAY_MS: "0" }, ["SANDBOX_COURIER_PORT"]);

	before(async () => {
		process.env.SANDBOX_COURIER_PORT = String(await freePort());
		delete process.env.SANDBOX_COURIER_URL;
		broker = await startBroker(["simulator"]);
		await a().registerWarehouse(location);
	});
	after(() => broker?.stop());

	it("requests a pickup: the courier's id, stored with the time as HH:mm:ss; the same location and day again is refused", async () => {
		const { pickup_id } = await (a() as SandboxAdapter).requestPickup(req());
		assert.match(pickup_id, /^\d+$/);
		assert.deepEqual(await simRow(pickup_id), {
			date: istDayPlus(1),
			pickup_time: "10:00:00",
			n: 4,
			status: "open",
		});
		const again = await rejects(() => (a() as SandboxAdapter).requestPickup(req({ time: "13:00" })));
		assert.ok(again instanceof CourierRefused);
		assert.equal(again.message, "Pickup request already exists for this location and date");
	});

	it("refuses with the courier's words: an unknown location, a past day, too many parcels", async () => {
		const s = a() as SandboxAdapter;
		const cases: [Partial<PickupRequest>, RegExp][] = [
			[{ pickup_location_code: "NOPE-1" }, /^ClientWarehouse matching query does not exist: NOPE-1$/],
			[{ date: istDayPlus(-1) }, /^Pickup date cannot be in past$/],
			[{ date: istDayPlus(2), expected_packages: 501 }, /^expected_package_count exceeds 500 for one pickup/],
		];
		for (const [over, words] of cases) {
			const err = await rejects(() => s.requestPickup(req(over)));
			assert.ok(err instanceof CourierRefused, String(err));
			assert.match(err.message, words);
		}
	});

	it("reschedules: the same id, the new day, time and count; onto a day already asked for: refused", async () => {
		const s = a() as SandboxAdapter;
		const { pickup_id } = await s.requestPickup(req({ date: istDayPlus(3) }));
		const moved = await s.reschedulePickup(
			pickup_id,
			req({ date: istDayPlus(4), time: "16:00", expected_packages: 9 }),
		);
		assert.equal(moved.pickup_id, pickup_id);
		assert.deepEqual(await simRow(pickup_id), {
			date: istDayPlus(4),
			pickup_time: "16:00:00",
			n: 9,
			status: "open",
		});
		const taken = await rejects(() => s.reschedulePickup(pickup_id, req({ date: istDayPlus(1) })));
		assert.equal(taken.message, "Pickup request already exists for this location and date");
		const unknown = await rejects(() => s.reschedulePickup("999999999999", req()));
		assert.equal(unknown.message, "Pickup request 999999999999 not found");
	});

	it("cancels (again: unchanged), and refuses to cancel or move a pickup already collected", async () => {
		const s = a() as SandboxAdapter;
		const { pickup_id } = await s.requestPickup(req({ date: istDayPlus(5) }));
		assert.deepEqual(await s.cancelPickup(pickup_id), { cancelled: true });
		assert.deepEqual(await s.cancelPickup(pickup_id), { cancelled: true });
		assert.equal((await simRow(pickup_id)).status, "cancelled");
		const moved = await rejects(() => s.reschedulePickup(pickup_id, req({ date: istDayPlus(6) })));
		assert.equal(moved.message, `Pickup request ${pickup_id} is cancelled`);

		// today's pickup, then a parcel of that location scanned as picked up today
		const today = await s.requestPickup(req({ date: istDayPlus(0), time: "23:00" }));
		const booked = await s.book(bookRequestFor(`pick-${run}`, WH, address));
		await addScan(getSequelize(), booked.awb_number, "picked_up");
		const done = await rejects(() => s.cancelPickup(today.pickup_id));
		assert.ok(done instanceof CourierRefused);
		assert.equal(done.message, `Pickup request ${today.pickup_id} was already picked up`);
		assert.equal((await simRow(today.pickup_id)).status, "open");
	});

	it("the Delhivery adapter offers a pickup request but no reschedule or cancel call (its API has none)", () => {
		const d = adapterFor({ ...courier, adapter: "delhivery", code: "sbx-delhivery" });
		assert.equal(typeof d.requestPickup, "function");
		assert.equal(d.reschedulePickup, undefined);
		assert.equal(d.cancelPickup, undefined);
	});
});
