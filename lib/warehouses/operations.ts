/**
 * The operations behind the `warehouses` actions (spec §2.9, §3 last
 * paragraph, §4.5, §7, §8): list, create, update, remove, and the internal
 * reads. Plain functions over {@link WarehousesDeps}; each write runs in one
 * transaction under the account lock (./store.ts `withAccountLock`), with no
 * remote call while holding it except the delete's usage check (see
 * {@link removeWarehouse}). SQL in ./store.ts; input rules in ./validation.ts;
 * row shapes in ./rows.ts.
 */
import type { Context } from "moleculer";
import type { CallMeta, CourierInfo, Warehouse, WarehouseView } from "../contracts";
import { type ApiError, fail, validationFailed } from "../platform/errors";
import { parsePositiveInt } from "../shared/fields";
import type { WarehousesDeps } from "./deps";
import { enqueueRegistration, queueRegistrations } from "./registration";
import {
	activeCouriers,
	adoptOrphanOrders,
	announceChange,
	assertUnused,
	beforeWrite,
	shippedCounts,
} from "./remote";
import {
	COURIER_FIELDS,
	fieldsOf,
	registrationView,
	type StoredRegistration,
	type StoredWarehouse,
	toView,
	warehouseOf,
} from "./rows";
import {
	clearDefault,
	countLive,
	insertWarehouse,
	isNameConflict,
	listWarehouses,
	makeDefault,
	readWarehouse,
	registrationsOf,
	retireWarehouse,
	successorOf,
	updateWarehouse,
	withAccountLock,
} from "./store";
import { type ParsedWarehouse, parsePatch } from "./validation";

/** 404 `{error:"not_found", message}` (spec §7: not yours, missing and retired are identical). */
function notFound(): ApiError {
	return fail("not_found", "warehouse");
}

/** The path `id` of a warehouse as a positive integer; anything else throws 404 `not_found` (spec §7). */
export function warehouseIdOf(raw: unknown): number {
	const id = parsePositiveInt(raw);
	if (id === null) throw notFound();
	return id;
}

/**
 * True when the `include` query (CSV string or array; tokens trimmed,
 * case-insensitive, unknown ones ignored) names `inactive`.
 */
export function includesRetired(include: unknown): boolean {
	const parts = Array.isArray(include)
		? include.map(String)
		: typeof include === "string"
			? include.split(",")
			: [];
	return parts.some((s) => s.trim().toLowerCase() === "inactive");
}

function sameValue(a: unknown, b: unknown): boolean {
	return (a ?? null) === (b ?? null);
}

/** Runs a write whose unique-name violation is answered as 400 `warehouse_name: already exists`. */
async function nameChecked<T>(write: () => Promise<T>): Promise<T> {
	try {
		return await write();
	} catch (err) {
		if (isNameConflict(err)) throw validationFailed(["warehouse_name: already exists"]);
		throw err;
	}
}

/**
 * §2.9 rows with courier registration state and `shipped_30d`. `known`:
 * the active couriers the caller already asked for (undefined inside:
 * the list was unavailable), so they are not asked for twice.
 */
export async function viewsOf(
	deps: WarehousesDeps,
	ctx: Context<unknown, CallMeta>,
	sender: number,
	rows: StoredWarehouse[],
	known?: { couriers: CourierInfo[] | undefined },
): Promise<WarehouseView[]> {
	if (!rows.length) return [];
	const [regs, couriers, shipped] = await Promise.all([
		registrationsOf(
			deps.db,
			rows.map((r) => Number(r.id)),
		),
		known ? known.couriers : activeCouriers(deps, ctx),
		shippedCounts(deps, ctx, sender),
	]);
	const byWarehouse = new Map<string, StoredRegistration[]>();
	for (const r of regs) {
		const k = String(r.warehouse_id);
		const list = byWarehouse.get(k);
		if (list) list.push(r);
		else byWarehouse.set(k, [r]);
	}
	return rows.map((w) =>
		toView(
			w,
			registrationView(w, byWarehouse.get(String(w.id)) ?? [], couriers),
			shipped ? Number(shipped[String(w.id)] ?? 0) : null,
		),
	);
}

/**
 * The account's warehouses as §2.9 rows (`GET /v1/warehouses`): non-retired
 * ones (retired too with `includeRetired`), the default first, then the newest first.
 */
export async function listWarehouseViews(
	deps: WarehousesDeps,
	ctx: Context<unknown, CallMeta>,
	sender: number,
	includeRetired: boolean,
): Promise<WarehouseView[]> {
	const rows = await listWarehouses(deps.db, sender, includeRetired);
	return viewsOf(deps, ctx, sender, rows);
}

/**
 * Creates a warehouse of `sender` from the parsed body (`POST
 * /v1/warehouses`): pincodes checked, then under the account lock the
 * account's first warehouse, or one sent with `is_default: true`, becomes
 * the default (the previous default cleared in the same transaction) and
 * its pending registrations are written; the registration job is enqueued
 * after the commit, then intake adopts the orphan orders.
 * → `{id, orders_repaired}`. Errors: 400 `validation_failed` with `details`
 * (incl. `warehouse_name: already exists`, `pincode: not a known Indian pincode`).
 */
export async function createWarehouse(
	deps: WarehousesDeps,
	ctx: Context<unknown, CallMeta>,
	sender: number,
	parsed: ParsedWarehouse,
): Promise<{ id: number; orders_repaired: number }> {
	const { db } = deps;
	const couriers = await beforeWrite(deps, ctx, parsed);
	const created = await nameChecked(() =>
		withAccountLock(db, sender, async (t) => {
			const n = await countLive(db, sender, t);
			const isDefault = n === 0 || parsed.is_default === true;
			if (isDefault && n > 0) await clearDefault(db, sender, t);
			const row = await insertWarehouse(db, sender, parsed.value, isDefault, t);
			await queueRegistrations(deps, t, row, couriers);
			return row;
		}),
	);
	await enqueueRegistration(deps, created);
	const orders_repaired = await adoptOrphanOrders(deps, ctx, sender, created.id);
	return { id: created.id, orders_repaired };
}

/**
 * Applies a PATCH body (any subset of the create fields plus `is_default`;
 * rules in the `warehouses.update` docstring and ./validation.ts) to
 * warehouse `id` of `sender`. The body is validated and the pincode directory
 * and courier list asked before the account lock, then re-merged against the
 * row as it is under the lock. A change of a courier-visible field bumps
 * `version` and queues its re-registration; `warehouses.changed` is
 * broadcast after the commit. → the row as listed.
 * Errors: 404 `not_found` (missing, not yours, retired); 400
 * `validation_failed` with `details` (incl. `warehouse_name: already exists`,
 * `body: no updatable field`).
 */
export async function patchWarehouse(
	deps: WarehousesDeps,
	ctx: Context<unknown, CallMeta>,
	sender: number,
	id: number,
	body: Record<string, unknown>,
): Promise<WarehouseView> {
	const { db } = deps;
	const before = await readWarehouse(db, sender, id);
	if (!before) throw notFound();
	const couriers = await beforeWrite(deps, ctx, parsePatch(body, fieldsOf(before)));
	const outcome = await nameChecked(() =>
		withAccountLock(db, sender, async (t) => {
			const cur = await readWarehouse(db, sender, id, { t });
			if (!cur) throw notFound();
			// Re-merge against the row as it is under the lock.
			const parsed = parsePatch(body, fieldsOf(cur));
			if (parsed.details.length) throw validationFailed(parsed.details);
			const fields = parsed.value;
			const reregister = COURIER_FIELDS.some((f) => !sameValue(fields[f], cur[f]));
			const version = cur.version + (reregister ? 1 : 0);
			if (parsed.is_default === true && !cur.is_default) await clearDefault(db, sender, t);
			let isDefault = cur.is_default || parsed.is_default === true;
			const successor =
				parsed.is_default === false && cur.is_default ? await successorOf(db, sender, id, t) : null;
			if (successor !== null) isDefault = false;
			const row = await updateWarehouse(db, sender, id, { fields, isDefault, version }, t);
			// After ours is cleared (one default per account is a unique index).
			if (successor !== null) await makeDefault(db, successor, t);
			if (reregister) await queueRegistrations(deps, t, { id, version }, couriers);
			return { row, reregister };
		}),
	);
	if (outcome.reregister) await enqueueRegistration(deps, { id, version: outcome.row.version });
	// cached resolutions elsewhere (intake) must see the change
	announceChange(deps, ctx, sender, id);
	const [view] = await viewsOf(deps, ctx, sender, [outcome.row], { couriers });
	return view;
}

/**
 * Soft-deletes warehouse `id` of `sender` (`DELETE /v1/warehouses/:id`):
 * under the account lock and the row lock, asks intake whether orders still
 * ship from it, then retires it (the oldest remaining active warehouse
 * inherits the default); `warehouses.changed` is broadcast after the
 * commit. Errors: 404 `not_found`; 409 `warehouse_in_use`;
 * 503 `service_unavailable` (nothing deleted). The known limit of the usage
 * check is stated on the `warehouses.remove` action.
 */
export async function removeWarehouse(
	deps: WarehousesDeps,
	ctx: Context<unknown, CallMeta>,
	sender: number,
	id: number,
): Promise<void> {
	const { db } = deps;
	await withAccountLock(db, sender, async (t) => {
		const cur = await readWarehouse(db, sender, id, { t });
		if (!cur) throw notFound();
		await assertUnused(deps, ctx, sender, id);
		await retireWarehouse(db, sender, id, cur.is_default, t);
	});
	announceChange(deps, ctx, sender, id);
}

/**
 * Internal read (`warehouses.resolve` / `warehouses.get`): warehouse `id` of
 * account `sender` (both positive integers; numeric strings accepted) as a
 * contract `Warehouse`, or null (malformed ids, missing, not theirs; retired
 * unless `includeRetired`). One primary-key query; never throws for bad input.
 */
export async function findWarehouse(
	deps: WarehousesDeps,
	rawSender: unknown,
	rawId: unknown,
	includeRetired = false,
): Promise<Warehouse | null> {
	const sender = parsePositiveInt(rawSender);
	const id = parsePositiveInt(rawId);
	if (sender === null || id === null) return null;
	const row = await readWarehouse(deps.db, sender, id, { includeRetired });
	return row ? warehouseOf(row) : null;
}
