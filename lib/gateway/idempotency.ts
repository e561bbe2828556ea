/**
 * Idempotency keys on every POST of the bearer API (issue 25, beyond the
 * spec; Stripe's semantics; docs/decisions/0074-idempotency-keys.md):
 *
 * A POST sent with `Idempotency-Key: <1–255 printable ASCII characters>` (else
 * 400 `invalid_idempotency_key`) is run once per account (`sender_id` of the
 * verified token) and key; its answer is stored in PostgreSQL (schema
 * `idempotency`, lib/gateway/idempotency-store.ts) for `IDEMPOTENCY_TTL_S`
 * (24 h) and a retry with the same key gets it back byte for byte (status,
 * the headers that matter, body; PDFs included) with `Idempotent-Replayed: true`.
 *
 * | The key holds                                           | Answer                                                   |
 * |---------------------------------------------------------|----------------------------------------------------------|
 * | nothing (or an expired answer)                          | the request runs; its answer is stored                   |
 * | another request (method, path, query or body differ)    | 422 `idempotency_key_reused`                             |
 * | the same request, still running (< `IDEMPOTENCY_LOCK_S`)| 409 `idempotency_key_in_use`, `Retry-After: 1`           |
 * | the same request, running for ≥ `IDEMPOTENCY_LOCK_S` (its gateway died) | the request runs again                   |
 * | the same request, answered                              | the stored answer, `Idempotent-Replayed: true`           |
 *
 * Checked in the gateway's `authorize` hook, after the token (401), the
 * account's rate limit (429) and the action's access rule (403): those
 * answers never touch a key. The key is claimed (a running row, one INSERT …
 * ON CONFLICT) before the action runs and completed just before the answer is
 * written (the response's `write`/`end` are wrapped for that request only), so
 * a success, a 4xx of the service (validation included) and a 500 are all
 * stored. Not stored, the key released (a retry runs again): an answer with
 * `Retry-After` (429, 503 `service_unavailable`, a 409 "retry shortly": the
 * request was not, or not wholly, processed) and an answer whose body is over
 * `IDEMPOTENCY_MAX_BODY_BYTES` (8 MiB). The fingerprint covers the method,
 * the path, the query and the JSON body with its keys sorted; on the bulk
 * upload (multipart, streamed to intake) only the method, path and query.
 *
 * Without the header (or on another method) nothing here runs: one header
 * lookup is the whole cost on the hot path.
 */
import { createHash, randomUUID } from "node:crypto";
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from "node:http";
import type { Sequelize } from "sequelize";
import { getSequelize, migrate } from "../platform/db";
import { fail } from "../platform/errors";
import { gatewayFail } from "./errors";
import { pathOf } from "./http";
import { claimKey, completeKey, purgeExpiredKeys, releaseKey, type StoredAnswer } from "./idempotency-store";
import { IDEMPOTENCY_MIGRATIONS, IDEMPOTENCY_SCHEMA } from "./migrations";

/** The request header (lower case, as Node reports it). */
export const IDEMPOTENCY_HEADER = "idempotency-key";

/** The response header of a replayed answer. */
export const REPLAYED_HEADER = "Idempotent-Replayed";

/** A valid key: 1–255 printable ASCII characters (space to `~`). */
const KEY_RE = /^[\x20-\x7e]{1,255}$/;

/** Response headers never stored with an answer: per request (ids, rate limits) or per connection / recomputed. */
const NOT_STORED = new Set([
	"x-request-id",
	"ratelimit",
	"ratelimit-policy",
	"content-length",
	"connection",
	"keep-alive",
	"transfer-encoding",
	"date",
	"idempotent-replayed",
]);

/** How often expired keys are purged (ms; ± 20 % so replicas spread). */
const PURGE_EVERY_MS = 3_600_000;

/** A request as the gateway hands it over (moleculer-web's, with the parsed JSON body when the route reads one). */
export type KeyedRequest = IncomingMessage & {
	body?: unknown;
	query?: Record<string, string>;
	originalUrl?: string;
};

/** Settings (lib/platform/config.ts `idempotency*`). */
export interface IdempotencyConfig {
	/** how long an answer is replayed, seconds */
	ttlS: number;
	/** how long a running request holds its key, seconds */
	lockS: number;
	/** largest body stored, bytes */
	maxBodyBytes: number;
}

/** The logger warnings go to (Moleculer's). */
interface Logger {
	warn(...args: unknown[]): void;
	info(...args: unknown[]): void;
}

/**
 * True when the request asks for idempotency: a POST with an
 * `Idempotency-Key` header. The gateway calls {@link IdempotencyKeys.begin}
 * only then (the hot path pays one header lookup).
 */
export function wantsIdempotency(req: IncomingMessage): boolean {
	return req.method === "POST" && req.headers[IDEMPOTENCY_HEADER] !== undefined;
}

/**
 * Thrown by {@link IdempotencyKeys.begin} when the key holds an answer: the
 * gateway's error handler writes it instead of an error (`write`).
 */
export class IdempotentReplay extends Error {
	constructor(readonly answer: StoredAnswer) {
		super("idempotent replay");
		this.name = "IdempotentReplay";
	}

	/** Writes the stored answer (its status, headers and bytes) with `Idempotent-Replayed: true`. */
	write(res: ServerResponse): void {
		if (res.headersSent) return;
		for (const [name, value] of Object.entries(this.answer.headers)) res.setHeader(name, value);
		res.setHeader(REPLAYED_HEADER, "true");
		res.setHeader("Content-Length", this.answer.body.length);
		res.statusCode = this.answer.status;
		res.end(this.answer.body);
	}
}

/** JSON with every object's keys sorted (arrays keep their order): equal requests, equal text. */
function canonicalJson(v: unknown): string {
	if (v === null || typeof v !== "object") return JSON.stringify(v) ?? "null";
	if (Array.isArray(v)) return `[${v.map(canonicalJson).join(",")}]`;
	const o = v as Record<string, unknown>;
	const keys = Object.keys(o)
		.filter((k) => o[k] !== undefined)
		.sort();
	return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(o[k])}`).join(",")}}`;
}

/**
 * SHA-256 of the request: method, path (no query), query parameters (sorted)
 * and the parsed JSON body (keys sorted; absent on multipart routes, whose
 * body is a stream the service reads).
 */
export function fingerprintOf(req: KeyedRequest): Buffer {
	const body = Buffer.isBuffer(req.body) ? req.body.toString("base64") : (req.body ?? null);
	const text = canonicalJson([req.method, pathOf(req.originalUrl ?? req.url), req.query ?? {}, body]);
	return createHash("sha256").update(text).digest();
}

/** The headers of an answer that a replay repeats (see {@link NOT_STORED}). */
function storedHeaders(all: OutgoingHttpHeaders): Record<string, string | string[]> {
	const out: Record<string, string | string[]> = {};
	for (const [name, value] of Object.entries(all)) {
		if (value === undefined || NOT_STORED.has(name)) continue;
		out[name] = Array.isArray(value) ? value.map(String) : String(value);
	}
	return out;
}

/** Bytes of a `write`/`end` chunk (a string in `encoding`, utf8 by default). */
function bytesOf(chunk: unknown, encoding: unknown): Buffer {
	if (Buffer.isBuffer(chunk)) return chunk;
	if (chunk instanceof Uint8Array) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
	return Buffer.from(String(chunk), typeof encoding === "string" ? (encoding as BufferEncoding) : "utf8");
}

/**
 * Wraps `res.write` / `res.end` of one response: the bytes written are
 * collected (up to `max`; past it the answer is `undefined`), and `end` waits
 * for `settle(answer)` before ending the response, so a retry arriving after
 * the answer finds it stored.
 */
function captureAnswer(
	res: ServerResponse,
	max: number,
	settle: (answer: StoredAnswer | undefined) => Promise<void>,
): void {
	const write = res.write;
	const end = res.end;
	const chunks: Buffer[] = [];
	let size = 0;
	let over = false;
	const take = (chunk: unknown, encoding: unknown) => {
		if (chunk == null || typeof chunk === "function" || over) return;
		const b = bytesOf(chunk, encoding);
		size += b.length;
		if (size > max) {
			over = true;
			chunks.length = 0;
		} else chunks.push(b);
	};
	// one variadic wrapper per method stands for every overload: the arguments are passed on as they came
	res.write = function (this: ServerResponse, ...args: unknown[]): boolean {
		take(args[0], args[1]);
		return Reflect.apply(write, this, args);
	};
	res.end = function (this: ServerResponse, ...args: unknown[]): ServerResponse {
		res.write = write;
		res.end = end;
		take(args[0], args[1]);
		const answer = over
			? undefined
			: { status: res.statusCode, headers: storedHeaders(res.getHeaders()), body: Buffer.concat(chunks) };
		void settle(answer).finally(() => Reflect.apply(end, res, args));
		return res;
	};
}

/** True when an answer may be replayed: it does not say "retry later" (`Retry-After`: 429, 503, …). */
function storable(a: StoredAnswer): boolean {
	return a.status !== 429 && a.status !== 503 && a.headers["retry-after"] === undefined;
}

/**
 * The gateway's idempotency keys: {@link IdempotencyKeys.start} migrates
 * schema `idempotency` and starts the hourly purge; {@link IdempotencyKeys.begin}
 * runs per keyed request.
 */
export class IdempotencyKeys {
	private db?: Sequelize;
	private ready?: Promise<Sequelize>;
	private timer?: NodeJS.Timeout | null;

	constructor(
		private readonly cfg: IdempotencyConfig,
		private readonly logger: Logger,
	) {}

	/**
	 * Applies the schema's migrations (lib/gateway/migrations.ts) on the
	 * process's pool and schedules the purge of expired keys (a first run
	 * about a minute after start, then about hourly).
	 * @throws when PostgreSQL is unreachable or a migration fails (the gateway does not start)
	 */
	async start(): Promise<void> {
		this.ready = (async () => {
			const db = getSequelize();
			const applied = await migrate(db, IDEMPOTENCY_SCHEMA, IDEMPOTENCY_MIGRATIONS);
			if (applied.length) this.logger.info(`schema ${IDEMPOTENCY_SCHEMA}: applied ${applied.join(", ")}`);
			this.db = db;
			return db;
		})();
		await this.ready;
		this.timer = undefined;
		this.schedule(60_000 * (0.5 + Math.random()));
	}

	/** Stops the purge timer. */
	stop(): void {
		if (this.timer) clearTimeout(this.timer);
		this.timer = null;
	}

	/** Deletes expired keys now (what the timer runs); answers how many. */
	async purge(): Promise<number> {
		return this.db ? purgeExpiredKeys(this.db) : 0;
	}

	private schedule(ms: number): void {
		if (this.timer === null) return;
		this.timer = setTimeout(() => {
			this.purge()
				.catch((e: Error) => this.logger.warn(`idempotency purge: ${e.message}`))
				.finally(() => this.schedule(PURGE_EVERY_MS * (0.8 + 0.4 * Math.random())));
		}, ms).unref();
	}

	/**
	 * Claims the request's key for account `sender_id` (call only when
	 * {@link wantsIdempotency}): resolves when the request may run (its answer
	 * will be stored as it is written to `res`).
	 * @throws GatewayError 400 `invalid_idempotency_key` (not 1–255 printable ASCII characters)
	 * @throws GatewayError 422 `idempotency_key_reused` (the key holds another request)
	 * @throws GatewayError 409 `idempotency_key_in_use` with `retry_after` 1 (the same request is running)
	 * @throws IdempotentReplay the key holds this request's answer (the error handler writes it)
	 * @throws ApiError 503 `service_unavailable` (PostgreSQL unreachable: nothing ran)
	 */
	async begin(req: KeyedRequest, res: ServerResponse, sender_id: number): Promise<void> {
		const raw = req.headers[IDEMPOTENCY_HEADER];
		const key = Array.isArray(raw) ? raw.join(", ") : (raw ?? "");
		if (!KEY_RE.test(key)) {
			throw gatewayFail("invalid_idempotency_key");
		}
		const lock_id = randomUUID();
		const ref = { sender_id, key, lock_id };
		let db: Sequelize;
		let claim: Awaited<ReturnType<typeof claimKey>>;
		try {
			db = this.db ?? (await (this.ready ?? Promise.reject(new Error("idempotency store not started"))));
			claim = await claimKey(db, {
				...ref,
				fingerprint: fingerprintOf(req),
				method: req.method ?? "POST",
				path: pathOf(req.originalUrl ?? req.url),
				ttl_s: this.cfg.ttlS,
				lock_s: this.cfg.lockS,
			});
		} catch (e) {
			this.logger.warn(`idempotency key not claimed: ${(e as Error).message}`);
			throw fail("service_unavailable", "idempotency");
		}
		switch (claim.kind) {
			case "reused":
				throw gatewayFail("idempotency_key_reused");
			case "in_progress": {
				const err = gatewayFail("idempotency_key_in_use");
				err.data = { gateway: true, retry_after: 1 };
				throw err;
			}
			case "done":
				throw new IdempotentReplay(claim.answer);
		}
		captureAnswer(res, this.cfg.maxBodyBytes, async (answer) => {
			try {
				if (answer && storable(answer)) await completeKey(db, ref, answer);
				else await releaseKey(db, ref);
			} catch (e) {
				// the key stays claimed until IDEMPOTENCY_LOCK_S passes; then a retry runs again
				this.logger.warn(`idempotency answer not stored: ${(e as Error).message}`);
			}
		});
	}
}
