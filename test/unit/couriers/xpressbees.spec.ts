/**
 * Xpressbees adapter (issue 14) against a local HTTP server replaying the
 * golden fixtures of test/fixtures/couriers/xpressbees: for every recorded
 * answer, the request the adapter sends (method, path, query, headers without
 * secrets, JSON body) equals the fixture's and the parsed result or thrown
 * kind equals its `expect`. Also: the login token cached and renewed before
 * expiry, one login for concurrent calls, 401 → one re-login and one retry,
 * timeouts, unsupported operations, and no token or password in any log line
 * or error message.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { NdrAct } from "../../../lib/contracts/ndr";
import { adapterFor } from "../../../lib/couriers";
import {
	type BookRequest,
	type CourierAdapter,
	CourierDuplicate,
	CourierRefused,
	CourierUnavailable,
	type NdrActionDetails,
	NoCourierLabel,
	type RateQuery,
} from "../../../lib/couriers/types";
import { forgetXpressbeesTokens, XpressbeesAdapter, xpressbeesToken } from "../../../lib/couriers/xpressbees";

const DIR = join(__dirname, "../../fixtures/couriers/xpressbees");
const USERNAME = "ops@merchant.example";
const PASSWORD = "s3cret-Pa55word!";

interface Answer {
	name?: string;
	status: number;
	headers: Record<string, string>;
	body: string;
}
interface Recorded extends Answer {
	name: string;
	expect: unknown;
	then?: Answer;
}
interface Fixture {
	operation: string;
	input: Record<string, unknown>;
	request: unknown;
	responses: Recorded[];
	source: string;
}
interface Seen {
	method: string;
	path: string;
	query: Record<string, string>;
	headers: Record<string, string>;
	body: unknown;
}

const fixture = (name: string): Fixture =>
	JSON.parse(readFileSync(join(DIR, `${name}.json`), "utf8")) as Fixture;
const LOGIN = fixture("login");
const LOGIN_OK = LOGIN.responses[0];
const FIXTURE_TOKEN = JSON.parse(LOGIN_OK.body).data as string;

/** The replaying courier: answers logins with `login`, everything else from `queue`, records every request. */
const state: {
	login: Answer;
	queue: Answer[];
	seen: Seen[];
	logins: Seen[];
	tokens: Set<string>;
	hang: boolean;
} = {
	login: LOGIN_OK,
	queue: [],
	seen: [],
	logins: [],
	tokens: new Set([FIXTURE_TOKEN]),
	hang: false,
};

function normalise(req: IncomingMessage, raw: string): Seen {
	const url = new URL(req.url ?? "/", "http://x");
	const headers: Record<string, string> = {};
	for (const h of ["accept", "content-type", "authorization"]) {
		let v = req.headers[h];
		if (typeof v !== "string") continue;
		for (const t of state.tokens) v = v.split(t).join("{{token}}");
		headers[h] = v;
	}
	let body: unknown = null;
	if (raw) {
		const text = raw.split(USERNAME).join("{{username}}").split(PASSWORD).join("{{password}}");
		body = JSON.parse(text);
	}
	return {
		method: req.method ?? "",
		path: url.pathname,
		query: Object.fromEntries(url.searchParams),
		headers,
		body,
	};
}

function answer(res: ServerResponse, a: Answer): void {
	res.writeHead(a.status, a.headers);
	res.end(a.body);
}

let server: Server;
let baseUrl: string;
let lines: string[];

function adapter(extra: Partial<ConstructorParameters<typeof XpressbeesAdapter>[1]> = {}): XpressbeesAdapter {
	return new XpressbeesAdapter("xb-surface", {
		baseUrl,
		username: USERNAME,
		password: PASSWORD,
		timeoutMs: 1000,
		courierId: null,
		logger: { info: (m) => lines.push(m), warn: (m) => lines.push(m) },
		...extra,
	});
}

async function run(a: XpressbeesAdapter, f: Fixture): Promise<unknown> {
	const i = f.input;
	switch (f.operation) {
		case "login":
			return { token: await xpressbeesToken(a.settings) };
		case "book":
			return a.book(i as unknown as BookRequest);
		case "track":
			return a.track(String(i.awb_number));
		case "cancel":
			return a.cancel(String(i.awb_number));
		case "ndrAction":
			return a.ndrAction(String(i.awb_number), i.act as NdrAct, i.details as NdrActionDetails);
		case "rate":
			return a.rate(i as unknown as RateQuery);
		default:
			throw new Error(`no driver for ${f.operation}`);
	}
}

/** Runs `f` and answers its outcome: the result, or `{throws, message}` of the error. */
async function outcome(p: Promise<unknown>): Promise<unknown> {
	try {
		return await p;
	} catch (err) {
		const e = err as Error;
		const kind =
			e instanceof CourierDuplicate
				? "CourierDuplicate"
				: e instanceof CourierRefused
					? "CourierRefused"
					: e instanceof CourierUnavailable
						? "CourierUnavailable"
						: e.name;
		return { throws: kind, message: e.message };
	}
}

function assertExpect(got: unknown, expect: unknown, label: string): void {
	const e = expect as { throws?: string; message?: string };
	if (e && typeof e === "object" && "throws" in e) {
		const g = got as { throws?: string; message?: string };
		assert.equal(g?.throws, e.throws, `${label}: ${JSON.stringify(got)}`);
		if (e.message !== undefined) assert.equal(g.message, e.message, label);
	} else {
		assert.deepEqual(got, expect, label);
	}
}

describe("couriers: Xpressbees adapter against recorded answers", function () {
	this.timeout(15_000);

	before(async () => {
		server = createServer((req, res) => {
			let raw = "";
			req.on("data", (c: Buffer) => {
				raw += c.toString("utf8");
			});
			req.on("end", () => {
				const seen = normalise(req, raw);
				if (seen.path === "/api/users/login") {
					state.logins.push(seen);
					return answer(res, state.login);
				}
				state.seen.push(seen);
				if (state.hang) return; // never answers
				const next = state.queue.shift();
				if (!next) return answer(res, { status: 599, headers: {}, body: "no answer queued" });
				answer(res, next);
			});
		});
		await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
		baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
	});
	after(async () => {
		server.closeAllConnections();
		await new Promise((r) => server.close(r));
		forgetXpressbeesTokens();
	});
	beforeEach(() => {
		forgetXpressbeesTokens();
		state.login = LOGIN_OK;
		state.queue = [];
		state.seen = [];
		state.logins = [];
		state.hang = false;
		lines = [];
	});
	afterEach(() => {
		for (const l of lines) {
			assert.ok(!l.includes(PASSWORD), `password in log line: ${l}`);
			for (const t of state.tokens) assert.ok(!l.includes(t), `token in log line: ${l}`);
		}
	});

	const files = readdirSync(DIR).filter((f) => f.endsWith(".json"));

	it("has a fixture for every implemented operation, each with a source", () => {
		const ops = new Set(files.map((f) => fixture(f.replace(/\.json$/, "")).operation));
		for (const op of ["login", "book", "track", "cancel", "ndrAction", "rate"]) assert.ok(ops.has(op), op);
		for (const f of files) assert.ok(fixture(f.replace(/\.json$/, "")).source, f);
	});

	for (const file of files) {
		const name = file.replace(/\.json$/, "");
		const f = fixture(name);
		for (const r of f.responses) {
			it(`${name}: ${r.name}`, async () => {
				if (f.operation === "login") state.login = r;
				else state.queue = r.then ? [r, r.then] : [r];
				const got = await outcome(run(adapter(), f));
				assertExpect(got, r.expect, `${name}/${r.name}`);
				if (f.operation === "login") {
					assert.equal(state.logins.length, 1);
					assert.deepEqual(state.logins[0], f.request);
					assert.equal(state.seen.length, 0);
					return;
				}
				assert.equal(state.logins.length, r.then ? 2 : 1, "logins");
				assert.equal(state.seen.length, r.then ? 2 : 1, "requests");
				for (const s of state.seen) assert.deepEqual(s, f.request);
				assert.deepEqual(state.logins[0], LOGIN.request);
			});
		}
	}

	const TRACK = fixture("track");
	const trackOk = TRACK.responses[0];

	it("keeps the token between calls and adapters, and shares one login among concurrent calls", async () => {
		state.queue = [trackOk, trackOk, trackOk, trackOk];
		await Promise.all([adapter().track("14344940001234"), adapter().track("14344940001234")]);
		await adapter().track("14344940001234");
		await adapter().track("14344940001234");
		assert.equal(state.logins.length, 1);
		assert.equal(state.seen.length, 4);
		assert.ok(lines.some((l) => /logged in as/.test(l)));
	});

	it("logs in again shortly before the token's JWT expiry", async () => {
		const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString("base64url");
		const soon = `${b64({ alg: "HS256" })}.${b64({ exp: Math.floor(Date.now() / 1000) + 30 })}.c2ln`;
		state.tokens.add(soon);
		state.login = {
			status: 200,
			headers: { "content-type": "application/json" },
			body: JSON.stringify({ status: true, data: soon }),
		};
		state.queue = [trackOk, trackOk];
		await adapter().track("14344940001234");
		await adapter().track("14344940001234");
		assert.equal(state.logins.length, 2, "a token expiring within a minute is renewed");
	});

	it("uses the configured lifetime for a token that is not a JWT", async () => {
		const opaque = "opaque-token-0123456789";
		state.tokens.add(opaque);
		state.login = {
			status: 200,
			headers: { "content-type": "application/json" },
			body: JSON.stringify({ status: true, data: opaque }),
		};
		state.queue = [trackOk, trackOk, trackOk, trackOk];
		await adapter({ tokenTtlSeconds: 3600 }).track("14344940001234");
		await adapter({ tokenTtlSeconds: 3600 }).track("14344940001234");
		assert.equal(state.logins.length, 1);
		forgetXpressbeesTokens();
		await adapter({ tokenTtlSeconds: 30 }).track("14344940001234");
		await adapter({ tokenTtlSeconds: 30 }).track("14344940001234");
		assert.equal(state.logins.length, 3, "a 30 s lifetime is inside the renewal margin");
	});

	it("never writes the password or token into a log line or an error message", async () => {
		const expiry = fixture("token-expiry").responses[0];
		state.queue = [expiry, trackOk];
		await adapter().track("14344940001234");
		assert.ok(
			lines.some((l) => /401, logging in again/.test(l)),
			lines.join("\n"),
		);
		forgetXpressbeesTokens();
		state.login = {
			status: 200,
			headers: { "content-type": "application/json" },
			body: JSON.stringify({ status: false, message: `Invalid password ${PASSWORD}` }),
		};
		const got = (await outcome(adapter().track("14344940001234"))) as { throws: string; message: string };
		assert.equal(got.throws, "CourierUnavailable");
		assert.equal(got.message, "xpressbees login refused: Invalid password ***");
		assert.ok(lines.length >= 2);
	});

	it("answers CourierUnavailable when the courier does not answer in time", async () => {
		state.hang = true;
		const t0 = Date.now();
		const got = (await outcome(adapter({ timeoutMs: 300 }).track("14344940001234"))) as { throws: string };
		assert.equal(got.throws, "CourierUnavailable");
		assert.ok(Date.now() - t0 < 3000);
	});

	it("throws a configuration Error without a call when the account is not configured", async () => {
		const got = (await outcome(adapter({ password: "" }).track("1"))) as { throws: string; message: string };
		assert.equal(got.throws, "Error");
		assert.match(got.message, /XPRESSBEES_PASSWORD/);
		assert.equal(state.logins.length + state.seen.length, 0);
	});

	it("tracks many AWBs one call each, leaving out the ones Xpressbees does not know", async () => {
		state.queue = [trackOk, TRACK.responses.find((r) => r.name === "refused-unknown-awb") as Answer];
		const m = await adapter().trackMany(["14344940001234", "99999999999999"]);
		assert.deepEqual([...m.keys()], ["14344940001234"]);
		assert.equal(adapter().trackBatchSize, 1);
	});

	it("is registered as adapter `xpressbees`, configured from the environment", async () => {
		const keys = ["XPRESSBEES_BASE_URL", "XPRESSBEES_USERNAME", "XPRESSBEES_PASSWORD"] as const;
		const saved = keys.map((k) => process.env[k]);
		process.env.XPRESSBEES_BASE_URL = `${baseUrl}/`;
		process.env.XPRESSBEES_USERNAME = USERNAME;
		process.env.XPRESSBEES_PASSWORD = PASSWORD;
		try {
			const a = adapterFor({
				adapter: "xpressbees",
				code: "xb-surface",
				logistic_name: "Xpressbees Surface",
			});
			state.queue = [trackOk];
			assert.deepEqual(await a.track("14344940001234"), trackOk.expect);
			assert.deepEqual(state.seen[0], TRACK.request);
		} finally {
			keys.forEach((k, i) => {
				if (saved[i] === undefined) delete process.env[k];
				else process.env[k] = saved[i];
			});
		}
	});

	it("refuses or leaves out what Xpressbees does not offer, without a call", async () => {
		const a = adapter();
		await assert.rejects(
			a.lookupByReference("7001"),
			(e: Error) => e instanceof CourierRefused && /not supported by Xpressbees/.test(e.message),
		);
		await assert.rejects(a.fetchLabel("1"), NoCourierLabel);
		assert.equal(a.issuesOwnLabel, false);
		assert.equal(a.verifyPush(Buffer.from("{}"), {}), false);
		assert.throws(() => a.parsePush(Buffer.from("{}")), CourierRefused);
		const asCourier: CourierAdapter = a;
		assert.equal(asCourier.prefetchWaybills, undefined);
		assert.equal(asCourier.requestPickup, undefined);
		assert.equal(asCourier.serviceability, undefined);
		await assert.rejects(
			a.rate({ ...(fixture("rate").input as unknown as RateQuery), leg: "rto" }),
			CourierRefused,
		);
		await assert.rejects(a.ndrAction("1", "DEFER_DLV", {}), CourierRefused);
		const reg = await a.registerWarehouse({
			warehouse_code: "WH-DEL-1",
			warehouse_name: "Delhi",
			address: (fixture("create").input as unknown as BookRequest).pickup,
			return_address: (fixture("create").input as unknown as BookRequest).pickup,
		});
		assert.deepEqual(reg, { courier_location_id: "WH-DEL-1" });
		assert.equal(state.logins.length + state.seen.length, 0);
	});
});
