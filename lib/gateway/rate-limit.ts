/**
 * The edge rate limits of the gateway (spec §5 rule 7, §8 "not shown": ours,
 * docs/decisions/0036-rate-limits.md), on `rate-limiter-flexible`:
 *
 * | Limit    | Key                                      | Applies to                              | Setting (per minute)          | Default |
 * |----------|------------------------------------------|-----------------------------------------|-------------------------------|---------|
 * | link     | client address (see {@link clientAddress}) | `GET /v1/documents/label/t/{token}`   | `RATE_LIMIT_LINK_PER_MIN`     | 120     |
 * | account  | `sender_id` of the verified bearer token  | every bearer `/v1` route                | `RATE_LIMIT_ACCOUNT_PER_MIN`  | 3000    |
 *
 * 0 turns a limit off. Windows are fixed, 60 s from a key's first request.
 * Counters live in Redis (`REDIS_URL`; keys `<QUEUE_PREFIX>:rl:<limit>:<key>`,
 * one atomic Lua INCR + PEXPIRE per request), so every gateway replica shares
 * them; without Redis (the zero-setup start) they are per process. When Redis
 * fails (down, slow past 250 ms) the limiter falls back to in-process counters
 * with the same limits (rate-limiter-flexible's insurance limiter) and logs a
 * warning at most once a minute: the edge stays limited, per replica, instead
 * of failing open or refusing traffic. A key over its limit is remembered in
 * process until its window ends, so a flood costs Redis nothing more.
 *
 * Local-first counting (issue 32; docs/decisions/0094-local-first-rate-limit.md):
 * a key far from its limit is counted in process and its count added to the
 * shared Redis counter in batches every {@link LOCAL_SYNC_MS} (one
 * `INCRBY` per key per batch), so such a request costs no Redis round trip.
 * A key whose estimated count (the shared count last read plus what this
 * process counted since) is within its margin of the limit (10 % of the
 * limit, at least {@link MIN_MARGIN}), a key this process has not seen in the
 * window, a key with a quarter of the margin already counted here and not
 * yet shared (its budget), and every key of a limit under 10 × MIN_MARGIN, is
 * counted exactly: one atomic round trip per request, which also adds what
 * this process counted and has not shared yet. Tolerance: each replica holds
 * at most a key's budget unshared at any time, so an account can pass its
 * limit by at most (replicas − 1) × budget requests in a window (one replica:
 * never; at the default 3000 a minute, 75 per other replica).
 *
 * Over the limit: {@link RateLimitedError}, answered 429 in the §2.11 envelope
 * `{error:"rate_limited", message}` with `Retry-After` (whole seconds until the
 * window ends, at least 1) by the gateway's error handler.
 *
 * Every answer counted against a limit (issue 25;
 * docs/decisions/0075-rate-limit-headers.md), the 429 included, carries the
 * two fields of the IETF draft draft-ietf-httpapi-ratelimit-headers
 * (structured fields, a String policy id; see {@link setRateHeaders}):
 * `RateLimit-Policy: "account";q=3000;w=60` (the quota per window of seconds)
 * and `RateLimit: "account";r=2999;t=42` (requests left, seconds until the
 * window ends). Policy ids: `account` (bearer /v1 routes), `address` (signed
 * links). Read from the counter's consume result: no extra store round trip.
 */
import type { IncomingMessage } from "node:http";
import { isIPv6 } from "node:net";
import IORedis from "ioredis";
import {
	type RateLimiterAbstract,
	RateLimiterMemory,
	RateLimiterRedis,
	RateLimiterRes,
} from "rate-limiter-flexible";
import { CATALOGUE, messageOf } from "../platform/errors";
import { GatewayError } from "./errors";

/** Window of every limit, seconds. */
export const RATE_WINDOW_S = 60;

/** Longest wait for Redis per request before the in-process fallback answers (ms). */
const REDIS_TIMEOUT_MS = 250;

/** How often the counts of keys counted in process are added to Redis (ms). */
export const LOCAL_SYNC_MS = 100;

/** Smallest margin (requests) below a limit inside which every request is counted exactly. */
export const MIN_MARGIN = 100;

/** 429 `rate_limited` (§2.11 envelope); `data.retry_after` (seconds) becomes the `Retry-After` header. */
export class RateLimitedError extends GatewayError {
	/** whole seconds until the window ends (≥ 1) */
	readonly retryAfter: number;

	/**
	 * @param what "account" or "address": whose limit was passed
	 * @param retryAfter seconds until the window ends (≥ 1)
	 */
	constructor(what: "account" | "address", retryAfter: number) {
		super(CATALOGUE.rate_limited.status, "rate_limited", messageOf("rate_limited", what, retryAfter));
		this.retryAfter = retryAfter;
		this.data = { gateway: true, retry_after: retryAfter };
	}
}

/** Seconds in the `Retry-After` of a rejection (`msBeforeNext` rounded up, at least 1). */
export function retryAfterOf(msBeforeNext: number): number {
	return Math.max(1, Math.ceil(msBeforeNext / 1000));
}

/** Where the limiter writes its headers (the request's ServerResponse). */
export interface HeaderSink {
	setHeader(name: string, value: string): unknown;
}

/** Seconds until a window ends, as the `t` of the `RateLimit` field (`msBeforeNext` rounded up, ≥ 0). */
function resetSecondsOf(msBeforeNext: number): number {
	return Math.max(0, Math.ceil(msBeforeNext / 1000));
}

/**
 * Sets `RateLimit-Policy` (the constant `policy` field value, e.g.
 * `"account";q=3000;w=60`) and `RateLimit: "<id>";r=<remaining>;t=<seconds to
 * the window's end>` (draft-ietf-httpapi-ratelimit-headers) on `res`.
 */
export function setRateHeaders(
	res: HeaderSink,
	limit: { id: string; policy: string },
	remaining: number,
	resetS: number,
): void {
	res.setHeader("RateLimit-Policy", limit.policy);
	res.setHeader("RateLimit", `"${limit.id}";r=${Math.max(0, remaining)};t=${resetS}`);
}

/** A limit's id and its constant `RateLimit-Policy` field value. */
interface LimitPolicy {
	id: "account" | "address";
	policy: string;
}

/** The `RateLimit-Policy` field value of a limit: `"<id>";q=<points>;w=<window s>`. */
function policyOf(id: "account" | "address", points: number): LimitPolicy {
	return { id, policy: `"${id}";q=${points};w=${RATE_WINDOW_S}` };
}

/** Settings of {@link EdgeLimiter} (lib/platform/config.ts). */
export interface EdgeLimitConfig {
	/** signed-link downloads per client address per window (0 = off) */
	linkPerMin: number;
	/** bearer /v1 requests per account per window (0 = off) */
	accountPerMin: number;
	/** Redis URL; undefined = in-process counters */
	redisUrl?: string;
	/** key prefix (QUEUE_PREFIX: per test run in tests) */
	prefix: string;
}

/** The logger the limiter warns on (Moleculer's). */
export interface WarnLogger {
	warn(...args: unknown[]): void;
}

/** The outcome of counting one request: what is left and when the window ends. */
interface Counted {
	remaining: number;
	msBeforeNext: number;
}

/** What this process knows of one key in its current window. */
interface LocalCount {
	/** the shared count when last read from Redis */
	known: number;
	/** requests counted here and not yet added to Redis */
	pending: number;
	/** requests being added to Redis right now */
	sending: number;
	/** epoch ms when the window ends */
	windowEnd: number;
}

/**
 * A limiter counting far from the limit in process and exactly near it (see
 * the module notes). `exact` is the limiter of `points` per window: with
 * `shared`, Redis with the in-process insurance limiter, used per request
 * near the limit and by the batches (`penalty`, which adds without
 * refusing); without, an in-process limiter, used for every request.
 */
export class LocalFirstCounter {
	private readonly keys = new Map<string, LocalCount>();
	private timer: NodeJS.Timeout | undefined;
	private readonly margin: number;
	private readonly budget: number;
	/** whether requests are ever counted ahead of `exact` (shared counters, a limit of at least 10 × MIN_MARGIN) */
	private readonly local: boolean;

	constructor(
		private readonly exact: RateLimiterAbstract,
		private readonly points: number,
		opts: { shared: boolean; onError?: (err: Error) => void; syncMs?: number },
	) {
		this.margin = Math.max(MIN_MARGIN, Math.ceil(points / 10));
		this.budget = Math.ceil(this.margin / 4);
		this.local = opts.shared && points >= 10 * MIN_MARGIN;
		this.onError = opts.onError ?? (() => undefined);
		this.syncMs = opts.syncMs ?? LOCAL_SYNC_MS;
	}

	private readonly onError: (err: Error) => void;
	private readonly syncMs: number;

	/**
	 * Counts one request of `key`.
	 * @throws RateLimiterRes when the key is over its limit (as rate-limiter-flexible does)
	 */
	async consume(key: string): Promise<Counted> {
		const now = Date.now();
		const e = this.keys.get(key);
		if (
			this.local &&
			e &&
			now < e.windowEnd &&
			e.pending + e.sending < this.budget &&
			this.points - (e.known + e.pending + e.sending) > this.margin
		) {
			e.pending++;
			this.schedule();
			return { remaining: this.points - (e.known + e.pending + e.sending), msBeforeNext: e.windowEnd - now };
		}
		// exact: this request, plus what this process counted and has not shared yet (so the shared
		// count is whole before it decides near the limit)
		const pending = e && now < e.windowEnd ? e.pending : 0;
		if (e) e.pending = 0;
		try {
			const r = await this.exact.consume(key, 1 + pending);
			if (this.local) this.learn(key, r, now);
			return { remaining: r.remainingPoints, msBeforeNext: r.msBeforeNext };
		} catch (res) {
			// refused: at its limit whatever the answer counted (an in-memory block answers 0 consumed)
			if (res instanceof RateLimiterRes && this.local)
				this.learn(
					key,
					new RateLimiterRes(0, res.msBeforeNext, Math.max(res.consumedPoints, this.points)),
					now,
				);
			throw res;
		}
	}

	/** Records the shared count and window of `key` read at `now` (what this process counted meanwhile stays pending). */
	private learn(key: string, r: RateLimiterRes, now: number): void {
		const e = this.keys.get(key);
		const windowEnd = now + r.msBeforeNext;
		if (e && now < e.windowEnd) {
			e.known = r.consumedPoints;
			e.windowEnd = windowEnd;
		} else this.keys.set(key, { known: r.consumedPoints, pending: 0, sending: 0, windowEnd });
	}

	/** Starts the next batch in `syncMs` unless one is due. */
	private schedule(): void {
		if (this.timer) return;
		this.timer = setTimeout(() => {
			this.timer = undefined;
			void this.flush();
		}, this.syncMs);
		this.timer.unref();
	}

	/** Adds every pending count to Redis (one `penalty` per key, concurrently); forgets ended windows. */
	async flush(): Promise<void> {
		const now = Date.now();
		const work: Promise<void>[] = [];
		for (const [key, e] of this.keys) {
			if (now >= e.windowEnd) {
				// the window ended: its pending counts belong to it, and the next request starts exact
				if (!e.sending) this.keys.delete(key);
				continue;
			}
			if (!e.pending) continue;
			const n = e.pending;
			e.pending = 0;
			e.sending += n;
			work.push(
				this.exact.penalty(key, n).then(
					(r) => {
						e.sending -= n;
						e.known = r.consumedPoints;
						e.windowEnd = Date.now() + r.msBeforeNext;
					},
					(err: Error) => {
						// kept in process: still counted here, only not shared
						e.sending -= n;
						e.known += n;
						this.onError(err);
					},
				),
			);
		}
		await Promise.all(work);
	}

	/** Stops the batches after adding what is pending. */
	async stop(): Promise<void> {
		if (this.timer) clearTimeout(this.timer);
		this.timer = undefined;
		await this.flush();
	}
}

/**
 * The gateway's limiters: {@link EdgeLimiter.link} and
 * {@link EdgeLimiter.account} resolve when the request may go on and throw
 * {@link RateLimitedError} when it is over its limit.
 */
export class EdgeLimiter {
	private readonly redis?: IORedis;
	private readonly linkLimiter?: LocalFirstCounter;
	private readonly accountLimiter?: LocalFirstCounter;
	private readonly linkPolicy: LimitPolicy;
	private readonly accountPolicy: LimitPolicy;
	private lastWarn = 0;

	constructor(
		cfg: EdgeLimitConfig,
		private readonly logger: WarnLogger,
	) {
		const on = cfg.linkPerMin > 0 || cfg.accountPerMin > 0;
		if (on && cfg.redisUrl) {
			this.redis = new IORedis(cfg.redisUrl, {
				// fail fast while disconnected (the in-process fallback answers), never queue commands
				enableOfflineQueue: false,
				maxRetriesPerRequest: 1,
				commandTimeout: REDIS_TIMEOUT_MS,
				// the batches' INCRBYs of one tick go in one pipeline
				enableAutoPipelining: true,
				lazyConnect: true,
			});
			this.redis.on("error", (err: Error) => this.warn("redis", err));
		}
		this.linkLimiter = this.limiter(`${cfg.prefix}:rl:link`, cfg.linkPerMin);
		this.accountLimiter = this.limiter(`${cfg.prefix}:rl:acct`, cfg.accountPerMin);
		this.linkPolicy = policyOf("address", cfg.linkPerMin);
		this.accountPolicy = policyOf("account", cfg.accountPerMin);
	}

	private limiter(keyPrefix: string, points: number): LocalFirstCounter | undefined {
		if (points <= 0) return undefined;
		const memory = new RateLimiterMemory({ keyPrefix, points, duration: RATE_WINDOW_S });
		// in process only: already local, nothing to batch
		if (!this.redis) return new LocalFirstCounter(memory, points, { shared: false });
		const shared = new RateLimiterRedis({
			storeClient: this.redis,
			keyPrefix,
			points,
			duration: RATE_WINDOW_S,
			rejectIfRedisNotReady: true,
			// a key over its limit is refused in process until its window ends (no Redis round trip)
			inMemoryBlockOnConsumed: points + 1,
			insuranceLimiter: memory,
		});
		return new LocalFirstCounter(shared, points, { shared: true, onError: (err) => this.warn("redis", err) });
	}

	/** Connects to Redis (when configured); a failure only logs (the fallback limits meanwhile). */
	async start(): Promise<void> {
		if (!this.redis) return;
		await this.redis.connect().catch((err: Error) => this.warn("redis", err));
	}

	/** Adds the counts still pending to Redis, then closes the connection. */
	async stop(): Promise<void> {
		await this.linkLimiter?.stop();
		await this.accountLimiter?.stop();
		if (!this.redis) return;
		this.redis.disconnect();
	}

	/** True when counters are shared through Redis (and Redis is connected). */
	get shared(): boolean {
		return this.redis?.status === "ready";
	}

	/**
	 * Counts one signed-link download of `address`; sets the rate-limit
	 * headers on `res` (policy `address`), over the limit too.
	 * @throws RateLimitedError (429) over `RATE_LIMIT_LINK_PER_MIN`
	 */
	async link(address: string, res?: HeaderSink): Promise<void> {
		if (this.linkLimiter) await this.consume(this.linkLimiter, address, this.linkPolicy, res);
	}

	/**
	 * Counts one bearer `/v1` request of account `sender_id`; sets the
	 * rate-limit headers on `res` (policy `account`), over the limit too.
	 * @throws RateLimitedError (429) over `RATE_LIMIT_ACCOUNT_PER_MIN`
	 */
	async account(sender_id: number, res?: HeaderSink): Promise<void> {
		if (this.accountLimiter)
			await this.consume(this.accountLimiter, String(sender_id), this.accountPolicy, res);
	}

	private async consume(
		l: LocalFirstCounter,
		key: string,
		limit: LimitPolicy,
		sink: HeaderSink | undefined,
	): Promise<void> {
		let r: Counted;
		try {
			r = await l.consume(key);
		} catch (res) {
			if (res instanceof RateLimiterRes) {
				const retryAfter = retryAfterOf(res.msBeforeNext);
				if (sink) setRateHeaders(sink, limit, 0, retryAfter);
				throw new RateLimitedError(limit.id, retryAfter);
			}
			// not expected (the insurance limiter answers store failures): never block on it
			this.warn("limiter", res as Error);
			return;
		}
		if (sink) setRateHeaders(sink, limit, r.remaining, resetSecondsOf(r.msBeforeNext));
	}

	/** Warns at most once a minute (a Redis outage must not flood the log). */
	private warn(what: string, err: Error | undefined): void {
		const now = Date.now();
		if (now - this.lastWarn < 60_000) return;
		this.lastWarn = now;
		this.logger.warn(
			`rate limiter: ${what} failed (${err?.message ?? err}); limiting per process until it recovers`,
		);
	}
}

/** Expands an IPv6 address into its 8 hextets (no validation beyond `isIPv6`). */
function hextets(ip: string): string[] {
	const [head, tail] = ip.split("::");
	const a = head ? head.split(":") : [];
	const b = tail === undefined ? [] : tail ? tail.split(":") : [];
	// an embedded IPv4 tail (::ffff:1.2.3.4 handled by the caller; others are rare) counts as two hextets
	const fill = 8 - a.length - b.length;
	return [...a, ...Array.from({ length: Math.max(0, fill) }, () => "0"), ...b];
}

/**
 * The rate-limit key of an address: IPv4 as is; IPv4-mapped IPv6
 * (`::ffff:1.2.3.4`) as its IPv4; any other IPv6 address as its /64 prefix
 * (`2001:db8:1:2::/64`), since one client usually holds a whole /64.
 */
export function addressKey(ip: string): string {
	const t = ip.trim().toLowerCase();
	const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/.exec(t);
	if (mapped) return mapped[1];
	if (!isIPv6(t)) return t;
	const h = hextets(t)
		.slice(0, 4)
		.map((x) => x.replace(/^0+(?=.)/, ""));
	return `${h.join(":")}::/64`;
}

/**
 * The client address of a request: the socket's peer address, or with
 * `trustProxy` = n > 0 (n reverse proxies of ours in front, each appending to
 * `X-Forwarded-For`) the n-th address from the right of `X-Forwarded-For`
 * (the one our outermost proxy saw; entries further left are the client's
 * own claims and are ignored), the leftmost one when the header has fewer.
 * Keyed by {@link addressKey}.
 */
export function clientAddress(req: Pick<IncomingMessage, "headers" | "socket">, trustProxy: number): string {
	const peer = req.socket?.remoteAddress ?? "unknown";
	if (trustProxy <= 0) return addressKey(peer);
	const raw = req.headers["x-forwarded-for"];
	const list = (Array.isArray(raw) ? raw.join(",") : (raw ?? ""))
		.split(",")
		.map((s) => s.trim())
		.filter(Boolean);
	if (!list.length) return addressKey(peer);
	return addressKey(list[Math.max(0, list.length - trustProxy)]);
}
