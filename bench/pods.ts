/**
 * CPU weights for the bulk bench's processes, set the way kubelet sets them for pods (bench/bulk.ts;
 * issue 10; docs/decisions/0067-bulk-bench-method.md).
 *
 * kubelet puts every pod in a cgroup of its own under one `kubepods` cgroup. The pod's CPU weight follows
 * its CPU request: cgroup v1 `cpu.shares` = millicores × 1024 / 1000, at least 2; cgroup v2 `cpu.weight` =
 * 1 + (shares − 2) × 9999 / 262142. `kubepods` weighs the node's allocatable CPU, here all the cores. So on
 * a node the API pods and the bulk worker pod are separate scheduling groups, weighted by their requests.
 *
 * Started from one shell, the bench's processes all shared one scheduling group instead. The kernel's
 * autogroups put a session's processes in a single group, so the API process queued inside the same group
 * as the bulk worker. Each PostgreSQL backend calls `setsid`, so each is an autogroup of its own with the
 * weight of the whole bench.
 *
 * Here the bench makes `msa-bench-<run>` (the `kubepods` of its run) with a cgroup per process under it,
 * weighted by its Deployments' CPU requests ({@link manifestCpuRequest}). The client's sides, the bench
 * process and its probe thread, stand for other machines: each gets a cgroup of its own beside
 * `msa-bench-<run>`, at the default weight. PostgreSQL and NATS are this machine's servers and are left
 * where they are; in production they have hosts of their own.
 *
 * This needs root and the `cpu` controller: cgroup v1 at /sys/fs/cgroup/cpu, or cgroup v2 with `cpu` in the
 * root's `cgroup.subtree_control`. Without them, or with `BENCH_PODS=0`, nothing is placed and
 * {@link Pods.mode} says why. Cgroup v2 moves whole processes only: there, the probe thread stays in the
 * bench process's cgroup.
 */
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { manifestCpuRequest } from "../test/chaos/rss";

const V1 = "/sys/fs/cgroup/cpu";
const V2 = "/sys/fs/cgroup";

/** kubelet's cgroup v1 `cpu.shares` for a CPU request of `millicores` (MilliCPUToShares; at least 2). */
export function cpuShares(millicores: number): number {
	return Math.max(2, Math.floor((millicores * 1024) / 1000));
}

/** kubelet's cgroup v2 `cpu.weight` for a CPU request of `millicores` (from {@link cpuShares}; 1..10000). */
export function cpuWeight(millicores: number): number {
	return Math.min(10_000, Math.floor(1 + ((cpuShares(millicores) - 2) * 9999) / 262142));
}

/** The summed CPU requests (millicores) of the Deployments run by one process, e.g. the API path's four. */
export function requestOf(deployments: string[]): number {
	return deployments.reduce((sum, d) => sum + manifestCpuRequest(d), 0);
}

/**
 * The cgroups of one bench run ({@link Pods.place}, {@link Pods.threadGroup}), removed by {@link Pods.close}.
 * Every method is a no-op when placement is off ({@link Pods.on}).
 */
export class Pods {
	/** "v1" or "v2" when processes are placed; undefined when off. */
	readonly version?: "v1" | "v2";
	/** How the processes are placed, in words (printed by the bench). */
	readonly mode: string;
	private readonly base: string;
	/** The run's `kubepods` cgroup, parent of the pods' and sibling prefix of the clients'. */
	private readonly kubepods: string;
	private readonly made: string[] = [];

	constructor(run: string) {
		const v = process.env.BENCH_PODS === "0" ? undefined : detect();
		this.version = v?.version;
		this.base = v?.root ?? "";
		this.kubepods = `${this.base}/msa-bench-${run}`;
		let mode = v ? "" : "one scheduling group (BENCH_PODS=0 or no writable cpu cgroup)";
		if (v) {
			try {
				this.group(this.kubepods, cpus().length * 1000);
				mode = `a cgroup (${v.version}) per process, weighted by its CPU request`;
			} catch (e) {
				this.version = undefined;
				mode = `one scheduling group (cgroups refused: ${(e as Error).message})`;
			}
		}
		this.mode = mode;
	}

	/** Whether processes are placed. */
	get on(): boolean {
		return this.version !== undefined;
	}

	/**
	 * Moves process `pid` (all its threads) into cgroup `name`, made on first use with the weight of
	 * `millicores`: under the run's `kubepods` when `pod`, else beside it (a client's machine).
	 */
	place(name: string, pid: number, millicores: number, pod = true): void {
		if (!this.version) return;
		const dir = this.group(this.path(name, pod), millicores);
		writeFileSync(`${dir}/cgroup.procs`, String(pid));
	}

	/**
	 * Cgroup `name` beside the run's `kubepods` (default weight) for one thread to join by writing its
	 * thread id to `<dir>/tasks` (cgroup v1 only; undefined otherwise).
	 */
	threadGroup(name: string): string | undefined {
		if (this.version !== "v1") return undefined;
		return this.group(this.path(name, false), 1000);
	}

	/** Moves what is left in the run's cgroups (the bench's own threads) back to the root and removes them. */
	close(): void {
		if (!this.version) return;
		const tasks = this.version === "v1" ? "tasks" : "cgroup.procs";
		for (const dir of [...this.made].reverse()) {
			try {
				for (const id of readFileSync(`${dir}/${tasks}`, "utf8").split("\n").filter(Boolean))
					writeFileSync(`${this.base}/${tasks}`, id);
				rmdirSync(dir);
			} catch (e) {
				console.error(`cgroup ${dir} not removed: ${(e as Error).message}`);
			}
		}
		this.made.length = 0;
	}

	private path(name: string, pod: boolean): string {
		return pod ? `${this.kubepods}/${name}` : `${this.kubepods}-${name}`;
	}

	/** Makes cgroup `dir` (once) and sets its weight for `millicores`. */
	private group(dir: string, millicores: number): string {
		if (!existsSync(dir)) {
			mkdirSync(dir);
			this.made.push(dir);
			if (this.version === "v2" && dir === this.kubepods)
				writeFileSync(`${dir}/cgroup.subtree_control`, "+cpu");
		}
		if (this.version === "v1") writeFileSync(`${dir}/cpu.shares`, String(cpuShares(millicores)));
		else writeFileSync(`${dir}/cpu.weight`, String(cpuWeight(millicores)));
		return dir;
	}
}

/** The writable cpu controller of this machine, if any. */
function detect(): { version: "v1" | "v2"; root: string } | undefined {
	if (existsSync(`${V1}/cpu.shares`)) return { version: "v1", root: V1 };
	try {
		if (readFileSync(`${V2}/cgroup.subtree_control`, "utf8").split(/\s+/).includes("cpu"))
			return { version: "v2", root: V2 };
	} catch {
		// no unified hierarchy at /sys/fs/cgroup
	}
	return undefined;
}
