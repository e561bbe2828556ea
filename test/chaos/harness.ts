/**
 * Fault-injection harness (issue 12, "availability"): the system split one
 * process per service group over real NATS, a load of create + book flows
 * through the gateway(s), faults (`kill -9`, SIGTERM, NATS restart) injected
 * on a schedule, and the verdict read FROM THE API ALONE:
 *
 * - every order acknowledged (201/200) exists exactly once under its reference;
 * - every order whose booking was acknowledged (202) ends `booked` with one AWB,
 *   and no AWB belongs to two orders;
 * - per fault: requests answered 5xx (or dropped), the longest wait, the time
 *   until errors stopped, and the time from a restarted process's readiness to
 *   the first fresh create + book that succeeded.
 *
 * Used by test/integration/chaos.spec.ts (short CI form) and bench/faults.ts
 * (`npm run chaos`, the long form that prints the benchmark table).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { type BenchEnvironment, benchEnvironment } from "../../bench/lib";
import { orderBody, warehouseBody } from "../helpers/fixtures";
import { client } from "../helpers/flow";
import { freePort } from "../helpers/net";
import { type StartedProcess, startProcess } from "../helpers/processes";

/**
 * The 503 codes that mean "a service is down right now; retry": the gateway's
 * `service_unavailable` and the spec's `rate_unavailable` (§7: pricing engine
 * unreachable, answered by rates' callers).
 */
export const RETRY_503 = new Set(["service_unavailable", "rate_unavailable"]);

/** The `aud` the cluster requires (and its tokens carry). */
const CHAOS_AUDIENCE = "msa-chaos";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** One group of services run by `replicas` processes (`SERVICES` = `services`). */
export interface GroupSpec {
	/** short name, e.g. "booking"; process keys are `<name>-<i>` */
	name: string;
	/** comma-separated service names */
	services: string;
	/** processes running this group (default 1) */
	replicas?: number;
	/**
	 * environment of this group's processes under the cluster's own (database, Redis prefix, ports and
	 * URLs, SERVICES, NODEID win): e.g. its manifest's (test/chaos/rss.ts manifestEnv)
	 */
	env?: Record<string, string>;
	/** the command line replacing start:prod's when compiled (its manifest's `args`, test/chaos/rss.ts manifestArgs) */
	args?: string[];
}

/** A process of the cluster (restartable under the same key and node id). */
export interface Member {
	key: string;
	group: string;
	env: Record<string, string | undefined>;
	proc: StartedProcess;
	/** `http://127.0.0.1:<port>` of the gateway, or of the `/ready` probe (HEALTH_PORT) */
	probe: string;
	gateway: boolean;
	/** run as production runs it (`start:prod`, compiled JavaScript in dist/) */
	compiled?: boolean;
	/** its group's command line instead of start:prod's ({@link GroupSpec.args}) */
	args?: string[];
	/** the file its stdout is appended to ({@link ClusterOptions.logDir}) */
	logFile?: string;
}

/** One HTTP request of the load. */
export interface RequestRecord {
	kind: "create" | "book" | "read";
	start: number;
	end: number;
	/** HTTP status; 0 when no answer (connection refused/reset, client timeout) */
	status: number;
	/** path of a `read` request */
	path?: string;
	/** why there was no answer (status 0): the fetch cause's code, e.g. ECONNREFUSED, or the error's name */
	error?: string;
	/** the `error` code of a JSON error body (e.g. `service_unavailable`) */
	code?: string;
	/** the answer's `X-Request-Id` (the id every process's log lines of that request carry) */
	requestId?: string;
	/** the `Retry-After` header of the answer, when there was one */
	retryAfter?: string;
}

/** One create + book flow of the load. */
export interface Flow {
	ref: string;
	startedAt: number;
	/** order id of the acknowledged create (201/200) */
	orderId?: number;
	/** every order id any create acknowledged for this reference (must be one) */
	ackedIds: Set<number>;
	createdAt?: number;
	/** the booking was acknowledged (202) */
	bookAcked: boolean;
	bookedAt?: number;
}

/** A fault injected during the run. */
export interface FaultRecord {
	name: string;
	at: number;
	/** when the replacement process (or NATS) was started */
	restartedAt?: number;
	/** when it reported ready */
	readyAt?: number;
}

/** Figures of one fault window (from the fault to the next one, or the end of the load). */
export interface FaultFigures {
	fault: string;
	requests: number;
	/** answered ≥ 500 or not answered at all */
	failed: number;
	/** longest wait for any answer in the window (ms) */
	maxWaitMs: number;
	/** from the fault to the end of the last failed request in the window (ms; 0 if none failed) */
	errorsForMs: number;
	/** from the replacement's readiness to the first fresh flow fully acknowledged (ms) */
	readyToServeMs?: number;
	/** from the fault to the replacement's readiness (ms) */
	restartMs?: number;
}

/** The API-level verdict after the load has drained. */
export interface Verdict {
	flows: number;
	acknowledged: number;
	bookAcknowledged: number;
	/** acknowledged orders missing, or present more than once, under their reference */
	lostOrDuplicated: string[];
	/** acknowledged bookings that are not `booked` with an AWB */
	notBooked: string[];
	/** AWBs seen on more than one order */
	sharedAwbs: string[];
	/** flows that never got both acknowledgements before the drain deadline */
	unfinished: number;
}

/** Options of {@link startChaosCluster}. */
export interface ClusterOptions {
	groups: GroupSpec[];
	/** run NATS as a private `nats-server` (needed to restart it) */
	privateNats?: boolean;
	/** extra environment for every process */
	env?: Record<string, string | undefined>;
	/**
	 * append each process's stdout (its JSON log lines) to `<logDir>/<key>.log` instead of keeping the
	 * last 100 KB in memory (a long run at LOGLEVEL=info; bench/faults.ts `CHAOS_LOG_DIR`)
	 */
	logDir?: string;
	/**
	 * run every process as production runs it (`startProcess(env, {compiled:true})`: package.json's
	 * `start:prod`, compiled JavaScript in dist/; build first, see `buildOnce` in test/helpers/processes.ts)
	 */
	compiled?: boolean;
}

/** A private NATS server with JetStream on a free port. */
class PrivateNats {
	proc?: ChildProcess;
	readonly dir = mkdtempSync(join(tmpdir(), "msa-chaos-nats-"));
	constructor(readonly port: number) {}
	get url(): string {
		return `nats://127.0.0.1:${this.port}`;
	}
	async start(): Promise<void> {
		this.proc = spawn(
			"/usr/sbin/nats-server",
			["-a", "127.0.0.1", "-p", String(this.port), "-js", "-sd", this.dir],
			{ stdio: "ignore" },
		);
		const end = Date.now() + 10_000;
		for (;;) {
			const ok = await fetchOk(`http://127.0.0.1:${this.port}`).catch(() => false);
			if (ok || (await portOpen(this.port))) return;
			if (Date.now() > end) throw new Error("private nats-server did not start");
			await sleep(50);
		}
	}
	async kill(signal: NodeJS.Signals = "SIGKILL"): Promise<void> {
		const p = this.proc;
		if (!p || p.exitCode !== null) return;
		await new Promise<void>((r) => {
			p.once("exit", () => r());
			p.kill(signal);
		});
	}
	async close(): Promise<void> {
		await this.kill("SIGTERM");
		rmSync(this.dir, { recursive: true, force: true });
	}
}

/** Runs `work` over `items` with `width` concurrent lanes. */
async function lanes<T>(items: T[], width: number, work: (item: T) => Promise<void>): Promise<void> {
	let next = 0;
	await Promise.all(
		Array.from({ length: Math.min(width, items.length) }, async () => {
			for (let i = next++; i < items.length; i = next++) await work(items[i]);
		}),
	);
}

async function fetchOk(url: string): Promise<boolean> {
	const r = await fetch(url, { signal: AbortSignal.timeout(1000) });
	return r.status === 200;
}

async function portOpen(port: number): Promise<boolean> {
	const { connect } = await import("node:net");
	return new Promise((r) => {
		const s = connect(port, "127.0.0.1");
		s.once("connect", () => {
			s.destroy();
			r(true);
		});
		s.once("error", () => r(false));
	});
}

/**
 * A running cluster: processes per group, the gateways' base URLs, a merchant
 * token and warehouse, the load and the fault log.
 */
export class ChaosCluster {
	readonly members = new Map<string, Member>();
	readonly flows: Flow[] = [];
	readonly requests: RequestRecord[] = [];
	readonly faults: FaultRecord[] = [];
	token = "";
	warehouseId = 0;
	private loadOn = false;
	private loadDone: Promise<void> = Promise.resolve();
	private readsOn = false;
	private readsDone: Promise<void> = Promise.resolve();
	private pending = new Set<Promise<void>>();
	private rr = 0;
	/** counter of the processes {@link replace} started (their keys: `<group>-r<n>`) */
	private generation = 0;
	/** gateways taken out of rotation (like a load balancer whose health check failed) */
	private down = new Set<string>();

	constructor(
		readonly envr: BenchEnvironment,
		readonly nats: PrivateNats | undefined,
	) {}

	/** Base URLs of the gateways. */
	gateways(): Member[] {
		return [...this.members.values()].filter((m) => m.gateway);
	}

	/** Polls a member's readiness (gateway `/ready`, else its HEALTH_PORT `/ready`) until 200. */
	async waitMemberReady(m: Member, ms = 90_000): Promise<number> {
		const end = Date.now() + ms;
		for (;;) {
			if (m.proc.child.exitCode !== null)
				throw new Error(`${m.key} exited (${m.proc.child.exitCode}):\n${m.proc.output().slice(-3000)}`);
			if (await fetchOk(`${m.probe}/ready`).catch(() => false)) return Date.now();
			if (Date.now() > end) {
				const why = await fetch(`${m.probe}/ready`)
					.then((r) => r.text())
					.catch((e: Error) => e.message);
				throw new Error(
					`${m.key} not ready within ${ms} ms (/ready: ${why.slice(0, 500)}):\n${m.proc.output().slice(-3000)}`,
				);
			}
			await sleep(100);
		}
	}

	/** Starts (or restarts) a member's process under the same key, node id and ports. */
	spawn(m: Member): void {
		m.proc = startProcess(m.env, { compiled: m.compiled, args: m.args, stdoutFile: m.logFile });
	}

	/**
	 * `kill -9` (or SIGTERM, waiting for the graceful exit) of member `key`,
	 * then starts it again at once (as a supervisor would) and records when it
	 * is ready. Resolves when the replacement is ready.
	 */
	async fault(key: string, signal: NodeJS.Signals = "SIGKILL"): Promise<FaultRecord> {
		const m = this.members.get(key);
		if (!m) throw new Error(`no member ${key}`);
		const rec: FaultRecord = { name: `${signal === "SIGKILL" ? "kill -9" : signal} ${key}`, at: Date.now() };
		this.faults.push(rec);
		if (m.gateway) this.down.add(key);
		await m.proc.stop(signal);
		rec.restartedAt = Date.now();
		this.spawn(m);
		rec.readyAt = await this.waitMemberReady(m);
		this.down.delete(key);
		return rec;
	}

	/**
	 * One step of a rolling update (a Deployment's `maxSurge: 1, maxUnavailable: 0`): a new process of
	 * member `key`'s group under a new key, node id and ports is started and waited for until ready (a
	 * gateway then joins the rotation), then the old one is taken out of the rotation and stopped with
	 * SIGTERM (its graceful stop awaited) and removed. Resolves with the new member's key.
	 */
	async replace(key: string): Promise<string> {
		const old = this.members.get(key);
		if (!old) throw new Error(`no member ${key}`);
		const rec: FaultRecord = { name: `rolling ${key}`, at: Date.now() };
		this.faults.push(rec);
		const next = `${old.group}-r${++this.generation}`;
		const port = old.gateway ? await freePort() : undefined;
		const health = old.gateway ? undefined : String(await freePort());
		const env = {
			...old.env,
			NODEID: `chaos-${next}`,
			PORT: port === undefined ? old.env.PORT : String(port),
			HEALTH_PORT: health,
		};
		const m: Member = {
			...old,
			key: next,
			env,
			logFile: old.logFile?.replace(/[^/]*\.log$/, `${next}.log`),
			proc: startProcess(env, {
				compiled: old.compiled,
				args: old.args,
				stdoutFile: old.logFile?.replace(/[^/]*\.log$/, `${next}.log`),
			}),
			probe: `http://127.0.0.1:${old.gateway ? port : health}`,
		};
		rec.restartedAt = Date.now();
		this.members.set(next, m);
		if (m.gateway) this.down.add(next);
		rec.readyAt = await this.waitMemberReady(m);
		this.down.delete(next);
		if (old.gateway) this.down.add(key);
		await old.proc.stop("SIGTERM");
		this.members.delete(key);
		this.down.delete(key);
		return next;
	}

	/** Stops the private NATS server (SIGKILL) for `downMs`, starts it again and waits for every member's readiness. */
	async natsRestart(downMs: number): Promise<FaultRecord> {
		if (!this.nats) throw new Error("natsRestart needs privateNats");
		const rec: FaultRecord = { name: `NATS down ${downMs / 1000} s`, at: Date.now() };
		this.faults.push(rec);
		await this.nats.kill("SIGKILL");
		await sleep(downMs);
		rec.restartedAt = Date.now();
		await this.nats.start();
		await Promise.all([...this.members.values()].map((m) => this.waitMemberReady(m)));
		const base = this.gateways()[0].probe;
		// the gateway's /ready also needs every service visible again
		for (let i = 0; i < 600 && !(await fetchOk(`${base}/ready`).catch(() => false)); i++) await sleep(100);
		rec.readyAt = Date.now();
		return rec;
	}

	private pickGateway(): string {
		const gws = this.gateways().filter((g) => !this.down.has(g.key));
		const list = gws.length ? gws : this.gateways();
		return list[this.rr++ % list.length].probe;
	}

	/** One request of the load (30 s client timeout, so a 20 s server wait is seen whole). */
	private async call(
		kind: RequestRecord["kind"],
		path: string,
		body: unknown,
	): Promise<RequestRecord & { body?: Record<string, unknown> }> {
		const base = this.pickGateway();
		const start = Date.now();
		try {
			const r = await fetch(base + path, {
				method: body === undefined ? "GET" : "POST",
				headers: {
					authorization: `Bearer ${this.token}`,
					...(body === undefined ? {} : { "content-type": "application/json" }),
				},
				body: body === undefined ? undefined : JSON.stringify(body),
				signal: AbortSignal.timeout(30_000),
			});
			const bytes = Buffer.from(await r.arrayBuffer());
			let parsed: Record<string, unknown> | undefined;
			try {
				parsed = JSON.parse(bytes.toString("utf8")) as Record<string, unknown>;
			} catch {
				parsed = undefined;
			}
			const rec: RequestRecord = { kind, start, end: Date.now(), status: r.status };
			if (kind === "read") rec.path = path;
			if (r.status >= 400 && typeof parsed?.error === "string") rec.code = parsed.error;
			const rid = r.headers.get("x-request-id");
			if (rid !== null) rec.requestId = rid;
			const retryAfter = r.headers.get("retry-after");
			if (retryAfter !== null) rec.retryAfter = retryAfter;
			this.requests.push(rec);
			return { ...rec, body: parsed };
		} catch (err) {
			const cause = (err as { cause?: { code?: unknown } }).cause;
			const rec: RequestRecord = {
				kind,
				start,
				end: Date.now(),
				status: 0,
				error: typeof cause?.code === "string" ? cause.code : (err as Error).name,
			};
			if (kind === "read") rec.path = path;
			this.requests.push(rec);
			return rec;
		}
	}

	/** One flow: create (retried with the same reference until acknowledged), then book (retried until 202). */
	private async runFlow(f: Flow, deadline: () => number): Promise<void> {
		const body = orderBody(this.warehouseId, f.ref);
		while (f.orderId === undefined && Date.now() < deadline()) {
			const r = await this.call("create", "/v1/intake/order", body);
			if ((r.status === 201 || r.status === 200) && typeof r.body?.order_id === "number") {
				f.orderId = r.body.order_id;
				f.ackedIds.add(r.body.order_id);
				f.createdAt = r.end;
			} else if (r.status >= 400 && r.status < 500 && r.status !== 429) {
				throw new Error(`create ${f.ref}: ${r.status} ${JSON.stringify(r.body)}`);
			} else await sleep(300);
		}
		while (f.orderId !== undefined && !f.bookAcked && Date.now() < deadline()) {
			const r = await this.call("book", "/v1/shipping/book", { order_id: f.orderId });
			// 409: an earlier attempt answered 5xx but was committed (booking_in_progress / already_booked)
			if (r.status === 202 || r.status === 409) {
				f.bookAcked = true;
				f.bookedAt = r.end;
			} else if (r.status >= 400 && r.status < 500 && r.status !== 429) {
				throw new Error(`book ${f.orderId}: ${r.status} ${JSON.stringify(r.body)}`);
			} else await sleep(300);
		}
	}

	/**
	 * Starts an open-loop load of `perSecond` create + book flows. `tag` goes
	 * into the flows' references (`CH-<run>-<tag><i>`): a second load on the
	 * same cluster needs its own, or its references would repeat the first's.
	 */
	startLoad(perSecond: number, drainMs = 30_000, tag = ""): void {
		this.loadOn = true;
		let stoppedAt = Number.POSITIVE_INFINITY;
		const deadline = () => stoppedAt + drainMs;
		const errors: unknown[] = [];
		this.loadDone = (async () => {
			const t0 = Date.now();
			for (let i = 0; this.loadOn; i++) {
				await sleep(Math.max(0, t0 + (i * 1000) / perSecond - Date.now()));
				if (!this.loadOn) break;
				const f: Flow = {
					ref: `CH-${this.envr.run}-${tag}${i}`,
					startedAt: Date.now(),
					ackedIds: new Set(),
					bookAcked: false,
				};
				this.flows.push(f);
				const p = this.runFlow(f, deadline).catch((e) => {
					errors.push(e);
				});
				this.pending.add(p);
				void p.finally(() => this.pending.delete(p));
			}
			stoppedAt = Date.now();
			await Promise.all([...this.pending]);
			if (errors.length) throw errors[0];
		})();
	}

	/** Stops offering new flows and waits for the started ones (retrying up to the drain time). */
	async stopLoad(): Promise<void> {
		this.loadOn = false;
		await this.loadDone;
	}

	/**
	 * Starts an open-loop load of `perSecond` GET requests as the merchant,
	 * cycling over `paths` (e.g. one route per service, so that every service
	 * has requests in flight when it is stopped). Recorded as `read` requests;
	 * never retried, never throws.
	 */
	startReads(perSecond: number, paths: string[]): void {
		this.readsOn = true;
		const pending = new Set<Promise<unknown>>();
		this.readsDone = (async () => {
			const t0 = Date.now();
			for (let i = 0; this.readsOn; i++) {
				await sleep(Math.max(0, t0 + (i * 1000) / perSecond - Date.now()));
				if (!this.readsOn) break;
				const p = this.call("read", paths[i % paths.length], undefined);
				pending.add(p);
				void p.finally(() => pending.delete(p));
			}
			await Promise.all([...pending]);
		})();
	}

	/** Stops the read load and waits for its requests in flight. */
	async stopReads(): Promise<void> {
		this.readsOn = false;
		await this.readsDone;
	}

	/**
	 * The requests of the window of fault `f` (from 1 s before it to `until`)
	 * that a graceful stop must not produce: any answer ≥ 500 other than a 503
	 * of {@link RETRY_503} (what a caller gets while the only process of a
	 * service is down, before or after it was asked), and any request left
	 * without an answer (reset, closed, timed out) — except a connection
	 * refused when `refusedOk` (the only gateway is down: nothing accepted the
	 * request, as a load balancer with no healthy backend).
	 */
	lostOrFailed(f: FaultRecord, until: number, opts: { refusedOk?: boolean } = {}): RequestRecord[] {
		return this.requests.filter(
			(r) =>
				r.start >= f.at - 1000 &&
				r.start < until &&
				((r.status >= 500 && !(r.status === 503 && RETRY_503.has(r.code ?? ""))) ||
					(r.status === 0 && !(opts.refusedOk && r.error === "ECONNREFUSED"))),
		);
	}

	/** Per-fault figures over the recorded requests and flows. */
	figures(loadEnd = Date.now()): FaultFigures[] {
		return this.faults.map((f, i) => {
			const until = this.faults[i + 1]?.at ?? loadEnd;
			const inWin = this.requests.filter((r) => r.start >= f.at - 1000 && r.start < until);
			const failed = inWin.filter((r) => r.status === 0 || r.status >= 500);
			const ready = f.readyAt;
			const fresh =
				ready === undefined
					? undefined
					: this.flows.find((x) => x.startedAt >= ready && x.bookAcked && x.bookedAt !== undefined);
			return {
				fault: f.name,
				requests: inWin.length,
				failed: failed.length,
				maxWaitMs: Math.max(0, ...inWin.map((r) => r.end - r.start)),
				errorsForMs: failed.length ? Math.max(...failed.map((r) => r.end)) - f.at : 0,
				readyToServeMs:
					fresh?.bookedAt !== undefined && ready !== undefined ? fresh.bookedAt - ready : undefined,
				restartMs: ready !== undefined ? ready - f.at : undefined,
			};
		});
	}

	/** Checks every flow from the API alone (waits up to `ms` for acknowledged bookings to complete). */
	async verdict(ms = 60_000): Promise<Verdict> {
		const api = client(this.gateways()[0].probe, this.token);
		const lostOrDuplicated: string[] = [];
		const notBooked: string[] = [];
		const awbOwners = new Map<string, Set<number>>();
		const acked = this.flows.filter((f) => f.orderId !== undefined);
		await lanes(acked, 8, async (f) => {
			if (f.ackedIds.size !== 1)
				lostOrDuplicated.push(`${f.ref}: acknowledged as ${[...f.ackedIds].join(", ")}`);
			const l = await api.get(`/v1/orders?order_no=${encodeURIComponent(f.ref)}&limit=10`);
			const rows = (l.body?.data ?? []) as { order_id: number }[];
			if (l.status !== 200 || rows.length !== 1 || rows[0].order_id !== f.orderId)
				lostOrDuplicated.push(
					`${f.ref}: list answered ${l.status} ${JSON.stringify(rows.map((r) => r.order_id))}`,
				);
		});
		const end = Date.now() + ms;
		await lanes(
			acked.filter((x) => x.bookAcked),
			8,
			async (f) => {
				let last = "";
				for (;;) {
					const s = await api.get(`/v1/orders/status?order_no=${encodeURIComponent(f.ref)}`);
					last = `${s.status} ${s.body?.state} ${s.body?.awb_number ?? ""}`;
					if (s.status === 200 && s.body.state === "booked" && s.body.awb_number) {
						const awb = String(s.body.awb_number);
						const owners = awbOwners.get(awb) ?? new Set<number>();
						owners.add(f.orderId as number);
						awbOwners.set(awb, owners);
						// the AWB is the order's only one: the list finds exactly this order under it
						const byAwb = await api.get(`/v1/orders?awb_number=${encodeURIComponent(awb)}&limit=10`);
						const ids = ((byAwb.body?.data ?? []) as { order_id: number }[]).map((r) => r.order_id);
						if (ids.length !== 1 || ids[0] !== f.orderId)
							notBooked.push(`${f.ref}: AWB ${awb} lists ${ids.join(",")}`);
						break;
					}
					if (s.status === 200 && s.body.state === "failed") {
						notBooked.push(`${f.ref}: failed (${s.body.failure_reason})`);
						break;
					}
					if (Date.now() > end) {
						notBooked.push(`${f.ref}: ${last}`);
						break;
					}
					await sleep(250);
				}
			},
		);
		return {
			flows: this.flows.length,
			acknowledged: acked.length,
			bookAcknowledged: acked.filter((f) => f.bookAcked).length,
			lostOrDuplicated,
			notBooked,
			sharedAwbs: [...awbOwners].filter(([, o]) => o.size > 1).map(([a]) => a),
			unfinished: this.flows.filter((f) => !f.bookAcked).length,
		};
	}

	/** Stops every process, the private NATS and removes the run's database, keys and streams. */
	async close(): Promise<void> {
		this.loadOn = false;
		this.readsOn = false;
		await Promise.all([...this.members.values()].map((m) => m.proc.stop("SIGKILL")));
		await this.nats?.close();
		await this.envr.cleanup();
	}
}

/**
 * Starts the groups (gateway groups are the ones whose services include
 * `gateway`; each gateway replica gets its own port, every other process a
 * HEALTH_PORT probe) over NATS (the shared `TEST_NATS_URL`, or a private
 * server), waits until every process and every gateway is ready, and creates
 * the merchant's warehouse.
 */
export async function startChaosCluster(opts: ClusterOptions): Promise<ChaosCluster> {
	const envr = await benchEnvironment({
		RATE_LIMIT_ACCOUNT_PER_MIN: "0",
		AUTH_AUDIENCE: CHAOS_AUDIENCE,
		...opts.env,
	});
	envr.common.AUTH_ISSUER = envr.idp.issuer;
	const nats = opts.privateNats ? new PrivateNats(await freePort()) : undefined;
	const c = new ChaosCluster(envr, nats);
	try {
		if (nats) await nats.start();
		const transporter = nats?.url ?? process.env.TEST_NATS_URL ?? "nats://127.0.0.1:4222";
		let firstGateway = true;
		for (const g of opts.groups) {
			const gateway = g.services.split(",").includes("gateway");
			for (let i = 0; i < (g.replicas ?? 1); i++) {
				const key = `${g.name}-${i}`;
				const port = gateway && firstGateway ? Number(envr.common.PORT) : await freePort();
				if (gateway) firstGateway = false;
				const health = gateway ? undefined : String(await freePort());
				const env = {
					...g.env,
					...envr.common,
					TRANSPORTER: transporter,
					SERVICES: g.services,
					NODEID: `chaos-${key}`,
					PORT: String(port),
					HEALTH_PORT: health,
				};
				const m: Member = {
					key,
					group: g.name,
					env,
					gateway,
					compiled: opts.compiled,
					args: g.args,
					logFile: opts.logDir ? join(opts.logDir, `${key}.log`) : undefined,
					proc: startProcess(env, {
						compiled: opts.compiled,
						args: g.args,
						stdoutFile: opts.logDir ? join(opts.logDir, `${key}.log`) : undefined,
					}),
					probe: `http://127.0.0.1:${gateway ? port : health}`,
				};
				c.members.set(key, m);
			}
		}
		await Promise.all([...c.members.values()].map((m) => c.waitMemberReady(m)));
		c.token = await envr.idp.sign({
			sub: "chaos-merchant",
			aud: CHAOS_AUDIENCE,
			app_metadata: { sender_id: 900_001, role: "merchant" },
		});
		const api = client(c.gateways()[0].probe, c.token);
		// a fresh cluster: the first write may still meet a node whose registry has not seen every other node
		let wh = await api.post("/v1/warehouses", warehouseBody({ warehouse_name: "Chaos warehouse" }));
		for (let i = 0; i < 20 && wh.status === 503; i++) {
			if (i === 0)
				console.warn(`chaos: first warehouse create answered 503 ${JSON.stringify(wh.body)}; retrying`);
			await sleep(500);
			wh = await api.post("/v1/warehouses", warehouseBody({ warehouse_name: "Chaos warehouse" }));
		}
		if (wh.status !== 201) throw new Error(`warehouse: ${wh.status} ${JSON.stringify(wh.body)}`);
		c.warehouseId = wh.body.data.id as number;
		return c;
	} catch (err) {
		await c.close().catch(() => undefined);
		throw err;
	}
}

/** The figures as a fixed-width table (one line per fault). */
export function formatFigures(rows: FaultFigures[]): string {
	const head =
		"fault                      requests  5xx/dropped  longest wait  errors for  restart→ready  ready→first ok";
	const ms = (v: number | undefined) => (v === undefined ? "—" : `${(v / 1000).toFixed(1)} s`);
	return [
		head,
		...rows.map(
			(r) =>
				`${r.fault.padEnd(26)} ${String(r.requests).padStart(8)}  ${String(r.failed).padStart(11)}  ${ms(r.maxWaitMs).padStart(12)}  ${ms(r.errorsForMs).padStart(10)}  ${ms(r.restartMs).padStart(13)}  ${ms(r.readyToServeMs).padStart(14)}`,
		),
	].join("\n");
}
