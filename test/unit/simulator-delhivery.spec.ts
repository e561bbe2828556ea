/**
 * The simulator's Delhivery protocol (lib/simulator/delhivery.ts) against the
 * Delhivery adapter's golden fixtures (test/fixtures/couriers/delhivery): each
 * fixture's `request` is replayed against the simulator (its references, AWBs,
 * warehouse name and dates swapped for this run's) and the answer must have
 * the SHAPE of the fixture's documented response (its keys, with the same value types;
 * generated values such as AWBs differ), so the simulator cannot drift from
 * the protocol the real adapter speaks.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { ServiceBroker } from "moleculer";
import { startBroker } from "../helpers/broker";
import { callAs } from "../helpers/call";
import { freePort } from "../helpers/net";

/** A fixture's request (body normalised: a form body as an object with `data` parsed). */
interface FixtureRequest {
	method: string;
	path: string;
	query: Record<string, string>;
	headers: Record<string, string>;
	body: unknown;
}

interface Fixture {
	operation: string;
	request: FixtureRequest | null;
	responses: { name: string; status: number; body: string }[];
}

const DIR = join(__dirname, "..", "fixtures", "couriers", "delhivery");

/** Loads fixture `<name>.json`. */
function fixture(name: string): Fixture {
	return JSON.parse(readFileSync(join(DIR, `${name}.json`), "utf8")) as Fixture;
}

/**
 * The shape of a JSON value: objects → their keys (sorted) with shapes, arrays →
 * the shape of their first element (`[]` when empty), else `typeof` / "null".
 */
function shapeOf(v: unknown): unknown {
	if (v === null) return "null";
	if (Array.isArray(v)) return v.length ? [shapeOf(v[0])] : [];
	if (typeof v === "object") {
		const o = v as Record<string, unknown>;
		return Object.fromEntries(
			Object.keys(o)
				.sort()
				.map((k) => [k, shapeOf(o[k])]),
		);
	}
	return typeof v;
}

/**
 * Same shape: every key of the documented answer present with the same type
 * (the simulator may add keys, as some fixtures quote only part of an answer);
 * an empty array on either side matches any array.
 */
function sameShape(got: unknown, want: unknown, path = "$"): void {
	if (Array.isArray(got) && Array.isArray(want)) {
		if (got.length && want.length) sameShape(got[0], want[0], `${path}[0]`);
		return;
	}
	if (got && want && typeof got === "object" && typeof want === "object") {
		const missing = Object.keys(want).filter((k) => !(k in got));
		assert.deepEqual(missing, [], `keys of ${path} missing from the simulator's answer`);
		for (const k of Object.keys(want))
			sameShape((got as Record<string, unknown>)[k], (want as Record<string, unknown>)[k], `${path}.${k}`);
		return;
	}
	assert.equal(shapeOf(got), shapeOf(want), `type of ${path}`);
}

const run = Math.random().toString(36).slice(2, 8);
const IST_MS = 330 * 60_000;
/** IST calendar day `days` from today. */
function istDay(days: number): string {
	return new Date(Date.now() + IST_MS + days * 86_400_000).toISOString().slice(0, 10);
}

describe("simulator: Delhivery protocol against the golden fixtures", function () {
	this.timeout(15_000);
	let broker: ServiceBroker;
	let base: string;
	/** fixture values → this run's values, replaced in every replayed request */
	const swap = new Map<string, string>([
		["WH-BLR-01", `WH-${run}`],
		['"501"', `"dl-${run}-1"`],
		['"502"', `"dl-${run}-2"`],
		["2026-11-27", istDay(1)],
		["2026-11-28", istDay(2)],
	]);

	/** Replays `req` (after the swaps) against the simulator; answers status, content type and body text. */
	async function replay(
		req: FixtureRequest,
		opts: { token?: string | null } = {},
	): Promise<{ status: number; type: string; text: string; json: () => unknown }> {
		// one pass over every key at once: a replacement is never replaced again (the fixture's
		// "2026-11-27" may become today's date, which is another key's text)
		const keys = [...swap.keys()].sort((a, b) => b.length - a.length);
		const any = new RegExp(keys.map((k) => k.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")).join("|"), "g");
		const raw = JSON.stringify(req).replace(any, (m) => swap.get(m) ?? m);
		const r = JSON.parse(raw) as FixtureRequest;
		const headers: Record<string, string> = { ...r.headers };
		const token = opts.token === undefined ? "sandbox-token" : opts.token;
		if (token) headers.authorization = `Token ${token}`;
		let body: string | undefined;
		if (r.body !== null && r.body !== undefined) {
			if (headers["content-type"] === "application/x-www-form-urlencoded") {
				const f = r.body as Record<string, unknown>;
				body = new URLSearchParams(
					Object.entries(f).map(([k, v]): [string, string] => [
						k,
						typeof v === "string" ? v : JSON.stringify(v),
					]),
				).toString();
			} else body = JSON.stringify(r.body);
		}
		const qs = new URLSearchParams(r.query).toString();
		const res = await fetch(`${base}${r.path}${qs ? `?${qs}` : ""}`, { method: r.method, headers, body });
		const text = await res.text();
		return {
			status: res.status,
			type: res.headers.get("content-type") ?? "",
			text,
			json: () => JSON.parse(text),
		};
	}

	/** Replays fixture `name`'s request and checks the answer against its response `response`. */
	async function check(name: string, response: string, token?: string | null): Promise<unknown> {
		const f = fixture(name);
		assert.ok(f.request, `${name} has a request`);
		const want = f.responses.find((r) => r.name === response);
		assert.ok(want, `${name} has a response ${response}`);
		const got = await replay(f.request, { token });
		assert.equal(got.status, want.status, `${name}/${response} status (body ${got.text.slice(0, 300)})`);
		const body = got.json();
		sameShape(body, JSON.parse(want.body));
		return body;
	}

	before(async () => {
		process.env.SANDBOX = "1";
		const port = await freePort();
		process.env.SANDBOX_COURIER_PORT = String(port);
		delete process.env.SANDBOX_COURIER_URL;
		process.env.SANDBOX_COURIER_DELAY_MS = "5";
		broker = await startBroker(["simulator"]);
		base = `http://127.0.0.1:${port}/delhivery`;
	});

	after(async () => {
		await broker?.stop();
		delete process.env.SANDBOX_COURIER_DELAY_MS;
	});

	it("every fixture with a request is replayed by this spec", () => {
		const covered = [
			"registerWarehouse",
			"editWarehouse",
			"book",
			"book-reverse-prepaid",
			"track",
			"trackMany",
			"lookupByReference",
			"fetchLabel",
			"prefetchWaybills",
			"rate",
			"serviceability",
			"requestPickup",
			"ndrAction",
			"ndrAction-edit-details",
			"ndrActionStatus",
			"cancel",
		];
		const withRequest = readdirSync(DIR)
			.filter((f) => f.endsWith(".json"))
			.map((f) => f.slice(0, -5))
			.filter((n) => fixture(n).request !== null);
		assert.deepEqual(withRequest.filter((n) => !covered.includes(n)).sort(), []);
	});

	it("answers 401 in Delhivery's words without the token", async () => {
		await check("track", "unauthorized", null);
		await check("book", "unauthorized", "wrong-token");
	});

	it("plays the documented flow: warehouse, book, track, label, pool, rate, pincodes, pickup, NDR, cancel", async () => {
		// warehouse: create 201, create again → exists (400), edit 200
		await check("registerWarehouse", "ok");
		await check("registerWarehouse", "exists-then-edit");
		await check("editWarehouse", "ok");

		// a create before the pickup location is known → success:false with rmk
		swap.set("WH-BLR-01", `WH-${run}-unknown`);
		const refused = (await check("book", "refused-rmk")) as { rmk: string };
		assert.match(refused.rmk, /ClientWarehouse matching query does not exist/);
		swap.set("WH-BLR-01", `WH-${run}`);

		const booked = (await check("book", "ok")) as { packages: { waybill: string; refnum: string }[] };
		const awb1 = booked.packages[0].waybill;
		assert.equal(booked.packages[0].refnum, `dl-${run}-1`);
		assert.match(awb1, /^\d{14}$/);
		// the same reference again answers the same waybill (Delhivery's duplicate order id)
		const again = (await check("book", "ok")) as { packages: { waybill: string; remarks: string[] }[] };
		assert.equal(again.packages[0].waybill, awb1);
		assert.deepEqual(again.packages[0].remarks, ["Duplicate order id"]);
		const reverse = (await check("book-reverse-prepaid", "ok")) as { packages: { waybill: string }[] };
		const awb2 = reverse.packages[0].waybill;
		swap.set("1490810000123", awb1);
		swap.set("1490810000124", awb2);

		// tracking by waybill, by several (an unknown one left out), by reference
		const t = (await check("track", "ok")) as { ShipmentData: { Shipment: { AWB: string } }[] };
		assert.equal(t.ShipmentData[0].Shipment.AWB, awb1);
		const many = (await check("trackMany", "ok")) as { ShipmentData: unknown[] };
		assert.equal(many.ShipmentData.length, 2);
		await check("lookupByReference", "ok");
		swap.set('"501"', `"dl-${run}-none"`);
		await check("lookupByReference", "unknown");
		swap.set('"501"', `"dl-${run}-1"`);

		// the packing slip's link serves the PDF
		const slip = (await check("fetchLabel", "ok-link")) as { packages: { pdf_download_link: string }[] };
		const pdf = await fetch(slip.packages[0].pdf_download_link);
		assert.equal(pdf.status, 200);
		assert.equal(pdf.headers.get("content-type"), "application/pdf");
		assert.equal(
			Buffer.from(await pdf.arrayBuffer())
				.subarray(0, 5)
				.toString(),
			"%PDF-",
		);

		// waybill pool, rate, pin-codes
		const pool = (await check("prefetchWaybills", "ok")) as string;
		assert.equal(pool.split(",").length, 3);
		await check("rate", "ok");
		const pins = (await check("serviceability", "ok")) as {
			delivery_codes: { postal_code: { pin: number } }[];
		};
		assert.deepEqual(
			pins.delivery_codes.map((d) => d.postal_code.pin),
			[560058, 400050],
		);

		// pickup request, then the same location and day again
		await check("requestPickup", "ok");
		await check("requestPickup", "refused-exists");
		// a day already past: field-keyed words, as Delhivery answers
		swap.set("2026-11-27", istDay(-1));
		await check("requestPickup", "refused-past-date");
		swap.set("2026-11-27", istDay(1));

		// NDR: after a failed delivery attempt; a date too far is refused
		await callAs(broker, "simulator.emitScan", { awb_number: awb1, event: "undelivered" });
		swap.set("2026-11-28", istDay(30));
		await check("ndrAction", "refused");
		swap.set("2026-11-28", istDay(2));
		const sent = (await check("ndrAction", "ok")) as { request_id: string };
		await check("ndrAction-edit-details", "ok");
		// the upload's outcome per waybill; an unknown upload id → 404
		swap.set("2d4c6f0e-8b1a-4c55-9d3e-5f1a2b3c4d5e", sent.request_id);
		const status = (await check("ndrActionStatus", "ok")) as {
			results: { waybill: string; status: string }[];
		};
		assert.deepEqual(
			status.results.map((r) => [r.waybill, r.status]),
			[[awb1, "Success"]],
		);
		swap.set("2d4c6f0e-8b1a-4c55-9d3e-5f1a2b3c4d5e", `UPL-unknown-${run}`);
		await check("ndrActionStatus", "unknown-id");
		swap.set("2d4c6f0e-8b1a-4c55-9d3e-5f1a2b3c4d5e", sent.request_id);

		// cancel: a manifested shipment is cancelled; one out for delivery is refused
		swap.set("1490810000123", awb2);
		await check("cancel", "ok");
		swap.set("1490810000123", awb1);
		const no = (await check("cancel", "refused-dispatched")) as { status: boolean; error: string };
		assert.equal(no.status, false);
	});

	it("an act on a consignee named SIMULATE_NDR_REFUSE is recorded, then its upload status answers Failure", async () => {
		const name = `Meera SIMULATE_NDR_REFUSE ${run}`;
		swap.set("Meera Iyer", name);
		swap.set('"501"', `"dl-${run}-refuse"`);
		let booked: { packages: { waybill: string }[] };
		try {
			booked = (await check("book", "ok")) as typeof booked;
		} finally {
			swap.set("Meera Iyer", "Meera Iyer");
			swap.set('"501"', `"dl-${run}-1"`);
		}
		const awb = booked.packages[0].waybill;
		await callAs(broker, "simulator.emitScan", { awb_number: awb, event: "undelivered" });
		swap.set("1490810000123", awb);
		const sent = (await check("ndrAction", "ok")) as { request_id: string };
		swap.set("2d4c6f0e-8b1a-4c55-9d3e-5f1a2b3c4d5e", sent.request_id);
		const status = (await check("ndrActionStatus", "refused-waybill")) as {
			results: { waybill: string; status: string; remarks: string }[];
		};
		swap.delete("2d4c6f0e-8b1a-4c55-9d3e-5f1a2b3c4d5e");
		assert.deepEqual(status.results, [
			{ waybill: awb, act: "DEFER_DLV", status: "Failure", remarks: "Consignee details not verified" },
		]);
	});

	it("the unknown AWB answers of track and packing slip have the documented shape", async () => {
		swap.set("1490810000123", "8400000000001");
		await check("track", "refused-unknown-awb");
		await check("fetchLabel", "refused-unknown-awb");
	});
});
