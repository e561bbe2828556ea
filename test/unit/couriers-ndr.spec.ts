/**
 * NDR actions at the courier, courier side: the sandbox adapter's
 * `ndrAction` wire (Delhivery `POST /api/p/update`, a golden request per act
 * captured on a stub courier), the reading of its answers, and the simulator
 * accepting and refusing acts like a courier (pending only, the DEFER_DLV
 * window, EDIT_DETAILS rules, repeated acts, 5xx faults, the call log).
 */
import assert from "node:assert/strict";
import { createServer, type Server } from "node:http";
import type { ServiceBroker } from "moleculer";
import type { Address, CourierInfo } from "../../lib/contracts";
import {
	adapterFor,
	type BookRequest,
	CourierRefused,
	CourierUnavailable,
	type PickupLocation,
	SandboxAdapter,
} from "../../lib/couriers";
import { parseNdrUpdate, toNdrUpdate } from "../../lib/couriers/sandbox/mapper";
import { sandboxSettings } from "../../lib/couriers/sandbox/settings";
import { getSequelize, select } from "../../lib/platform/db";
import { addScan } from "../../lib/simulator/api";
import { startBroker } from "../helpers/broker";
import { bookRequestFor, address as fixtureAddress, courier as fixtureCourier } from "../helpers/fixtures";
import { freePort } from "../helpers/net";

const run = Math.random().toString(36).slice(2, 8);
let seq = 0;
const WH = `WH-NDR-${run}`;
const CODE = "sbx-express";
const courier: CourierInfo = fixtureCourier(1, "SBX Express", CODE, { adapter: "sandbox", cod: true });
const address: Address = fixtureAddress({ name: "Asha Traders" });
const location: PickupLocation = {
	warehouse_code: WH,
	warehouse_name: "Main Warehouse",
	address,
	return_address: address,
};

function bookReq(name = "Ravi Kumar"): BookRequest {
	return bookRequestFor(`ndr-${run}-${++seq}`, WH, address, name);
}

/** The India Standard Time day of now plus `n` days. */
function istDayPlus(n: number): string {
	return new Date(Date.now() + 330 * 60_000 + n * 86_400_000).toISOString().slice(0, 10);
}

/** A request as the stub courier got it. */
interface Captured {
	method: string;
	url: string;
	headers: Record<string, string | string[] | undefined>;
	body: string;
}

/** A stub courier on a free port answering `answer()` to every request and recording it. */
async function stubCourier(answer: () => { status: number; body: string }) {
	const got: Captured[] = [];
	const server: Server = createServer((req, res) => {
		const chunks: Buffer[] = [];
		req.on("data", (c: Buffer) => chunks.push(c));
		req.on("end", () => {
			got.push({
				method: req.method ?? "",
				url: req.url ?? "",
				headers: req.headers,
				body: Buffer.concat(chunks).toString("utf8"),
			});
			const a = answer();
			res.writeHead(a.status, { "Content-Type": "application/json" });
			res.end(a.body);
		});
	});
	const port = await freePort();
	await new Promise<void>((r) => server.listen(port, "127.0.0.1", () => r()));
	return {
		got,
		adapter: new SandboxAdapter(CODE, {
			baseUrl: `http://127.0.0.1:${port}`,
			token: "tok-123",
			timeoutMs: 2000,
		}),
		close: () =>
			new Promise<void>((r) => {
				server.closeAllConnections();
				server.close(() => r());
			}),
	};
}

describe("couriers: NDR actions (POST /api/p/update)", function () {
	this.timeout(30_000);

	describe("adapter wire (golden)", () => {
		const ACCEPTED = (awb: string, act: string) =>
			JSON.stringify({
				success: true,
				request_id: "UPL17000000000001234567",
				packages: [{ waybill: awb, act, status: "Success", remarks: "Request accepted" }],
			});

		it("sends each act as Delhivery's update body and answers the upload id", async () => {
			let act = "";
			const stub = await stubCourier(() => ({ status: 200, body: ACCEPTED("14000000000777", act) }));
			try {
				act = "RE-ATTEMPT";
				assert.deepEqual(await stub.adapter.ndrAction("14000000000777", "RE-ATTEMPT", {}), {
					request_id: "UPL17000000000001234567",
				});
				act = "DEFER_DLV";
				await stub.adapter.ndrAction("14000000000777", "DEFER_DLV", { deferred_date: "2026-03-04" });
				act = "EDIT_DETAILS";
				await stub.adapter.ndrAction("14000000000777", "EDIT_DETAILS", {
					phone: "9988776655",
					address: {
						address_1: "12 MG Road",
						address_2: "2nd floor",
						landmark: "Opp. Metro",
						city: "Bengaluru",
						state: "Karnataka",
						pincode: "560001",
					},
				});
				await stub.adapter.ndrAction("14000000000777", "EDIT_DETAILS", { phone: "9988776655" });
				assert.equal(stub.got.length, 4);
				for (const g of stub.got) {
					assert.equal(g.method, "POST");
					assert.equal(g.url, "/couriers/sbx-express/api/p/update");
					assert.equal(g.headers.authorization, "Token tok-123");
					assert.equal(g.headers["content-type"], "application/json");
					assert.equal(g.headers.accept, "application/json");
				}
				assert.deepEqual(
					stub.got.map((g) => g.body),
					[
						'{"data":[{"waybill":"14000000000777","act":"RE-ATTEMPT"}]}',
						'{"data":[{"waybill":"14000000000777","act":"DEFER_DLV","action_data":{"deferred_date":"2026-03-04"}}]}',
						'{"data":[{"waybill":"14000000000777","act":"EDIT_DETAILS","action_data":{"phone":"9988776655","add":"12 MG Road, 2nd floor, Near Opp. Metro, Bengaluru, Karnataka","pin":"560001"}}]}',
						'{"data":[{"waybill":"14000000000777","act":"EDIT_DETAILS","action_data":{"phone":"9988776655"}}]}',
					],
				);
			} finally {
				await stub.close();
			}
		});

		it("a 5xx or no answer in time is CourierUnavailable; one call each (no retry in the adapter)", async () => {
			const stub = await stubCourier(() => ({
				status: 503,
				body: '{"error":"Service temporarily unavailable"}',
			}));
			try {
				await assert.rejects(stub.adapter.ndrAction("1", "RE-ATTEMPT", {}), CourierUnavailable);
				assert.equal(stub.got.length, 1);
			} finally {
				await stub.close();
			}
			const closed = new SandboxAdapter(CODE, {
				baseUrl: `http://127.0.0.1:${await freePort()}`,
				timeoutMs: 500,
			});
			await assert.rejects(closed.ndrAction("1", "RE-ATTEMPT", {}), CourierUnavailable);
		});

		it("toNdrUpdate: RE-ATTEMPT carries no action_data, whatever the details", () => {
			assert.deepEqual(toNdrUpdate("9", "RE-ATTEMPT", { deferred_date: "2026-01-01", phone: "9876543210" }), {
				data: [{ waybill: "9", act: "RE-ATTEMPT" }],
			});
			assert.deepEqual(toNdrUpdate("9", "EDIT_DETAILS", { address: { address_1: "12 MG Road" } }), {
				data: [{ waybill: "9", act: "EDIT_DETAILS", action_data: { add: "12 MG Road" } }],
			});
		});

		it("parseNdrUpdate: refusals carry the courier's words; non-decisions are CourierUnavailable", () => {
			const awb = "14000000000777";
			const refused = (status: number, body: unknown) => {
				try {
					parseNdrUpdate({ status, body }, CODE, awb);
				} catch (err) {
					assert.ok(err instanceof CourierRefused, String(err));
					return err.message;
				}
				assert.fail("expected a refusal");
			};
			assert.equal(
				refused(200, {
					success: false,
					error: "RE-ATTEMPT not allowed: shipment is Delivered",
					packages: [
						{
							waybill: awb,
							act: "RE-ATTEMPT",
							status: "Fail",
							remarks: "RE-ATTEMPT not allowed: shipment is Delivered",
						},
					],
				}),
				"RE-ATTEMPT not allowed: shipment is Delivered",
			);
			assert.equal(refused(200, { success: false, error: "Invalid waybill" }), "Invalid waybill");
			assert.equal(refused(400, { success: false, error: "data is required" }), "data is required");
			for (const [status, body] of [
				[401, { detail: "no" }],
				[403, { detail: "no" }],
				[404, { error: "not found" }],
				[200, "<html>oops</html>"],
				[200, { success: true }],
				[200, { success: false }],
				[200, null],
			] as const) {
				assert.throws(
					() => parseNdrUpdate({ status, body }, CODE, awb),
					CourierUnavailable,
					JSON.stringify(body),
				);
			}
			assert.deepEqual(
				parseNdrUpdate({ status: 200, body: { success: true, request_id: "UPL1" } }, CODE, awb),
				{
					request_id: "UPL1",
				},
			);
		});
	});

	describe("simulator", () => {
		let broker: ServiceBroker;
		const a = () => adapterFor(courier);
		const db = () => getSequelize();

		/** A booked AWB whose last scan is `undelivered` (picked up, then a failed attempt). */
		async function pending(name?: string): Promise<string> {
			const awb = (await a().book(bookReq(name))).awb_number;
			await addScan(db(), awb, "picked_up");
			await addScan(db(), awb, "undelivered", { reason: "Consignee unavailable" });
			return awb;
		}

		/** `simulator.calls` rows of endpoint `ndr` for `awb`, oldest first. */
		const calls = (awb: string) =>
			select<{ status: number; outcome: string }>(
				db(),
				`SELECT status, outcome FROM simulator.calls WHERE endpoint = 'ndr' AND refnum = $1 ORDER BY id`,
				[awb],
			);
		const recorded = (awb: string) =>
			select<{ act: string; action_data: Record<string, string>; request_id: string }>(
				db(),
				`SELECT act, action_data, request_id FROM simulator.ndr_actions WHERE waybill = $1 ORDER BY id`,
				[awb],
			);

		/** The courier's words when it refuses, else fails. */
		async function refusal(p: Promise<unknown>): Promise<string> {
			try {
				await p;
			} catch (err) {
				assert.ok(err instanceof CourierRefused, String(err));
				return err.message;
			}
			assert.fail("expected a refusal");
		}

		before(async () => {
			process.env.SANDBOX = "1";
			process.env.SANDBOX_COURIER_PORT = String(await freePort());
			delete process.env.SANDBOX_COURIER_URL;
			delete process.env.SANDBOX_SCAN_PUSH_URL;
			process.env.SANDBOX_COURIER_DELAY_MS = "0";
			broker = await startBroker(["simulator"]);
			await a().registerWarehouse(location);
		});

		after(async () => {
			await broker?.stop();
		});

		it("RE-ATTEMPT on a pending shipment: accepted with an upload id, recorded, no scan added", async () => {
			const awb = await pending();
			const { request_id } = await a().ndrAction(awb, "RE-ATTEMPT", {});
			assert.match(request_id, /^UPL\d{20}$/);
			assert.deepEqual(await recorded(awb), [{ act: "RE-ATTEMPT", action_data: {}, request_id }]);
			assert.deepEqual(await calls(awb), [{ status: 200, outcome: "accepted" }]);
			assert.deepEqual(
				(await a().track(awb)).map((s) => s.status),
				["booked", "picked_up", "undelivered"],
			);
		});

		it("the same act again on the same pending attempt answers the same upload id, recorded once", async () => {
			const awb = await pending();
			const first = await a().ndrAction(awb, "RE-ATTEMPT", {});
			assert.deepEqual(await a().ndrAction(awb, "RE-ATTEMPT", {}), first);
			assert.equal((await recorded(awb)).length, 1);
			assert.deepEqual(
				(await calls(awb)).map((c) => c.outcome),
				["accepted", "duplicate"],
			);
			// a new failed attempt is a new pending scan: a new request
			await addScan(db(), awb, "undelivered", { reason: "Premises closed" });
			const second = await a().ndrAction(awb, "RE-ATTEMPT", {});
			assert.notEqual(second.request_id, first.request_id);
			assert.equal((await recorded(awb)).length, 2);
		});

		it("refuses every act unless the last scan is undelivered, in the courier's words", async () => {
			const awb = (await a().book(bookReq())).awb_number;
			assert.equal(
				await refusal(a().ndrAction(awb, "RE-ATTEMPT", {})),
				"RE-ATTEMPT not allowed: shipment is Manifested",
			);
			await addScan(db(), awb, "picked_up");
			assert.equal(
				await refusal(a().ndrAction(awb, "EDIT_DETAILS", { phone: "9876543210" })),
				"EDIT_DETAILS not allowed: shipment is Picked Up",
			);
			await addScan(db(), awb, "undelivered");
			await addScan(db(), awb, "delivered");
			assert.equal(
				await refusal(a().ndrAction(awb, "RE-ATTEMPT", {})),
				"RE-ATTEMPT not allowed: shipment is Delivered",
			);
			assert.equal(
				await refusal(a().ndrAction(awb, "DEFER_DLV", { deferred_date: istDayPlus(1) })),
				"DEFER_DLV not allowed: shipment is Delivered",
			);
			assert.deepEqual(await recorded(awb), []);
			assert.deepEqual(
				(await calls(awb)).map((c) => c.outcome),
				["refused", "refused", "refused", "refused"],
			);
			const rto = await pending();
			await addScan(db(), rto, "rto_initiated");
			assert.equal(
				await refusal(a().ndrAction(rto, "RE-ATTEMPT", {})),
				"RE-ATTEMPT not allowed: shipment is RTO Initiated",
			);
			assert.equal(
				await refusal(a().ndrAction("14999999999999", "RE-ATTEMPT", {})),
				"No such waybill 14999999999999",
			);
		});

		it("DEFER_DLV: after today (IST) and at most 6 days after the first pending day", async () => {
			const awb = await pending();
			assert.match(
				await refusal(a().ndrAction(awb, "DEFER_DLV", { deferred_date: istDayPlus(0) })),
				new RegExp(`^DEFER_DLV date ${istDayPlus(0)} must be after today \\(${istDayPlus(0)}\\)$`),
			);
			assert.equal(
				await refusal(a().ndrAction(awb, "DEFER_DLV", { deferred_date: istDayPlus(7) })),
				`DEFER_DLV date ${istDayPlus(7)} is more than 6 days after the first pending date ${istDayPlus(0)} (latest ${istDayPlus(6)})`,
			);
			assert.equal(
				await refusal(a().ndrAction(awb, "DEFER_DLV", {})),
				"DEFER_DLV needs action_data.deferred_date as YYYY-MM-DD",
			);
			const ok = await a().ndrAction(awb, "DEFER_DLV", { deferred_date: istDayPlus(6) });
			assert.deepEqual(await recorded(awb), [
				{ act: "DEFER_DLV", action_data: { deferred_date: istDayPlus(6) }, request_id: ok.request_id },
			]);
		});

		it("EDIT_DETAILS: records the new phone and address; refuses a new pincode and a bad phone", async () => {
			const awb = await pending();
			const { request_id } = await a().ndrAction(awb, "EDIT_DETAILS", {
				phone: "9988776655",
				address: { address_1: "Flat 9, Andheri West", pincode: "400069" },
			});
			assert.deepEqual(await recorded(awb), [
				{
					act: "EDIT_DETAILS",
					action_data: { phone: "9988776655", add: "Flat 9, Andheri West", pin: "400069" },
					request_id,
				},
			]);
			assert.equal(
				await refusal(
					a().ndrAction(awb, "EDIT_DETAILS", { address: { address_1: "12 MG Road", pincode: "560001" } }),
				),
				"EDIT_DETAILS cannot change the delivery pincode (400069 to 560001); book a new shipment",
			);
			assert.equal(
				await refusal(a().ndrAction(awb, "EDIT_DETAILS", { phone: "12345" })),
				"Invalid consignee phone: must be 10 digits",
			);
			assert.equal(
				await refusal(a().ndrAction(awb, "EDIT_DETAILS", {})),
				"EDIT_DETAILS needs action_data.phone or action_data.add",
			);
		});

		it("SIMULATE_NDR_5XX: 503 on the first act of the AWB, then decided; SIMULATE_NDR_DOWN: 503 always", async () => {
			const flaky = await pending("Ravi SIMULATE_NDR_5XX");
			await assert.rejects(a().ndrAction(flaky, "RE-ATTEMPT", {}), CourierUnavailable);
			assert.deepEqual(await recorded(flaky), []);
			const { request_id } = await a().ndrAction(flaky, "RE-ATTEMPT", {});
			assert.deepEqual(await calls(flaky), [
				{ status: 503, outcome: "503" },
				{ status: 200, outcome: "accepted" },
			]);
			assert.equal((await recorded(flaky))[0].request_id, request_id);
			const down = await pending("Ravi SIMULATE_NDR_DOWN");
			for (let i = 0; i < 3; i++)
				await assert.rejects(a().ndrAction(down, "RE-ATTEMPT", {}), CourierUnavailable);
			assert.deepEqual(
				(await calls(down)).map((c) => c.status),
				[503, 503, 503],
			);
		});

		it("over raw HTTP: several acts in one upload; no data → 400; token required", async () => {
			const ok = await pending();
			const delivered = await pending();
			await addScan(db(), delivered, "delivered");
			const s = sandboxSettings(CODE);
			const post = (body: unknown, token = s.token) =>
				fetch(`${s.baseUrl}/couriers/${CODE}/api/p/update`, {
					method: "POST",
					headers: { Authorization: `Token ${token}`, "Content-Type": "application/json" },
					body: JSON.stringify(body),
				});
			const res = await post({
				data: [
					{ waybill: ok, act: "RE-ATTEMPT" },
					{ waybill: delivered, act: "RE-ATTEMPT" },
					{ waybill: ok, act: "RTO" },
				],
			});
			assert.equal(res.status, 200);
			const body = (await res.json()) as Record<string, unknown>;
			assert.match(String(body.request_id), /^UPL\d{20}$/);
			assert.deepEqual(
				{ ...body, request_id: "x" },
				{
					success: false,
					request_id: "x",
					packages: [
						{ waybill: ok, act: "RE-ATTEMPT", status: "Success", remarks: "Request accepted" },
						{
							waybill: delivered,
							act: "RE-ATTEMPT",
							status: "Fail",
							remarks: "RE-ATTEMPT not allowed: shipment is Delivered",
						},
						{
							waybill: ok,
							act: "RTO",
							status: "Fail",
							remarks: 'Invalid act "RTO": must be RE-ATTEMPT, DEFER_DLV or EDIT_DETAILS',
						},
					],
					error:
						'RE-ATTEMPT not allowed: shipment is Delivered; Invalid act "RTO": must be RE-ATTEMPT, DEFER_DLV or EDIT_DETAILS',
				},
			);
			// the accepted act of the mixed upload is the one recorded
			assert.deepEqual(
				(await recorded(ok)).map((r) => [r.act, r.request_id]),
				[["RE-ATTEMPT", body.request_id]],
			);
			const empty = await post({ data: [] });
			assert.equal(empty.status, 400);
			assert.deepEqual(await empty.json(), { success: false, error: "data is required" });
			assert.equal((await post({ data: [{ waybill: ok, act: "RE-ATTEMPT" }] }, "wrong")).status, 401);
		});
	});
});
