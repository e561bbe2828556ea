/**
 * Courier library, sandbox (Delhivery-protocol) wire: golden fixtures of a
 * track answer of several waybills and of pushed scan bodies → the exact
 * normalized scans (lib/couriers/types.ts TrackingScan), the status mapping
 * table and its defaults, courier times, and the push signature (timestamped,
 * no default key). Pure: no
 * simulator, no network.
 */
import assert from "node:assert/strict";
import { createHmac } from "node:crypto";
import { CourierRefused, CourierUnavailable, SandboxAdapter, type TrackingScan } from "../../lib/couriers";
import {
	courierTimeToUtc,
	parsePush,
	parseTrack,
	parseTrackMany,
	statusOfScan,
} from "../../lib/couriers/sandbox/mapper";
import type { ProxyResponse } from "../../lib/couriers/sandbox/proxy";
import {
	checkPushSignature,
	PUSH_MAX_AGE_S,
	PUSH_MAX_SKEW_S,
	pushReplayKey,
	signedPushHeaders,
	signPush,
} from "../../lib/couriers/sandbox/signature";
import { SCAN_KINDS } from "../../lib/couriers/sandbox/wire";
import { SHIPMENT_STATUSES } from "../../lib/shared/shipment-status";

const SECRET = "a-test-push-key";

/** A track answer of the courier (`GET /api/v1/packages/json/?waybill=…`) as the proxy hands it over. */
const TRACK_ANSWER: ProxyResponse = {
	status: 200,
	body: {
		ShipmentData: [
			{
				// the sandbox's own scans, one answered out of order
				Shipment: {
					AWB: "14000000000101",
					ReferenceNo: "101",
					SortCode: "BOM/400",
					Status: {
						Status: "Delivered",
						StatusType: "DL",
						StatusCode: "EOD-38",
						StatusLocation: "Mumbai",
						StatusDateTime: "2024-03-07T08:45:10.000Z",
						Instructions: "Delivered to consignee",
					},
					Scans: [
						{
							ScanDetail: {
								Scan: "Manifested",
								ScanType: "UD",
								StatusCode: "X-UCI",
								ScannedLocation: "Bengaluru",
								ScanDateTime: "2024-03-05T04:30:00.000Z",
								Instructions: "Manifest uploaded by client",
							},
						},
						{
							ScanDetail: {
								Scan: "Picked Up",
								ScanType: "PU",
								StatusCode: "X-PPOM",
								ScannedLocation: "Bengaluru",
								ScanDateTime: "2024-03-05T09:15:00.000Z",
								Instructions: "",
							},
						},
						{
							ScanDetail: {
								Scan: "Dispatched",
								ScanType: "UD",
								StatusCode: "X-DDD3FD",
								ScannedLocation: "Mumbai",
								ScanDateTime: "2024-03-07T03:00:00.000Z",
								Instructions: "Out for delivery",
							},
						},
						{
							ScanDetail: {
								Scan: "In Transit",
								ScanType: "UD",
								StatusCode: "X-DLL2F",
								ScannedLocation: "Bhiwandi Hub",
								ScanDateTime: "2024-03-06T12:00:00.000Z",
								Instructions: "",
							},
						},
						{
							ScanDetail: {
								Scan: "Delivered",
								ScanType: "DL",
								StatusCode: "EOD-38",
								ScannedLocation: "Mumbai",
								ScanDateTime: "2024-03-07T08:45:10.000Z",
								Instructions: "Delivered to consignee",
							},
						},
					],
				},
			},
			{
				// as a real Delhivery answer: IST times without a zone, codes the sandbox never sends
				Shipment: {
					AWB: "15000000000202",
					ReferenceNo: "202",
					SortCode: null,
					Status: {
						Status: "RTO",
						StatusType: "DL",
						StatusCode: "RD-AC",
						StatusLocation: "Delhi_Okhla_PC (Delhi)",
						StatusDateTime: "2024-03-12T16:00:00",
						Instructions: "",
					},
					Scans: [
						{
							ScanDetail: {
								Scan: "Manifested",
								ScanType: "UD",
								StatusCode: "X-UCI",
								ScannedLocation: "Delhi_Okhla_PC (Delhi)",
								ScanDateTime: "2024-03-05T10:00:00",
								Instructions: "Consignment Manifested",
							},
						},
						{
							ScanDetail: {
								Scan: "Not Picked",
								ScanType: "UD",
								StatusCode: "X-PNP",
								ScannedLocation: "Delhi_Okhla_PC (Delhi)",
								ScanDateTime: "2024-03-05 18:00:00",
								Instructions: "Seller not ready",
							},
						},
						{
							ScanDetail: {
								Scan: "In Transit",
								ScanType: "UD",
								StatusCode: "X-PIOM",
								ScannedLocation: "Delhi_Gateway (Delhi)",
								ScanDateTime: "2024-03-06T11:20:33.125",
								Instructions: "Shipment Recieved at Origin Center",
							},
						},
						{
							ScanDetail: {
								Scan: "In Transit",
								ScanType: "UD",
								StatusCode: "X-DLL2F",
								ScannedLocation: "Nowhere",
								ScanDateTime: "not a time",
								Instructions: "",
							},
						},
						{
							ScanDetail: {
								Scan: "Pending",
								ScanType: "UD",
								StatusCode: "EOD-11",
								ScannedLocation: "Mumbai_Andheri_DC (Maharashtra)",
								ScanDateTime: "2024-03-08T19:05:00+05:30",
								Instructions: "Consignee refused to accept",
							},
						},
						{
							ScanDetail: {
								Scan: "In Transit",
								ScanType: "RT",
								StatusCode: "RT-999",
								ScannedLocation: "Mumbai_Bhiwandi_HB (Maharashtra)",
								ScanDateTime: "2024-03-10T09:00:00",
								Instructions: "Return to origin",
							},
						},
						{
							ScanDetail: {
								Scan: "RTO",
								ScanType: "DL",
								StatusCode: "RD-AC",
								ScannedLocation: "Delhi_Okhla_PC (Delhi)",
								ScanDateTime: "2024-03-12T16:00:00",
								Instructions: "",
							},
						},
					],
				},
			},
			{
				// answered but not asked: ignored
				Shipment: {
					AWB: "99999999999999",
					ReferenceNo: "x",
					SortCode: null,
					Status: {},
					Scans: [
						{
							ScanDetail: {
								Scan: "Delivered",
								ScanType: "DL",
								StatusCode: "EOD-38",
								ScannedLocation: "X",
								ScanDateTime: "2024-03-01T00:00:00Z",
								Instructions: "",
							},
						},
					],
				},
			},
		],
	},
};

/** What {@link TRACK_ANSWER} means, exactly. */
const TRACKED: Map<string, TrackingScan[]> = new Map([
	[
		"14000000000101",
		[
			{
				status: "booked",
				courier_code: "X-UCI",
				courier_status: "Manifested",
				location: "Bengaluru",
				at: "2024-03-05T04:30:00.000Z",
				remarks: "Manifest uploaded by client",
			},
			{
				status: "picked_up",
				courier_code: "X-PPOM",
				courier_status: "Picked Up",
				location: "Bengaluru",
				at: "2024-03-05T09:15:00.000Z",
			},
			{
				status: "in_transit",
				courier_code: "X-DLL2F",
				courier_status: "In Transit",
				location: "Bhiwandi Hub",
				at: "2024-03-06T12:00:00.000Z",
			},
			{
				status: "out_for_delivery",
				courier_code: "X-DDD3FD",
				courier_status: "Dispatched",
				location: "Mumbai",
				at: "2024-03-07T03:00:00.000Z",
				remarks: "Out for delivery",
			},
			{
				status: "delivered",
				courier_code: "EOD-38",
				courier_status: "Delivered",
				location: "Mumbai",
				at: "2024-03-07T08:45:10.000Z",
				remarks: "Delivered to consignee",
			},
		],
	],
	[
		"15000000000202",
		[
			{
				status: "booked",
				courier_code: "X-UCI",
				courier_status: "Manifested",
				location: "Delhi_Okhla_PC (Delhi)",
				at: "2024-03-05T04:30:00.000Z",
				remarks: "Consignment Manifested",
			},
			{
				status: "pickup_scheduled",
				courier_code: "X-PNP",
				courier_status: "Not Picked",
				location: "Delhi_Okhla_PC (Delhi)",
				at: "2024-03-05T12:30:00.000Z",
				remarks: "Seller not ready",
			},
			{
				status: "in_transit",
				courier_code: "X-PIOM",
				courier_status: "In Transit",
				location: "Delhi_Gateway (Delhi)",
				at: "2024-03-06T05:50:33.125Z",
				remarks: "Shipment Recieved at Origin Center",
			},
			{
				status: "undelivered",
				courier_code: "EOD-11",
				courier_status: "Pending",
				location: "Mumbai_Andheri_DC (Maharashtra)",
				at: "2024-03-08T13:35:00.000Z",
				remarks: "Consignee refused to accept",
			},
			{
				status: "rto_in_transit",
				courier_code: "RT-999",
				courier_status: "In Transit",
				location: "Mumbai_Bhiwandi_HB (Maharashtra)",
				at: "2024-03-10T03:30:00.000Z",
				remarks: "Return to origin",
			},
			{
				status: "rto_delivered",
				courier_code: "RD-AC",
				courier_status: "RTO",
				location: "Delhi_Okhla_PC (Delhi)",
				at: "2024-03-12T10:30:00.000Z",
			},
		],
	],
]);

/** A pushed body of three scans of two AWBs (Delhivery's push shape), answered out of order. */
const PUSH_BODY = JSON.stringify([
	{
		Shipment: {
			AWB: "14000000000101",
			Status: {
				Status: "Dispatched",
				StatusCode: "X-DDD3FD",
				StatusType: "UD",
				StatusLocation: "Mumbai_Andheri_DC (Maharashtra)",
				StatusDateTime: "2024-03-07T08:30:00",
				Instructions: "Out for delivery",
			},
		},
	},
	{
		Shipment: {
			AWB: "15000000000202",
			Status: {
				Status: "Pending",
				StatusCode: "EOD-74",
				StatusType: "UD",
				StatusLocation: "Mumbai",
				StatusDateTime: "2024-03-07T03:00:00.000Z",
				Instructions: "Consignee not available",
			},
		},
	},
	{
		Shipment: {
			AWB: "14000000000101",
			Status: {
				Status: "In Transit",
				StatusCode: "X-DLL2F",
				StatusType: "UD",
				StatusLocation: "Mumbai_Bhiwandi_HB (Maharashtra)",
				StatusDateTime: "2024-03-06T17:30:00",
				Instructions: "",
			},
		},
	},
]);

describe("couriers: sandbox wire (golden fixtures)", () => {
	it("a track answer of several waybills → exact normalized scans per AWB asked, oldest first", () => {
		const got = parseTrackMany(TRACK_ANSWER, "sbx-express", [
			"14000000000101",
			"15000000000202",
			"14000000000999",
		]);
		assert.deepEqual(got, TRACKED);
		assert.ok(!got.has("14000000000999"), "an AWB the courier does not know is absent");
		assert.ok(!got.has("99999999999999"), "an AWB not asked is ignored");
	});

	it("one waybill: its scans; an unknown one → CourierRefused with the courier's words", () => {
		assert.deepEqual(
			parseTrack(TRACK_ANSWER, "sbx-express", "15000000000202"),
			TRACKED.get("15000000000202"),
		);
		const none: ProxyResponse = {
			status: 200,
			body: { ShipmentData: [], Error: "No such waybill or Order Id found" },
		};
		assert.throws(
			() => parseTrack(none, "sbx-express", "1"),
			(e: unknown) => e instanceof CourierRefused && e.message === "No such waybill or Order Id found",
		);
		assert.deepEqual(parseTrackMany(none, "sbx-express", ["1", "2"]), new Map());
	});

	it("an unreadable track answer or a 4xx → CourierUnavailable (the courier decided nothing)", () => {
		const cases: ProxyResponse[] = [
			{ status: 200, body: "<html>gateway</html>" },
			{ status: 200, body: { ShipmentData: "nope" } },
			{ status: 400, body: { ShipmentData: [], Error: "refnum or waybill is required" } },
			{ status: 401, body: { detail: "no" } },
		];
		for (const res of cases) {
			assert.throws(() => parseTrackMany(res, "sbx-express", ["1"]), CourierUnavailable, JSON.stringify(res));
		}
	});

	it("a pushed body (array) → scans grouped per AWB in first-seen order, each oldest first", () => {
		const adapter = new SandboxAdapter("sbx-express");
		assert.deepEqual(adapter.parsePush(Buffer.from(PUSH_BODY)), [
			{
				awb_number: "14000000000101",
				scans: [
					{
						status: "in_transit",
						courier_code: "X-DLL2F",
						courier_status: "In Transit",
						location: "Mumbai_Bhiwandi_HB (Maharashtra)",
						at: "2024-03-06T12:00:00.000Z",
					},
					{
						status: "out_for_delivery",
						courier_code: "X-DDD3FD",
						courier_status: "Dispatched",
						location: "Mumbai_Andheri_DC (Maharashtra)",
						at: "2024-03-07T03:00:00.000Z",
						remarks: "Out for delivery",
					},
				],
			},
			{
				awb_number: "15000000000202",
				scans: [
					{
						status: "undelivered",
						courier_code: "EOD-74",
						courier_status: "Pending",
						location: "Mumbai",
						at: "2024-03-07T03:00:00.000Z",
						remarks: "Consignee not available",
					},
				],
			},
		]);
	});

	it("a pushed body (one object, the simulator's shape) → one scan", () => {
		const one = {
			Shipment: {
				AWB: "13000000000303",
				Status: {
					Status: "Lost",
					StatusCode: "LT-100",
					StatusType: "LT",
					StatusLocation: "Pune",
					StatusDateTime: "2024-04-01T10:00:00.000Z",
					Instructions: "Shipment lost in transit",
				},
			},
		};
		assert.deepEqual(parsePush(Buffer.from(JSON.stringify(one))), [
			{
				awb_number: "13000000000303",
				scans: [
					{
						status: "lost",
						courier_code: "LT-100",
						courier_status: "Lost",
						location: "Pune",
						at: "2024-04-01T10:00:00.000Z",
						remarks: "Shipment lost in transit",
					},
				],
			},
		]);
		assert.deepEqual(parsePush(Buffer.from("[]")), []);
	});

	it("a pushed body it cannot read → CourierRefused naming the problem", () => {
		const ok = {
			AWB: "1",
			Status: { Status: "x", StatusCode: "X-UCI", StatusDateTime: "2024-01-01T00:00:00Z" },
		};
		const cases: [string, RegExp][] = [
			["{not json", /^Malformed JSON body$/],
			["null", /^Shipment is required$/],
			['"text"', /^Shipment is required$/],
			[JSON.stringify({ Shipment: { ...ok, AWB: "" } }), /^Shipment\.AWB is required$/],
			[JSON.stringify({ Shipment: { AWB: "1" } }), /^Shipment\.Status is required$/],
			[
				JSON.stringify([
					{ Shipment: ok },
					{ Shipment: { ...ok, Status: { ...ok.Status, StatusDateTime: "soon" } } },
				]),
				/^entry 1: Shipment\.Status\.StatusDateTime is not a readable time$/,
			],
			[JSON.stringify([{ Shipment: ok }, null]), /^entry 1: Shipment is required$/],
		];
		for (const [raw, words] of cases) {
			assert.throws(
				() => parsePush(Buffer.from(raw), "sbx-express"),
				(e: unknown) =>
					e instanceof CourierRefused && words.test(e.message) && e.courierCode === "sbx-express",
				raw,
			);
		}
	});

	it("every normalized status but booked has a sandbox scan; each maps back to its status but Manifested → booked", () => {
		assert.deepEqual(Object.keys(SCAN_KINDS).sort(), SHIPMENT_STATUSES.filter((s) => s !== "booked").sort());
		const codes = new Set<string>();
		for (const [key, k] of Object.entries(SCAN_KINDS)) {
			assert.equal(k.code, key);
			assert.ok(!codes.has(k.StatusCode), `StatusCode ${k.StatusCode} used once`);
			codes.add(k.StatusCode);
			// the courier's "Manifested" is "shipment data received": our booked (our manifest sets manifested)
			const want = key === "manifested" ? "booked" : key;
			assert.equal(statusOfScan(k), want, `${k.StatusCode} → ${want}`);
			// the words and type alone (an unknown code) mean the same status
			assert.equal(statusOfScan({ ...k, StatusCode: "ZZ-1" }), want, `${k.Scan}/${k.ScanType} → ${want}`);
		}
		// nothing a courier scans is Ready-for-pickup
		for (const k of Object.values(SCAN_KINDS)) {
			assert.notEqual(statusOfScan(k), "manifested", k.StatusCode);
			assert.notEqual(statusOfScan({ ...k, StatusCode: "ZZ-1" }), "manifested", k.Scan);
		}
		// existing codes are unchanged
		assert.deepEqual(
			["manifested", "picked_up", "in_transit", "out_for_delivery", "delivered", "undelivered"].map(
				(s) => SCAN_KINDS[s as keyof typeof SCAN_KINDS].StatusCode,
			),
			["X-UCI", "X-PPOM", "X-DLL2F", "X-DDD3FD", "EOD-38", "EOD-74"],
		);
	});

	it("unknown codes: words, then a default by ScanType; never a throw", () => {
		const cases: [{ StatusCode?: string; ScanType?: string; Scan?: string }, string][] = [
			[{ StatusCode: "??", ScanType: "UD", Scan: "Bagged at hub" }, "in_transit"],
			[{ StatusCode: "??", ScanType: "PU", Scan: "Collected" }, "picked_up"],
			[{ StatusCode: "??", ScanType: "PP", Scan: "Open" }, "picked_up"],
			[{ StatusCode: "??", ScanType: "PP", Scan: "Pending" }, "pickup_scheduled"],
			[{ StatusCode: "??", ScanType: "DL", Scan: "Handed over" }, "delivered"],
			[{ StatusCode: "??", ScanType: "DL", Scan: "DTO" }, "delivered"],
			[{ StatusCode: "??", ScanType: "DL", Scan: "RTO" }, "rto_delivered"],
			[{ StatusCode: "??", ScanType: "RT", Scan: "Dispatched" }, "rto_in_transit"],
			[{ StatusCode: "??", ScanType: "RT", Scan: "RTO initiated by seller" }, "rto_initiated"],
			[{ StatusCode: "??", ScanType: "CN", Scan: "Whatever" }, "cancelled"],
			[{ StatusCode: "??", ScanType: "UD", Scan: "Out for Delivery" }, "out_for_delivery"],
			[{ StatusCode: "??", ScanType: "UD", Scan: "Shipment damaged at hub" }, "damaged"],
			[{ StatusCode: "eod-104", ScanType: "UD", Scan: "Anything" }, "undelivered"],
			[{ StatusCode: "x-uci", ScanType: "DL", Scan: "" }, "booked"],
			[{ StatusCode: "??", ScanType: "UD", Scan: "Consignment Manifested" }, "booked"],
			[{ StatusCode: "??", ScanType: "PP", Scan: "Manifest uploaded" }, "booked"],
			[{ ScanType: "ZZ", Scan: "Mystery" }, "in_transit"],
			[{}, "in_transit"],
		];
		for (const [scan, want] of cases) assert.equal(statusOfScan(scan), want, JSON.stringify(scan));
	});

	it("courier times: a zone-less time is IST; anything unreadable is null", () => {
		assert.equal(courierTimeToUtc("2024-03-05T10:00:00"), "2024-03-05T04:30:00.000Z");
		assert.equal(courierTimeToUtc("2024-03-05 10:00"), "2024-03-05T04:30:00.000Z");
		assert.equal(courierTimeToUtc("2024-03-05T10:00:00.5"), "2024-03-05T04:30:00.500Z");
		assert.equal(courierTimeToUtc("2024-03-05T10:00:00Z"), "2024-03-05T10:00:00.000Z");
		assert.equal(courierTimeToUtc("2024-03-05T10:00:00+0100"), "2024-03-05T09:00:00.000Z");
		for (const bad of ["", "  ", "soon", 12, null, undefined]) assert.equal(courierTimeToUtc(bad), null);
	});

	it("verifyPush: the HMAC-SHA256 of `<timestamp>.<raw body>` under the key, the timestamp within −5 min…+1 min, nothing else", () => {
		const adapter = new SandboxAdapter("sbx-express", { webhookSecret: SECRET });
		const raw = Buffer.from(PUSH_BODY);
		const ts = Math.floor(Date.now() / 1000);
		const hex = createHmac("sha256", SECRET).update(`${ts}.${PUSH_BODY}`).digest("hex");
		assert.equal(signPush(raw, SECRET, ts), `sha256=${hex}`);
		assert.deepEqual(signedPushHeaders(raw, SECRET, ts * 1000 + 999), {
			"x-sandbox-timestamp": String(ts),
			"x-sandbox-signature": `sha256=${hex}`,
		});
		const h = (sig: string | undefined, ...t: Array<string | undefined>) => ({
			"x-sandbox-timestamp": t.length ? t[0] : String(ts),
			"x-sandbox-signature": sig,
		});
		assert.equal(adapter.verifyPush(raw, h(`sha256=${hex}`)), true);
		assert.equal(adapter.verifyPush(raw, h(`sha256=${hex.toUpperCase()}`)), true);
		const tampered = Buffer.from(PUSH_BODY.replace("Dispatched", "Delivered"));
		assert.equal(adapter.verifyPush(tampered, h(`sha256=${hex}`)), false);
		for (const header of [
			undefined,
			"",
			hex,
			`sha1=${hex}`,
			`sha256=${hex.slice(1)}`,
			`sha256=${hex}00`,
			`sha256=${"z".repeat(64)}`,
			`sha256=${createHmac("sha256", "other-secret").update(`${ts}.${PUSH_BODY}`).digest("hex")}`,
			// the body alone (the scheme before timestamps) no longer verifies
			`sha256=${createHmac("sha256", SECRET).update(raw).digest("hex")}`,
		]) {
			assert.equal(adapter.verifyPush(raw, h(header)), false, String(header));
		}
		// the timestamp: required, digits, and covered by the signature
		for (const t of [undefined, "", "soon", String(ts + 1), `${ts}.0`, "-1"])
			assert.equal(adapter.verifyPush(raw, h(`sha256=${hex}`, t)), false, String(t));
		assert.equal(
			adapter.verifyPush(raw, { "X-Sandbox-Signature": `sha256=${hex}`, "x-sandbox-timestamp": String(ts) }),
			false,
			"headers are lower-cased",
		);
		const other = new SandboxAdapter("sbx-express", { webhookSecret: "rotated" });
		assert.equal(other.verifyPush(raw, h(`sha256=${hex}`)), false);
		assert.equal(other.verifyPush(raw, signedPushHeaders(raw, "rotated")), true);
	});

	it("checkPushSignature: stale (over 5 minutes old) and future (over 1 minute ahead) timestamps are refused", () => {
		const raw = Buffer.from(PUSH_BODY);
		const now = Date.UTC(2025, 0, 1, 12, 0, 0);
		const at = (offsetS: number) => signedPushHeaders(raw, SECRET, now + offsetS * 1000);
		assert.equal(checkPushSignature(raw, at(0), SECRET, now), "ok");
		assert.equal(checkPushSignature(raw, at(-PUSH_MAX_AGE_S), SECRET, now), "ok");
		assert.equal(checkPushSignature(raw, at(-PUSH_MAX_AGE_S - 1), SECRET, now), "stale");
		assert.equal(checkPushSignature(raw, at(PUSH_MAX_SKEW_S), SECRET, now), "ok");
		assert.equal(checkPushSignature(raw, at(PUSH_MAX_SKEW_S + 1), SECRET, now), "stale");
		assert.equal(checkPushSignature(raw, at(-86_400), SECRET, now), "stale");
		assert.equal(checkPushSignature(raw, {}, SECRET, now), "missing");
		assert.equal(checkPushSignature(raw, at(0), "another", now), "mismatch");
		assert.equal(checkPushSignature(raw, at(0), "", now), "no_secret", "no key: every push refused");
	});

	it("pushReplayKey: the signature's hex, lower-cased (the same push in either case is one key)", () => {
		const raw = Buffer.from(PUSH_BODY);
		const h = signedPushHeaders(raw, SECRET);
		const hex = h["x-sandbox-signature"].slice("sha256=".length);
		assert.equal(pushReplayKey(h), hex);
		assert.equal(pushReplayKey({ ...h, "x-sandbox-signature": `sha256=${hex.toUpperCase()}` }), hex);
		assert.equal(pushReplayKey({}), null);
	});

	it("the adapter's key comes from SANDBOX_WEBHOOK_SECRET; unset, there is no default and every push is refused", () => {
		const saved = process.env.SANDBOX_WEBHOOK_SECRET;
		try {
			delete process.env.SANDBOX_WEBHOOK_SECRET;
			const none = new SandboxAdapter("sbx-lite");
			assert.equal(none.settings.webhookSecret, "");
			const raw = Buffer.from("{}");
			for (const key of ["sandbox-webhook-secret", ""])
				assert.equal(none.verifyPush(raw, signedPushHeaders(raw, key)), false, `signed with "${key}"`);
			process.env.SANDBOX_WEBHOOK_SECRET = "s3cret";
			const a = new SandboxAdapter("sbx-lite");
			assert.equal(a.verifyPush(raw, signedPushHeaders(raw, "s3cret")), true);
			assert.equal(a.verifyPush(raw, signedPushHeaders(raw, "sandbox-webhook-secret")), false);
			assert.equal(a.trackBatchSize, 50);
		} finally {
			if (saved === undefined) delete process.env.SANDBOX_WEBHOOK_SECRET;
			else process.env.SANDBOX_WEBHOOK_SECRET = saved;
		}
	});
});
