/**
 * Unit tests of the `warehouses` service (spec §2.9, §3, §4.5, §7, §8) on a
 * broker running the real "warehouses" and "simulator" services (sandbox
 * courier HTTP server on a free port) plus steerable fakes of `intake`,
 * `rates` and `pincode` (faithful to lib/contracts.ts), against the real
 * PostgreSQL and Redis of the test run.
 */
import { strict as assert } from "node:assert";
import { ServiceBroker } from "moleculer";
import { type Role, userFor } from "../../lib/auth";
import { loadConfig } from "../../lib/config";
import type { CourierInfo, PincodeInfo, WarehouseUsage } from "../../lib/contracts";
import { getSequelize, select } from "../../lib/db";
import { loadServiceSchema } from "../../lib/system";
import brokerOptions from "../../moleculer.config";
import { as, newSender, rejects } from "../helpers/broker";
import { freePort } from "../helpers/net";

const EXPRESS: CourierInfo = {
	logistic_id: 1,
	logistic_name: "Sandbox Express",
	adapter: "sandbox",
	code: "sbx-express",
	forward: true,
	reverse: false,
	cod: true,
	default_priority: 1,
	active: true,
};
const REVERSE: CourierInfo = {
	logistic_id: 3,
	logistic_name: "Sandbox Reverse",
	adapter: "sandbox",
	code: "sbx-reverse",
	forward: false,
	reverse: true,
	cod: false,
	default_priority: 2,
	active: true,
};

/** Pincodes the fake directory knows ("111111" is known here but refused by the sandbox couriers). */
const KNOWN_PINCODES = new Set(["110001", "400001", "560001", "122001", "600001", "111111"]);

/** Steerable state of the fakes. */
const fake = {
	intakeDown: false,
	ratesDown: false,
	pincodeDown: false,
	usage: new Map<number, WarehouseUsage>(),
	adopt: new Map<number, number>(),
	shipped: new Map<number, Record<string, number>>(),
	adoptCalls: [] as { sender_id: number; warehouse_id: number }[],
	shippedCalls: [] as { sender_id: number; since: string }[],
	usageCalls: [] as { sender_id: number; warehouse_id: number }[],
	pincodeCalls: 0,
	/** `warehouses.changed` broadcasts received (what intake's resolution cache listens to). */
	changes: [] as { sender_id: number; id: number }[],
};

const down = () => {
	const e = new Error("service unavailable (fake)");
	(e as any).code = 503;
	return e;
};

async function until<T>(
	fn: () => Promise<T>,
	ok: (v: T) => boolean,
	what: string,
	timeoutMs = 25_000,
): Promise<T> {
	const end = Date.now() + timeoutMs;
	let last: T = await fn();
	while (!ok(last)) {
		if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(last)}`);
		await new Promise((r) => setTimeout(r, 150));
		last = await fn();
	}
	return last;
}

/** A valid create body (forward address mirrored to the return leg). */
function valid(over: Record<string, unknown> = {}): Record<string, unknown> {
	return {
		warehouse_name: `Main Warehouse ${Math.random().toString(36).slice(2, 8)}`,
		contact_person_name: "Ravi Kumar",
		contact_no: "9876543210",
		contact_email: "ops@example.in",
		address_line_1: "12 MG Road, Shivajinagar",
		address_line_2: "Near Metro Station",
		city: "Bengaluru",
		state: "Karnataka",
		pincode: "560001",
		gstin: "29ABCDE1234F1Z5",
		warehouse_type: "pickup",
		is_return_same: true,
		...over,
	};
}

/** A complete, valid return block. */
const RETURN_BLOCK = {
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

const ROW_FIELDS = [
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

describe("warehouses service", function () {
	this.timeout(60_000);
	let broker: ServiceBroker;
	const db = () => getSequelize();

	before(async () => {
		process.env.SANDBOX = "1";
		process.env.SANDBOX_COURIER_PORT = String(await freePort());
		delete process.env.SANDBOX_COURIER_URL;
		// The timer never fires during the run; sweeps are triggered through the action.
		process.env.WAREHOUSE_SWEEP_MS = "3600000";
		process.env.WAREHOUSE_REGISTRATION_STALE_MS = "60000";
		const cfg = loadConfig();
		broker = new ServiceBroker(
			brokerOptions(
				{ ...cfg, transporter: undefined },
				{ logger: process.env.TEST_LOGS ? undefined : false },
			),
		);
		broker.createService(loadServiceSchema("warehouses"));
		broker.createService(loadServiceSchema("simulator"));
		broker.createService({
			name: "intake",
			actions: {
				warehouseUsage(ctx: any): WarehouseUsage {
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
				adoptOrphanOrders(ctx: any): { count: number } {
					if (fake.intakeDown) throw down();
					fake.adoptCalls.push(ctx.params);
					return { count: fake.adopt.get(Number(ctx.params.sender_id)) ?? 0 };
				},
				shippedCounts(ctx: any): Record<string, number> {
					if (fake.intakeDown) throw down();
					fake.shippedCalls.push(ctx.params);
					return fake.shipped.get(Number(ctx.params.sender_id)) ?? {};
				},
			},
		});
		broker.createService({
			name: "rates",
			actions: {
				listCouriers(): CourierInfo[] {
					if (fake.ratesDown) throw down();
					return [EXPRESS, REVERSE];
				},
			},
		});
		const info = (p: unknown): PincodeInfo => {
			const pincode = String(p);
			return KNOWN_PINCODES.has(pincode)
				? { found: true, pincode, city: "City", state: "State" }
				: { found: false, pincode, city: "", state: "" };
		};
		broker.createService({
			name: "pincode",
			actions: {
				lookupMany(ctx: any): Record<string, PincodeInfo> {
					fake.pincodeCalls++;
					if (fake.pincodeDown) throw down();
					return Object.fromEntries((ctx.params.pincodes as unknown[]).map((p) => [String(p), info(p)]));
				},
				lookup(ctx: any): PincodeInfo {
					if (fake.pincodeDown) throw down();
					return info(ctx.params.pincode);
				},
			},
		});
		broker.createService({
			name: "changes-listener",
			events: {
				"warehouses.changed"(ctx: any) {
					fake.changes.push(ctx.params);
				},
			},
		});
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

	const create = (sender: number, body: Record<string, unknown>, role: Role = "merchant") =>
		broker.call<any, any>("warehouses.create", body, as(sender, role));
	const list = (sender: number, params: Record<string, unknown> = {}) =>
		broker.call<any, any>("warehouses.list", params, as(sender));
	const update = (sender: number, id: unknown, body: Record<string, unknown>, role: Role = "merchant") =>
		broker.call<any, any>("warehouses.update", { ...body, id }, as(sender, role));
	const remove = (sender: number, id: unknown, role: Role = "merchant") =>
		broker.call<any, any>("warehouses.remove", { id }, as(sender, role));
	const rowOf = async (id: number) =>
		(await select<any>(db(), "SELECT * FROM warehouses.warehouses WHERE id = $1", [id]))[0];
	const defaultsOf = async (sender: number) =>
		(
			await select<{ id: string }>(
				db(),
				"SELECT id FROM warehouses.warehouses WHERE sender_id = $1 AND is_default AND NOT retired",
				[sender],
			)
		).map((r) => Number(r.id));

	/** Asserts a 400 validation_failed with exactly `details`. */
	async function expectInvalid(p: Promise<unknown>, details: string[]): Promise<void> {
		const err = await rejects(() => p);
		assert.equal(err.code, 400, `expected 400, got ${err.code} ${err.message}`);
		assert.equal(err.data?.body?.error, "validation_failed");
		assert.deepEqual(err.data.body.details, details);
		assert.equal(typeof err.data.body.message, "string");
	}

	describe("create validation (§2.9, §7, §8)", () => {
		const long = (n: number) => "W".repeat(n);
		const cases: [string, Record<string, unknown>, string[]][] = [
			["2-character name", { warehouse_name: "ab" }, ["warehouse_name: must be at least 3 characters"]],
			[
				"192-character name",
				{ warehouse_name: long(192) },
				["warehouse_name: must be at most 191 characters"],
			],
			[
				"name of 2 after trimming",
				{ warehouse_name: "   ab   " },
				["warehouse_name: must be at least 3 characters"],
			],
			["missing name", { warehouse_name: undefined }, ["warehouse_name: is required"]],
			["blank name", { warehouse_name: "    " }, ["warehouse_name: is required"]],
			["null name", { warehouse_name: null }, ["warehouse_name: is required"]],
			["numeric name", { warehouse_name: 12345 }, ["warehouse_name: must be a string"]],
			[
				"missing contact_person_name",
				{ contact_person_name: undefined },
				["contact_person_name: is required"],
			],
			[
				"2-character contact_person_name",
				{ contact_person_name: "Al" },
				["contact_person_name: must be at least 3 characters"],
			],
			["missing contact_no", { contact_no: undefined }, ["contact_no: is required"]],
			["9-digit contact_no", { contact_no: "987654321" }, ["contact_no: must be 10 digits"]],
			["11-digit contact_no", { contact_no: "98765432101" }, ["contact_no: must be 10 digits"]],
			["contact_no with a dash", { contact_no: "98765-4321" }, ["contact_no: must be 10 digits"]],
			["contact_no with +91", { contact_no: "+919876543210" }, ["contact_no: must be 10 digits"]],
			["missing address_line_1", { address_line_1: undefined }, ["address_line_1: is required"]],
			[
				"sparse address_line_1",
				{ address_line_1: "Plot 5" },
				["address_line_1: must be at least 10 characters"],
			],
			[
				"256-character address_line_1",
				{ address_line_1: long(256) },
				["address_line_1: must be at most 255 characters"],
			],
			["missing city", { city: undefined }, ["city: is required"]],
			["blank state", { state: "  " }, ["state: is required"]],
			["101-character city", { city: long(101) }, ["city: must be at most 100 characters"]],
			["missing pincode", { pincode: undefined }, ["pincode: is required"]],
			["5-digit pincode", { pincode: "56000" }, ["pincode: must be 6 digits"]],
			["7-digit pincode", { pincode: "5600011" }, ["pincode: must be 6 digits"]],
			["pincode with a letter", { pincode: "56000A" }, ["pincode: must be 6 digits"]],
			["unknown pincode", { pincode: "999999" }, ["pincode: not a known Indian pincode"]],
			[
				"malformed contact_email",
				{ contact_email: "ops@" },
				["contact_email: must be a valid email address"],
			],
			[
				"lower-case gstin",
				{ gstin: "29abcde1234f1z5" },
				["gstin: must be a valid GSTIN (15 characters, e.g. 27AAPFU0939F1ZV)"],
			],
			[
				"gstin with 0 in position 13",
				{ gstin: "29ABCDE1234F0Z5" },
				["gstin: must be a valid GSTIN (15 characters, e.g. 27AAPFU0939F1ZV)"],
			],
			[
				"gstin without Z in position 14",
				{ gstin: "29ABCDE1234F1Y5" },
				["gstin: must be a valid GSTIN (15 characters, e.g. 27AAPFU0939F1ZV)"],
			],
			[
				"14-character gstin",
				{ gstin: "29ABCDE1234F1Z" },
				["gstin: must be a valid GSTIN (15 characters, e.g. 27AAPFU0939F1ZV)"],
			],
			[
				"gstin with letters for the state code",
				{ gstin: "AAABCDE1234F1Z5" },
				["gstin: must be a valid GSTIN (15 characters, e.g. 27AAPFU0939F1ZV)"],
			],
			[
				"unknown warehouse_type",
				{ warehouse_type: "warehouse" },
				["warehouse_type: must be one of fulfillment_pickup, pickup, fulfillment"],
			],
			["is_return_same not a boolean", { is_return_same: "yes" }, ["is_return_same: must be a boolean"]],
			["is_default not a boolean", { is_default: "maybe" }, ["is_default: must be a boolean"]],
			[
				"is_return_same false without a return block",
				{ is_return_same: false },
				[
					"return_contact_person_name: is required",
					"return_contact_no: is required",
					"return_address_line_1: is required",
					"return_city: is required",
					"return_state: is required",
					"return_pincode: is required",
				],
			],
			[
				"is_return_same absent without a return block",
				{ is_return_same: undefined },
				[
					"return_contact_person_name: is required",
					"return_contact_no: is required",
					"return_address_line_1: is required",
					"return_city: is required",
					"return_state: is required",
					"return_pincode: is required",
				],
			],
			[
				"bad return leg fields",
				{
					is_return_same: false,
					...RETURN_BLOCK,
					return_contact_no: "12345",
					return_pincode: "4000",
					return_address_line_1: "Short",
					return_contact_person_name: "Jo",
					return_contact_email: "nope",
					return_warehouse_name: "R",
				},
				[
					"return_contact_person_name: must be at least 3 characters",
					"return_contact_no: must be 10 digits",
					"return_address_line_1: must be at least 10 characters",
					"return_pincode: must be 6 digits",
					"return_warehouse_name: must be at least 3 characters",
					"return_contact_email: must be a valid email address",
				],
			],
			[
				"unknown return pincode",
				{ is_return_same: false, ...RETURN_BLOCK, return_pincode: "999999" },
				["return_pincode: not a known Indian pincode"],
			],
			[
				"several failures",
				{ warehouse_name: "ab", contact_no: "1", pincode: "x", gstin: "bad", city: "" },
				[
					"warehouse_name: must be at least 3 characters",
					"contact_no: must be 10 digits",
					"city: is required",
					"pincode: must be 6 digits",
					"gstin: must be a valid GSTIN (15 characters, e.g. 27AAPFU0939F1ZV)",
				],
			],
		];
		for (const [name, over, details] of cases) {
			it(`rejects ${name}`, async () => {
				const sender = newSender();
				const body = valid(over);
				for (const k of Object.keys(over)) if (over[k] === undefined) delete body[k];
				await expectInvalid(create(sender, body), details);
				const rows = await select(db(), "SELECT 1 FROM warehouses.warehouses WHERE sender_id = $1", [sender]);
				assert.equal(rows.length, 0, "nothing stored");
			});
		}

		it("answers one detail as the message too", async () => {
			const err = await rejects(() => create(newSender(), valid({ contact_no: "1" })));
			assert.equal(err.data.body.message, "contact_no: must be 10 digits");
		});

		const accepted: [string, Record<string, unknown>][] = [
			["a 3-character name", { warehouse_name: "Abc" }],
			["a 191-character name", { warehouse_name: long(191) }],
			[
				"no optional fields",
				{ contact_email: undefined, address_line_2: undefined, gstin: undefined, warehouse_type: undefined },
			],
			["blank optional fields", { contact_email: "", address_line_2: "  ", gstin: null }],
			["a numeric contact_no and pincode", { contact_no: 9876543210, pincode: 560001 }],
			["is_return_same 1", { is_return_same: 1 }],
			['is_return_same "true"', { is_return_same: "true" }],
			['is_return_same "false" with a return block', { is_return_same: "false", ...RETURN_BLOCK }],
			["is_return_same 0 with a return block", { is_return_same: 0, ...RETURN_BLOCK }],
			["warehouse_type fulfillment", { warehouse_type: "fulfillment" }],
			["warehouse_type fulfillment_pickup", { warehouse_type: "fulfillment_pickup" }],
		];
		for (const [name, over] of accepted) {
			it(`accepts ${name}`, async () => {
				const body = valid(over);
				for (const k of Object.keys(over)) if (over[k] === undefined) delete body[k];
				const res = await create(newSender(), body);
				assert.ok(Number.isInteger(res.data.id) && res.data.id > 0);
			});
		}

		it("stores a separate return leg when is_return_same is false, and mirrors it when true", async () => {
			const sender = newSender();
			const sep = await create(sender, valid({ is_return_same: "false", ...RETURN_BLOCK }));
			const r1 = await rowOf(sep.data.id);
			assert.equal(r1.is_return_same, false);
			assert.equal(r1.return_city, "Mumbai");
			assert.equal(r1.return_pincode, "400001");
			assert.equal(r1.return_contact_no, "9123456780");
			assert.equal(r1.return_warehouse_name, "Returns Desk");

			const same = await create(
				sender,
				valid({ is_return_same: 1, return_city: "Ignored", contact_no: 9876543210 }),
			);
			const r2 = await rowOf(same.data.id);
			assert.equal(r2.is_return_same, true);
			assert.equal(r2.contact_no, "9876543210");
			assert.equal(r2.return_city, "Bengaluru");
			assert.equal(r2.return_address_line_1, r2.address_line_1);
			assert.equal(r2.return_contact_person_name, "Ravi Kumar");
			assert.equal(r2.return_warehouse_name, r2.warehouse_name);
			assert.equal(r2.return_contact_email, "ops@example.in");
		});

		it("trims names and stores the default warehouse_type", async () => {
			const sender = newSender();
			const res = await create(
				sender,
				valid({ warehouse_name: "  Trimmed Name  ", warehouse_type: undefined }),
			);
			const row = await rowOf(res.data.id);
			assert.equal(row.warehouse_name, "Trimmed Name");
			assert.equal(row.warehouse_type, "fulfillment_pickup");
		});

		it("skips the pincode directory check when the pincode service is down", async () => {
			fake.pincodeDown = true;
			const res = await create(newSender(), valid({ pincode: "999998" }));
			assert.ok(res.data.id > 0);
		});
	});

	describe("POST /v1/warehouses", () => {
		it("answers 201 {data:{id, orders_repaired}} and commits the row for the token's account", async () => {
			const sender = newSender();
			const other = newSender();
			const opts = as(sender);
			const res = await broker.call<any, any>("warehouses.create", valid({ sender_id: other }), opts);
			assert.deepEqual(Object.keys(res), ["data"]);
			assert.deepEqual(Object.keys(res.data).sort(), ["id", "orders_repaired"]);
			assert.equal(res.data.orders_repaired, 0);
			assert.equal((opts.meta as any).$statusCode, 201);
			const row = await rowOf(res.data.id);
			assert.equal(Number(row.sender_id), sender);
			assert.equal(row.warehouse_code, `WH${sender}-${res.data.id}`);
			assert.equal(row.version, 1);
			assert.equal(row.active, true);
			assert.equal(row.retired, false);
			assert.equal(row.is_default, true);
			assert.equal(row.warehouse_type, "pickup");
			assert.equal(row.gstin, "29ABCDE1234F1Z5");
		});

		it("reports the orders adopted by intake as orders_repaired", async () => {
			const sender = newSender();
			fake.adopt.set(sender, 3);
			const res = await create(sender, valid());
			assert.equal(res.data.orders_repaired, 3);
			assert.deepEqual(
				fake.adoptCalls.find((c) => c.sender_id === sender),
				{ sender_id: sender, warehouse_id: res.data.id },
			);
		});

		it("still creates (orders_repaired 0) when intake cannot be reached", async () => {
			const sender = newSender();
			fake.adopt.set(sender, 5);
			fake.intakeDown = true;
			const res = await create(sender, valid());
			assert.equal(res.data.orders_repaired, 0);
			assert.ok(await rowOf(res.data.id));
		});

		it("rejects a duplicate name (case-insensitive, trimmed) with 400, per account only", async () => {
			const sender = newSender();
			await create(sender, valid({ warehouse_name: "Okhla Hub" }));
			await expectInvalid(create(sender, valid({ warehouse_name: "  okhla HUB " })), [
				"warehouse_name: already exists",
			]);
			const res = await create(newSender(), valid({ warehouse_name: "Okhla Hub" }));
			assert.ok(res.data.id > 0);
		});

		it("allows a deleted warehouse's name again", async () => {
			const sender = newSender();
			const a = await create(sender, valid({ warehouse_name: "Reused Name" }));
			await remove(sender, a.data.id);
			const b = await create(sender, valid({ warehouse_name: "Reused Name" }));
			assert.notEqual(b.data.id, a.data.id);
		});
	});

	describe("access (§5)", () => {
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
				const listed = await broker.call<any, any>("warehouses.list", {}, as(sender, role));
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
			const err = await rejects(() => broker.call("warehouses.create", valid(), { meta: { user } }));
			assert.equal(err.code, 403);
			assert.deepEqual(
				{ error: err.data.body.error, cap: err.data.body.cap },
				{ error: "forbidden", cap: "warehouses.write" },
			);
		});

		it("merchant_ops may write; no user → 401", async () => {
			const res = await create(newSender(), valid(), "merchant_ops");
			assert.ok(res.data.id > 0);
			const err = await rejects(() => broker.call("warehouses.list", {}));
			assert.equal(err.code, 401);
		});
	});

	describe("GET /v1/warehouses", () => {
		it("answers every §2.9 field, default first then newest, with shipped_30d from intake", async () => {
			const sender = newSender();
			const first = (await create(sender, valid({ warehouse_name: "First" }))).data.id;
			const second = (
				await create(sender, valid({ warehouse_name: "Second", is_return_same: false, ...RETURN_BLOCK }))
			).data.id;
			const third = (await create(sender, valid({ warehouse_name: "Third", gstin: undefined }))).data.id;
			fake.shipped.set(sender, { [String(second)]: 7, [String(first)]: 2 });
			const before = Date.now();
			const res = await list(sender);
			assert.deepEqual(
				res.data.map((r: any) => r.id),
				[first, third, second],
			);
			for (const row of res.data) for (const f of ROW_FIELDS) assert.ok(f in row, `row has ${f}`);
			const byId = new Map(res.data.map((r: any) => [r.id, r]));
			const s: any = byId.get(second);
			assert.equal(s.shipped_30d, 7);
			assert.equal((byId.get(first) as any).shipped_30d, 2);
			assert.equal((byId.get(third) as any).shipped_30d, 0);
			assert.equal(s.warehouse_name, "Second");
			assert.equal(s.contact_person_name, "Ravi Kumar");
			assert.equal(s.contact_no, "9876543210");
			assert.equal(s.contact_email, "ops@example.in");
			assert.equal(s.address_line_1, "12 MG Road, Shivajinagar");
			assert.equal(s.address_line_2, "Near Metro Station");
			assert.equal(s.city, "Bengaluru");
			assert.equal(s.state, "Karnataka");
			assert.equal(s.pincode, "560001");
			assert.equal(s.is_return_same, false);
			assert.equal(s.return_warehouse_name, "Returns Desk");
			assert.equal(s.return_contact_person_name, "Asha Rao");
			assert.equal(s.return_contact_no, "9123456780");
			assert.equal(s.return_contact_email, "returns@example.in");
			assert.equal(s.return_address_line_1, "44 Linking Road, Bandra West");
			assert.equal(s.return_address_line_2, null);
			assert.equal(s.return_city, "Mumbai");
			assert.equal(s.return_state, "Maharashtra");
			assert.equal(s.return_pincode, "400001");
			assert.equal(s.active, true);
			assert.equal(s.retired, false);
			assert.equal(s.is_default, false);
			assert.equal(s.gstin, "29ABCDE1234F1Z5");
			assert.equal((byId.get(third) as any).gstin, null);
			assert.equal(s.warehouse_code, `WH${sender}-${second}`);
			assert.equal(s.warehouse_type, "pickup");
			assert.equal(typeof s.courier_registered, "boolean");
			assert.deepEqual(
				s.courier_registrations.map((r: any) => r.logistic_id),
				[1, 3],
			);
			const call = fake.shippedCalls.filter((c) => c.sender_id === sender).at(-1)!;
			const since = Date.parse(call.since);
			assert.ok(Math.abs(before - 30 * 86_400_000 - since) < 60_000, "since is now - 30 days");
		});

		it("answers shipped_30d null when intake cannot be reached", async () => {
			const sender = newSender();
			await create(sender, valid());
			fake.intakeDown = true;
			const res = await list(sender);
			assert.equal(res.data.length, 1);
			assert.equal(res.data[0].shipped_30d, null);
		});

		it("shows only the caller's rows; include=inactive adds retired ones; unknown include values are ignored", async () => {
			const sender = newSender();
			const keep = (await create(sender, valid())).data.id;
			const gone = (await create(sender, valid())).data.id;
			await remove(sender, gone);
			await create(newSender(), valid());
			assert.deepEqual(
				(await list(sender)).data.map((r: any) => r.id),
				[keep],
			);
			assert.deepEqual(
				(await list(sender, { include: "bogus" })).data.map((r: any) => r.id),
				[keep],
			);
			const all = await list(sender, { include: "foo, INACTIVE" });
			assert.deepEqual(
				all.data.map((r: any) => r.id),
				[keep, gone],
			);
			const retired = all.data[1];
			assert.equal(retired.retired, true);
			assert.equal(retired.active, false);
			assert.equal(retired.is_default, false);
		});

		it("answers an empty list for a new account", async () => {
			assert.deepEqual(await list(newSender()), { data: [] });
		});
	});

	describe("default warehouse", () => {
		it("keeps exactly one default per account through create, PATCH and DELETE", async () => {
			const sender = newSender();
			const a = (await create(sender, valid({ is_default: false }))).data.id;
			assert.deepEqual(
				await defaultsOf(sender),
				[a],
				"the first warehouse becomes default even when is_default:false",
			);
			const b = (await create(sender, valid())).data.id;
			assert.deepEqual(await defaultsOf(sender), [a]);
			const c = (await create(sender, valid({ is_default: true }))).data.id;
			assert.deepEqual(await defaultsOf(sender), [c], "is_default:true moves the default");
			const res = await update(sender, a, { is_default: "true" });
			assert.equal(res.data.is_default, true);
			assert.deepEqual(await defaultsOf(sender), [a]);
			assert.equal((await list(sender)).data[0].id, a, "default listed first");
			const unset = await update(sender, a, { is_default: false });
			assert.equal(unset.data.is_default, false, "the answer is the row after the change");
			assert.deepEqual(await defaultsOf(sender), [b], "unsetting hands the default to the oldest other");
			await remove(sender, b);
			assert.deepEqual(await defaultsOf(sender), [a], "deleting the default promotes the oldest remaining");
			await remove(sender, a);
			assert.deepEqual(await defaultsOf(sender), [c]);
			const res2 = await update(sender, c, { is_default: false });
			assert.equal(res2.data.is_default, true, "the only warehouse stays default");
			await remove(sender, c);
			assert.deepEqual(await defaultsOf(sender), []);
			const d = (await create(sender, valid())).data.id;
			assert.deepEqual(await defaultsOf(sender), [d]);
		});

		it("keeps one default under concurrent first creates", async () => {
			const sender = newSender();
			const results = await Promise.all([1, 2, 3, 4].map(() => create(sender, valid())));
			assert.equal(results.length, 4);
			assert.equal((await defaultsOf(sender)).length, 1);
		});
	});

	describe("PATCH /v1/warehouses/:id", () => {
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
			await until(
				async () => fake.changes.filter((c) => c.sender_id === sender && c.id === id).length,
				(n) => n === 1,
				"warehouses.changed after PATCH",
			);
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
			await expectInvalid(update(sender, id, { warehouse_name: "TAKEN" }), [
				"warehouse_name: already exists",
			]);
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

	describe("DELETE /v1/warehouses/:id", () => {
		it("soft-deletes: 200 {data:{id, deleted:1}}", async () => {
			const sender = newSender();
			const id = (await create(sender, valid())).data.id;
			const res = await remove(sender, String(id));
			assert.deepEqual(res, { data: { id, deleted: 1 } });
			const row = await rowOf(id);
			assert.equal(row.retired, true);
			assert.equal(row.active, false);
			assert.ok(row.retired_at instanceof Date);
		});

		it("answers 404 not_found for foreign, missing, already deleted and malformed ids", async () => {
			const sender = newSender();
			const foreign = (await create(newSender(), valid())).data.id;
			const id = (await create(sender, valid())).data.id;
			await remove(sender, id);
			for (const bad of [foreign, 987654321, id, "x1", "2.0", 0]) {
				const err = await rejects(() => remove(sender, bad));
				assert.equal(err.code, 404, `id ${bad}`);
				assert.deepEqual(Object.keys(err.data.body).sort(), ["error", "message"]);
				assert.equal(err.data.body.error, "not_found");
			}
			assert.equal((await rowOf(foreign)).retired, false);
		});

		it("answers 409 warehouse_in_use with at most 20 order_ids while orders ship from it", async () => {
			const sender = newSender();
			const id = (await create(sender, valid())).data.id;
			const ids = Array.from({ length: 25 }, (_, i) => 5000 + i);
			fake.usage.set(id, { count: 25, unshipped: 18, awaiting_pickup: 7, order_ids: ids });
			const err = await rejects(() => remove(sender, id));
			assert.equal(err.code, 409);
			const body = err.data.body;
			assert.equal(body.error, "warehouse_in_use");
			assert.equal(typeof body.message, "string");
			assert.equal(body.count, 25);
			assert.equal(body.unshipped, 18);
			assert.equal(body.awaiting_pickup, 7);
			assert.deepEqual(body.order_ids, ids.slice(0, 20));
			assert.equal((await rowOf(id)).retired, false);
			fake.usage.delete(id);
			assert.deepEqual(await remove(sender, id), { data: { id, deleted: 1 } });
		});

		it("broadcasts warehouses.changed after a delete, not after a refused one", async () => {
			const sender = newSender();
			const id = (await create(sender, valid())).data.id;
			fake.usage.set(id, { count: 1, unshipped: 1, awaiting_pickup: 0, order_ids: [77] });
			await rejects(() => remove(sender, id));
			fake.usage.delete(id);
			await remove(sender, id);
			await until(
				async () => fake.changes.filter((c) => c.sender_id === sender && c.id === id).length,
				(n) => n >= 1,
				"warehouses.changed after DELETE",
			);
			assert.equal(fake.changes.filter((c) => c.sender_id === sender && c.id === id).length, 1);
		});

		it("two concurrent deletes: one 200, one 404; the default moves once", async () => {
			const sender = newSender();
			const id = (await create(sender, valid())).data.id;
			const other = (await create(sender, valid())).data.id;
			const results = await Promise.allSettled([remove(sender, id), remove(sender, id)]);
			const ok = results.filter((r) => r.status === "fulfilled") as PromiseFulfilledResult<any>[];
			const failed = results.filter((r) => r.status === "rejected") as PromiseRejectedResult[];
			assert.equal(ok.length, 1);
			assert.deepEqual(ok[0].value, { data: { id, deleted: 1 } });
			assert.equal(failed.length, 1);
			assert.equal(failed[0].reason.code, 404);
			assert.equal(failed[0].reason.data.body.error, "not_found");
			assert.deepEqual(await defaultsOf(sender), [other]);
		});

		it("answers 404 before asking intake (a foreign id is 404 even while intake is down)", async () => {
			const sender = newSender();
			const foreign = (await create(newSender(), valid())).data.id;
			fake.intakeDown = true;
			const err = await rejects(() => remove(sender, foreign));
			assert.equal(err.code, 404);
			assert.equal(err.data.body.error, "not_found");
			fake.intakeDown = false;
			const own = (await create(sender, valid())).data.id;
			await remove(sender, own);
			assert.deepEqual(
				fake.usageCalls.filter((c) => c.sender_id === sender),
				[{ sender_id: sender, warehouse_id: own }],
				"intake asked about the caller's warehouse only",
			);
		});

		it("answers 503 service_unavailable and keeps the row when intake cannot be asked", async () => {
			const sender = newSender();
			const id = (await create(sender, valid())).data.id;
			fake.intakeDown = true;
			const err = await rejects(() => remove(sender, id));
			assert.equal(err.code, 503);
			assert.equal(err.data.body.error, "service_unavailable");
			assert.equal((await rowOf(id)).retired, false);
		});
	});

	describe("internal reads", () => {
		it("warehouses.resolve answers the caller's active warehouse or null", async () => {
			const sender = newSender();
			const id = (await create(sender, valid())).data.id;
			const row = await broker.call<any, any>("warehouses.resolve", { sender_id: sender, id });
			assert.equal(row.id, id);
			assert.equal(row.warehouse_code, `WH${sender}-${id}`);
			assert.equal(row.return_pincode, "560001");
			assert.equal(await broker.call("warehouses.resolve", { sender_id: newSender(), id }), null);
			assert.equal(await broker.call("warehouses.resolve", { sender_id: sender, id: "nope" }), null);
			assert.equal(
				(await broker.call<any, any>("warehouses.resolve", { sender_id: String(sender), id: String(id) })).id,
				id,
			);
			await remove(sender, id);
			assert.equal(await broker.call("warehouses.resolve", { sender_id: sender, id }), null);
			const got = await broker.call<any, any>("warehouses.get", {
				sender_id: sender,
				id,
				include_retired: true,
			});
			assert.equal(got.retired, true);
			assert.equal(await broker.call("warehouses.get", { sender_id: sender, id }), null);
		});
	});

	describe("courier registration (sandbox simulator)", () => {
		const regsOf = (id: number) =>
			select<any>(
				db(),
				"SELECT logistic_id, version, status, reason, courier_location_id FROM warehouses.courier_registrations WHERE warehouse_id = $1 ORDER BY logistic_id",
				[id],
			);
		const listed = async (sender: number, id: number) =>
			(await list(sender)).data.find((r: any) => r.id === id);

		it("registers a new warehouse with every active courier; courier_registered turns true", async () => {
			const sender = newSender();
			const id = (await create(sender, valid())).data.id;
			const pending = await regsOf(id);
			assert.deepEqual(
				pending.map((r) => r.logistic_id),
				[1, 3],
				"pending rows committed with the warehouse",
			);
			const row = await until(
				() => listed(sender, id),
				(r) => r.courier_registered === true,
				"registration",
			);
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
			const resolved = await broker.call<any, any>("warehouses.resolve", { sender_id: sender, id });
			assert.equal(resolved.courier_registered, true);
		});

		it("re-registers after an address change (new version)", async () => {
			const sender = newSender();
			const id = (await create(sender, valid())).data.id;
			await until(
				() => listed(sender, id),
				(r) => r.courier_registered === true,
				"first registration",
			);
			const res = await update(sender, id, { address_line_1: "99 Residency Road, Ashok Nagar" });
			assert.equal((await rowOf(id)).version, 2);
			assert.equal(typeof res.data.courier_registered, "boolean");
			await until(
				() => listed(sender, id),
				(r) => r.courier_registered === true,
				"second registration",
			);
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
			const row = await until(
				() => listed(sender, id),
				(r) => r.courier_registrations.every((c: any) => c.status === "refused"),
				"refusal",
			);
			assert.equal(row.courier_registered, false);
			for (const c of row.courier_registrations)
				assert.match(c.reason, /Pickup not serviceable at pincode 111111/);
			const regs = await regsOf(id);
			assert.deepEqual(
				regs.map((r) => r.status),
				["refused", "refused"],
			);
		});

		it("registers a warehouse created while the courier list was unavailable once rates is back", async () => {
			const sender = newSender();
			fake.ratesDown = true;
			const id = (await create(sender, valid())).data.id;
			assert.deepEqual(
				(await regsOf(id)).map((r) => [r.logistic_id, r.status]),
				[[0, "pending"]],
				"placeholder row keeps the registration durable",
			);
			await new Promise((r) => setTimeout(r, 300));
			fake.ratesDown = false;
			await until(
				() => listed(sender, id),
				(r) => r.courier_registered === true,
				"registration after retry",
			);
			assert.deepEqual(
				(await regsOf(id)).map((r) => r.logistic_id),
				[1, 3],
			);
		});

		it("the sweeper re-enqueues stale pending registrations (job lost with Redis)", async () => {
			const sender = newSender();
			const id = (await create(sender, valid({ pincode: "122001" }))).data.id;
			await until(
				() => listed(sender, id),
				(r) => r.courier_registered === true,
				"first registration",
			);
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
			const swept = await broker.call<any, any>("warehouses.sweepRegistrations", {});
			assert.ok(swept.enqueued >= 1);
			await until(
				() => listed(sender, id),
				(r) => r.courier_registered === true,
				"swept registration",
			);
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
			await until(
				() => listed(sender, id),
				(r) => r.courier_registered === true,
				"first registration",
			);
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
			const swept = await broker.call<any, any>("warehouses.sweepRegistrations", { full: true });
			assert.ok(swept.enqueued >= 1);
			await until(
				() => listed(sender, id),
				(r) => r.courier_registered === true,
				"registration of the new courier",
			);
		});
	});
});
