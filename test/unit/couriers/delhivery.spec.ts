/**
 * Delhivery adapter against its golden wire fixtures
 * (test/fixtures/couriers/delhivery/*.json): a local HTTP server replays each
 * recorded response; the request the adapter sends must equal the fixture's
 * (method, path, query, headers, body byte for byte) and the parsed result or
 * thrown kind must equal the fixture's `expect`. Plus: the token never in a
 * log line or error, the 41st rate call within the window is not sent.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { DelhiveryAdapter, resetDelhiveryRateGates } from "../../../lib/couriers/delhivery";
import { encodeBody, type WireRequest } from "../../../lib/couriers/delhivery/proxy";
import type { CourierAdapter } from "../../../lib/couriers/types";

const DIR = join(__dirname, "../../fixtures/couriers/delhivery");
const TOKEN = "h12-secret-token-0f9e8d7c";

interface FixtureResponse {
	name: string;
	status: number;
	delay_ms?: "timeout";
	headers: Record<string, string>;
	body: string;
	file?: { path: string; content_type: string; base64: string };
	expect: unknown;
}
interface Fixture {
	operation: string;
	input: Record<string, unknown>;
	request: WireRequest | null;
	responses: FixtureResponse[];
	verify?: { headers: Record<string, string>; expect: boolean }[];
	source: string;
}
interface Seen {
	method: string;
	path: string;
	query: Record<string, string>;
	headers: IncomingMessage["headers"];
	raw: string;
	at: number;
}

const fixtures = new Map<string, Fixture>(
	readdirSync(DIR)
		.filter((f) => f.endsWith(".json"))
		.map((f) => [f.replace(/\.json$/, ""), JSON.parse(readFileSync(join(DIR, f), "utf8")) as Fixture]),
);

/** A replaying courier: answers queued responses in order, records every request. */
class Replay {
	server!: Server;
	base = "";
	queue: FixtureResponse[] = [];
	files = new Map<string, FixtureResponse["file"]>();
	seen: Seen[] = [];
	fallback: FixtureResponse | null = null;

	async start(): Promise<void> {
		this.server = createServer((req, res) => this.handle(req, res));
		await new Promise<void>((r) => this.server.listen(0, "127.0.0.1", r));
		this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
	}
	reset(queue: FixtureResponse[]): void {
		this.queue = [...queue];
		this.seen = [];
		this.files.clear();
		this.server.closeAllConnections();
	}
	private handle(req: IncomingMessage, res: ServerResponse): void {
		const chunks: Buffer[] = [];
		req.on("data", (c: Buffer) => chunks.push(c));
		req.on("end", () => {
			const url = new URL(req.url ?? "/", this.base);
			this.seen.push({
				method: req.method ?? "",
				path: url.pathname,
				query: Object.fromEntries(url.searchParams),
				headers: req.headers,
				raw: Buffer.concat(chunks).toString("utf8"),
				at: Date.now(),
			});
			const file = this.files.get(url.pathname);
			if (file) {
				res.writeHead(200, { "content-type": file.content_type }).end(Buffer.from(file.base64, "base64"));
				return;
			}
			const r = this.queue.shift() ?? this.fallback;
			if (!r) {
				res.writeHead(599).end();
				return;
			}
			if (r.file) this.files.set(r.file.path, r.file);
			if (r.delay_ms === "timeout") return; // never answers
			res.writeHead(r.status, r.headers).end(r.body.replaceAll("{{BASE}}", this.base));
		});
	}
}

/** Runs fixture operation `op` with `input` on `a`, results made plain (Maps → objects, labels → base64). */
async function run(a: CourierAdapter, op: string, input: Record<string, unknown>): Promise<unknown> {
	const i = input as never;
	const plain = (m: Map<string, unknown>) => Object.fromEntries(m);
	switch (op) {
		case "registerWarehouse":
			return a.registerWarehouse(i);
		case "prefetchWaybills":
			return a.prefetchWaybills?.(input.count as number);
		case "book":
			return a.book(i);
		case "lookupByReference":
			return a.lookupByReference(input.reference as string);
		case "cancel":
			return a.cancel(input.awb_number as string);
		case "track":
			return a.track(input.awb_number as string);
		case "trackMany":
			return plain(await a.trackMany(input.awb_numbers as string[]));
		case "fetchLabel": {
			const l = await a.fetchLabel(input.awb_number as string);
			return { content_type: l.content_type, base64: l.bytes.toString("base64") };
		}
		case "ndrAction":
			return a.ndrAction(input.awb_number as string, input.act as never, input.details as never);
		case "ndrActionStatus":
			return a.ndrActionStatus?.(input.request_id as string);
		case "requestPickup":
			return a.requestPickup?.(i);
		case "rate":
			return a.rate?.(i);
		case "serviceability":
			return plain((await a.serviceability?.(input.pincodes as string[])) ?? new Map());
		default:
			throw new Error(`no runner for ${op}`);
	}
}

/** Asserts `seen` is exactly `want` (normalised body and raw bytes) and carries the token header. */
function assertRequest(seen: Seen | undefined, want: WireRequest, label: string): void {
	assert.ok(seen, `${label}: no request sent`);
	assert.equal(seen.method, want.method, label);
	assert.equal(seen.path, want.path, label);
	assert.deepEqual(seen.query, want.query, label);
	for (const [k, v] of Object.entries(want.headers))
		assert.equal(seen.headers[k], v, `${label}: header ${k}`);
	assert.equal(seen.headers.authorization, `Token ${TOKEN}`, label);
	assert.equal(seen.raw, encodeBody(want) ?? "", `${label}: body bytes`);
	if (want.headers["content-type"] === "application/x-www-form-urlencoded") {
		const form = Object.fromEntries(new URLSearchParams(seen.raw));
		assert.deepEqual({ ...form, data: JSON.parse(form.data) }, want.body, `${label}: form body`);
	} else if (want.body !== null) {
		assert.deepEqual(JSON.parse(seen.raw), want.body, `${label}: JSON body`);
	}
}

async function expectOutcome(p: Promise<unknown>, expect: unknown, label: string): Promise<void> {
	const e = expect as { throws?: string; message?: string } | null;
	if (e && typeof e === "object" && "throws" in e) {
		await assert.rejects(p, (err: Error) => {
			assert.equal(err.name, e.throws, `${label}: ${err.name} ${err.message}`);
			if (e.message !== undefined) assert.equal(err.message, e.message, label);
			return true;
		});
		return;
	}
	assert.deepEqual(await p, expect, label);
}

describe("Delhivery adapter: golden wire fixtures", function () {
	this.timeout(15_000);
	const srv = new Replay();
	let adapter: DelhiveryAdapter;

	before(async () => {
		await srv.start();
		adapter = new DelhiveryAdapter("delhivery-test", {
			baseUrl: srv.base,
			token: TOKEN,
			timeoutMs: 300,
			webhookToken: "test-webhook-token",
			ownLabel: true,
		});
	});
	beforeEach(() => resetDelhiveryRateGates());
	after(() => {
		srv.server.closeAllConnections();
		srv.server.close();
	});

	it("has a fixture for every operation of the adapter", () => {
		const ops = new Set([...fixtures.values()].map((f) => f.operation));
		for (const op of [
			"registerWarehouse",
			"prefetchWaybills",
			"book",
			"lookupByReference",
			"cancel",
			"track",
			"trackMany",
			"fetchLabel",
			"ndrAction",
			"ndrActionStatus",
			"requestPickup",
			"rate",
			"serviceability",
			"parsePush",
		])
			assert.ok(ops.has(op), op);
	});

	for (const [file, fx] of fixtures) {
		if (!fx.request || file === "editWarehouse") continue;
		for (const r of fx.responses) {
			it(`${file}: ${r.name}`, async () => {
				const exp = r.expect as { follows?: string; courier_location_id?: string } | null;
				const follow = exp && typeof exp === "object" && exp.follows ? fixtures.get(exp.follows) : undefined;
				srv.reset(follow ? [r, follow.responses[0]] : [r]);
				resetDelhiveryRateGates();
				const p = run(adapter, fx.operation, fx.input);
				await expectOutcome(
					p,
					follow ? { courier_location_id: exp?.courier_location_id } : r.expect,
					`${file}/${r.name}`,
				);
				assertRequest(srv.seen[0], fx.request as WireRequest, `${file}/${r.name}`);
				if (follow) assertRequest(srv.seen[1], follow.request as WireRequest, `${file}/${r.name} → edit`);
				if (r.file) {
					assert.equal(srv.seen.length, 2);
					assert.equal(srv.seen[1].path, r.file.path);
					assert.equal(srv.seen[1].headers.authorization, undefined, "token not sent to the file link");
				} else assert.equal(srv.seen.length, follow ? 2 : 1, "no retries inside the adapter");
			});
		}
	}

	it("parsePush / verifyPush: recorded push bodies and the shared token header", async () => {
		const fx = fixtures.get("parsePush") as Fixture;
		for (const r of fx.responses) {
			await expectOutcome(
				Promise.resolve().then(() => adapter.parsePush(Buffer.from(r.body))),
				r.expect,
				r.name,
			);
		}
		for (const v of fx.verify ?? []) assert.equal(adapter.verifyPush(Buffer.from("{}"), v.headers), v.expect);
		const noToken = new DelhiveryAdapter("d", { baseUrl: srv.base, token: TOKEN, webhookToken: "" });
		assert.equal(noToken.verifyPush(Buffer.from("{}"), { "x-delhivery-token": "" }), false);
	});

	it("an account without its own labels answers NoCourierLabel without a call", async () => {
		srv.reset([]);
		const a = new DelhiveryAdapter("d", { baseUrl: srv.base, token: TOKEN, ownLabel: false });
		await assert.rejects(a.fetchLabel("1490810000123"), { name: "NoCourierLabel" });
		assert.equal(srv.seen.length, 0);
	});

	it("refuses to build without base URL or token in the configuration", () => {
		const saved = { u: process.env.DELHIVERY_BASE_URL, t: process.env.DELHIVERY_TOKEN };
		delete process.env.DELHIVERY_BASE_URL;
		delete process.env.DELHIVERY_TOKEN;
		try {
			assert.throws(() => new DelhiveryAdapter("d"), /DELHIVERY_BASE_URL/);
			assert.throws(() => new DelhiveryAdapter("d", { baseUrl: srv.base }), /DELHIVERY_TOKEN/);
		} finally {
			if (saved.u !== undefined) process.env.DELHIVERY_BASE_URL = saved.u;
			if (saved.t !== undefined) process.env.DELHIVERY_TOKEN = saved.t;
		}
	});

	it("never prints the token: every operation against a failing server, logs and errors captured", async () => {
		const lines: string[] = [];
		const out = process.stdout.write.bind(process.stdout);
		const errw = process.stderr.write.bind(process.stderr);
		const con = {
			log: console.log,
			warn: console.warn,
			error: console.error,
			info: console.info,
			debug: console.debug,
		};
		const grab = (...a: unknown[]) => {
			lines.push(a.map(String).join(" "));
		};
		process.stdout.write = ((c: string | Uint8Array) => {
			lines.push(String(c));
			return true;
		}) as typeof process.stdout.write;
		process.stderr.write = ((c: string | Uint8Array) => {
			lines.push(String(c));
			return true;
		}) as typeof process.stderr.write;
		Object.assign(console, { log: grab, warn: grab, error: grab, info: grab, debug: grab });
		try {
			const failures: FixtureResponse[] = [
				{
					name: "500",
					status: 500,
					headers: { "content-type": "text/plain" },
					body: `oops ${"x"}`,
					expect: null,
				},
				{ name: "401", status: 401, headers: {}, body: "<html>401</html>", expect: null },
				{ name: "timeout", status: 200, delay_ms: "timeout", headers: {}, body: "", expect: null },
			];
			for (const f of failures) {
				srv.fallback = f;
				for (const [file, fx] of fixtures) {
					if (!fx.request) continue;
					srv.reset([]);
					try {
						await run(adapter, fx.operation, fx.input);
						assert.fail(`${file} answered against a failing server`);
					} catch (err) {
						const e = err as Error;
						lines.push(`${e.name}: ${e.message} ${e.stack ?? ""} ${JSON.stringify(e)}`);
					}
				}
			}
		} finally {
			srv.fallback = null;
			process.stdout.write = out;
			process.stderr.write = errw;
			Object.assign(console, con);
		}
		assert.ok(lines.length > 30);
		for (const l of lines) assert.ok(!l.includes(TOKEN), `token printed: ${l.slice(0, 200)}`);
	});

	it("rate: the 41st call within the window is not sent until the window passes; repeats come from cache", async () => {
		const ok = (fixtures.get("rate") as Fixture).responses[0];
		srv.reset([]);
		srv.fallback = ok;
		try {
			const a = new DelhiveryAdapter("d", {
				baseUrl: srv.base,
				token: TOKEN,
				rateLimit: 40,
				rateWindowMs: 3000,
			});
			const q = {
				from_pin: "560058",
				to_pin: "400050",
				mode: "surface" as const,
				payment: "prepaid" as const,
				cod_amount: 0,
				leg: "delivered" as const,
			};
			const t0 = Date.now();
			const all = Array.from({ length: 41 }, (_, k) => a.rate({ ...q, weight_kg: (k + 1) / 10 }));
			// the first 40 go out at once: wait until they all arrived (a busy machine takes a while), well inside the
			// window, then the 41st must still be held
			while (srv.seen.length < 40 && Date.now() - t0 < 2500) await new Promise((r) => setTimeout(r, 10));
			assert.ok(Date.now() - t0 < 3000, "checked inside the window");
			assert.equal(srv.seen.length, 40, "the 41st call must not be sent within the window");
			await Promise.all(all);
			assert.equal(srv.seen.length, 41);
			assert.ok((srv.seen[40]?.at ?? 0) - t0 >= 2500, "41st sent only after the window");
			const again = await a.rate({ ...q, weight_kg: 0.1 });
			assert.equal(again.total, 119.77);
			assert.equal(srv.seen.length, 41, "a repeated query is answered from cache");
		} finally {
			srv.fallback = null;
		}
	});
});
