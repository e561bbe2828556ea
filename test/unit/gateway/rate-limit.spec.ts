/**
 * Edge rate limits (spec §5 rule 7, §8 numbers ours:
 * docs/decisions/0036-rate-limits.md; lib/gateway/rate-limit.ts): per client
 * address on the signed-link route, per account on every bearer /v1 route; 429
 * `rate_limited` with `Retry-After`; counters in real Redis shared by two
 * gateways; in-process without Redis and while Redis is unreachable. Small
 * limits via env; a Redis key prefix of this spec under the run's QUEUE_PREFIX
 * (removed by the global teardown).
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import IORedis from "ioredis";
import type { Context, ServiceBroker } from "moleculer";
import {
	addressKey,
	clientAddress,
	EdgeLimiter,
	MIN_MARGIN,
	RateLimitedError,
	retryAfterOf,
} from "../../../lib/gateway/rate-limit";
import { loadConfig } from "../../../lib/platform/config";
import { newSender } from "../../helpers/broker";
import { skipContract } from "../../helpers/contract";
import { useDevIdp } from "../../helpers/devidp";
import { freePort } from "../../helpers/net";
import { calls, FAKES, http, PDF, setEnv, startGateway } from "./setup";

/** FAKES plus a fake `documents.labelLink` (the real one is tested in test/unit/documents/link.spec.ts). */
const LINK_FAKES = FAKES.map((f) =>
	f.name === "documents"
		? {
				...f,
				actions: {
					...f.actions,
					labelLink(ctx: Context<{ token?: string }, Record<string, unknown>>) {
						calls["documents.labelLink"] = (calls["documents.labelLink"] ?? 0) + 1;
						ctx.meta.$responseType = "application/pdf";
						return PDF;
					},
				},
			}
		: f,
);

/** A 429 in the §2.11 envelope with a sane Retry-After. */
function assertLimited(r: { status: number; headers: Headers; body: any; text: string }, what: string): void {
	assert.equal(r.status, 429, `${what}: ${r.status} ${r.text}`);
	assert.equal(r.headers.get("content-type"), "application/json; charset=utf-8");
	assert.deepEqual(Object.keys(r.body).sort(), ["error", "message"], what);
	assert.equal(r.body.error, "rate_limited");
	const retry = Number(r.headers.get("retry-after"));
	assert.ok(
		Number.isInteger(retry) && retry >= 1 && retry <= 60,
		`Retry-After ${r.headers.get("retry-after")}`,
	);
	// issue 25: the 429 carries the RateLimit fields too, nothing left, reset = Retry-After
	const rl = /^"(account|address)";r=0;t=(\d+)$/.exec(r.headers.get("ratelimit") ?? "");
	assert.ok(rl, `${what}: RateLimit ${r.headers.get("ratelimit")}`);
	assert.equal(Number(rl[2]), retry, `${what}: RateLimit t = Retry-After`);
	assert.match(r.headers.get("ratelimit-policy") ?? "", new RegExp(`^"${rl[1]}";q=\\d+;w=60$`));
}

/** The `r` and `t` of an answer's `RateLimit` field for `policy` (asserts its shape and the policy field). */
function rateOf(r: { headers: Headers }, policy: string, quota: number): { r: number; t: number } {
	assert.equal(r.headers.get("ratelimit-policy"), `"${policy}";q=${quota};w=60`);
	const m = new RegExp(`^"${policy}";r=(\\d+);t=(\\d+)$`).exec(r.headers.get("ratelimit") ?? "");
	assert.ok(m, `RateLimit ${r.headers.get("ratelimit")}`);
	return { r: Number(m[1]), t: Number(m[2]) };
}

interface Gw {
	broker: ServiceBroker;
	base: string;
}

describe("gateway: edge rate limits (429 rate_limited, Retry-After)", function () {
	// the fakes answer echo bodies, not the documented shapes: only the gateway's own answers are checked
	skipContract("gateway mechanics on fake services", "success");
	this.timeout(30_000);
	const prefix = `${process.env.QUEUE_PREFIX}:rlspec-${randomBytes(3).toString("hex")}`;
	const idp = useDevIdp({
		QUEUE_PREFIX: prefix,
		RATE_LIMIT_ACCOUNT_PER_MIN: "3",
		RATE_LIMIT_LINK_PER_MIN: "2",
	});
	const gws: Gw[] = [];

	/** Starts one more gateway with `env` on top of the spec's settings. */
	async function gateway(env: Record<string, string | undefined>): Promise<Gw> {
		const restore = setEnv(env);
		try {
			const g = await startGateway(LINK_FAKES);
			gws.push(g);
			return g;
		} finally {
			restore();
		}
	}

	after(async () => {
		for (const g of gws) await g.broker.stop();
	});

	describe("two gateway replicas sharing Redis (TRUST_PROXY=1)", () => {
		let a: Gw;
		let b: Gw;
		before(async () => {
			a = await gateway({ TRUST_PROXY: "1" });
			b = await gateway({ TRUST_PROXY: "1" });
		});

		it("per account on every /v1 route: the 4th request in the window is 429 before the handler; another account is unaffected", async () => {
			const sender = newSender();
			const token = await idp.tokenFor(sender);
			assert.equal((await http(a.base, "GET", "/v1/warehouses", { token })).status, 200);
			assert.equal((await http(a.base, "GET", "/v1/pincode/110001", { token })).status, 200);
			assert.equal((await http(a.base, "GET", "/v1/orders/status?order_no=A1", { token })).status, 200);
			const before = calls["intake.status"] ?? 0;
			const over = await http(a.base, "GET", "/v1/orders/status?order_no=A1", { token });
			assertLimited(over, "4th request");
			assert.match(over.body.message, /account/);
			assert.equal(calls["intake.status"] ?? 0, before, "the handler never ran");
			// every route of that account, writes included
			assertLimited(await http(a.base, "POST", "/v1/intake/order", { token, body: {} }), "POST");
			// another account
			const other = await idp.tokenFor(newSender());
			assert.equal((await http(a.base, "GET", "/v1/warehouses", { token: other })).status, 200);
			// the counter lives in Redis under the prefix, with the window's expiry
			const r = new IORedis(process.env.REDIS_URL as string);
			try {
				const key = `${prefix}:rl:acct:${sender}`;
				assert.ok(Number(await r.get(key)) >= 4, "counted in Redis");
				const ttl = await r.pttl(key);
				assert.ok(ttl > 0 && ttl <= 60_000, `ttl ${ttl}`);
			} finally {
				r.disconnect();
			}
		});

		it("RateLimit-Policy / RateLimit on every counted answer: remaining goes 2, 1, 0, then the 429; not on a 401 (issue 25)", async () => {
			const token = await idp.tokenFor(newSender());
			const seen: number[] = [];
			for (const [path, status] of [
				["/v1/warehouses", 200],
				["/v1/orders/status?order_no=missing", 404],
				["/v1/pincode/110001", 200],
			] as const) {
				const res = await http(a.base, "GET", path, { token });
				assert.equal(res.status, status);
				const { r, t } = rateOf(res, "account", 3);
				assert.ok(t >= 1 && t <= 60, `t ${t}`);
				seen.push(r);
			}
			assert.deepEqual(seen, [2, 1, 0], "remaining decreases on answers of every status, across routes");
			assertLimited(await http(b.base, "GET", "/v1/warehouses", { token }), "4th");
			const anonymous = await http(a.base, "GET", "/v1/warehouses");
			assert.equal(anonymous.status, 401);
			assert.equal(anonymous.headers.get("ratelimit"), null, "not counted: no RateLimit");
			// the signed link: its own policy, per address
			// each address is used by one test only: the spec's Redis prefix is its own, so no run shares a count
			const hdr = { "x-forwarded-for": "198.51.100.10" };
			const url = "/v1/documents/label/t/1400000000123.abc";
			assert.equal(rateOf(await http(a.base, "GET", url, { headers: hdr }), "address", 2).r, 1);
			assert.equal(rateOf(await http(b.base, "GET", url, { headers: hdr }), "address", 2).r, 0);
			assertLimited(await http(a.base, "GET", url, { headers: hdr }), "3rd download");
		});

		it("a HEAD counts as its GET, and is answered 429 with Retry-After over the limit", async () => {
			const token = await idp.tokenFor(newSender());
			assert.equal((await http(a.base, "HEAD", "/v1/warehouses", { token })).status, 200);
			assert.equal((await http(a.base, "GET", "/v1/warehouses", { token })).status, 200);
			assert.equal((await http(a.base, "HEAD", "/v1/warehouses", { token })).status, 200);
			const over = await http(a.base, "HEAD", "/v1/warehouses", { token });
			assert.equal(over.status, 429);
			assert.ok(Number(over.headers.get("retry-after")) >= 1);
			assert.equal(over.bytes.length, 0);
			assertLimited(await http(a.base, "GET", "/v1/warehouses", { token }), "GET after 3 HEAD/GET");
		});

		it("the account counter is shared across replicas (Redis)", async () => {
			const token = await idp.tokenFor(newSender());
			assert.equal((await http(a.base, "GET", "/v1/warehouses", { token })).status, 200);
			assert.equal((await http(b.base, "GET", "/v1/warehouses", { token })).status, 200);
			assert.equal((await http(a.base, "GET", "/v1/warehouses", { token })).status, 200);
			assertLimited(await http(b.base, "GET", "/v1/warehouses", { token }), "4th, on the other replica");
		});

		it("probes are never limited (even with an exhausted account's token); a missing token stays 401", async () => {
			const token = await idp.tokenFor(newSender());
			for (let i = 0; i < 3; i++) await http(a.base, "GET", "/v1/warehouses", { token });
			assertLimited(await http(a.base, "GET", "/v1/warehouses", { token }), "exhausted");
			for (let i = 0; i < 10; i++) {
				const h = await http(a.base, "GET", "/health", { token });
				assert.equal(h.status, 200);
				assert.equal(h.headers.get("retry-after"), null);
			}
			for (let i = 0; i < 5; i++) assert.equal((await http(a.base, "GET", "/v1/warehouses")).status, 401);
		});

		it("per client address on the signed link (X-Forwarded-For trusted): the 3rd download is 429; another address is not", async () => {
			const ip = "203.0.113.20";
			const hdr = { "x-forwarded-for": `10.9.9.9, ${ip}` }; // the left entry is the client's claim
			const url = "/v1/documents/label/t/1400000000123.abc";
			const before = calls["documents.labelLink"] ?? 0;
			assert.equal((await http(a.base, "GET", url, { headers: hdr })).status, 200);
			assert.equal((await http(b.base, "GET", url, { headers: hdr })).status, 200);
			const over = await http(a.base, "GET", url, { headers: hdr });
			assertLimited(over, "3rd download");
			assert.match(over.body.message, /address/);
			assert.equal(calls["documents.labelLink"] ?? 0, before + 2, "the action never ran for the 429");
			// the client's own claim (leftmost entry) changes nothing; another address passes
			assertLimited(
				await http(b.base, "GET", url, { headers: { "x-forwarded-for": `10.1.1.1, ${ip}` } }),
				"spoofed left entry",
			);
			assert.equal(
				(await http(a.base, "GET", url, { headers: { "x-forwarded-for": "198.51.100.77" } })).status,
				200,
			);
			// a bearer token does not lift the link limit, and the link route does not need one
			const token = await idp.tokenFor(newSender());
			assertLimited(await http(a.base, "GET", url, { headers: hdr, token }), "with a token");
		});
	});

	it("without TRUST_PROXY the socket address counts and X-Forwarded-For is ignored", async () => {
		// a prefix of its own: every request here comes from 127.0.0.1
		const g = await gateway({ QUEUE_PREFIX: `${prefix}-direct` });
		const url = "/v1/documents/label/t/1400000000123.abc";
		assert.equal(
			(await http(g.base, "GET", url, { headers: { "x-forwarded-for": "198.51.100.1" } })).status,
			200,
		);
		assert.equal(
			(await http(g.base, "GET", url, { headers: { "x-forwarded-for": "198.51.100.2" } })).status,
			200,
		);
		assertLimited(await http(g.base, "GET", url, { headers: { "x-forwarded-for": "198.51.100.3" } }), "3rd");
	});

	it("limits set to 0 are off", async () => {
		const g = await gateway({
			QUEUE_PREFIX: `${prefix}-off`,
			RATE_LIMIT_ACCOUNT_PER_MIN: "0",
			RATE_LIMIT_LINK_PER_MIN: "0",
		});
		const token = await idp.tokenFor(newSender());
		for (let i = 0; i < 8; i++) {
			assert.equal((await http(g.base, "GET", "/v1/warehouses", { token })).status, 200);
			assert.equal((await http(g.base, "GET", "/v1/documents/label/t/1400000000123.abc")).status, 200);
		}
	});
});

describe("EdgeLimiter (lib/gateway/rate-limit.ts)", () => {
	const warnings: string[] = [];
	const logger = { warn: (...a: unknown[]) => warnings.push(a.map(String).join(" ")) };

	/** Counts how many of `n` calls pass before the limiter refuses; answers the refusal. */
	async function exhaust(
		fn: () => Promise<void>,
		n: number,
	): Promise<{ passed: number; err?: RateLimitedError }> {
		let passed = 0;
		for (let i = 0; i < n; i++) {
			try {
				await fn();
				passed++;
			} catch (err) {
				assert.ok(err instanceof RateLimitedError, String(err));
				return { passed, err };
			}
		}
		return { passed };
	}

	it("in process without Redis (the zero-setup start)", async () => {
		const l = new EdgeLimiter({ linkPerMin: 2, accountPerMin: 3, prefix: "x" }, logger);
		await l.start();
		const link = await exhaust(() => l.link("192.0.2.1"), 10);
		assert.equal(link.passed, 2);
		assert.equal(link.err?.code, 429);
		assert.equal(link.err?.type, "rate_limited");
		assert.ok((link.err?.retryAfter ?? 0) >= 1 && (link.err?.retryAfter ?? 0) <= 60);
		assert.equal((await exhaust(() => l.account(7), 10)).passed, 3);
		assert.equal((await exhaust(() => l.account(8), 10)).passed, 3, "per account");
		assert.equal(l.shared, false);
		await l.stop();
	});

	it("Redis unreachable: still limits, per process, and warns once (not per request)", async () => {
		warnings.length = 0;
		const port = await freePort();
		const l = new EdgeLimiter(
			{ linkPerMin: 2, accountPerMin: 3, prefix: "y", redisUrl: `redis://127.0.0.1:${port}` },
			logger,
		);
		await l.start();
		assert.equal(l.shared, false);
		const t0 = Date.now();
		assert.equal((await exhaust(() => l.link("192.0.2.9"), 10)).passed, 2);
		assert.equal((await exhaust(() => l.account(9), 10)).passed, 3);
		assert.ok(Date.now() - t0 < 1000, "no request waits on the dead Redis");
		assert.equal(warnings.length, 1, warnings.join("\n"));
		assert.match(warnings[0], /rate limiter: .*limiting per process/);
		await l.stop();
	});

	describe("local-first counting on Redis (issue 32; limits of at least 10 × MIN_MARGIN)", () => {
		let redisUrl: string;
		before(() => {
			// set by the suite's global setup (test/helpers/global.ts), after the spec files load
			redisUrl = process.env.REDIS_URL as string;
		});
		const points = 10 * MIN_MARGIN * 2; // 2000: margin 200, budget 50

		/** Redis commands served so far that change a counter (the limiter's Lua script, EVAL / EVALSHA). */
		async function scriptCalls(r: IORedis): Promise<number> {
			const info = await r.info("commandstats");
			return [...info.matchAll(/cmdstat_(?:eval|evalsha):calls=(\d+)/g)].reduce(
				(n, m) => n + Number(m[1]),
				0,
			);
		}

		it("one replica passes exactly its limit, mostly without a Redis round trip, and Redis ends with the whole count", async () => {
			const prefix = `lf-${randomBytes(3).toString("hex")}`;
			const r = new IORedis(redisUrl);
			const l = new EdgeLimiter({ linkPerMin: 0, accountPerMin: points, prefix, redisUrl }, logger);
			try {
				await l.start();
				const before = await scriptCalls(r);
				const res = await exhaust(() => l.account(42), points + 10);
				assert.equal(res.passed, points, "exactly the limit");
				assert.ok(res.err, "the next one is refused");
				const trips = (await scriptCalls(r)) - before;
				assert.ok(trips < points / 2, `${trips} Redis round trips for ${points + 1} requests`);
				await l.stop();
				assert.equal(
					Number(await r.get(`${prefix}:rl:acct:42`)),
					points + 1,
					"every request counted in Redis",
				);
			} finally {
				r.disconnect();
			}
		});

		it("two replicas sharing Redis: together they pass the limit by at most one budget (a quarter of the margin)", async () => {
			const prefix = `lf-${randomBytes(3).toString("hex")}`;
			const a = new EdgeLimiter({ linkPerMin: 0, accountPerMin: points, prefix, redisUrl }, logger);
			const b = new EdgeLimiter({ linkPerMin: 0, accountPerMin: points, prefix, redisUrl }, logger);
			await a.start();
			await b.start();
			try {
				let passed = 0;
				let refused = 0;
				for (let i = 0; i < points * 2 && refused < 20; i++) {
					try {
						await (i % 2 ? a : b).account(7);
						passed++;
					} catch (err) {
						assert.ok(err instanceof RateLimitedError);
						refused++;
					}
				}
				assert.ok(passed >= points && passed <= points + 50, `${passed} passed`);
			} finally {
				await a.stop();
				await b.stop();
			}
		});

		it("a limit under 10 × MIN_MARGIN counts every request in Redis (exact across replicas)", async () => {
			const prefix = `lf-${randomBytes(3).toString("hex")}`;
			const r = new IORedis(redisUrl);
			const l = new EdgeLimiter({ linkPerMin: 0, accountPerMin: 500, prefix, redisUrl }, logger);
			try {
				await l.start();
				const before = await scriptCalls(r);
				assert.equal((await exhaust(() => l.account(5), 100)).passed, 100);
				assert.ok((await scriptCalls(r)) - before >= 100, "one round trip each");
				await l.stop();
			} finally {
				r.disconnect();
			}
		});
	});

	it("0 turns a limit off", async () => {
		const l = new EdgeLimiter({ linkPerMin: 0, accountPerMin: 0, prefix: "z" }, logger);
		assert.equal((await exhaust(() => l.link("192.0.2.2"), 50)).passed, 50);
		assert.equal((await exhaust(() => l.account(1), 50)).passed, 50);
	});

	it("Retry-After rounds the wait up to whole seconds, at least 1", () => {
		assert.equal(retryAfterOf(0), 1);
		assert.equal(retryAfterOf(1), 1);
		assert.equal(retryAfterOf(1000), 1);
		assert.equal(retryAfterOf(1001), 2);
		assert.equal(retryAfterOf(59_500), 60);
	});

	it("client address: socket peer, or the n-th X-Forwarded-For entry from the right with TRUST_PROXY=n", () => {
		const req = (xff: string | string[] | undefined, peer = "10.0.0.5") => ({
			headers: xff === undefined ? {} : { "x-forwarded-for": xff },
			socket: { remoteAddress: peer },
		});
		const as = (r: ReturnType<typeof req>, n: number) => clientAddress(r as never, n);
		assert.equal(as(req("1.1.1.1"), 0), "10.0.0.5", "not trusted: the header is ignored");
		assert.equal(as(req("9.9.9.9, 1.1.1.1"), 1), "1.1.1.1");
		assert.equal(as(req("9.9.9.9, 1.1.1.1, 2.2.2.2"), 2), "1.1.1.1");
		assert.equal(as(req("1.1.1.1"), 3), "1.1.1.1", "fewer entries than hops: the leftmost");
		assert.equal(as(req(["9.9.9.9", "1.1.1.1"]), 1), "1.1.1.1", "repeated headers joined");
		assert.equal(as(req(undefined), 1), "10.0.0.5", "no header: the peer");
		assert.equal(as(req(undefined, "::ffff:192.0.2.7"), 0), "192.0.2.7", "IPv4-mapped");
	});

	it("address keys: IPv4 as is, IPv6 by its /64", () => {
		assert.equal(addressKey("192.0.2.7"), "192.0.2.7");
		assert.equal(addressKey("::ffff:192.0.2.7"), "192.0.2.7");
		assert.equal(addressKey("2001:db8:1:2:aaaa::1"), "2001:db8:1:2::/64");
		assert.equal(addressKey("2001:0db8:0001:0002:ffff:ffff:ffff:ffff"), "2001:db8:1:2::/64");
		assert.equal(addressKey("2001:db8::1"), "2001:db8:0:0::/64");
		assert.equal(addressKey("::1"), "0:0:0:0::/64");
	});

	it("configuration: defaults, 0 = off, malformed values refuse to start", () => {
		const base = { SERVICES: "" } as NodeJS.ProcessEnv;
		const d = loadConfig(base);
		assert.deepEqual([d.rateLimitLinkPerMin, d.rateLimitAccountPerMin, d.trustProxy], [120, 3000, 0]);
		const c = loadConfig({
			...base,
			RATE_LIMIT_LINK_PER_MIN: "0",
			RATE_LIMIT_ACCOUNT_PER_MIN: "10",
			TRUST_PROXY: "2",
		});
		assert.deepEqual([c.rateLimitLinkPerMin, c.rateLimitAccountPerMin, c.trustProxy], [0, 10, 2]);
		assert.equal(loadConfig({ ...base, TRUST_PROXY: "true" }).trustProxy, 1);
		assert.equal(loadConfig({ ...base, TRUST_PROXY: "false" }).trustProxy, 0);
		for (const [k, v] of [
			["RATE_LIMIT_LINK_PER_MIN", "-1"],
			["RATE_LIMIT_ACCOUNT_PER_MIN", "ten"],
			["RATE_LIMIT_ACCOUNT_PER_MIN", "1.5"],
			["TRUST_PROXY", "yes"],
			["PUBLIC_BASE_URL", "not a url"],
			["PUBLIC_BASE_URL", "ftp://api.example.in"],
			["PUBLIC_BASE_URL", "https://api.example.in/?x=1"],
		]) {
			assert.throws(() => loadConfig({ ...base, [k]: v }), new RegExp(k), `${k}=${v}`);
		}
		assert.equal(
			loadConfig({ ...base, PUBLIC_BASE_URL: "https://api.example.in/" }).publicBaseUrl,
			"https://api.example.in",
		);
		assert.deepEqual(
			loadConfig({ ...base, LABEL_LINK_PREVIOUS_SECRETS: " a, ,b,a " }).labelLinkPreviousSecrets,
			["a", "b"],
		);
	});
});
