/**
 * The serviceability sync of the `rates` service (issue 14): the
 * `rates.syncServiceability` action and job, its BullMQ repeatable scheduler,
 * and the service's start (sandbox seed, first catalog load, scheduler,
 * gauges). Plain functions over {@link RatesDeps}; the courier calls and the
 * SQL are in ./serviceability.ts.
 */
import { broadcast, type Caller, call, type ResultOf, type ServiceabilitySyncOutcome } from "../contracts";
import { adapterFor, type CourierAdapter } from "../couriers";
import { recordServiceabilitySync } from "../platform/metrics";
import { getQueue } from "../platform/queue";
import type { CatalogSnapshot } from "./catalog";
import { type RatesDeps, unavailable } from "./deps";
import { reloadCatalog } from "./operations";
import { seedSandbox } from "./seed";
import {
	fetchServiceability,
	readSyncStatus,
	recordSyncError,
	replaceCourierPincodes,
	SYNC_QUEUE,
	syncIntervalMs,
	syncsServiceability,
} from "./serviceability";

/**
 * Syncs one courier (./serviceability.ts): asks `adapter` every pincode of
 * `pincodes` and replaces its `rates.courier_pincodes` rows in one
 * transaction. A courier error (or a database failure) is recorded in
 * `rates.serviceability_syncs` and answered as `ok: false`; the previous
 * rows stay. Never throws.
 */
export async function syncCourier(
	d: RatesDeps,
	courier: { logistic_id: number; code: string },
	adapter: CourierAdapter,
	pincodes: string[],
): Promise<ServiceabilitySyncOutcome> {
	const id = courier.logistic_id;
	try {
		const rows = await fetchServiceability(adapter, pincodes);
		const r = await replaceCourierPincodes(d.db, id, rows);
		recordServiceabilitySync(d.broker, courier.code, r.rows, new Date(r.synced_at));
		d.logger.info(`serviceability of courier ${courier.code} synced: ${r.rows} pincodes`);
		return { logistic_id: id, ok: true, rows: r.rows, error: null };
	} catch (err) {
		const message = `${(err as Error).name}: ${(err as Error).message}`;
		d.logger.warn(`serviceability sync of courier ${courier.code} failed (previous rows kept): ${message}`);
		recordServiceabilitySync(d.broker, courier.code, null);
		await recordSyncError(d.db, id, message).catch((e: Error) =>
			d.logger.error("serviceability sync error not recorded", e.message),
		);
		return { logistic_id: id, ok: false, rows: null, error: message };
	}
}

/** A courier to sync and its adapter. */
interface SyncTarget {
	courier: CatalogSnapshot["couriers"][number];
	adapter: CourierAdapter;
}

/**
 * The active couriers of `snap` (only `want` when given) whose adapter
 * implements the optional `serviceability` operation; a courier without an
 * adapter under its key is skipped.
 */
function syncTargets(snap: CatalogSnapshot, want: number | undefined): SyncTarget[] {
	const targets: SyncTarget[] = [];
	for (const c of snap.couriers) {
		if (!c.active || (want !== undefined && c.logistic_id !== want)) continue;
		let adapter: CourierAdapter;
		try {
			adapter = adapterFor(c);
		} catch {
			continue; // no adapter under that key: nothing to sync
		}
		if (syncsServiceability(adapter)) targets.push({ courier: c, adapter });
	}
	return targets;
}

/**
 * `rates.syncServiceability` (issue 14): reloads the catalog, syncs every
 * target courier ({@link syncTargets}; only `want` when given) over the
 * directory's pincodes (`pincode.all`, 30 s), one courier after the other,
 * then, when one succeeded, reloads the catalog, clears the pincode cache and
 * broadcasts `rates.changed`. Answers `{couriers: [{logistic_id, ok, rows,
 * error}]}` (`[]` without a target). 503 `rate_unavailable` when the catalog
 * or the pincode directory cannot be read.
 */
export async function syncServiceability(
	d: RatesDeps,
	ctx: Caller,
	want: number | undefined,
): Promise<ResultOf<"rates.syncServiceability">> {
	const targets = syncTargets(await reloadCatalog(d), want);
	if (!targets.length) return { couriers: [] };
	let pincodes: string[];
	try {
		pincodes = await call(ctx, "pincode.all", {}, { timeout: 30_000, unavailable: false });
	} catch (err) {
		d.logger.warn("pincode directory unavailable for the serviceability sync", (err as Error).message);
		throw unavailable();
	}
	const couriers: ServiceabilitySyncOutcome[] = [];
	for (const t of targets) couriers.push(await syncCourier(d, t.courier, t.adapter, pincodes));
	if (couriers.some((c) => c.ok)) {
		await reloadCatalog(d).catch(() => undefined);
		d.pincodeCache.clear();
		await broadcast(ctx, "rates.changed", {});
	}
	return { couriers };
}

/**
 * Registers (interval > 0) or removes (0) the repeatable BullMQ job of
 * the serviceability sync on queue {@link SYNC_QUEUE}: one scheduler id
 * shared by every rates pod, so the job runs once per interval, not
 * once per pod. A queue failure is logged (quotes do not depend on it).
 */
export async function scheduleServiceabilitySync(d: RatesDeps, everyMs: number): Promise<void> {
	const q: object = getQueue(SYNC_QUEUE);
	const sched = q as {
		upsertJobScheduler?: (
			id: string,
			repeat: { every: number },
			tpl: { name: string; data: object },
		) => Promise<unknown>;
		removeJobScheduler?: (id: string) => Promise<unknown>;
	};
	try {
		if (everyMs > 0)
			await sched.upsertJobScheduler?.call(q, SYNC_QUEUE, { every: everyMs }, { name: "sync", data: {} });
		else await sched.removeJobScheduler?.call(q, SYNC_QUEUE);
	} catch (err) {
		d.logger.warn("serviceability sync not scheduled", (err as Error).message);
	}
}

/**
 * The rates service's start, after its migrations: seeds the sandbox rates
 * (`sandbox` true), loads the catalog (503 `rate_unavailable` if it cannot
 * be read: the service does not start), schedules the serviceability sync
 * (`RATES_SERVICEABILITY_SYNC_MS`), and puts the last syncs into the gauges
 * (ops see them after a restart too).
 */
export async function startRates(d: RatesDeps, sandbox: boolean): Promise<void> {
	if (sandbox) {
		const n = await seedSandbox(d.db);
		if (n) d.logger.info(`sandbox rates seeded (${n} rows)`);
	}
	const snap = await reloadCatalog(d);
	d.logger.info(`rates catalog loaded: ${snap.couriers.length} couriers, ${snap.cards.size} rate cards`);
	await scheduleServiceabilitySync(d, syncIntervalMs());
	const status = await readSyncStatus(d.db).catch(() => []);
	for (const st of status) {
		const c = snap.byId.get(st.logistic_id);
		if (c && st.synced_at) recordServiceabilitySync(d.broker, c.code, st.rows, new Date(st.synced_at));
	}
}
