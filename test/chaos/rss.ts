/**
 * Resident memory of the system's processes against the Kubernetes manifests
 * (issue 13): the memory request of each service's container, read from
 * `k8s/base/<service>.yaml` (the sandbox simulator from
 * `k8s/overlays/dev/simulator.yaml`), and a sampler of each cluster
 * process's VmRSS. Used by test/e2e/split.spec.ts and bench/rss.ts
 * (`npm run bench:rss`).
 */
import { existsSync, readFileSync } from "node:fs";
import { resolve } from "node:path";
import { parseAllDocuments } from "yaml";
import { vmRssMiB } from "../helpers/processes";
import type { ChaosCluster, GroupSpec } from "./harness";

const root = resolve(__dirname, "../..");

/**
 * The Deployments of k8s/base, each a process of the split cluster: every
 * service alone, intake as its two Deployments (msa-intake: API, bulk worker
 * off; msa-intake-bulk: the bulk worker only), the simulator (dev overlay).
 */
export const DEPLOYMENTS = [
	"gateway",
	"intake",
	"intake-bulk",
	"rates",
	"booking",
	"billing",
	"documents",
	"warehouses",
	"ndr",
	"webhooks",
	"notifications",
	"pincode",
	"simulator",
] as const;

/** The manifest holding Deployment (or service) `name` (absolute path): k8s/base/<name>.yaml, the simulator's dev overlay. */
export function manifestPath(name: string): string {
	return name === "simulator"
		? resolve(root, "k8s/overlays/dev/simulator.yaml")
		: resolve(root, `k8s/base/${name}.yaml`);
}

const UNITS: Record<string, number> = {
	"": 1 / (1024 * 1024),
	k: 1000 / (1024 * 1024),
	M: 1e6 / (1024 * 1024),
	G: 1e9 / (1024 * 1024),
	Ki: 1 / 1024,
	Mi: 1,
	Gi: 1024,
};

/**
 * A Kubernetes memory quantity (`256Mi`, `1Gi`, `300M`, `268435456`) in MiB.
 * @throws Error on a quantity it cannot read
 */
export function quantityMiB(q: string | number): number {
	if (typeof q === "number") return q / (1024 * 1024);
	const m = /^(\d+(?:\.\d+)?)(Ki|Mi|Gi|k|M|G)?$/.exec(q.trim());
	if (!m) throw new Error(`unreadable memory quantity ${JSON.stringify(q)}`);
	return Number(m[1]) * UNITS[m[2] ?? ""];
}

/** Memory request and limit (MiB) of a service's container, as its manifest sets them. */
export interface ManifestMemory {
	file: string;
	requestMiB?: number;
	limitMiB?: number;
}

interface DeploymentDoc {
	kind?: string;
	spec?: {
		template?: {
			spec?: {
				containers?: {
					env?: { name: string; value?: string; valueFrom?: unknown }[];
					args?: unknown[];
					resources?: {
						requests?: { memory?: string | number; cpu?: string | number };
						limits?: { memory?: string | number };
					};
				}[];
			};
		};
	};
}

/** The Deployment of manifest `file`. @throws Error when it cannot be parsed or has none */
function deploymentOf(file: string): DeploymentDoc {
	const docs = parseAllDocuments(readFileSync(file, "utf8"));
	for (const d of docs) if (d.errors.length) throw new Error(`${file}: ${d.errors[0].message}`);
	const dep = docs.map((d) => d.toJS() as DeploymentDoc | null).find((d) => d?.kind === "Deployment");
	if (!dep) throw new Error(`${file}: no Deployment`);
	return dep;
}

/**
 * The cluster groups of {@link DEPLOYMENTS}: one process each, named after
 * its Deployment, running its manifest's `SERVICES` with its literal
 * environment ({@link manifestEnv}).
 */
export function deploymentGroups(): GroupSpec[] {
	return DEPLOYMENTS.map((name) => {
		const env = manifestEnv(name);
		return { name, services: env.SERVICES ?? name, env, args: manifestArgs(name) };
	});
}

/**
 * The literal environment (`value:` entries; not `valueFrom:`) of the first
 * container of Deployment `name` ({@link manifestPath}), without `PORT` and
 * `HEALTH_PORT` (a test cluster picks free ports): e.g. intake-bulk's
 * `SERVICES`, `INTAKE_BULK_WORKER`, `NODE_OPTIONS`. Empty when the file does
 * not exist.
 */
export function manifestEnv(name: string): Record<string, string> {
	const file = manifestPath(name);
	if (!existsSync(file)) return {};
	const env: Record<string, string> = {};
	for (const e of deploymentOf(file).spec?.template?.spec?.containers?.[0]?.env ?? [])
		if (e.value !== undefined && e.name !== "PORT" && e.name !== "HEALTH_PORT") env[e.name] = String(e.value);
	return env;
}

/**
 * The `args` of the first container of Deployment `name`: the command line
 * it runs instead of the image's CMD (tini, the ENTRYPOINT, stays PID 1),
 * e.g. intake-bulk's `node --max-semi-space-size=4 dist/bin/start.js`;
 * undefined when it runs the image's CMD or the file does not exist.
 */
export function manifestArgs(name: string): string[] | undefined {
	const file = manifestPath(name);
	if (!existsSync(file)) return undefined;
	const args = deploymentOf(file).spec?.template?.spec?.containers?.[0]?.args;
	return Array.isArray(args) ? args.map(String) : undefined;
}

/**
 * Reads `spec.template.spec.containers[0].resources.{requests,limits}.memory`
 * of the Deployment in service `name`'s manifest ({@link manifestPath}).
 * @returns undefined when the file does not exist
 * @throws Error when the file has no Deployment or cannot be parsed
 */
export function manifestMemory(name: string): ManifestMemory | undefined {
	const file = manifestPath(name);
	if (!existsSync(file)) return undefined;
	const res = deploymentOf(file).spec?.template?.spec?.containers?.[0]?.resources;
	return {
		file,
		requestMiB: res?.requests?.memory === undefined ? undefined : quantityMiB(res.requests.memory),
		limitMiB: res?.limits?.memory === undefined ? undefined : quantityMiB(res.limits.memory),
	};
}

/**
 * A Kubernetes CPU quantity (`250m`, `1`, `0.5`) in millicores.
 * @throws Error on a quantity it cannot read
 */
export function quantityMillicores(q: string | number): number {
	if (typeof q === "number") return q * 1000;
	const m = /^(\d+(?:\.\d+)?)(m)?$/.exec(q.trim());
	if (!m) throw new Error(`unreadable CPU quantity ${JSON.stringify(q)}`);
	return m[2] ? Number(m[1]) : Number(m[1]) * 1000;
}

/**
 * The CPU request (millicores) of Deployment `name`'s first container
 * (`resources.requests.cpu` in {@link manifestPath}): the weight kubelet gives
 * its pod's cgroup (bench/pods.ts).
 * @throws Error when the file is missing, has no Deployment, or sets no CPU request
 */
export function manifestCpuRequest(name: string): number {
	const file = manifestPath(name);
	const cpu = deploymentOf(file).spec?.template?.spec?.containers?.[0]?.resources?.requests?.cpu;
	if (cpu === undefined) throw new Error(`${file}: no CPU request`);
	return quantityMillicores(cpu);
}

/** Measured resident memory of one cluster member (MiB). */
export interface RssRow {
	/** member key, e.g. `booking-0` */
	key: string;
	/** the member's group (= its service when each runs alone) */
	service: string;
	/** VmRSS once, at rest */
	restMiB?: number;
	/** the highest VmRSS sampled under load */
	loadMiB?: number;
}

/**
 * Samples the VmRSS of every member of a cluster: `rest()` once, then
 * `start()` … `stop()` every `everyMs` keeping each member's maximum (a
 * restarted member is followed under its new pid).
 */
export class RssSampler {
	readonly rows = new Map<string, RssRow>();
	private timer?: NodeJS.Timeout;

	constructor(private readonly c: ChaosCluster) {
		for (const m of c.members.values()) this.rows.set(m.key, { key: m.key, service: m.group });
	}

	/** Records every member's VmRSS now as its at-rest figure. */
	rest(): void {
		for (const m of this.c.members.values()) {
			const row = this.rows.get(m.key);
			if (row) row.restMiB = vmRssMiB(m.proc.child.pid);
		}
	}

	private sample(): void {
		for (const m of this.c.members.values()) {
			const row = this.rows.get(m.key);
			const v = vmRssMiB(m.proc.child.pid);
			if (row && v !== undefined) row.loadMiB = Math.max(row.loadMiB ?? 0, v);
		}
	}

	/** Starts sampling under load. */
	start(everyMs = 250): void {
		this.sample();
		this.timer = setInterval(() => this.sample(), everyMs);
	}

	/** Stops sampling (one last sample first). */
	stop(): void {
		if (this.timer) clearInterval(this.timer);
		this.timer = undefined;
		this.sample();
	}
}

/** One line of the comparison: measured figures and the manifest's request and limit. */
export interface RssVerdictRow extends RssRow {
	manifest?: ManifestMemory;
	/** true when a measured figure exceeds the manifest's memory request */
	over: boolean;
}

/** Joins the measured rows with each service's manifest ({@link manifestMemory}). */
export function compareWithManifests(rows: RssRow[]): RssVerdictRow[] {
	return rows.map((r) => {
		const manifest = manifestMemory(r.service);
		const peak = Math.max(r.restMiB ?? 0, r.loadMiB ?? 0);
		const over = manifest?.requestMiB !== undefined && peak > manifest.requestMiB;
		return { ...r, manifest, over };
	});
}

/** The comparison as a fixed-width table (MiB). */
export function formatRssTable(rows: RssVerdictRow[]): string {
	const n = (v: number | undefined) => (v === undefined ? "—" : v.toFixed(0));
	const head = "service      at rest  under load  request  limit  request − peak";
	return [
		head,
		...rows.map((r) => {
			const peak = Math.max(r.restMiB ?? 0, r.loadMiB ?? 0);
			const req = r.manifest?.requestMiB;
			const margin =
				req === undefined ? (r.manifest ? "no request" : "no manifest") : (req - peak).toFixed(0);
			return `${r.service.padEnd(12)} ${n(r.restMiB).padStart(7)}  ${n(r.loadMiB).padStart(10)}  ${n(req).padStart(7)}  ${n(r.manifest?.limitMiB).padStart(5)}  ${margin.padStart(14)}${r.over ? "  OVER" : ""}`;
		}),
	].join("\n");
}
