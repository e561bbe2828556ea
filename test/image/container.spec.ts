/**
 * The real container image (issue 30; `npm run test:image`, run by the README's
 * test command `bash scripts/test-all.sh` after `npm test`, so by `.ci/run`):
 * builds the image from the unchanged Dockerfile with `scripts/image-build.sh`
 * (buildah, a local node:24-slim stand-in; docs/decisions/0112-image-build-offline.md),
 * then starts it with `scripts/image-run.sh` (chroot in fresh namespaces: the
 * container engine cannot start one on this kind of machine, record 0112) and
 * checks, from outside, what an operator's first `docker run` would:
 *
 * - the zero-setup container (`HOST=0.0.0.0`, embedded PostgreSQL) becomes
 *   ready, every process in it runs as uid 1000, its own HEALTHCHECK command exits 0 inside it,
 *   the typical flow runs through its port, and SIGTERM stops it with exit
 *   code 0 within Docker's default stop timeout (10 s);
 * - one service container (`SERVICES=rates,pincode`, as k8s/base runs it)
 *   against this run's PostgreSQL database, Redis prefix and NATS namespace
 *   becomes ready on `HEALTH_PORT`, its HEALTHCHECK exits 0, it answers
 *   `pincode.info` and `rates.quote` over NATS to a broker outside the
 *   container, and stops on SIGTERM with exit code 0 within Kubernetes'
 *   default grace period (30 s).
 *
 * Prints the build time, the image's size and layers, and each start and stop
 * time. Needs root (buildah, unshare, chroot, nsenter); the image and the build
 * stages this run left untagged are removed afterwards.
 */
import { strict as assert } from "node:assert";
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { ServiceBroker } from "moleculer";
import { testBrokerOptions } from "../helpers/broker";
import { typicalFlow } from "../helpers/flow";
import { freePort } from "../helpers/net";

const root = resolve(__dirname, "../..");
/** This run's tag (set in `before`: the run id exists once test/helpers/global.ts has run). */
let image = "";
const stateDir = mkdtempSync(join(tmpdir(), "msa-image-"));
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A container started by scripts/image-run.sh. */
interface Container {
	proc: ChildProcess;
	state: string;
	startedAt: number;
	output(): string;
	/** `scripts/image-exec.sh` inside it: exit code and output */
	exec(...args: string[]): { code: number; out: string };
	/** SIGTERM to the runner (it reaches tini, PID 1); resolves with the exit code and the time it took */
	stop(): Promise<{ code: number | null; ms: number }>;
}

function run(env: Record<string, string>): Container {
	const state = join(stateDir, `state-${Date.now()}`);
	const args = Object.entries(env).flatMap(([k, v]) => ["-e", `${k}=${v}`]);
	const proc = spawn("bash", [join(root, "scripts/image-run.sh"), ...args], {
		cwd: root,
		env: { ...process.env, IMAGE: image, IMAGE_RUN_STATE: state },
		stdio: ["ignore", "pipe", "pipe"],
	});
	let out = "";
	const keep = (d: Buffer) => {
		out = (out + d.toString()).slice(-50_000);
	};
	proc.stdout?.on("data", keep);
	proc.stderr?.on("data", keep);
	return {
		proc,
		state,
		startedAt: Date.now(),
		output: () => out,
		exec(...cmd: string[]) {
			try {
				return {
					code: 0,
					out: execFileSync("bash", [join(root, "scripts/image-exec.sh"), state, ...cmd], {
						encoding: "utf8",
						stdio: ["ignore", "pipe", "pipe"],
					}),
				};
			} catch (err) {
				const e = err as { status: number | null; stdout?: string; stderr?: string };
				return { code: e.status ?? -1, out: `${e.stdout ?? ""}${e.stderr ?? ""}` };
			}
		},
		stop() {
			const t0 = Date.now();
			if (proc.exitCode !== null) return Promise.resolve({ code: proc.exitCode, ms: 0 });
			return new Promise((r) => {
				proc.once("exit", (code) => r({ code, ms: Date.now() - t0 }));
				proc.kill("SIGTERM");
			});
		},
	};
}

/** Polls `url` until 200; returns the time since the container's start (ms). */
async function readyAt(c: Container, url: string, ms = 120_000): Promise<number> {
	const end = Date.now() + ms;
	for (;;) {
		if (c.proc.exitCode !== null)
			throw new Error(`the container exited (${c.proc.exitCode}):\n${c.output()}`);
		const ok = await fetch(url, { signal: AbortSignal.timeout(2000) })
			.then((r) => r.status === 200)
			.catch(() => false);
		if (ok) return Date.now() - c.startedAt;
		if (Date.now() > end) throw new Error(`${url} not 200 within ${ms} ms:\n${c.output()}`);
		await sleep(100);
	}
}

/** Ids of the untagged ("dangling") images in containers-storage. */
function dangling(): Set<string> {
	const out = execFileSync("buildah", ["images", "--quiet", "--filter", "dangling=true"], {
		encoding: "utf8",
	});
	return new Set(out.split("\n").filter(Boolean));
}

/** The distinct real uids of every process in the container (tini, node, the embedded PostgreSQL, this probe). */
function uids(c: Container): string[] {
	const r = c.exec("sh", "-c", "grep -h '^Uid:' /proc/[0-9]*/status | cut -f2 | sort -u");
	assert.equal(r.code, 0, r.out);
	return r.out.trim().split(/\s+/);
}

describe("image: the real container image built and started (issue 30)", function () {
	this.timeout(20 * 60_000);
	const started: Container[] = [];

	/** dangling images (untagged build stages) present before this run's build: the others are this run's */
	let danglingBefore = new Set<string>();

	before(() => {
		danglingBefore = dangling();
		image = `localhost/msa-test:${process.env.MSA_TEST_RUN_ID}`.toLowerCase();
		const t0 = Date.now();
		execFileSync("bash", [join(root, "scripts/image-build.sh")], {
			cwd: root,
			env: { ...process.env, IMAGE: image },
			stdio: ["ignore", "inherit", "inherit"],
		});
		const history = JSON.parse(
			execFileSync("podman", ["image", "inspect", image], { encoding: "utf8" }),
		)[0] as { Size: number; RootFS: { Layers: string[] } };
		console.log(
			`  built ${image} in ${((Date.now() - t0) / 1000).toFixed(0)} s: ` +
				`${(history.Size / 1e6).toFixed(0)} MB, ${history.RootFS.Layers.length} layers`,
		);
	});

	after(async () => {
		for (const c of started) await c.stop();
		// this run's image, then the build stages it left untagged (~1 GB each); earlier ones stay as the layer cache
		for (const id of [image, ...[...dangling()].filter((d) => !danglingBefore.has(d))]) {
			try {
				execFileSync("buildah", ["rmi", id], { stdio: "ignore" });
			} catch {
				// already gone, or still used by another image
			}
		}
		rmSync(stateDir, { recursive: true, force: true });
	});

	it("zero-setup: ready, all processes uid 1000, HEALTHCHECK 0, the typical flow through its port, SIGTERM → exit 0 within 10 s", async () => {
		const port = await freePort();
		const base = `http://127.0.0.1:${port}`;
		const c = run({
			HOST: "0.0.0.0",
			PORT: String(port),
			// the host's network is shared (`--network host`): ports of this run's own choosing
			EMBEDDED_PG_PORT: String(await freePort()),
			SANDBOX_COURIER_PORT: String(await freePort()),
			LOGLEVEL: "warn",
		});
		started.push(c);
		const ready = await readyAt(c, `${base}/ready`);
		console.log(`  zero-setup container ready ${ready} ms after start (initdb included)`);

		assert.deepEqual(uids(c), ["1000"], "every process runs as the image's USER (uid 1000), none as root");
		const hc = c.exec("--healthcheck");
		assert.equal(hc.code, 0, `HEALTHCHECK: ${hc.out}`);

		const login = await fetch(`${base}/auth/v1/token?grant_type=password`, {
			method: "POST",
			headers: { "content-type": "application/json" },
			body: JSON.stringify({ email: "merchant@example.com", password: "merchant-pass" }),
		});
		const token = ((await login.json()) as { access_token: string }).access_token;
		assert.equal(login.status, 200);
		const flow = await typicalFlow(base, token);
		assert.match(flow.awb_number, /\S/);
		assert.equal(flow.label.subarray(0, 5).toString(), "%PDF-");

		const stop = await c.stop();
		console.log(`  zero-setup container stopped ${stop.ms} ms after SIGTERM (exit ${stop.code})`);
		assert.equal(stop.code, 0, c.output());
		assert.ok(stop.ms < 10_000, `stop took ${stop.ms} ms`);
	});

	it("SERVICES=rates,pincode against this run's PostgreSQL, Redis and NATS: ready, HEALTHCHECK 0, answers pincode.info and rates.quote over NATS, SIGTERM → exit 0 within 30 s", async () => {
		const healthPort = await freePort();
		const namespace = `${process.env.NAMESPACE}-img`;
		const c = run({
			SERVICES: "rates,pincode",
			HEALTH_PORT: String(healthPort),
			METRICS_PORT: String(await freePort()),
			DATABASE_URL: process.env.DATABASE_URL ?? "",
			REDIS_URL: process.env.REDIS_URL ?? "",
			QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}-img`,
			NAMESPACE: namespace,
			TRANSPORTER: process.env.TEST_NATS_URL ?? "",
			NODEID: "rates-pincode-img",
			// the dev overlay's courier set (k8s/overlays/dev/config.patch.yaml): the sandbox couriers' rate cards
			SANDBOX: "1",
			LOGLEVEL: "warn",
		});
		started.push(c);
		const ready = await readyAt(c, `http://127.0.0.1:${healthPort}/ready`);
		console.log(`  rates,pincode container ready ${ready} ms after start`);
		const hc = c.exec("--healthcheck");
		assert.equal(hc.code, 0, `HEALTHCHECK: ${hc.out}`);

		const broker = new ServiceBroker(testBrokerOptions(true, { nodeID: "image-test-client", namespace }));
		await broker.start();
		try {
			await broker.waitForServices(["rates", "pincode"], 10_000);
			const pin = (await broker.call("pincode.info", { pincode: "560001" })) as {
				found: boolean;
				city: string;
			};
			assert.equal(pin.found, true, JSON.stringify(pin));
			const quote = (await broker.call("rates.quote", {
				from_pin: "110001",
				to_pin: "560001",
				physical_weight: 0.8,
				payment_mode: "cod",
				cod_amount: 1499,
			})) as { data: { zone: string; total: number }[] };
			assert.ok(quote.data.length >= 1, JSON.stringify(quote));
			for (const q of quote.data) assert.ok(q.zone === "C" && q.total > 0, JSON.stringify(q));
		} finally {
			await broker.stop();
		}

		const stop = await c.stop();
		console.log(`  rates,pincode container stopped ${stop.ms} ms after SIGTERM (exit ${stop.code})`);
		assert.equal(stop.code, 0, c.output());
		assert.ok(stop.ms < 30_000, `stop took ${stop.ms} ms`);
	});
});
