/**
 * The sandbox Delhivery courier: the REAL Delhivery adapter
 * (lib/couriers/delhivery) pointed at the simulator's Delhivery protocol
 * (lib/simulator/delhivery.ts) with the zero-setup settings of
 * `sandboxDelhiveryOverrides` (lib/platform/config.ts): the typical flow warehouse →
 * quote (serviceability, rate) → book → label → pickup → track → NDR → cancel,
 * and the refusal / duplicate mapping, end to end over HTTP.
 */
import assert from "node:assert/strict";
import type { ServiceBroker } from "moleculer";
import type { Address } from "../../lib/contracts";
import { type BookRequest, CourierRefused, type PickupLocation } from "../../lib/couriers";
import { DelhiveryAdapter } from "../../lib/couriers/delhivery";
import { loadConfig, SANDBOX_DELHIVERY_CODE, sandboxDelhiveryOverrides } from "../../lib/platform/config";
import { SANDBOX_COURIERS, SANDBOX_DELHIVERY } from "../../lib/rates/seed";
import { startBroker } from "../helpers/broker";
import { callAs } from "../helpers/call";
import { address as fixtureAddress } from "../helpers/fixtures";
import { freePort } from "../helpers/net";

const run = Math.random().toString(36).slice(2, 8);
const IST_MS = 330 * 60_000;
/** IST calendar day `days` from today. */
function istDay(days: number): string {
	return new Date(Date.now() + IST_MS + days * 86_400_000).toISOString().slice(0, 10);
}

/** Awaits `p`, which must reject with a CourierRefused; answers it. */
async function refusal(p: Promise<unknown>): Promise<CourierRefused> {
	try {
		await p;
	} catch (err) {
		assert.ok(err instanceof CourierRefused, `expected CourierRefused, got ${String(err)}`);
		return err;
	}
	throw new Error("expected a refusal");
}

const pickup: Address = fixtureAddress({ name: "Asha Traders" });

function bookReq(reference: string, wh: string, over: Partial<BookRequest> = {}): BookRequest {
	return {
		reference,
		order_no: `ORD-${reference}`,
		direction: "forward",
		payment: "cod",
		cod_amount: 1299,
		declared_value: 1299,
		weight_kg: 0.75,
		dimensions_cm: { length: 20, width: 15, height: 10 },
		product_description: "Cotton kurta",
		pickup_location_code: wh,
		pickup,
		consignee: {
			name: "Meera Iyer",
			phone: "9123456789",
			address_1: "Flat 4B, Sea View, Bandra West",
			city: "Mumbai",
			state: "Maharashtra",
			pincode: "400050",
		},
		return_address: pickup,
		...over,
	};
}

describe("sandbox Delhivery courier: the real adapter against the simulator", function () {
	this.timeout(30_000);
	let broker: ServiceBroker;
	let dl: DelhiveryAdapter;
	const WH = `WH-DL-${run}`;

	before(async () => {
		process.env.SANDBOX = "1";
		process.env.SANDBOX_COURIER_PORT = String(await freePort());
		delete process.env.SANDBOX_COURIER_URL;
		process.env.SANDBOX_COURIER_DELAY_MS = "5";
		broker = await startBroker(["simulator"]);
		const over = sandboxDelhiveryOverrides(SANDBOX_DELHIVERY_CODE);
		assert.ok(over);
		dl = new DelhiveryAdapter(SANDBOX_DELHIVERY_CODE, { ...over, timeoutMs: 3000 });
	});

	after(async () => {
		await broker?.stop();
		delete process.env.SANDBOX_COURIER_DELAY_MS;
	});

	it("zero setup: the sandbox courier's settings point at the simulator with its token; other codes get none", () => {
		const over = sandboxDelhiveryOverrides(SANDBOX_DELHIVERY_CODE);
		assert.equal(over?.baseUrl, `${loadConfig().simulatorUrl}/delhivery`);
		assert.equal(over?.token, "sandbox-token");
		assert.equal(sandboxDelhiveryOverrides("delhivery-surface"), undefined);
		const others = SANDBOX_COURIERS.filter((c) => c !== SANDBOX_DELHIVERY);
		assert.ok(SANDBOX_COURIERS.includes(SANDBOX_DELHIVERY), "seeded with the sandbox couriers");
		assert.equal(SANDBOX_DELHIVERY.adapter, "delhivery");
		assert.equal(SANDBOX_DELHIVERY.code, SANDBOX_DELHIVERY_CODE);
		assert.ok(
			SANDBOX_DELHIVERY.default_priority > Math.max(...others.map((c) => c.default_priority)),
			"the lowest priority: AUTO fall-over order of the other sandbox couriers unchanged",
		);
	});

	it("typical flow: warehouse, quote, book, label, pickup, track, NDR, cancel", async () => {
		const loc: PickupLocation = {
			warehouse_code: WH,
			warehouse_name: "Asha Traders Peenya",
			address: pickup,
			return_address: pickup,
		};
		assert.deepEqual(await dl.registerWarehouse(loc), { courier_location_id: WH });
		// again: exists → edit, same answer
		assert.deepEqual(await dl.registerWarehouse(loc), { courier_location_id: WH });

		// quote: serviceability of both ends, the courier's price
		const pins = await dl.serviceability([pickup.pincode, "400050", "999999"]);
		assert.deepEqual([...pins.keys()].sort(), [pickup.pincode, "400050"].sort());
		assert.equal(pins.get("400050")?.cod, true);
		const rate = await dl.rate({
			from_pin: pickup.pincode,
			to_pin: "400050",
			weight_kg: 0.75,
			mode: "surface",
			payment: "cod",
			cod_amount: 1299,
			leg: "delivered",
		});
		assert.ok(rate.total > 0);

		// book, idempotent on the reference
		const ref = `dls-${run}-1`;
		const b = await dl.book(bookReq(ref, WH));
		assert.equal(b.status, "booked");
		assert.equal(b.reference, ref);
		assert.match(b.awb_number, /^\d{14}$/);
		assert.equal((await dl.book(bookReq(ref, WH))).awb_number, b.awb_number);
		assert.equal((await dl.lookupByReference(ref))?.awb_number, b.awb_number);
		assert.equal(await dl.lookupByReference(`dls-${run}-none`), null);

		// the courier's label
		const label = await dl.fetchLabel(b.awb_number);
		assert.equal(label.content_type, "application/pdf");
		assert.equal(label.bytes.subarray(0, 5).toString(), "%PDF-");

		// pickup request (once per location and day)
		const p = await dl.requestPickup({
			pickup_location_code: WH,
			date: istDay(1),
			time: "11:00",
			expected_packages: 2,
		});
		assert.ok(p.pickup_id);
		await refusal(
			dl.requestPickup({ pickup_location_code: WH, date: istDay(1), time: "11:00", expected_packages: 2 }),
		);

		// track: manifested, then scans emitted by the simulator
		const first = await dl.track(b.awb_number);
		assert.ok(first.length >= 1);
		await callAs(broker, "simulator.emitScan", { awb_number: b.awb_number, event: "picked_up" });
		await callAs(broker, "simulator.emitScan", {
			awb_number: b.awb_number,
			event: "undelivered",
			reason: "Consignee unavailable",
		});
		const scans = await dl.track(b.awb_number);
		assert.equal(scans.length, first.length + 2);
		assert.equal(scans[scans.length - 1].status, "undelivered");
		const many = await dl.trackMany([b.awb_number, "8400000000001"]);
		assert.deepEqual([...many.keys()], [b.awb_number]);

		// NDR: a re-attempt is accepted with a request id
		const ndr = await dl.ndrAction(b.awb_number, "RE-ATTEMPT", {});
		assert.ok(ndr.request_id);
		await refusal(dl.ndrAction(b.awb_number, "DEFER_DLV", { deferred_date: istDay(30) }));

		// cancel: picked up → refused in the courier's words; a fresh booking → cancelled
		await refusal(dl.cancel(b.awb_number));
		const b2 = await dl.book(bookReq(`dls-${run}-2`, WH, { payment: "prepaid", cod_amount: 0 }));
		assert.deepEqual(await dl.cancel(b2.awb_number), { cancelled: true });
		assert.equal((await dl.lookupByReference(`dls-${run}-2`))?.status, "cancelled");
	});

	it("refusals keep Delhivery's words: unknown pickup location, unserviceable pincode", async () => {
		const err = await refusal(dl.book(bookReq(`dls-${run}-3`, `${WH}-nope`)));
		assert.match(String((err as Error).message), /ClientWarehouse matching query does not exist/);
		await refusal(
			dl.book(
				bookReq(`dls-${run}-4`, WH, {
					consignee: { ...bookReq("x", WH).consignee, pincode: "999999" },
				}),
			),
		);
	});
});
