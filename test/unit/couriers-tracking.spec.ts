/**
 * Tracking through the sandbox adapter against the real simulator over HTTP:
 * every emittable scan (`simulator.emitScan`) tracked back with its normalized
 * status; `trackMany` of up to 50 waybills in one track call (more in batches
 * of 50, unknown AWBs absent); the signed scan push to `SANDBOX_SCAN_PUSH_URL`
 * (verified and parsed by the adapter into the same scan the track API
 * answers), and a failed push that changes nothing for the caller.
 */
import assert from "node:assert/strict";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { ServiceBroker } from "moleculer";
import type { Address, CourierInfo, SimulatorEvent } from "../../lib/contracts";
import { adapterFor, type BookRequest, type PickupLocation, type TrackingScan } from "../../lib/couriers";
import { sandboxSettings } from "../../lib/couriers/sandbox/settings";
import { SCAN_KINDS } from "../../lib/couriers/sandbox/wire";
import { getSequelize, select } from "../../lib/platform/db";
import { addScan } from "../../lib/simulator/api";
import { EMITTABLE_EVENTS } from "../../lib/simulator/couriers";
import { startBroker } from "../helpers/broker";
import { callAs } from "../helpers/call";
import { bookRequestFor, address as fixtureAddress, courier as fixtureCourier } from "../helpers/fixtures";
import { freePort } from "../helpers/net";
import { eventually } from "../helpers/poll";

const run = Math.random().toString(36).slice(2, 8);
let seq = 0;
const ref = () => `trk-${run}-${++seq}`;

const courier = (code: string): CourierInfo =>
	fixtureCourier(1, code, code, { adapter: "sandbox", reverse: true, cod: true });
const address: Address = fixtureAddress({ name: "Asha Traders" });
const WH = `WH-TRK-${run}`;
const location: PickupLocation = {
	warehouse_code: WH,
	warehouse_name: "Main Warehouse",
	address,
	return_address: address,
};

function bookReq(reference: string): BookRequest {
	return bookRequestFor(reference, WH, address);
}

/** A pushed request as the receiver got it. */
interface Received {
	path: string;
	headers: Record<string, string | undefined>;
	raw: Buffer;
}

/** A webhook receiver on a free port: records every POST; answers `status` (or never, when `hang`). */
async function receiver(opts: { status?: number; hang?: boolean } = {}) {
	const got: Received[] = [];
	const server: Server = createServer((req: IncomingMessage, res) => {
		const chunks: Buffer[] = [];
		req.on("data", (c: Buffer) => chunks.push(c));
		req.on("end", () => {
			const headers: Record<string, string | undefined> = {};
			for (const [k, v] of Object.entries(req.headers)) headers[k] = Array.isArray(v) ? v.join(",") : v;
			got.push({ path: req.url ?? "", headers, raw: Buffer.concat(chunks) });
			if (opts.hang) return;
			res.writeHead(opts.status ?? 200, { "Content-Type": "application/json" });
			res.end("{}");
		});
	});
	const port = await freePort();
	await new Promise<void>((r) => server.listen(port, "127.0.0.1", () => r()));
	return {
		got,
		url: `http://127.0.0.1:${port}/v1/tracking/webhooks/{courier}`,
		close: () =>
			new Promise<void>((r) => {
				server.closeAllConnections();
				server.close(() => r());
			}),
	};
}

/** The waybill lists of the track calls the simulator logged for courier `code`, oldest first. */
async function trackCalls(code: string): Promise<string[][]> {
	const rows = await select<{ refnum: string }>(
		getSequelize(),
		`SELECT refnum FROM simulator.calls WHERE courier_code = $1 AND endpoint = 'lookup' ORDER BY id`,
		[code],
	);
	return rows.map((r) => r.refnum.split(","));
}

describe("couriers: tracking and scan push against the simulator", function () {
	this.timeout(30_000);
	let broker: ServiceBroker;

	before(async () => {
		process.env.SANDBOX = "1";
		process.env.SANDBOX_COURIER_PORT = String(await freePort());
		delete process.env.SANDBOX_COURIER_URL;
		delete process.env.SANDBOX_SCAN_PUSH_URL;
		process.env.SANDBOX_COURIER_DELAY_MS = "0";
		broker = await startBroker(["simulator"]);
		for (const code of ["sbx-express", "sbx-surface"])
			await adapterFor(courier(code)).registerWarehouse(location);
	});

	afterEach(() => {
		delete process.env.SANDBOX_SCAN_PUSH_URL;
	});

	after(async () => {
		await broker?.stop();
	});

	const emit = (awb_number: string, event: SimulatorEvent, reason?: string) =>
		callAs(broker, "simulator.emitScan", { awb_number, event, ...(reason ? { reason } : {}) });

	it("every status but booked, manifested and cancelled can be emitted and is tracked back normalized", async () => {
		assert.deepEqual([...EMITTABLE_EVENTS].sort(), [
			"damaged",
			"delivered",
			"in_transit",
			"lost",
			"out_for_delivery",
			"picked_up",
			"pickup_scheduled",
			"rto_delivered",
			"rto_in_transit",
			"rto_initiated",
			"undelivered",
		]);
		const a = adapterFor(courier("sbx-express"));
		const awbs: Record<string, string> = {};
		for (const event of EMITTABLE_EVENTS) {
			awbs[event] = (await a.book(bookReq(ref()))).awb_number;
			const scan = await emit(awbs[event], event, `why ${event}`);
			assert.equal(scan.code, event);
			assert.equal(scan.courier_code, "sbx-express");
		}
		const tracked = await a.trackMany(Object.values(awbs));
		assert.equal(tracked.size, EMITTABLE_EVENTS.length);
		for (const event of EMITTABLE_EVENTS) {
			const scans = tracked.get(awbs[event]);
			assert.ok(scans, event);
			assert.deepEqual(
				scans.map((s) => s.status),
				["booked", event],
				"the create scan (the courier's Manifested is our booked), then the event",
			);
			assert.equal(scans[0].courier_code, SCAN_KINDS.manifested.StatusCode);
			assert.equal(scans[0].courier_status, SCAN_KINDS.manifested.Scan);
			const last = scans[1];
			assert.equal(last.courier_code, SCAN_KINDS[event].StatusCode);
			assert.equal(last.courier_status, SCAN_KINDS[event].Scan);
			assert.equal(last.remarks, `why ${event}`);
			assert.equal(last.location, event === "rto_delivered" ? "Origin" : "Mumbai");
			assert.match(last.at, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
		}
		// the same answers one at a time
		assert.deepEqual(await a.track(awbs.lost), tracked.get(awbs.lost));
	});

	it("trackMany: 50 waybills in one track call, unknown ones absent; 51 in two calls; none in none", async () => {
		const a = adapterFor(courier("sbx-surface"));
		const booked = await Promise.all(Array.from({ length: 49 }, () => a.book(bookReq(ref()))));
		const awbs = booked.map((b) => b.awb_number);
		// a scan on every other one, so the answer holds several scan lists
		for (const awb of awbs.filter((_, i) => i % 2 === 0)) await emit(awb, "picked_up");
		const unknown = "150000000000000";
		const calls0 = (await trackCalls("sbx-surface")).length;
		const t0 = Date.now();
		const got = await a.trackMany([...awbs, unknown]);
		const ms = Date.now() - t0;
		assert.equal(got.size, 49);
		assert.ok(!got.has(unknown));
		awbs.forEach((awb, i) => {
			assert.deepEqual(
				got.get(awb)?.map((s) => s.status),
				i % 2 === 0 ? ["booked", "picked_up"] : ["booked"],
				awb,
			);
		});
		const calls1 = await trackCalls("sbx-surface");
		assert.deepEqual(calls1.slice(calls0), [[...awbs, unknown]], "one track call for 50 waybills");
		assert.ok(ms < 2_000, `50 waybills tracked in ${ms} ms`);

		// 51 distinct waybills (duplicates and blanks dropped): two calls, 50 then 1; another courier's AWB is absent
		const express = await adapterFor(courier("sbx-express")).book(bookReq(ref()));
		const more = await a.trackMany([unknown, express.awb_number, ...awbs, awbs[0], " "]);
		assert.equal(more.size, 49);
		assert.ok(!more.has(express.awb_number));
		assert.deepEqual((await trackCalls("sbx-surface")).slice(calls1.length), [
			[unknown, express.awb_number, ...awbs.slice(0, 48)],
			[awbs[48]],
		]);

		const calls2 = (await trackCalls("sbx-surface")).length;
		assert.deepEqual(await a.trackMany([]), new Map<string, TrackingScan[]>());
		assert.equal((await trackCalls("sbx-surface")).length, calls2, "no AWB, no call");
	});

	it("with SANDBOX_SCAN_PUSH_URL set, an emitted scan is pushed signed; the adapter verifies and reads it", async () => {
		const hook = await receiver();
		try {
			process.env.SANDBOX_SCAN_PUSH_URL = hook.url;
			const a = adapterFor(courier("sbx-express"));
			const { awb_number } = await a.book(bookReq(ref()));
			const emitted = await emit(awb_number, "undelivered", "Consignee not available");
			await eventually(() => hook.got.length === 1, { what: "the push" });
			const [push] = hook.got;
			assert.equal(push.path, "/v1/tracking/webhooks/sbx-express");
			assert.equal(push.headers["content-type"], "application/json");
			assert.match(String(push.headers["x-sandbox-signature"]), /^sha256=[0-9a-f]{64}$/);
			const ts = Number(push.headers["x-sandbox-timestamp"]);
			assert.ok(Math.abs(ts - Date.now() / 1000) < 30, `x-sandbox-timestamp ${ts} is now (unix seconds)`);
			assert.equal(a.verifyPush(push.raw, push.headers), true);
			assert.equal(a.verifyPush(Buffer.concat([push.raw, Buffer.from(" ")]), push.headers), false);
			assert.deepEqual(JSON.parse(push.raw.toString()), {
				Shipment: {
					AWB: awb_number,
					Status: {
						Status: "Pending",
						StatusCode: "EOD-74",
						StatusType: "UD",
						StatusLocation: "Mumbai",
						StatusDateTime: emitted.at,
						Instructions: "Consignee not available",
					},
				},
			});
			const tracked = (await a.track(awb_number)).at(-1);
			assert.deepEqual(a.parsePush(push.raw), [{ awb_number, scans: [tracked] }], "push and poll agree");

			// the HTTP scan endpoint pushes too, signed under the configured secret
			const runSecret = process.env.SANDBOX_WEBHOOK_SECRET;
			process.env.SANDBOX_WEBHOOK_SECRET = "rotated-secret";
			try {
				const { baseUrl, token } = sandboxSettings("sbx-express");
				const res = await fetch(`${baseUrl}/couriers/sbx-express/sandbox/scan`, {
					method: "POST",
					headers: { Authorization: `Token ${token}`, "Content-Type": "application/json" },
					body: JSON.stringify({ waybill: awb_number, event: "rto_initiated" }),
				});
				assert.equal(res.status, 200);
				await eventually(() => hook.got.length === 2, { what: "the second push" });
				const second = hook.got[1];
				assert.equal(a.verifyPush(second.raw, second.headers), false, "signed under the new secret");
				assert.equal(adapterFor(courier("sbx-express")).verifyPush(second.raw, second.headers), true);
				assert.equal(a.parsePush(second.raw)[0].scans[0].status, "rto_initiated");
			} finally {
				process.env.SANDBOX_WEBHOOK_SECRET = runSecret;
			}
		} finally {
			await hook.close();
		}
	});

	it("no push without SANDBOX_SCAN_PUSH_URL", async () => {
		const a = adapterFor(courier("sbx-express"));
		const { awb_number } = await a.book(bookReq(ref()));
		const added = await addScan(getSequelize(), awb_number, "in_transit", { logger: { warn() {} } });
		assert.equal(added?.scan.code, "in_transit");
		assert.equal(added?.pushed, null);
		process.env.SANDBOX_SCAN_PUSH_URL = "  ";
		assert.equal(
			(await addScan(getSequelize(), awb_number, "in_transit", { logger: { warn() {} } }))?.pushed,
			null,
		);
	});

	it("no push without SANDBOX_WEBHOOK_SECRET (nothing to sign with): a warning, the scan still stored", async () => {
		const a = adapterFor(courier("sbx-express"));
		const { awb_number } = await a.book(bookReq(ref()));
		const hook = await receiver();
		const runSecret = process.env.SANDBOX_WEBHOOK_SECRET;
		const warnings: string[] = [];
		try {
			process.env.SANDBOX_SCAN_PUSH_URL = hook.url;
			delete process.env.SANDBOX_WEBHOOK_SECRET;
			const added = await addScan(getSequelize(), awb_number, "in_transit", {
				logger: { warn: (m: string) => warnings.push(m) },
			});
			assert.equal(added?.scan.code, "in_transit");
			assert.equal(added?.pushed, null);
			assert.match(warnings[0], /not pushed: SANDBOX_WEBHOOK_SECRET is not set/);
			assert.equal(hook.got.length, 0);
		} finally {
			process.env.SANDBOX_WEBHOOK_SECRET = runSecret;
			await hook.close();
		}
	});

	it("a failed push (refused, unreachable or hanging receiver) is logged; the scan is stored and emitScan answers at once", async () => {
		const a = adapterFor(courier("sbx-express"));
		const { awb_number } = await a.book(bookReq(ref()));
		const warnings: string[] = [];
		const logger = { warn: (m: string) => warnings.push(m) };

		const refusing = await receiver({ status: 401 });
		try {
			process.env.SANDBOX_SCAN_PUSH_URL = refusing.url;
			const added = await addScan(getSequelize(), awb_number, "picked_up", { logger });
			await added?.pushed;
			assert.equal(refusing.got.length, 1);
			assert.match(
				warnings[0],
				/scan push of \d+ to .*sbx-express failed \(HTTP 401\); the poller will find it/,
			);
		} finally {
			await refusing.close();
		}

		process.env.SANDBOX_SCAN_PUSH_URL = `http://127.0.0.1:${await freePort()}/hook/{courier}`;
		const added = await addScan(getSequelize(), awb_number, "in_transit", { logger });
		await added?.pushed;
		assert.match(warnings[1], /failed \(ECONNREFUSED\)/);

		const hanging = await receiver({ hang: true });
		try {
			process.env.SANDBOX_SCAN_PUSH_URL = hanging.url;
			const t0 = Date.now();
			const scan = await emit(awb_number, "out_for_delivery");
			assert.ok(Date.now() - t0 < 1_000, "emitScan does not wait for the push");
			assert.equal(scan.code, "out_for_delivery");
			const slow = await addScan(getSequelize(), awb_number, "undelivered", { logger });
			await slow?.pushed;
			assert.match(warnings[2], /failed \(no answer within 2000 ms\)/);
		} finally {
			await hanging.close();
		}
		assert.deepEqual(
			(await a.track(awb_number)).map((s) => s.status),
			["booked", "picked_up", "in_transit", "out_for_delivery", "undelivered"],
		);
	});
});
