/**
 * `warehouses` service (spec §2.9, §3 last paragraph, §4.5, §7, §8): a
 * merchant's pickup warehouses, their default, and their registration with
 * every active courier as a pickup location. Contract: lib/contracts/warehouses.ts;
 * SQL: lib/warehouses/store.ts; the flat §2.9 row and the contract
 * `Warehouse`: lib/warehouses/rows.ts.
 *
 * Gateway-facing actions (account from `ctx.meta.user` only; any `sender_id`
 * in the request is ignored):
 * - `warehouses.list`   GET    /v1/warehouses            → 200 `{data:[row…]}`
 * - `warehouses.create` POST   /v1/warehouses            → 201 `{data:{id, orders_repaired}}`
 * - `warehouses.update` PATCH  /v1/warehouses/:id        → 200 `{data: row}`
 * - `warehouses.remove` DELETE /v1/warehouses/:id        → 200 `{data:{id, deleted:1}}`
 *
 * Internal actions:
 * - `warehouses.resolve` `{sender_id, id}` → Warehouse | null (active, caller's; one indexed query)
 * - `warehouses.get` `{sender_id, id, include_retired?}` → Warehouse | null
 * - `warehouses.registerWithCouriers` `{warehouse_id, version}` (BullMQ job of queue
 *   `warehouse-registration`, one per warehouse version, jobId `wh-<id>-v<version>`)
 * - `warehouses.sweepRegistrations` `{full?}` → `{enqueued}` (what the sweeper timer runs)
 *
 * Events: broadcasts `warehouses.changed` `{sender_id, id}` after an update or
 * a delete (intake drops its cached resolution).
 *
 * Durability of courier registration: a create or a courier-visible change
 * commits the warehouse (new `version`) and one `pending` row per active
 * courier in one transaction, then enqueues the job. If the courier list is
 * unavailable at that moment a placeholder row (`logistic_id` 0) is written
 * instead. A sweeper (every `WAREHOUSE_SWEEP_MS`, default 30 s) re-enqueues
 * warehouses whose pending rows are older than `WAREHOUSE_REGISTRATION_STALE_MS`
 * (default 60 s) — the job was lost with Redis or its retries ran out — and,
 * every tenth sweep, warehouses missing a row for a courier that became active.
 */
import type { Context } from "moleculer";
import type { Transaction } from "sequelize";
import { senderOf } from "../lib/auth";
import { setting } from "../lib/config";
import {
	broadcast,
	type Caller,
	type CallMeta,
	type CourierInfo,
	call,
	type WarehouseUsage,
} from "../lib/contracts";
import { adapterFor, CourierRefused, pickupLocationOf } from "../lib/couriers";
import { type ApiError, fail, failWith, validationFailed } from "../lib/errors";
import { parsePositiveInt } from "../lib/fields";
import { getQueue } from "../lib/queue";
import { defineService } from "../lib/service";
import { WAREHOUSES_MIGRATIONS } from "../lib/warehouses/migrations";
import {
	COURIER_FIELDS,
	fieldsOf,
	registrationView,
	type StoredRegistration,
	type StoredWarehouse,
	toView,
	type WarehouseView,
	warehouseOf,
} from "../lib/warehouses/rows";
import {
	clearDefault,
	countLive,
	dropOtherCouriers,
	insertWarehouse,
	isNameConflict,
	listWarehouses,
	lockAccount,
	makeDefault,
	markPending,
	missingRegistrations,
	PLACEHOLDER_LOGISTIC_ID,
	type RegistrationOutcome,
	readWarehouse,
	recordRegistration,
	registrationsAt,
	registrationsOf,
	retireWarehouse,
	staleRegistrations,
	successorOf,
	updateWarehouse,
	type WarehouseVersion,
	warehouseById,
} from "../lib/warehouses/store";
import { type ParsedWarehouse, parseCreate, parsePatch } from "../lib/warehouses/validation";
import { DbMixin } from "../mixins/db.mixin";
import { WorkerMixin } from "../mixins/worker.mixin";

/** BullMQ queue of courier registrations. */
export const REGISTRATION_QUEUE = "warehouse-registration";
/** Timeout (ms) of calls to other services of ours. */
const CALL_TIMEOUT_MS = 5000;
/** Order ids listed in a 409 `warehouse_in_use` (spec §8). */
const MAX_BLOCKER_IDS = 20;
/** Window of `shipped_30d` (ms). */
const SHIPPED_WINDOW_MS = 30 * 24 * 3600 * 1000;

/** State set in `created` / `started`. */
interface WarehousesVars {
	sweepTimer?: NodeJS.Timeout;
	/** ms between sweeps (`WAREHOUSE_SWEEP_MS`) */
	sweepMs: number;
	/** ms after which a pending registration is stale (`WAREHOUSE_REGISTRATION_STALE_MS`) */
	staleMs: number;
	sweeps: number;
	sweeping: boolean;
}

/** 404 `{error:"not_found", message}` (spec §7: not yours, missing and retired are identical). */
function notFound(): ApiError {
	return fail("not_found", "warehouse");
}

/** Tokens of the `include` CSV (string or array), lower-cased; unknown values are ignored. */
function includeSet(v: unknown): Set<string> {
	const parts = Array.isArray(v) ? v.map(String) : typeof v === "string" ? v.split(",") : [];
	return new Set(parts.map((s) => s.trim().toLowerCase()).filter(Boolean));
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

/** Error text of anything thrown. */
const messageOf = (err: unknown) => (err as Error)?.message ?? String(err);

export default defineService<WarehousesVars>()({
	name: "warehouses",
	mixins: [
		DbMixin("warehouses", WAREHOUSES_MIGRATIONS),
		WorkerMixin([
			{
				queue: REGISTRATION_QUEUE,
				action: "warehouses.registerWithCouriers",
				concurrency: 4,
				lockDuration: 60_000,
			},
		]),
	],
	settings: {},
	methods: {
		/** Active couriers from `rates.listCouriers`, or undefined when rates cannot be reached. */
		async activeCouriers(via: Caller): Promise<CourierInfo[] | undefined> {
			try {
				const all = await call(
					via,
					"rates.listCouriers",
					{},
					{ timeout: CALL_TIMEOUT_MS, unavailable: false },
				);
				return (all ?? []).filter((c) => c.active);
			} catch (err) {
				this.logger.warn(`courier list unavailable: ${messageOf(err)}`);
				return undefined;
			}
		},

		/** Orders shipped per warehouse id over the last 30 days; undefined when intake cannot be reached. */
		async shippedCounts(
			ctx: Context<unknown, CallMeta>,
			sender: number,
		): Promise<Record<string, number> | undefined> {
			try {
				const since = new Date(Date.now() - SHIPPED_WINDOW_MS).toISOString();
				const counts = await call(
					ctx,
					"intake.shippedCounts",
					{ sender_id: sender, since },
					{ timeout: CALL_TIMEOUT_MS, unavailable: false },
				);
				return counts ?? {};
			} catch (err) {
				this.logger.warn(`shipped counts unavailable: ${messageOf(err)}`);
				return undefined;
			}
		},

		/**
		 * Checks the well-formed pincodes sent against the India Post directory
		 * (`pincode.lookupMany`); unknown ones add `<field>: not a known Indian
		 * pincode` to `parsed.details`. Skipped (logged) when the pincode service
		 * cannot answer: the courier registration would still refuse a bad one.
		 */
		async checkPincodes(ctx: Context<unknown, CallMeta>, parsed: ParsedWarehouse): Promise<void> {
			if (!parsed.pincodes.length) return;
			let found: Record<string, { found?: boolean }>;
			try {
				found = await call(
					ctx,
					"pincode.lookupMany",
					{ pincodes: [...new Set(parsed.pincodes.map((p) => p.pincode))] },
					{ timeout: CALL_TIMEOUT_MS, unavailable: false },
				);
			} catch (err) {
				this.logger.warn(`pincode check skipped: ${messageOf(err)}`);
				return;
			}
			for (const p of parsed.pincodes) {
				if (found?.[p.pincode] && found[p.pincode].found === false) {
					parsed.details.push(`${p.field}: not a known Indian pincode`);
				}
			}
		},

		/**
		 * What a create or an update does before taking the account lock (no
		 * remote call while holding it): checks the pincodes sent against the
		 * directory, throws 400 `validation_failed` with every detail, then
		 * answers the active couriers (undefined when rates cannot be reached).
		 */
		async beforeWrite(
			ctx: Context<unknown, CallMeta>,
			parsed: ParsedWarehouse,
		): Promise<CourierInfo[] | undefined> {
			await this.checkPincodes(ctx, parsed);
			if (parsed.details.length) throw validationFailed(parsed.details);
			return this.activeCouriers(ctx);
		},

		/**
		 * §2.9 rows with courier registration state and `shipped_30d`. `known`:
		 * the active couriers the caller already asked for (undefined inside:
		 * the list was unavailable), so they are not asked for twice.
		 */
		async views(
			ctx: Context<unknown, CallMeta>,
			sender: number,
			rows: StoredWarehouse[],
			known?: { couriers: CourierInfo[] | undefined },
		): Promise<WarehouseView[]> {
			if (!rows.length) return [];
			const [regs, couriers, shipped] = await Promise.all([
				registrationsOf(
					this.db,
					rows.map((r) => Number(r.id)),
				),
				known ? known.couriers : this.activeCouriers(ctx),
				this.shippedCounts(ctx, sender),
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
		},

		/**
		 * Writes `pending` registration rows for version `w.version` (one per
		 * active courier, or the placeholder when the courier list is unknown) in
		 * transaction `t`.
		 */
		async queueRegistrations(
			t: Transaction,
			w: WarehouseVersion,
			couriers: CourierInfo[] | undefined,
		): Promise<void> {
			const ids = couriers ? couriers.map((c) => c.logistic_id) : [PLACEHOLDER_LOGISTIC_ID];
			if (!ids.length) return;
			await markPending(this.db, w.id, ids, w.version, t);
		},

		/**
		 * Enqueues the registration job of a committed version (jobId
		 * `wh-<id>-v<version>` dedupes). A failure (Redis down) is logged only:
		 * the pending rows make the sweeper retry.
		 */
		async enqueue({ id, version }: WarehouseVersion): Promise<void> {
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
				this.logger.warn(
					`warehouse ${id} v${version}: enqueue failed (sweeper will retry): ${messageOf(err)}`,
				);
			}
		},

		/**
		 * Broadcasts `warehouses.changed` `{sender_id, id}` (intake drops its
		 * cached resolution) without delaying the answer; a failure is logged.
		 */
		changed(ctx: Context<unknown, CallMeta>, sender: number, id: number): void {
			broadcast(ctx, "warehouses.changed", { sender_id: sender, id }).catch((err: unknown) =>
				this.logger.warn(`warehouse ${id}: warehouses.changed not sent: ${messageOf(err)}`),
			);
		},

		/**
		 * Re-enqueues warehouses whose pending registration rows are older than
		 * `staleMs`; with `full`, also warehouses lacking a current-version row for
		 * an active courier. Returns how many jobs were (re-)added.
		 */
		async sweep(full: boolean): Promise<number> {
			const found = new Map<number, number>();
			for (const w of await staleRegistrations(this.db, this.staleMs)) found.set(w.id, w.version);
			if (full) {
				const couriers = await this.activeCouriers(this.broker);
				if (couriers?.length) {
					const ids = couriers.map((c) => c.logistic_id);
					for (const w of await missingRegistrations(this.db, ids, this.staleMs)) found.set(w.id, w.version);
				}
			}
			for (const [id, version] of found) await this.enqueue({ id, version });
			return found.size;
		},
	},
	actions: {
		/**
		 * GET /v1/warehouses (spec §4.5, §2.9). Query `include` (CSV string):
		 * `inactive` also returns retired rows; other values are ignored.
		 * → 200 `{data: WarehouseView[]}`, the default warehouse first, then the
		 * newest first. Each row: `id`, `warehouse_name`, `contact_person_name`,
		 * `contact_no`, `contact_email`, `address_line_1`, `address_line_2`,
		 * `city`, `state`, `pincode`, every `return_*` field, `is_return_same`,
		 * `active`, `retired`, `is_default`, `gstin`, `warehouse_code`,
		 * `warehouse_type`, `courier_registered` (registered with every active
		 * courier for the current version), `courier_registrations`
		 * (`[{logistic_id, logistic_name?, status, reason}]`), `shipped_30d`
		 * (orders shipped from it in the last 30 days per the order service; null
		 * when that service cannot be reached), `created_at`, `updated_at`.
		 * Errors: 401 without a user.
		 */
		list: {
			access: { auth: true },
			async handler(ctx): Promise<{ data: WarehouseView[] }> {
				const sender = senderOf(ctx);
				const includeRetired = includeSet(ctx.params?.include).has("inactive");
				const rows = await listWarehouses(this.db, sender, includeRetired);
				return { data: await this.views(ctx, sender, rows) };
			},
		},

		/**
		 * POST /v1/warehouses (spec §4.5, §2.9). Body: the §2.9 input fields plus
		 * optional `is_default` (see lib/warehouses/validation.ts for every rule).
		 * → 201 `{data:{id, orders_repaired}}`: the warehouse is committed before
		 * the answer; `orders_repaired` is what `intake.adoptOrphanOrders` adopted
		 * (orders that arrived before any warehouse existed; 0 if the order
		 * service could not be reached). The account's first warehouse, or one
		 * sent with `is_default: true`, becomes the default (the previous default
		 * is cleared in the same transaction).
		 * Errors: 400 `validation_failed` with `details` (one per field; an
		 * existing non-retired name, case-insensitive → `warehouse_name: already
		 * exists`; a pincode absent from the India Post directory → `pincode: not
		 * a known Indian pincode`, skipped when the pincode service is down);
		 * 403 read-only role / missing `warehouses.write`.
		 */
		create: {
			access: { writes: true, capability: "warehouses.write" },
			async handler(ctx): Promise<{ data: { id: number; orders_repaired: number } }> {
				const sender = senderOf(ctx);
				const parsed = parseCreate(ctx.params);
				const couriers = await this.beforeWrite(ctx, parsed);
				const created = await nameChecked(() =>
					this.db.transaction(async (t) => {
						await lockAccount(this.db, sender, t);
						const n = await countLive(this.db, sender, t);
						const makeDefault = n === 0 || parsed.is_default === true;
						if (makeDefault && n > 0) await clearDefault(this.db, sender, t);
						const row = await insertWarehouse(this.db, sender, parsed.value, makeDefault, t);
						await this.queueRegistrations(t, row, couriers);
						return row;
					}),
				);
				await this.enqueue(created);
				let orders_repaired = 0;
				try {
					const res = await call(
						ctx,
						"intake.adoptOrphanOrders",
						{ sender_id: sender, warehouse_id: created.id },
						{ timeout: CALL_TIMEOUT_MS, unavailable: false },
					);
					orders_repaired = Number(res?.count ?? 0);
				} catch (err) {
					this.logger.warn(`warehouse ${created.id}: orphan orders not adopted: ${messageOf(err)}`);
				}
				ctx.meta.$statusCode = 201;
				return { data: { id: created.id, orders_repaired } };
			},
		},

		/**
		 * PATCH /v1/warehouses/:id (spec §4.5 "payload and response: not shown";
		 * decided here). Path `id`; body: any subset of the create fields plus
		 * `is_default`. Fields sent are validated as on create; `null` clears an
		 * optional field. With `is_return_same` true (sent or stored) the return
		 * leg is re-mirrored from the forward fields; switching it to false keeps
		 * the mirrored copy unless new `return_*` values are sent, and the
		 * resulting return block must be complete. `is_default: true` makes this
		 * the default (the old one is cleared in the same transaction);
		 * `is_default: false` on the default hands it to the oldest other active
		 * warehouse (an account's only warehouse stays default). A change of any
		 * courier-visible field bumps `version` and re-registers the warehouse with
		 * every courier. → 200 `{data: WarehouseView}` (the row as in the list),
		 * then `warehouses.changed` is broadcast.
		 * Errors: 404 `not_found` (non-integer id, missing, not yours, retired);
		 * 400 `validation_failed` with `details` (incl. `warehouse_name: already
		 * exists`, `body: no updatable field`); 403 read-only / capability.
		 */
		update: {
			access: { writes: true, capability: "warehouses.write" },
			async handler(ctx): Promise<{ data: WarehouseView }> {
				const sender = senderOf(ctx);
				const id = parsePositiveInt(ctx.params?.id);
				if (id === null) throw notFound();
				const { id: _pathId, ...body } = ctx.params ?? {};
				// Validate and ask the pincode directory and the courier list before
				// taking the account lock (no remote call while holding it).
				const before = await readWarehouse(this.db, sender, id);
				if (!before) throw notFound();
				const couriers = await this.beforeWrite(ctx, parsePatch(body, fieldsOf(before)));
				const outcome = await nameChecked(() =>
					this.db.transaction(async (t) => {
						await lockAccount(this.db, sender, t);
						const cur = await readWarehouse(this.db, sender, id, { t });
						if (!cur) throw notFound();
						// Re-merge against the row as it is under the lock.
						const parsed = parsePatch(body, fieldsOf(cur));
						if (parsed.details.length) throw validationFailed(parsed.details);
						const fields = parsed.value;
						const reregister = COURIER_FIELDS.some((f) => !sameValue(fields[f], cur[f]));
						const version = cur.version + (reregister ? 1 : 0);
						if (parsed.is_default === true && !cur.is_default) await clearDefault(this.db, sender, t);
						let isDefault = cur.is_default || parsed.is_default === true;
						const successor =
							parsed.is_default === false && cur.is_default
								? await successorOf(this.db, sender, id, t)
								: null;
						if (successor !== null) isDefault = false;
						const row = await updateWarehouse(this.db, sender, id, { fields, isDefault, version }, t);
						// After ours is cleared (one default per account is a unique index).
						if (successor !== null) await makeDefault(this.db, successor, t);
						if (reregister) await this.queueRegistrations(t, { id, version }, couriers);
						return { row, reregister };
					}),
				);
				if (outcome.reregister) await this.enqueue({ id, version: outcome.row.version });
				// cached resolutions elsewhere (intake) must see the change
				this.changed(ctx, sender, id);
				const [view] = await this.views(ctx, sender, [outcome.row], { couriers });
				return { data: view };
			},
		},

		/**
		 * DELETE /v1/warehouses/:id (spec §4.5, §3 last paragraph). Soft delete:
		 * `active=false, retired=true, retired_at=now()`; when it was the default,
		 * the oldest remaining active warehouse becomes the default.
		 * → 200 `{data:{id, deleted:1}}`, then `warehouses.changed` is broadcast.
		 * Errors: 404 `not_found` (id not a positive integer, missing, not yours,
		 * already deleted); 409 `{error:"warehouse_in_use", message, count,
		 * unshipped, awaiting_pickup, order_ids}` (at most 20 ids) when
		 * `intake.warehouseUsage` reports open orders shipping from it; 503
		 * `service_unavailable` when the order service cannot be asked (nothing
		 * deleted); 403 read-only / capability.
		 *
		 * The usage check runs inside the transaction that retires the row, under
		 * the account lock and the row lock, so concurrent PATCH / DELETE of the
		 * warehouse wait for it and the check-to-retire window is one UPDATE.
		 * Known limit: it is not atomic against order creation, which lives in
		 * another service. An order whose `warehouses.resolve` answered (or was
		 * cached, lib/intake/warehouse-cache.ts) before this commit but whose
		 * INSERT lands after the usage count is accepted against the retired
		 * warehouse (its booking then fails: the warehouse no longer resolves).
		 * Closing it needs the create to re-check the warehouse under a lock this
		 * delete also takes, e.g. a shared `pg_advisory_xact_lock_shared` on
		 * (sender, warehouse) held by intake from an uncached resolve to the
		 * INSERT's commit, and the exclusive lock held here from the count to the
		 * commit — at the cost of the resolve cache on the create hot path.
		 */
		remove: {
			access: { writes: true, capability: "warehouses.write" },
			async handler(ctx) {
				const sender = senderOf(ctx);
				const id = parsePositiveInt(ctx.params?.id);
				if (id === null) throw notFound();
				await this.db.transaction(async (t) => {
					await lockAccount(this.db, sender, t);
					const cur = await readWarehouse(this.db, sender, id, { t });
					if (!cur) throw notFound();
					let usage: WarehouseUsage;
					try {
						usage = await call(
							ctx,
							"intake.warehouseUsage",
							{ sender_id: sender, warehouse_id: id },
							{ timeout: CALL_TIMEOUT_MS, unavailable: false },
						);
					} catch (err) {
						this.logger.warn(`warehouse ${id}: usage unavailable: ${messageOf(err)}`);
						throw fail("service_unavailable", "warehouse_usage");
					}
					if (Number(usage?.count) > 0) {
						throw failWith(
							"warehouse_in_use",
							{
								count: Number(usage.count),
								unshipped: Number(usage.unshipped ?? 0),
								awaiting_pickup: Number(usage.awaiting_pickup ?? 0),
								order_ids: (usage.order_ids ?? []).slice(0, MAX_BLOCKER_IDS).map(Number),
							},
							usage.count,
						);
					}
					await retireWarehouse(this.db, sender, id, cur.is_default, t);
				});
				this.changed(ctx, sender, id);
				return { data: { id, deleted: 1 } };
			},
		},

		/**
		 * Internal, on every order create (≥ 1,000 req/s): `{sender_id, id}`
		 * (positive integers; numeric strings accepted) → the caller's active
		 * warehouse as a contract `Warehouse` (pickup leg, return leg with the
		 * §2.9 return rule applied), or null (missing, not theirs, retired,
		 * malformed id). One primary-key query. Never throws for bad input.
		 */
		resolve: {
			params: { sender_id: { type: "any" }, id: { type: "any" } },
			async handler(ctx) {
				const sender = parsePositiveInt(ctx.params.sender_id);
				const id = parsePositiveInt(ctx.params.id);
				if (sender === null || id === null) return null;
				const row = await readWarehouse(this.db, sender, id);
				return row ? warehouseOf(row) : null;
			},
		},

		/**
		 * Internal: `{sender_id, id, include_retired?}` → the account's warehouse
		 * (retired too when `include_retired`) as a contract `Warehouse`, as in
		 * `resolve`, or null.
		 */
		get: {
			params: {
				sender_id: { type: "any" },
				id: { type: "any" },
				include_retired: { type: "boolean", optional: true },
			},
			async handler(ctx) {
				const sender = parsePositiveInt(ctx.params.sender_id);
				const id = parsePositiveInt(ctx.params.id);
				if (sender === null || id === null) return null;
				const row = await readWarehouse(this.db, sender, id, {
					includeRetired: ctx.params.include_retired === true,
				});
				return row ? warehouseOf(row) : null;
			},
		},

		/**
		 * Job of queue `warehouse-registration`: registers version `version` of
		 * warehouse `warehouse_id` with every active courier
		 * (`adapterFor(courier).registerWarehouse(pickupLocationOf(warehouse))`).
		 * Idempotent: couriers already answered for this version are skipped; a
		 * stale version (superseded) or a retired warehouse is a no-op. Courier
		 * said no (CourierRefused) → row `refused` with the courier's words in
		 * `reason`. Courier unreachable → the row stays `pending` (reason notes
		 * the error) and the job throws so BullMQ retries with backoff; so does
		 * an unreachable rates service. → `{registered, refused, skipped?}`.
		 */
		registerWithCouriers: {
			params: {
				warehouse_id: { type: "number", integer: true, positive: true, convert: true },
				version: { type: "number", integer: true, positive: true, convert: true },
			},
			async handler(ctx) {
				const { warehouse_id, version } = ctx.params;
				const w = await warehouseById(this.db, warehouse_id);
				if (!w || w.retired) return { registered: 0, refused: 0, skipped: "retired" };
				if (w.version !== version) return { registered: 0, refused: 0, skipped: "stale_version" };
				const all = await call(
					ctx,
					"rates.listCouriers",
					{},
					{ timeout: CALL_TIMEOUT_MS, unavailable: false },
				);
				const couriers = (all ?? []).filter((c) => c.active);
				const ids = couriers.map((c) => c.logistic_id);
				await markPending(this.db, warehouse_id, ids, version);
				await dropOtherCouriers(this.db, warehouse_id, ids);
				const rows = await registrationsAt(this.db, warehouse_id, version);
				const pending = new Set(rows.filter((r) => r.status === "pending").map((r) => r.logistic_id));
				const loc = pickupLocationOf(warehouseOf(w));
				const record = (logistic_id: number, outcome: RegistrationOutcome) =>
					recordRegistration(this.db, warehouse_id, logistic_id, version, outcome);
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
									this.logger.info(
										`warehouse ${warehouse_id} v${version}: refused by courier ${c.logistic_id}`,
									);
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
					throw new Error(
						`warehouse ${warehouse_id} v${version}: courier(s) unavailable: ${failures.join("; ")}`,
					);
				}
				return { registered, refused };
			},
		},

		/**
		 * Internal: one sweep of the registration sweeper (see the file header).
		 * `{full?: boolean}` also looks for warehouses missing a row for a courier
		 * that is now active. → `{enqueued}` (jobs (re-)added).
		 */
		sweepRegistrations: {
			params: { full: { type: "boolean", optional: true } },
			async handler(ctx): Promise<{ enqueued: number }> {
				return { enqueued: await this.sweep(Boolean(ctx.params.full)) };
			},
		},
	},
	created() {
		this.sweepMs = setting("WAREHOUSE_SWEEP_MS");
		this.staleMs = setting("WAREHOUSE_REGISTRATION_STALE_MS");
		this.sweeps = 0;
		this.sweeping = false;
	},
	async started() {
		this.sweepTimer = setInterval(() => {
			if (this.sweeping || !this.broker.started) return;
			this.sweeping = true;
			this.sweeps += 1;
			this.sweep(this.sweeps % 10 === 0)
				.catch((err: Error) => this.logger.warn(`registration sweep failed: ${err.message}`))
				.finally(() => {
					this.sweeping = false;
				});
		}, this.sweepMs);
		this.sweepTimer.unref?.();
	},
	stopped() {
		if (this.sweepTimer) clearInterval(this.sweepTimer);
		this.sweepTimer = undefined;
	},
});
