/**
 * Where bulk files are processed (issue 10: API p99 during an import ≤ 2×
 * idle; docs/decisions/0060-bulk-worker-deployment.md).
 *
 * `INTAKE_BULK_WORKER` sets an intake process's part:
 *
 * | value  | runs the `intake-bulk` BullMQ worker | serves intake's API and internal actions | relays the event outbox |
 * |--------|---------------------------------------|------------------------------------------|-------------------------|
 * | `on`   | yes                                   | yes                                      | yes                     |
 * | `off`  | no                                    | yes                                      | yes                     |
 * | `only` | yes                                   | no: only `intake.processBulkJob` exists  | no                      |
 *
 * `on` (default) is the one-process start and the tests; Kubernetes runs
 * `msa-intake` with `off` and `msa-intake-bulk` with `only`
 * (k8s/base/intake-bulk.yaml), so reading a 25 MB file never shares a
 * process (or, in a `only` process, a queue group) with order creation or
 * the gateway's calls. A `only` process advertises no other intake action:
 * NATS never hands it an API request.
 *
 * A `only` process lowers its CPU priority at start ({@link lowerThreadsPriority},
 * `INTAKE_BULK_NICE`, default 10): on a host shared with API processes
 * (one machine, docker compose) the scheduler serves them first; under
 * Kubernetes the pod's CPU request weighs it against other pods.
 */
import { readdirSync } from "node:fs";
import { getPriority, setPriority } from "node:os";
import { setting } from "../../platform/config";

/** An intake process's part in bulk processing (see the module docs). */
export type BulkRole = "on" | "off" | "only";

/** The actions an `only` process keeps (everything else of intake is left to `on` / `off` processes). */
export const BULK_ONLY_ACTIONS: readonly string[] = ["processBulkJob"];

/**
 * `INTAKE_BULK_WORKER` of `env` (unset or empty: `on`).
 * @throws Error for any other value than `on`, `off`, `only` (the process refuses to start)
 */
export function bulkRole(env: NodeJS.ProcessEnv = process.env): BulkRole {
	return setting("INTAKE_BULK_WORKER", env);
}

/**
 * `INTAKE_BULK_NICE` of `env`: an integer 0–19, default 10.
 * @throws Error for anything else (the process refuses to start; lib/platform/config.ts)
 */
export function bulkNice(env: NodeJS.ProcessEnv = process.env): number {
	return setting("INTAKE_BULK_NICE", env);
}

/**
 * Raises the nice value of every thread of this process to at least `nice`
 * (Linux: each thread has its own, `/proc/self/task` lists them; threads
 * started later inherit their creator's). Never lowers a nice value (that
 * needs privileges). Best effort: elsewhere, or without permission, nothing
 * changes. Returns the number of threads changed.
 */
export function lowerThreadsPriority(nice: number): number {
	if (nice <= 0) return 0;
	let tids: number[];
	try {
		tids = readdirSync("/proc/self/task").map(Number).filter(Number.isSafeInteger);
	} catch {
		return 0;
	}
	let changed = 0;
	for (const tid of tids) if (raiseThreadNice(tid, nice)) changed++;
	return changed;
}

/**
 * Raises thread `tid`'s nice value to `nice` when it is lower (Linux: a
 * thread is a task with its own nice value); never lowers one (that needs
 * privileges). Answers whether it changed; false when the thread is gone or
 * the call is not allowed.
 */
export function raiseThreadNice(tid: number, nice: number): boolean {
	try {
		if (getPriority(tid) >= nice) return false;
		setPriority(tid, nice);
		return true;
	} catch {
		return false;
	}
}
