/**
 * Courier registration of warehouses (spec §2.9; the durability scheme is in
 * the header of services/warehouses.service.ts): the `pending` rows written
 * with a warehouse version, the BullMQ job that registers the version with
 * every active courier, and the sweeper that re-enqueues lost jobs. Plain
 * functions over {@link WarehousesDeps}; SQL in ./store.ts.
 */
import type { Transaction } from "sequelize";
import { type Caller, type CourierInfo, call } from "../contracts";
import { adapterFor, CourierRefused, pickupLocationOf } from "../couriers";
import { getQueue } from "../platform/queue";
import { CALL_OPTIONS, messageOf, type WarehousesDeps } from "./deps";
import { activeCouriers } from "./remote";
import { warehouseOf } from "./rows";
import {
	dropOtherCouriers,
	markPending,
	missingRegistrations,
	PLACEHOLDER_LOGISTIC_ID,
	type RegistrationOutcome,
	recordRegistration,
	registrationsAt,
	staleRegistrations,
	type WarehouseVersion,
	warehouseById,
} from "./store";

/** BullMQ queue of courier registrations (worker action `warehouses.registerWithCouriers`). */
export const REGISTRATION_QUEUE = "warehouse-registration";

/** What one registration job did: couriers that registered or refused, or why it did nothing. */
export interface RegistrationResult {
	registered: number;
	refused: number;
	skipped?: "retired" | "stale_version";
}

/**
 * Writes `pending` registration rows for version `w.version` (one per
 * active courier, or the placeholder when the courier list is unknown) in
 * transaction `t`.
 */
export async function queueRegistrations(
	deps: WarehousesDeps,
	t: Transaction,
	w: WarehouseVersion,
	couriers: CourierInfo[] | undefined,
): Promise<void> {
	const ids = couriers ? couriers.map((c) => c.logistic_id) : [PLACEHOLDER_LOGISTIC_ID];
	if (!ids.length) return;
	await markPending(deps.db, w.id, ids, w.version, t);
}

/**
 * Enqueues the registration job of a committed version (jobId
 * `wh-<id>-v<version>` dedupes). A failure (Redis down) is logged only:
 * the pending rows make the sweeper retry.
 */
export async function enqueueRegistration(
	deps: WarehousesDeps,
	{ id, version }: WarehouseVersion,
): Promise<void> {
	try {
		await getQueue(REGISTRATION_QUEUE).add(
			"register",
			{ warehouse_id: id, version },
			{
				jobId: `wh-${id}-v${version}`,
				attempts: 8,
				backoff: { type: "exponential", delay: 2000 },
				removeOnComplete: true,
				removeOnFail: true,
			},
		);
	} catch (err) {
		deps.logger.warn(`warehouse ${id} v${version}: enqueue failed (sweeper will retry): ${messageOf(err)}`);
	}
}

/**
 * Registers version `version` of warehouse `warehouseId` with every active
 * courier (`adapterFor(courier).registerWarehouse(pickupLocationOf(warehouse))`).
 * Idempotent: couriers already answered for this version are skipped; a
 * stale version (superseded) or a retired warehouse is a no-op. Courier
 * said no (CourierRefused) → row `refused` with the courier's words in
 * `reason` (≤ 1,000 characters). Courier unreachable → the row stays
 * `pending` (reason notes the error) and this throws so BullMQ retries with
 * backoff; so does an unreachable rates service.
 */
export async function registerWithCouriers(
	deps: WarehousesDeps,
	via: Caller,
	warehouseId: number,
	version: number,
): Promise<RegistrationResult> {
	const { db } = deps;
	const w = await warehouseById(db, warehouseId);
	if (!w || w.retired) return { registered: 0, refused: 0, skipped: "retired" };
	if (w.version !== version) return { registered: 0, refused: 0, skipped: "stale_version" };
	const all = await call(via, "rates.listCouriers", {}, CALL_OPTIONS);
	const couriers = (all ?? []).filter((c) => c.active);
	const ids = couriers.map((c) => c.logistic_id);
	await markPending(db, warehouseId, ids, version);
	await dropOtherCouriers(db, warehouseId, ids);
	const rows = await registrationsAt(db, warehouseId, version);
	const pending = new Set(rows.filter((r) => r.status === "pending").map((r) => r.logistic_id));
	const loc = pickupLocationOf(warehouseOf(w));
	const record = (logistic_id: number, outcome: RegistrationOutcome) =>
		recordRegistration(db, warehouseId, logistic_id, version, outcome);
	let registered = 0;
	let refused = 0;
	const failures: string[] = [];
	await Promise.all(
		couriers
			.filter((c) => pending.has(c.logistic_id))
			.map(async (c) => {
				try {
					let adapter: ReturnType<typeof adapterFor>;
					try {
						adapter = adapterFor(c);
					} catch (err) {
						throw new CourierRefused(messageOf(err));
					}
					const res = await adapter.registerWarehouse(loc);
					await record(c.logistic_id, {
						status: "registered",
						reason: null,
						courier_location_id: res.courier_location_id,
					});
					registered++;
				} catch (err) {
					if (err instanceof CourierRefused) {
						await record(c.logistic_id, {
							status: "refused",
							reason: err.message.slice(0, 1000),
							courier_location_id: null,
						});
						refused++;
						deps.logger.info(`warehouse ${warehouseId} v${version}: refused by courier ${c.logistic_id}`);
					} else {
						const msg = messageOf(err);
						await record(c.logistic_id, {
							status: "pending",
							reason: `courier unavailable: ${msg}`.slice(0, 1000),
							courier_location_id: null,
						});
						failures.push(`${c.logistic_id}: ${msg}`);
					}
				}
			}),
	);
	if (failures.length) {
		throw new Error(`warehouse ${warehouseId} v${version}: courier(s) unavailable: ${failures.join("; ")}`);
	}
	return { registered, refused };
}

/**
 * One sweep: re-enqueues warehouses whose pending registration rows are
 * older than `deps.staleMs`; with `full`, also warehouses lacking a
 * current-version row for an active courier. Returns how many jobs were
 * (re-)added.
 */
export async function sweepRegistrations(deps: WarehousesDeps, full: boolean): Promise<number> {
	const found = new Map<number, number>();
	for (const w of await staleRegistrations(deps.db, deps.staleMs)) found.set(w.id, w.version);
	if (full) {
		const couriers = await activeCouriers(deps, deps.broker);
		if (couriers?.length) {
			const ids = couriers.map((c) => c.logistic_id);
			for (const w of await missingRegistrations(deps.db, ids, deps.staleMs)) found.set(w.id, w.version);
		}
	}
	for (const [id, version] of found) await enqueueRegistration(deps, { id, version });
	return found.size;
}
