/**
 * Shared setup of the `warehouses` unit specs (spec §2.9, §3, §4.5, §7, §8): a
 * broker running the real "warehouses" and "simulator" services (sandbox
 * courier HTTP server on a free port) plus steerable fakes of `intake`,
 * `rates` and `pincode` answering the contract shapes of lib/contracts,
 * against the real PostgreSQL and Redis of the test run.
 *
 * Each spec file calls {@link useWarehouses} once inside its `describe`.
 */
import { strict as assert } from "node:assert";
import { type Context, ServiceBroker } from "moleculer";
import type { CourierInfo, ParamsOf, PincodeInfo, ResultOf, WarehouseUsage } from "../../../lib/contracts";
import type { Role } from "../../../lib/platform/auth";
import { getSequelize, select } from "../../../lib/platform/db";
import { loadServiceSchema } from "../../../lib/platform/system";
import { as, rejects, testBrokerOptions } from "../../helpers/broker";
import { callAs, fakeService } from "../../helpers/call";
import { address, COURIERS, warehouseBody } from "../../helpers/fixtures";
import { freePort } from "../../helpers/net";

/** The active couriers `rates.listCouriers` answers: Sandbox Express (1) and Sandbox Reverse (3). */
export const ACTIVE_COURIERS: CourierInfo[] = COURIERS.filter(
	(c) => c.logistic_id === 1 || c.logistic_id === 3,
);

/** Pincodes the fake directory knows ("111111" is known here but refused by the sandbox couriers). */
const KNOWN_PINCODES = new Set(["110001", "400001", "560001", "122001", "600001", "111111"]);

/** Steerable state of the fakes (reset to "up" after each test). */
export const fake = {
	intakeDown: false,
	ratesDown: false,
	pincodeDown: false,
	usage: new Map<number, WarehouseUsage>(),
	adopt: new Map<number, number>(),
	shipped: new Map<number, Record<string, number>>(),
	adoptCalls: [] as ParamsOf<"intake.adoptOrphanOrders">[],
	shippedCalls: [] as ParamsOf<"intake.shippedCounts">[],
	usageCalls: [] as ParamsOf<"intake.warehouseUsage">[],
	/** `rates.listCouriers` calls refused while `ratesDown` */
	refusedCourierLists: 0,
	/** `warehouses.changed` broadcasts received (what intake's resolution cache listens to). */
	changes: [] as { sender_id: number; id: number }[],
};

const down = () => {
	const e = new Error("service unavailable (fake)");
	(e as any).code = 503;
	return e;
};

const bengaluru = address();

/** A valid create body: Bengaluru (560001), forward address mirrored to the return leg. */
export function valid(over: Record<string, unknown> = {}): Record<string, unknown> {
	return warehouseBody({
		contact_person_name: "Ravi Kumar",
		contact_no: bengaluru.phone,
		contact_email: "ops@example.in",
		address_line_1: bengaluru.address_1,
		address_line_2: "Near Metro Station",
		city: bengaluru.city,
		state: bengaluru.state,
		pincode: bengaluru.pincode,
		gstin: "29ABCDE1234F1Z5",
		warehouse_type: "pickup",
		is_return_same: true,
		...over,
	});
}

/** A complete, valid return block (Mumbai, 400001). */
export const RETURN_BLOCK = {
	return_warehouse_name: "Returns Desk",
	return_contact_person_name: "Asha Rao",
	return_contact_no: "9123456780",
	return_contact_email: "returns@example.in",
	return_address_line_1: "44 Linking Road, Bandra West",
	return_address_line_2: null,
	return_city: "Mumbai",
	return_state: "Maharashtra",
	return_pincode: "400001",
};

/** Every field of a §2.9 list row. */
export const ROW_FIELDS = [
	"id",
	"warehouse_name",
	"contact_person_name",
	"contact_no",
	"contact_email",
	"address_line_1",
	"address_line_2",
	"city",
	"state",
	"pincode",
	"return_warehouse_name",
	"return_contact_person_name",
	"return_contact_no",
	"return_contact_email",
	"return_address_line_1",
	"return_address_line_2",
	"return_city",
	"return_state",
	"return_pincode",
	"is_return_same",
	"active",
	"retired",
	"is_default",
	"gstin",
	"warehouse_code",
	"warehouse_type",
	"courier_registered",
	"courier_registrations",
	"shipped_30d",
];

const fakeIntake = fakeService("intake", {
	warehouseUsage(ctx) {
		if (fake.intakeDown) throw down();
		fake.usageCalls.push(ctx.params);
		return (
			fake.usage.get(Number(ctx.params.warehouse_id)) ?? {
				count: 0,
				unshipped: 0,
				awaiting_pickup: 0,
				order_ids: [],
			}
		);
	},
	adoptOrphanOrders(ctx) {
		if (fake.intakeDown) throw down();
		fake.adoptCalls.push(ctx.params);
		return { count: fake.adopt.get(Number(ctx.params.sender_id)) ?? 0 };
	},
	shippedCounts(ctx) {
		if (fake.intakeDown) throw down();
		fake.shippedCalls.push(ctx.params);
		return fake.shipped.get(Number(ctx.params.sender_id)) ?? {};
	},
});

const fakeRates = fakeService("rates", {
	listCouriers() {
		if (fake.ratesDown) {
			fake.refusedCourierLists++;
			throw down();
		}
		return ACTIVE_COURIERS;
	},
});

const info = (p: unknown): PincodeInfo => {
	const pincode = String(p);
	return KNOWN_PINCODES.has(pincode)
		? { found: true, pincode, city: "City", state: "State" }
		: { found: false, pincode, city: "", state: "" };
};

const fakePincode = fakeService("pincode", {
	lookupMany(ctx) {
		if (fake.pincodeDown) throw down();
		return Object.fromEntries(ctx.params.pincodes.map((p) => [String(p), info(p)]));
	},
});

const changesListener = {
	name: "changes-listener",
	events: {
		"warehouses.changed"(ctx: Context<{ sender_id: number; id: number }>) {
			fake.changes.push(ctx.params);
		},
	},
};

/** What {@link useWarehouses} gives a spec: calls as a merchant and reads of the stored rows. */
export interface WarehousesHarness {
	broker(): ServiceBroker;
	create(sender: number, body: Record<string, unknown>, role?: Role): Promise<ResultOf<"warehouses.create">>;
	list(sender: number, params?: Record<string, unknown>): Promise<ResultOf<"warehouses.list">>;
	update(
		sender: number,
		id: unknown,
		body: Record<string, unknown>,
		role?: Role,
	): Promise<ResultOf<"warehouses.update">>;
	remove(sender: number, id: unknown, role?: Role): Promise<ResultOf<"warehouses.remove">>;
	/** the stored `warehouses.warehouses` row */
	rowOf(id: number): Promise<any>;
	/** ids of the account's non-retired default warehouses */
	defaultsOf(sender: number): Promise<number[]>;
}

/**
 * Registers `before` / `after` / `afterEach` hooks in the calling `describe`
 * that start one broker (warehouses, simulator, fakes) for the file, stop it,
 * and put the fakes back up after each test.
 */
export function useWarehouses(): WarehousesHarness {
	let broker: ServiceBroker;
	const db = () => getSequelize();

	before(async () => {
		process.env.SANDBOX = "1";
		process.env.SANDBOX_COURIER_PORT = String(await freePort());
		delete process.env.SANDBOX_COURIER_URL;
		// The timer never fires during the run; sweeps are triggered through the action.
		process.env.WAREHOUSE_SWEEP_MS = "3600000";
		process.env.WAREHOUSE_REGISTRATION_STALE_MS = "60000";
		broker = new ServiceBroker(testBrokerOptions(false));
		broker.createService(loadServiceSchema("warehouses"));
		broker.createService(loadServiceSchema("simulator"));
		for (const s of [fakeIntake, fakeRates, fakePincode, changesListener]) broker.createService(s);
		await broker.start();
	});

	after(async () => {
		await broker?.stop();
	});

	afterEach(() => {
		fake.intakeDown = false;
		fake.ratesDown = false;
		fake.pincodeDown = false;
	});

	return {
		broker: () => broker,
		create: (sender, body, role = "merchant") => callAs(broker, "warehouses.create", body, as(sender, role)),
		list: (sender, params = {}) => callAs(broker, "warehouses.list", params, as(sender)),
		// the path id is a string on the wire; the specs also send other values on purpose
		update: (sender, id, body, role = "merchant") =>
			callAs(broker, "warehouses.update", { ...body, id: id as string }, as(sender, role)),
		remove: (sender, id, role = "merchant") =>
			callAs(broker, "warehouses.remove", { id: id as string }, as(sender, role)),
		rowOf: async (id) =>
			(await select<any>(db(), "SELECT * FROM warehouses.warehouses WHERE id = $1", [id]))[0],
		defaultsOf: async (sender) =>
			(
				await select<{ id: string }>(
					db(),
					"SELECT id FROM warehouses.warehouses WHERE sender_id = $1 AND is_default AND NOT retired",
					[sender],
				)
			).map((r) => Number(r.id)),
	};
}

/** Asserts a 400 validation_failed with exactly `details`. */
export async function expectInvalid(p: Promise<unknown>, details: string[]): Promise<void> {
	const err = await rejects(() => p);
	assert.equal(err.code, 400, `expected 400, got ${err.code} ${err.message}`);
	assert.equal(err.data?.body?.error, "validation_failed");
	assert.deepEqual(err.data.body.details, details);
	assert.equal(typeof err.data.body.message, "string");
}
