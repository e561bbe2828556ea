/**
 * NDR actions at the courier, our side (lib/ndr/courier-action.ts
 * `sendNdrAction`): the DEFER_DLV window, the courier found through
 * `rates.getCourier` (a fake `rates` on the test broker) and reached through
 * its adapter against the real simulator, the NDR retry policy (a 503 once
 * then success; a refusal never retried; a courier down → 503
 * `ndr_unavailable` after exactly `NDR_ACTION_ATTEMPTS` calls, counted in
 * `simulator.calls`, with backoff between them), 422 `reattempt_failed` with
 * the courier's words.
 */
import assert from "node:assert/strict";
import { type Context, ServiceBroker } from "moleculer";
import type { CourierInfo } from "../../../lib/contracts";
import type { NdrActInput } from "../../../lib/contracts/ndr";
import { adapterFor, type BookRequest } from "../../../lib/couriers";
import {
	addDays,
	checkDeferWindow,
	istDay,
	ndrRetryPolicy,
	sendNdrAction,
} from "../../../lib/ndr/courier-action";
import { getSequelize, select } from "../../../lib/platform/db";
import { errorBodyOf } from "../../../lib/platform/errors";
import { loadServiceSchema } from "../../../lib/platform/system";
import { addScan } from "../../../lib/simulator/api";
import { testBrokerOptions } from "../../helpers/broker";
import { bookRequestFor, address as fixtureAddress, courier as fixtureCourier } from "../../helpers/fixtures";
import { freePort } from "../../helpers/net";

const run = Math.random().toString(36).slice(2, 8);
let seq = 0;
const WH = `WH-NDRA-${run}`;
const EXPRESS: CourierInfo = fixtureCourier(41, "SBX Express", "sbx-express", { adapter: "sandbox" });
const NO_INTEGRATION: CourierInfo = fixtureCourier(42, "Paper Courier", "paper", {
	adapter: "carrier-pigeon",
});
const COURIERS: Record<number, CourierInfo> = { 41: EXPRESS, 42: NO_INTEGRATION };
const address = fixtureAddress({ name: "Asha Traders" });

function bookReq(name: string): BookRequest {
	return bookRequestFor(`ndra-${run}-${++seq}`, WH, address, name);
}

/** The status and body of the contract error `p` rejects with (fails when it resolves). */
async function failure(p: Promise<unknown>): Promise<{ status: number; body: Record<string, unknown> }> {
	try {
		await p;
	} catch (err) {
		const b = errorBodyOf(err);
		assert.ok(b, `not a contract error: ${String(err)}`);
		return b;
	}
	assert.fail("expected a rejection");
}

describe("ndr: actions sent to the courier", function () {
	this.timeout(40_000);

	describe("DEFER_DLV window", () => {
		// 2026-03-10 00:30 IST is 2026-03-09T19:00Z
		const now = new Date("2026-03-09T19:00:00Z");

		it("istDay / addDays are IST calendar days", () => {
			assert.equal(istDay(now), "2026-03-10");
			assert.equal(istDay("2026-03-09T18:29:59Z"), "2026-03-09");
			assert.equal(addDays("2026-02-26", 6), "2026-03-04");
		});

		it("after today (IST) and at most 6 days after the first failed delivery's IST day", () => {
			const first = "2026-03-08T20:00:00Z"; // 2026-03-09 01:30 IST
			checkDeferWindow("2026-03-11", first, now);
			checkDeferWindow("2026-03-15", first, now);
			const cases: [string, string][] = [
				["2026-03-10", "deferred_date: must be after today (2026-03-10, India time)"],
				["2026-03-01", "deferred_date: must be after today (2026-03-10, India time)"],
				[
					"2026-03-16",
					"deferred_date: must be at most 6 days after the first failed delivery (on or before 2026-03-15)",
				],
			];
			for (const [date, detail] of cases) {
				assert.throws(
					() => checkDeferWindow(date, first, now),
					(err: unknown) => {
						assert.deepEqual(errorBodyOf(err), {
							status: 400,
							body: { error: "validation_failed", message: detail, details: [detail] },
						});
						return true;
					},
				);
			}
		});
	});

	it("ndrRetryPolicy: NDR_ACTION_ATTEMPTS (≥ 1, default 3), NDR_ACTION_BACKOFF_MS (≥ 0, default 500)", () => {
		assert.deepEqual(ndrRetryPolicy({}), { attempts: 3, backoffMs: 500 });
		assert.deepEqual(ndrRetryPolicy({ NDR_ACTION_ATTEMPTS: "5", NDR_ACTION_BACKOFF_MS: "0" }), {
			attempts: 5,
			backoffMs: 0,
		});
		// a value outside what is allowed refuses (lib/platform/config.ts), never a silent default
		for (const bad of ["0", "2.5", "x"])
			assert.throws(
				() => ndrRetryPolicy({ NDR_ACTION_ATTEMPTS: bad }),
				new RegExp(
					`^Error: NDR_ACTION_ATTEMPTS must be an integer of at least 1 \\(got "${bad.replace(".", "\\.")}"\\)$`,
				),
			);
		for (const bad of ["-1", "x"])
			assert.throws(
				() => ndrRetryPolicy({ NDR_ACTION_BACKOFF_MS: bad }),
				/NDR_ACTION_BACKOFF_MS must be an integer from 0 to/,
			);
	});

	describe("through the adapter against the simulator", () => {
		let broker: ServiceBroker;
		let bare: ServiceBroker;
		const db = () => getSequelize();
		const env = { ...process.env };

		/** A booked AWB whose last scan is `undelivered`, consignee `name`. */
		async function pending(name = "Ravi Kumar"): Promise<string> {
			const awb = (await adapterFor(EXPRESS).book(bookReq(name))).awb_number;
			await addScan(db(), awb, "picked_up");
			await addScan(db(), awb, "undelivered", { reason: "Consignee unavailable" });
			return awb;
		}
		/** HTTP statuses of the simulator's `ndr` calls for `awb`, oldest first. */
		const ndrCalls = async (awb: string) =>
			(
				await select<{ status: number }>(
					db(),
					`SELECT status FROM simulator.calls WHERE endpoint = 'ndr' AND refnum = $1 ORDER BY id`,
					[awb],
				)
			).map((r) => r.status);
		const input = (over: Partial<NdrActInput> = {}): NdrActInput => ({
			order_id: 1,
			logistic_id: 41,
			ndr_act: "RE-ATTEMPT",
			...over,
		});
		const send = (
			awb: string,
			over: Partial<NdrActInput> = {},
			first_pending_at = new Date().toISOString(),
		) =>
			sendNdrAction(broker, {
				awb_number: awb,
				logistic_id: over.logistic_id ?? 41,
				input: input(over),
				first_pending_at,
			});

		before(async () => {
			process.env.SANDBOX = "1";
			process.env.SANDBOX_COURIER_PORT = String(await freePort());
			delete process.env.SANDBOX_COURIER_URL;
			process.env.SANDBOX_COURIER_DELAY_MS = "0";
			broker = new ServiceBroker(testBrokerOptions(false));
			broker.createService(loadServiceSchema("simulator"));
			broker.createService({
				name: "rates",
				actions: {
					getCourier: (ctx: Context<{ logistic_id: number }>) => COURIERS[ctx.params.logistic_id] ?? null,
				},
			});
			await broker.start();
			bare = new ServiceBroker(testBrokerOptions(false));
			await bare.start();
			await adapterFor(EXPRESS).registerWarehouse({
				warehouse_code: WH,
				warehouse_name: "Main Warehouse",
				address,
				return_address: address,
			});
		});

		beforeEach(() => {
			process.env.NDR_ACTION_BACKOFF_MS = "20";
			delete process.env.NDR_ACTION_ATTEMPTS;
		});

		after(async () => {
			for (const k of ["NDR_ACTION_BACKOFF_MS", "NDR_ACTION_ATTEMPTS", "SANDBOX_COURIER_URL"]) {
				if (env[k] === undefined) delete process.env[k];
				else process.env[k] = env[k];
			}
			await broker?.stop();
			await bare?.stop();
		});

		it("an accepted act answers the courier's request id after one call", async () => {
			const awb = await pending();
			const { request_id } = await send(awb);
			assert.match(request_id, /^UPL\d{20}$/);
			assert.deepEqual(await ndrCalls(awb), [200]);
		});

		it("EDIT_DETAILS and DEFER_DLV reach the courier with their details", async () => {
			const awb = await pending();
			await send(awb, {
				ndr_act: "EDIT_DETAILS",
				phone: "9988776655",
				address: { address_1: "Flat 9, Andheri West" },
			});
			const tomorrow = addDays(istDay(new Date()), 1);
			await send(awb, { ndr_act: "DEFER_DLV", deferred_date: tomorrow });
			const rows = await select<{ act: string; action_data: unknown }>(
				db(),
				`SELECT act, action_data FROM simulator.ndr_actions WHERE waybill = $1 ORDER BY id`,
				[awb],
			);
			assert.deepEqual(rows, [
				{ act: "EDIT_DETAILS", action_data: { phone: "9988776655", add: "Flat 9, Andheri West" } },
				{ act: "DEFER_DLV", action_data: { deferred_date: tomorrow } },
			]);
		});

		it("a DEFER_DLV date outside the window is 400 without a courier call", async () => {
			const awb = await pending();
			const first = new Date(Date.now() - 3 * 86_400_000).toISOString();
			const last = addDays(istDay(first), 6);
			const f = await failure(send(awb, { ndr_act: "DEFER_DLV", deferred_date: addDays(last, 1) }, first));
			assert.equal(f.status, 400);
			assert.deepEqual(f.body.details, [
				`deferred_date: must be at most 6 days after the first failed delivery (on or before ${last})`,
			]);
			const today = await failure(
				send(awb, { ndr_act: "DEFER_DLV", deferred_date: istDay(new Date()) }, first),
			);
			assert.equal(today.body.error, "validation_failed");
			assert.deepEqual(await ndrCalls(awb), []);
		});

		it("a 503 once is retried: success on the second call", async () => {
			const awb = await pending("Ravi SIMULATE_NDR_5XX");
			const { request_id } = await send(awb);
			assert.match(request_id, /^UPL/);
			assert.deepEqual(await ndrCalls(awb), [503, 200]);
		});

		it("a refusal is 422 reattempt_failed with the courier's words, never retried", async () => {
			const awb = await pending();
			await addScan(db(), awb, "delivered");
			const f = await failure(send(awb));
			assert.deepEqual(f, {
				status: 422,
				body: { error: "reattempt_failed", message: "RE-ATTEMPT not allowed: shipment is Delivered" },
			});
			assert.deepEqual(await ndrCalls(awb), [200]);
		});

		it("a courier that stays down: 503 ndr_unavailable after NDR_ACTION_ATTEMPTS calls, with backoff", async () => {
			process.env.NDR_ACTION_BACKOFF_MS = "150";
			const awb = await pending("Ravi SIMULATE_NDR_DOWN");
			const t0 = Date.now();
			const f = await failure(send(awb));
			const ms = Date.now() - t0;
			assert.deepEqual(f, {
				status: 503,
				body: {
					error: "ndr_unavailable",
					message: `SBX Express could not be reached to send RE-ATTEMPT for AWB ${awb}; retry`,
				},
			});
			assert.deepEqual(await ndrCalls(awb), [503, 503, 503]);
			// backoff 150 ms then 300 ms, each × a jitter in [1, 2]
			assert.ok(ms >= 450, `retried after ${ms} ms`);
			assert.ok(ms < 3000, `retried for ${ms} ms`);

			process.env.NDR_ACTION_ATTEMPTS = "2";
			process.env.NDR_ACTION_BACKOFF_MS = "10";
			const awb2 = await pending("Ravi SIMULATE_NDR_DOWN");
			assert.equal((await failure(send(awb2))).status, 503);
			assert.deepEqual(await ndrCalls(awb2), [503, 503]);

			process.env.NDR_ACTION_ATTEMPTS = "1";
			const awb3 = await pending("Ravi SIMULATE_NDR_5XX");
			assert.equal((await failure(send(awb3))).body.error, "ndr_unavailable");
			assert.deepEqual(await ndrCalls(awb3), [503]);
		});

		it("a courier that cannot be reached at all (connection refused): 503 ndr_unavailable", async () => {
			const awb = await pending();
			process.env.SANDBOX_COURIER_URL = `http://127.0.0.1:${await freePort()}`;
			try {
				const f = await failure(send(awb));
				assert.equal(f.status, 503);
				assert.equal(f.body.error, "ndr_unavailable");
			} finally {
				delete process.env.SANDBOX_COURIER_URL;
			}
			assert.deepEqual(await ndrCalls(awb), []);
		});

		it("a courier without an integration is 422 reattempt_failed; an unknown one too", async () => {
			const f = await failure(send("999", { logistic_id: 42 }));
			assert.deepEqual(f, {
				status: 422,
				body: {
					error: "reattempt_failed",
					message:
						"Paper Courier has no courier integration here; NDR actions on AWB 999 cannot be sent through the API",
				},
			});
			const g = await failure(send("999", { logistic_id: 77 }));
			assert.equal(g.status, 422);
			assert.equal(g.body.error, "reattempt_failed");
		});

		it("rates unreachable: 503 ndr_unavailable", async () => {
			const f = await failure(
				sendNdrAction(
					bare,
					{ awb_number: "1", logistic_id: 41, input: input(), first_pending_at: new Date().toISOString() },
					{ callOptions: { timeout: 500 } },
				),
			);
			assert.deepEqual(f, {
				status: 503,
				body: { error: "ndr_unavailable", message: "rates is unavailable; retry" },
			});
		});
	});
});
