/**
 * Serviceability sync (issue 14): `rates.syncServiceability` pulls a courier's
 * own pincode serviceability into `rates.courier_pincodes`, quotes stop
 * offering it on lanes it does not serve, and a failed sync keeps the previous
 * rows and records the error (`rates.serviceabilityStatus`).
 *
 * The courier is a test-only adapter (registered with `registerAdapter`)
 * replaying the Delhivery pin-codes golden fixture
 * (test/fixtures/couriers/delhivery/serviceability.json): the `ok` response's
 * parsed answer for the pincodes it lists, or the `html-error` response's
 * CourierUnavailable.
 */
import { strict as assert } from "node:assert";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import {
	type CourierAdapter,
	CourierUnavailable,
	type PincodeServiceability,
	registerAdapter,
} from "../../../lib/couriers";
import { exec, getSequelize, select } from "../../../lib/platform/db";
import { getQueue } from "../../../lib/platform/queue";
import { SANDBOX_DELHIVERY } from "../../../lib/rates/seed";
import { SYNC_QUEUE, syncedRefusal, syncIntervalMs } from "../../../lib/rates/serviceability";
import { callAs, callRaw } from "../../helpers/call";
import { byId, droppedOf, useRates } from "./setup";

const ID = 901;
const ADAPTER = "test-delhivery-pins-replay";

interface FixtureResponse {
	name: string;
	expect: Record<string, PincodeServiceability> | { throws: string };
}
const fixture = JSON.parse(
	readFileSync(join(__dirname, "../../fixtures/couriers/delhivery/serviceability.json"), "utf8"),
) as { responses: FixtureResponse[] };
const response = (name: string) => {
	const r = fixture.responses.find((x) => x.name === name);
	assert.ok(r, `fixture response ${name}`);
	return r.expect;
};
/** The recorded answer: 560058 serves everything; 400050 prepaid + reverse only (no COD, no pickup), ODA. */
const OK = response("ok") as Record<string, PincodeServiceability>;
const FULL = "560058";
const PARTIAL = "400050";
const UNLISTED = "110001";

/** Replays the recorded Delhivery answer; `mode` "fail" answers the recorded 502 HTML page (CourierUnavailable). */
const replay = { mode: "ok" as "ok" | "fail", calls: [] as string[][] };
const unused = (): never => {
	throw new Error("not used by the serviceability sync");
};
class ReplayAdapter implements CourierAdapter {
	readonly trackBatchSize = 50;
	readonly issuesOwnLabel = false;
	readonly serviceabilityBatchSize = 500;
	registerWarehouse = unused;
	book = unused;
	lookupByReference = unused;
	cancel = unused;
	track = unused;
	trackMany = unused;
	verifyPush = unused;
	parsePush = unused;
	fetchLabel = unused;
	ndrAction = unused;
	async serviceability(pincodes: string[]): Promise<Map<string, PincodeServiceability>> {
		replay.calls.push(pincodes);
		if (replay.mode === "fail") {
			assert.deepEqual(response("html-error"), { throws: "CourierUnavailable" });
			throw new CourierUnavailable("Delhivery answered HTTP 502 (text/html)");
		}
		return new Map(pincodes.filter((p) => p in OK).map((p) => [p, OK[p]]));
	}
}

describe("rates serviceability sync (issue 14)", function () {
	this.timeout(15_000);
	const prevEnv = process.env.RATES_SERVICEABILITY_SYNC_MS;
	before(async () => {
		process.env.RATES_SERVICEABILITY_SYNC_MS = "0"; // no scheduled run racing the tests
		registerAdapter(ADAPTER, () => new ReplayAdapter());
		// a scheduled run enqueued by an earlier spec's rates broker (default interval) must not race these tests
		const q: object = getQueue(SYNC_QUEUE);
		await (q as { drain?: () => Promise<void> }).drain?.call(q);
	});
	after(() => {
		if (prevEnv === undefined) delete process.env.RATES_SERVICEABILITY_SYNC_MS;
		else process.env.RATES_SERVICEABILITY_SYNC_MS = prevEnv;
	});

	describe("a courier replaying Delhivery's pin-codes answer", () => {
		const t = useRates();
		const db = () => getSequelize();
		const quote = (p: Record<string, unknown>) =>
			callRaw(t.broker, "rates.quote", {
				physical_weight: 0.5,
				logistic_id: ID,
				...p,
			});
		const sync = () =>
			callAs(t.broker, "rates.syncServiceability", {
				logistic_id: ID,
			});
		const status = async () =>
			(await callAs(t.broker, "rates.serviceabilityStatus", {})).couriers.find((c) => c.logistic_id === ID);

		before(async () => {
			// a courier on the test adapter, priced like sandbox courier 1 (reverse: like the first sandbox courier doing returns; no prefix rules)
			await exec(
				db(),
				`INSERT INTO rates.couriers (logistic_id, logistic_name, adapter, code, forward, reverse, cod, mode,
			                            volumetric_divisor, max_weight_kg, default_priority, active)
			 VALUES ($1, 'Replay Delhivery', $2, 'test-dlv-replay', true, true, true, 'surface', 5000, NULL, 99, true)`,
				[ID, ADAPTER],
			);
			await exec(
				db(),
				`INSERT INTO rates.rate_cards (logistic_id, zone, direction, first_slab_kg, first_slab_paise,
			                              additional_slab_kg, additional_slab_paise, min_chargeable_kg)
			 SELECT $1, zone, direction, first_slab_kg, first_slab_paise, additional_slab_kg, additional_slab_paise,
			        min_chargeable_kg FROM rates.rate_cards
			  WHERE (direction = 'forward' AND logistic_id = 1)
			     OR (direction = 'reverse' AND logistic_id =
			         (SELECT min(logistic_id) FROM rates.rate_cards WHERE direction = 'reverse'))`,
				[ID],
			);
			await exec(
				db(),
				"INSERT INTO rates.cod_config (logistic_id, flat_paise, percent_bp) VALUES ($1, 3000, 150)",
				[ID],
			);
			await callAs(t.broker, "rates.reload", {});
		});
		after(async () => {
			await exec(db(), "DELETE FROM rates.couriers WHERE logistic_id = $1", [ID]);
		});

		it("a courier never synced is not filtered", async () => {
			assert.equal((await status()) ?? null, null);
			const res = await quote({ from_pin: PARTIAL, to_pin: UNLISTED, payment_mode: "cod", cod_amount: 500 });
			assert.ok(byId(res, ID), JSON.stringify(res.dropped_couriers));
		});

		it("syncs every directory pincode in the adapter's batches and stores the answer", async () => {
			replay.mode = "ok";
			replay.calls = [];
			const res = await sync();
			assert.deepEqual(res.couriers, [{ logistic_id: ID, ok: true, rows: 2, error: null }]);
			const directory = await callAs(t.broker, "pincode.all", {});
			assert.ok(directory.includes(FULL) && directory.includes(PARTIAL));
			assert.equal(replay.calls.length, Math.ceil(directory.length / 500));
			assert.ok(replay.calls.every((b) => b.length <= 500));
			assert.deepEqual(replay.calls.flat().sort(), [...directory].sort());
			const rows = await select<Record<string, unknown>>(
				db(),
				`SELECT pincode, prepaid, cod, pickup, reverse, oda, max_amount_paise::int AS max_amount_paise,
			        max_weight_g, sort_code FROM rates.courier_pincodes WHERE logistic_id = $1 ORDER BY pincode`,
				[ID],
			);
			assert.deepEqual(rows, [
				{
					pincode: PARTIAL,
					prepaid: true,
					cod: false,
					pickup: false,
					reverse: true,
					oda: true,
					max_amount_paise: 5_000_000,
					max_weight_g: 20_000,
					sort_code: "BOM/BDR",
				},
				{
					pincode: FULL,
					prepaid: true,
					cod: true,
					pickup: true,
					reverse: true,
					oda: false,
					max_amount_paise: null,
					max_weight_g: null,
					sort_code: "BLR/PNY",
				},
			]);
			const st = await status();
			assert.ok(st?.synced_at);
			assert.equal(st.rows, 2);
			assert.equal(st.last_error, null);
		});

		it("quotes stop offering the courier on lanes it does not serve", async () => {
			const served = await quote({ from_pin: FULL, to_pin: PARTIAL });
			assert.ok(byId(served, ID), JSON.stringify(served.dropped_couriers));
			const cod = await quote({ from_pin: FULL, to_pin: PARTIAL, payment_mode: "cod", cod_amount: 500 });
			assert.equal(byId(cod, ID), undefined);
			assert.equal(droppedOf(cod, ID)?.reason, "not_serviceable");
			assert.match(droppedOf(cod, ID)?.detail ?? "", /400050 \(COD\)/);
			const noPickup = await quote({ from_pin: PARTIAL, to_pin: FULL });
			assert.match(droppedOf(noPickup, ID)?.detail ?? "", /pickup pincode 400050/);
			const unlisted = await quote({ from_pin: FULL, to_pin: UNLISTED });
			assert.equal(droppedOf(unlisted, ID)?.reason, "not_serviceable");
			// a return collected at 400050 (reverse allowed there) to a warehouse at 560058
			const ret = await quote({ from_pin: PARTIAL, to_pin: FULL, direction: "reverse" });
			assert.ok(byId(ret, ID), JSON.stringify(ret.dropped_couriers));
			const retUnlisted = await quote({ from_pin: UNLISTED, to_pin: FULL, direction: "reverse" });
			assert.match(droppedOf(retUnlisted, ID)?.detail ?? "", /reverse pickup/);
			// the other couriers are not touched by this courier's rows
			const all = await callAs(t.broker, "rates.quote", {
				from_pin: FULL,
				to_pin: UNLISTED,
				physical_weight: 0.5,
			});
			assert.ok(all.data.length > 0 && !byId(all, ID));
		});

		it("drops the courier above a synced pincode's stated weight or COD limit", async () => {
			// 400050 states max_weight 20 kg (the recorded answer): a 25 kg parcel to it is over that pincode's limit
			const heavy = await quote({ from_pin: FULL, to_pin: PARTIAL, physical_weight: 25 });
			assert.equal(droppedOf(heavy, ID)?.reason, "over_weight_limit");
			assert.match(droppedOf(heavy, ID)?.detail ?? "", /25 kg exceeds the 20 kg limit at pincode 400050/);
			assert.ok(byId(await quote({ from_pin: FULL, to_pin: PARTIAL, physical_weight: 19 }), ID));
			// a COD ceiling of ₹1,000 at 560058 (COD allowed there): ₹1,500 is above it, ₹800 is not
			await exec(
				db(),
				"UPDATE rates.courier_pincodes SET max_amount_paise = 100000 WHERE logistic_id = $1 AND pincode = $2",
				[ID, FULL],
			);
			try {
				await callAs(t.broker, "rates.reload", {});
				const over = await quote({ from_pin: FULL, to_pin: FULL, payment_mode: "cod", cod_amount: 1500 });
				assert.ok(
					byId(await quote({ from_pin: FULL, to_pin: FULL, payment_mode: "cod", cod_amount: 800 }), ID),
				);
				assert.equal(droppedOf(over, ID)?.reason, "not_serviceable");
				assert.match(
					droppedOf(over, ID)?.detail ?? "",
					/COD of ₹1500 is above the ₹1000 collected at delivery pincode 560058/,
				);
			} finally {
				await exec(
					db(),
					"UPDATE rates.courier_pincodes SET max_amount_paise = NULL WHERE logistic_id = $1 AND pincode = $2",
					[ID, FULL],
				);
				await callAs(t.broker, "rates.reload", {});
			}
		});

		it("a failed sync keeps the previous rows and records the error", async () => {
			const before = await status();
			replay.mode = "fail";
			replay.calls = [];
			const res = await sync();
			assert.equal(res.couriers.length, 1);
			assert.equal(res.couriers[0].ok, false);
			assert.match(res.couriers[0].error ?? "", /CourierUnavailable: Delhivery answered HTTP 502/);
			assert.equal(replay.calls.length, 1, "stops at the first failed batch");
			const [{ n }] = await select<{ n: number }>(
				db(),
				"SELECT count(*)::int AS n FROM rates.courier_pincodes WHERE logistic_id = $1",
				[ID],
			);
			assert.equal(n, 2);
			const st = await status();
			assert.equal(st?.synced_at, before?.synced_at);
			assert.equal(st?.rows, 2);
			assert.match(st?.last_error ?? "", /CourierUnavailable/);
			assert.ok(st?.last_error_at);
			// quotes still follow the previous rows
			const cod = await quote({ from_pin: FULL, to_pin: PARTIAL, payment_mode: "cod", cod_amount: 500 });
			assert.equal(droppedOf(cod, ID)?.reason, "not_serviceable");
			replay.mode = "ok";
		});

		it("syncs only couriers whose adapter has the operation", async () => {
			const res = await callAs(t.broker, "rates.syncServiceability", {});
			assert.deepEqual(
				res.couriers.map((c) => c.logistic_id),
				[SANDBOX_DELHIVERY.logistic_id, ID],
				"the replaying courier and Sandbox Delhivery (its adapter is Delhivery's); the sandbox adapter has none",
			);
		});

		it("reads RATES_SERVICEABILITY_SYNC_MS (default 24 h, 0 off) and the lane rules", () => {
			assert.equal(syncIntervalMs({}), 86_400_000);
			assert.equal(syncIntervalMs({ RATES_SERVICEABILITY_SYNC_MS: "0" }), 0);
			assert.equal(syncIntervalMs({ RATES_SERVICEABILITY_SYNC_MS: "60000" }), 60_000);
			assert.throws(
				() => syncIntervalMs({ RATES_SERVICEABILITY_SYNC_MS: "soon" }),
				/RATES_SERVICEABILITY_SYNC_MS/,
			);
			assert.equal(syncedRefusal(undefined, "1", "2", "forward", true), null);
			assert.equal(
				syncedRefusal(new Map(), FULL, PARTIAL, "forward", false),
				`pickup pincode ${FULL} and delivery pincode ${PARTIAL} (prepaid)`,
			);
		});
	});
});
