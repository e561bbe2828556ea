/**
 * Scaffolding of the buyer-message HTTP connectors' golden-fixture specs
 * (test/unit/notifications/provider-msg91.spec.ts, provider-whatsapp.spec.ts): the fixture shapes and
 * their loading from test/fixtures/providers/<name>/*.json, a local HTTP server replaying recorded
 * answers ({@link Replay}), the checks of the request sent and of an outcome, and the capture of every
 * output line (for the "no secret printed" tests).
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import type { WireRequest } from "../../lib/notifications/providers/http";
import {
	CallbackRejected,
	type OutboundMessage,
	ProviderUnavailable,
} from "../../lib/notifications/providers/types";

/** One recorded answer of a send fixture and the outcome it must give (`{throws, …}` for an error). */
export interface FixtureResponse {
	name: string;
	status?: number;
	/** `timeout`: the server never answers */
	delay_ms?: "timeout";
	headers?: Record<string, string>;
	body?: string;
	expect: unknown;
}

/** A send fixture: the message, the exact request it makes (null: none is sent) and the answers replayed. */
export interface SendFixture<Req extends WireRequest | null = WireRequest | null> {
	operation: "send";
	source: string;
	input: OutboundMessage;
	request: Req;
	responses: FixtureResponse[];
}

/** One callback body of a callback fixture and what it must parse to. */
export interface CallbackCase {
	name: string;
	headers?: Record<string, string>;
	body: string;
	expect: unknown;
}

/** A callback fixture: the request's method (and query) and its cases. */
export interface CallbackFixture {
	operation: "parseCallback";
	source: string;
	input: { method: "GET" | "POST"; query?: Record<string, string> };
	cases: CallbackCase[];
}

/** The fixtures of one provider directory, by file name without `.json`, and split by operation. */
export interface Fixtures<S extends SendFixture> {
	all: Map<string, S | CallbackFixture>;
	sends: [string, S][];
	callbacks: [string, CallbackFixture][];
}

/** Reads every `*.json` fixture of `dir`. */
export function loadFixtures<S extends SendFixture = SendFixture>(dir: string): Fixtures<S> {
	const all = new Map<string, S | CallbackFixture>(
		readdirSync(dir)
			.filter((f) => f.endsWith(".json"))
			.map((f) => [
				f.replace(/\.json$/, ""),
				JSON.parse(readFileSync(join(dir, f), "utf8")) as S | CallbackFixture,
			]),
	);
	return {
		all,
		sends: [...all].filter((e): e is [string, S] => e[1].operation === "send"),
		callbacks: [...all].filter((e): e is [string, CallbackFixture] => e[1].operation === "parseCallback"),
	};
}

/** One request the replaying server received. */
export interface Seen {
	method: string;
	path: string;
	query: Record<string, string>;
	/** the request target as sent (path and query) */
	url: string;
	headers: IncomingMessage["headers"];
	raw: string;
}

/** A replaying provider: answers queued responses in order (then `fallback`), records every request. */
export class Replay {
	server!: Server;
	base = "";
	queue: FixtureResponse[] = [];
	seen: Seen[] = [];
	fallback: FixtureResponse | null = null;

	/** Listens on a free port of 127.0.0.1; `base` is its URL then. */
	async start(): Promise<void> {
		this.server = createServer((req, res) => this.handle(req, res));
		await new Promise<void>((r) => this.server.listen(0, "127.0.0.1", r));
		this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
	}
	/** Queues `queue`, forgets what was seen, drops open connections. */
	reset(queue: FixtureResponse[]): void {
		this.queue = [...queue];
		this.seen = [];
		this.server.closeAllConnections();
	}
	/** Closes the server and its connections. */
	stop(): void {
		this.server.closeAllConnections();
		this.server.close();
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
				url: req.url ?? "",
				headers: req.headers,
				raw: Buffer.concat(chunks).toString("utf8"),
			});
			const r = this.queue.shift() ?? this.fallback;
			if (!r) {
				res.writeHead(599).end();
				return;
			}
			if (r.delay_ms === "timeout") return; // never answers
			res.writeHead(r.status ?? 200, r.headers ?? {}).end(r.body ?? "");
		});
	}
}

/** A base URL nothing listens on (a port just closed): a connection there is refused. */
export async function closedBase(): Promise<string> {
	const dead = createServer();
	await new Promise<void>((r) => dead.listen(0, "127.0.0.1", r));
	const port = (dead.address() as AddressInfo).port;
	await new Promise<void>((r) => dead.close(() => r()));
	return `http://127.0.0.1:${port}`;
}

/**
 * Asserts `seen` is exactly `want` (method, path, no query, headers, raw body bytes and parsed JSON) and
 * `secret` is not in its URL; the auth header is the caller's to check. Returns `seen`.
 */
export function assertWireRequest(
	seen: Seen | undefined,
	want: WireRequest,
	secret: string,
	label: string,
): Seen {
	assert.ok(seen, `${label}: no request sent`);
	assert.equal(seen.method, want.method, label);
	assert.equal(seen.path, want.path, label);
	assert.deepEqual(seen.query, {}, `${label}: no query string`);
	assert.ok(!seen.url.includes(secret), `${label}: secret in the URL`);
	for (const [k, v] of Object.entries(want.headers))
		assert.equal(seen.headers[k], v, `${label}: header ${k}`);
	assert.equal(seen.raw, JSON.stringify(want.body), `${label}: body bytes`);
	assert.deepEqual(JSON.parse(seen.raw), want.body, `${label}: JSON body`);
	return seen;
}

/** Asserts `run()` gives `expect`, or throws the kind (name, instance, status / message / retryAfterMs) it names. */
export async function expectOutcome(run: () => unknown, expect: unknown, label: string): Promise<void> {
	const e = expect as { throws?: string; message?: string; status?: number; retryAfterMs?: number } | null;
	if (e && typeof e === "object" && "throws" in e) {
		await assert.rejects(
			async () => run(),
			(err: Error) => {
				assert.equal(err.name, e.throws, `${label}: ${err.name} ${err.message}`);
				if (e.throws === "ProviderUnavailable") assert.ok(err instanceof ProviderUnavailable, label);
				if (e.throws === "CallbackRejected") {
					assert.ok(err instanceof CallbackRejected, label);
					assert.equal(err.status, e.status, `${label}: status`);
				}
				if (e.message !== undefined) assert.equal(err.message, e.message, label);
				if (e.retryAfterMs !== undefined)
					assert.equal((err as ProviderUnavailable).retryAfterMs, e.retryAfterMs, `${label}: retryAfterMs`);
				return true;
			},
			label,
		);
		return;
	}
	assert.deepEqual(await run(), expect, label);
}

/** What {@link captureOutput} hands its callback: the lines so far and two ways to add one. */
export interface Capture {
	lines: string[];
	/** records `v` as JSON */
	note(v: unknown): void;
	/** records an error's name, message, stack and own properties */
	noteErr(err: unknown): void;
}

/**
 * Runs `run` with every line written to stdout, stderr or `console.*` captured instead of printed, and
 * answers the lines (plus what `run` noted); the output is restored afterwards, also when `run` throws.
 */
export async function captureOutput(run: (c: Capture) => Promise<void>): Promise<string[]> {
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
	const write = ((c: string | Uint8Array) => {
		lines.push(String(c));
		return true;
	}) as typeof process.stdout.write;
	process.stdout.write = write;
	process.stderr.write = write;
	Object.assign(console, { log: grab, warn: grab, error: grab, info: grab, debug: grab });
	try {
		await run({
			lines,
			note: (v) => lines.push(JSON.stringify(v)),
			noteErr: (err) => {
				const e = err as Error;
				lines.push(`${e.name}: ${e.message} ${e.stack ?? ""} ${JSON.stringify(e)}`);
			},
		});
	} finally {
		process.stdout.write = out;
		process.stderr.write = errw;
		Object.assign(console, con);
	}
	return lines;
}

/**
 * Declares one test per recorded answer of each send fixture: with `srv` answering it, `send(fx.input)`
 * gives the answer's `expect` and the one request sent is `fx.request` (checked by `assertRequest`: the
 * connector's auth header besides {@link assertWireRequest}); a fixture whose `request` is null sends nothing.
 */
export function itMatchesSendFixtures<S extends SendFixture>(
	sends: [string, S][],
	srv: Replay,
	send: (m: OutboundMessage) => Promise<unknown>,
	assertRequest: (seen: Seen | undefined, want: WireRequest, label: string) => void,
): void {
	for (const [file, fx] of sends) {
		for (const r of fx.responses) {
			it(`${file}: ${r.name}`, async () => {
				srv.reset([r]);
				await expectOutcome(() => send(fx.input), r.expect, `${file}/${r.name}`);
				if (fx.request === null) {
					assert.equal(srv.seen.length, 0, "nothing is sent");
					return;
				}
				assertRequest(srv.seen[0], fx.request, `${file}/${r.name}`);
				assert.equal(srv.seen.length, 1, "no retries inside the provider");
			});
		}
	}
}

/** Asserts `send` answers `failed` (not an Indian mobile) for `input` addressed to each of `tos`, without a call to `srv`. */
export async function assertNotIndianMobiles(
	srv: Replay,
	send: (m: OutboundMessage) => Promise<unknown>,
	input: OutboundMessage,
	tos: string[],
): Promise<void> {
	srv.reset([]);
	for (const to of tos)
		assert.deepEqual(await send({ ...input, to }), {
			status: "failed",
			error: "not an Indian mobile number",
		});
	assert.equal(srv.seen.length, 0);
}

/** Asserts `sending` rejects with a ProviderUnavailable whose message is `message` (or matches it). */
export async function assertUnavailable(sending: Promise<unknown>, message: string | RegExp): Promise<void> {
	await assert.rejects(sending, (err: Error) => {
		assert.ok(err instanceof ProviderUnavailable);
		if (typeof message === "string") assert.equal(err.message, message);
		else assert.match(err.message, message);
		return true;
	});
}

/**
 * Sends every send fixture's message with `srv` answering each of `answers`, then each fixture's recorded
 * answers, in turn (as its fallback), noting every result or error in `c`; the fallback is cleared after.
 */
export async function sendAgainstEach<S extends SendFixture>(
	srv: Replay,
	answers: FixtureResponse[],
	sends: [string, S][],
	send: (m: OutboundMessage) => Promise<unknown>,
	c: Capture,
): Promise<void> {
	try {
		for (const f of [...answers, ...sends.flatMap(([, fx]) => fx.responses)]) {
			srv.reset([]);
			srv.fallback = f;
			for (const [, fx] of sends) {
				try {
					c.note(await send(fx.input));
				} catch (err) {
					c.noteErr(err);
				}
			}
		}
	} finally {
		srv.fallback = null;
	}
}

/** Asserts more than `min` lines were captured, some `[redacted]` (an echoed secret was caught), none holding one of `secrets`. */
export function assertNoSecret(lines: string[], min: number, secrets: string[]): void {
	assert.ok(lines.length > min, `${lines.length} lines`);
	assert.ok(
		lines.some((l) => l.includes("[redacted]")),
		"echoed secrets are redacted",
	);
	for (const l of lines)
		for (const secret of secrets) assert.ok(!l.includes(secret), `secret printed: ${l.slice(0, 300)}`);
}
