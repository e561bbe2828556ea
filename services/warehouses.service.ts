/**
 * `warehouses` service (spec §2.9, §3 last paragraph, §4.5, §7, §8): a
 * merchant's pickup warehouses, their default, and their registration with
 * every active courier as a pickup location.
 *
 * Gateway-facing actions (account from `ctx.meta.user` only; any `sender_id`
 * in the request is ignored):
 * - `warehouses.list`   GET    /v1/warehouses            → 200 `{data:[row…]}`
 * - `warehouses.create` POST   /v1/warehouses            → 201 `{data:{id, orders_repaired}}`
 * - `warehouses.update` PATCH  /v1/warehouses/:id        → 200 `{data: row}`
 * - `warehouses.remove` DELETE /v1/warehouses/:id        → 200 `{data:{id, deleted:1}}`
 *
 * Internal actions:
 * - `warehouses.resolve` `{sender_id, id}` → WarehouseRow | null (active, caller's; one indexed query)
 * - `warehouses.get` `{sender_id, id, include_retired?}` → WarehouseRow | null
 * - `warehouses.registerWithCouriers` `{warehouse_id, version}` (BullMQ job of queue
 *   `warehouse-registration`, one per warehouse version, jobId `wh-<id>-v<version>`)
 * - `warehouses.sweepRegistrations` `{full?}` → `{enqueued}` (what the sweeper timer runs)
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
import type { Context, Service, ServiceSchema } from "moleculer";
import type { Transaction } from "sequelize";
import { type AuthUser, senderOf } from "../lib/auth";
import type { CourierInfo, WarehouseUsage } from "../lib/contracts";
import { adapterFor, CourierRefused, pickupLocationOf } from "../lib/couriers";
import { exec, select } from "../lib/db";
import { type ApiError, apiError, validationFailed } from "../lib/errors";
import { parsePositiveInt } from "../lib/fields";
import { getQueue } from "../lib/queue";
import { MIGRATIONS, NAME_UNIQUE_INDEX, SCHEMA } from "../lib/warehouses/migrations";
import {
	COLUMNS,
	COURIER_FIELDS,
	fieldsOf,
	REGISTERED_SQL,
	registrationView,
	type StoredRegistration,
	type StoredWarehouse,
	toView,
	WAREHOUSE_COLUMNS,
	type WarehouseView,
} from "../lib/warehouses/rows";
import { type ParsedWarehouse, parseCreate, parsePatch } from "../lib/warehouses/validation";
import { DbMixin, type DbVars } from "../mixins/db.mixin";
import { WorkerMixin } from "../mixins/worker.mixin";

/** BullMQ queue of courier registrations. */
export const REGISTRATION_QUEUE = "warehouse-registration";
/** Placeholder courier id of a registration row written while the courier list was unavailable. */
const PLACEHOLDER_LOGISTIC_ID = 0;
/** Timeout (ms) of calls to other services of ours. */
const CALL_TIMEOUT_MS = 5000;
/** Order ids listed in a 409 `warehouse_in_use` (spec §8). */
const MAX_BLOCKER_IDS = 20;

interface WarehousesVars extends DbVars {
	sweepTimer?: NodeJS.Timeout;
	sweepMs: number;
	staleMs: number;
	sweeps: number;
	sweeping: boolean;
}

interface WarehousesMethods {
	activeCouriers(ctx: Context | undefined): Promise<CourierInfo[] | undefined>;
	shippedCounts(ctx: Context, sender: number): Promise<Record<string, number> | undefined>;
	checkPincodes(ctx: Context, parsed: ParsedWarehouse): Promise<void>;
	readOne(sender: number, id: number, opts?: ReadOptions): Promise<StoredWarehouse | null>;
	views(
		ctx: Context,
		sender: number,
		rows: StoredWarehouse[],
		known?: { couriers: CourierInfo[] | undefined },
	): Promise<WarehouseView[]>;
	queueRegistrations(
		t: Transaction,
		id: number,
		version: number,
		couriers: CourierInfo[] | undefined,
	): Promise<void>;
	enqueue(id: number, version: number): Promise<void>;
	sweep(full: boolean): Promise<number>;
}

type This = Service & WarehousesVars & WarehousesMethods;

/** Options of {@link WarehousesMethods.readOne}. */
interface ReadOptions {
	/** Also find a retired warehouse (default: active, non-retired only). */
	includeRetired?: boolean;
	/** Add `courier_registered` computed from the stored registrations ({@link REGISTERED_SQL}). */
	registered?: boolean;
	/** Read inside this transaction, locking the row (`FOR UPDATE`). */
	t?: Transaction;
}

/** 404 `{error:"not_found", message}` (spec §7: not yours, missing and retired are identical). */
function notFound(): ApiError {
	return apiError(404, "not_found", "Warehouse not found");
}

/** Tokens of the `include` CSV (string or array), lower-cased; unknown values are ignored. */
function includeSet(v: unknown): Set<string> {
	const parts = Array.isArray(v) ? v.map(String) : typeof v === "string" ? v.split(",") : [];
	return new Set(parts.map((s) => s.trim().toLowerCase()).filter(Boolean));
}

/** Serializes the writes of one account (default and name invariants). */
async function lockAccount(db: DbVars["db"], sender: number, t: Transaction): Promise<void> {
	await select(
		db,
		"SELECT pg_advisory_xact_lock(hashtextextended('warehouses:' || $1::text, 0))",
		[sender],
		t,
	);
}

/** Clears the account's current default (before another warehouse becomes it: one default is a unique index). */
async function clearDefault(db: DbVars["db"], sender: number, t: Transaction): Promise<void> {
	await exec(
		db,
		`UPDATE warehouses.warehouses SET is_default = false, updated_at = now()
		 WHERE sender_id = $1 AND is_default AND NOT retired`,
		[sender],
		t,
	);
}

/**
 * The warehouse that inherits the default: the account's (`$1`) oldest active
 * warehouse other than `$2`.
 */
const SUCCESSOR_SQL = `SELECT id FROM warehouses.warehouses
	WHERE sender_id = $1 AND id <> $2 AND active AND NOT retired
	ORDER BY created_at, id LIMIT 1`;

/**
 * Marks warehouse `$1` pending registration of version `$3` with couriers
 * `$2` (int[]); rows of an older version are reset to pending, rows already at
 * this version are left as they are.
 */
const UPSERT_PENDING_SQL = `INSERT INTO warehouses.courier_registrations (warehouse_id, logistic_id, version, status)
	SELECT $1, l, $3, 'pending' FROM unnest($2::int[]) AS l
	ON CONFLICT (warehouse_id, logistic_id) DO UPDATE
	  SET version = EXCLUDED.version, status = 'pending', reason = NULL, updated_at = now()
	  WHERE courier_registrations.version < EXCLUDED.version`;

function isNameConflict(err: unknown): boolean {
	const e = err as {
		name?: string;
		parent?: { code?: string; constraint?: string };
		original?: { constraint?: string };
	};
	return (
		e?.name === "SequelizeUniqueConstraintError" &&
		(e.parent?.constraint === NAME_UNIQUE_INDEX || e.original?.constraint === NAME_UNIQUE_INDEX)
	);
}

function sameValue(a: unknown, b: unknown): boolean {
	return (a ?? null) === (b ?? null);
}

const WarehousesService = {
	name: "warehouses",
	mixins: [
		DbMixin(SCHEMA, MIGRATIONS),
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
		 */
		list: {
			access: { auth: true },
			async handler(this: This, ctx: Context<{ include?: unknown }, { user?: AuthUser }>) {
				const sender = senderOf(ctx);
				const includeRetired = includeSet(ctx.params?.include).has("inactive");
				const rows = await select<StoredWarehouse>(
					this.db,
					`SELECT ${COLUMNS} FROM warehouses.warehouses w
					 WHERE w.sender_id = $1 ${includeRetired ? "" : "AND NOT w.retired"}
					 ORDER BY (w.is_default AND NOT w.retired) DESC, w.created_at DESC, w.id DESC`,
					[sender],
				);
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
			async handler(
				this: This,
				ctx: Context<Record<string, unknown>, { user?: AuthUser; $statusCode?: number }>,
			) {
				const sender = senderOf(ctx);
				const parsed = parseCreate(ctx.params);
				await this.checkPincodes(ctx, parsed);
				if (parsed.details.length) throw validationFailed(parsed.details);
				const v = parsed.value;
				const couriers = await this.activeCouriers(ctx);
				let created: { id: number; version: number };
				try {
					created = await this.db.transaction(async (t) => {
						await lockAccount(this.db, sender, t);
						const [{ n }] = await select<{ n: number }>(
							this.db,
							"SELECT count(*)::int AS n FROM warehouses.warehouses WHERE sender_id = $1 AND NOT retired",
							[sender],
							t,
						);
						const makeDefault = n === 0 || parsed.is_default === true;
						if (makeDefault && n > 0) await clearDefault(this.db, sender, t);
						const cols = ["sender_id", ...WAREHOUSE_COLUMNS, "is_default"];
						const bind = [sender, ...WAREHOUSE_COLUMNS.map((c) => v[c] ?? null), makeDefault];
						const { rows } = await exec<{ id: string; version: number }>(
							this.db,
							`INSERT INTO warehouses.warehouses (${cols.join(", ")})
							 VALUES (${cols.map((_, i) => `$${i + 1}`).join(", ")})
							 RETURNING id, version`,
							bind,
							t,
						);
						const id = Number(rows[0].id);
						await this.queueRegistrations(t, id, rows[0].version, couriers);
						return { id, version: rows[0].version };
					});
				} catch (err) {
					if (isNameConflict(err)) throw validationFailed(["warehouse_name: already exists"]);
					throw err;
				}
				await this.enqueue(created.id, created.version);
				let orders_repaired = 0;
				try {
					const res = await ctx.call<{ count: number }, { sender_id: number; warehouse_id: number }>(
						"intake.adoptOrphanOrders",
						{ sender_id: sender, warehouse_id: created.id },
						{ timeout: CALL_TIMEOUT_MS },
					);
					orders_repaired = Number(res?.count ?? 0);
				} catch (err) {
					this.logger.warn(`warehouse ${created.id}: orphan orders not adopted: ${(err as Error).message}`);
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
		 * every courier. → 200 `{data: WarehouseView}` (the row as in the list).
		 * Errors: 404 `not_found` (non-integer id, missing, not yours, retired);
		 * 400 `validation_failed` with `details` (incl. `warehouse_name: already
		 * exists`, `body: no updatable field`); 403 read-only / capability.
		 */
		update: {
			access: { writes: true, capability: "warehouses.write" },
			async handler(this: This, ctx: Context<Record<string, unknown>, { user?: AuthUser }>) {
				const sender = senderOf(ctx);
				const id = parsePositiveInt(ctx.params?.id);
				if (id === null) throw notFound();
				const { id: _pathId, ...body } = ctx.params ?? {};
				// Validate and ask the pincode directory and the courier list before
				// taking the account lock (no remote call while holding it).
				const before = await this.readOne(sender, id);
				if (!before) throw notFound();
				const pre = parsePatch(body, fieldsOf(before));
				await this.checkPincodes(ctx, pre);
				if (pre.details.length) throw validationFailed(pre.details);
				const couriers = await this.activeCouriers(ctx);
				let outcome: { row: StoredWarehouse; reregister: boolean };
				try {
					outcome = await this.db.transaction(async (t) => {
						await lockAccount(this.db, sender, t);
						const cur = await this.readOne(sender, id, { t });
						if (!cur) throw notFound();
						// Re-merge against the row as it is under the lock.
						const parsed = parsePatch(body, fieldsOf(cur));
						if (parsed.details.length) throw validationFailed(parsed.details);
						const v = parsed.value;
						const reregister = COURIER_FIELDS.some((f) => !sameValue(v[f], cur[f]));
						const version = cur.version + (reregister ? 1 : 0);
						if (parsed.is_default === true && !cur.is_default) await clearDefault(this.db, sender, t);
						let isDefault = cur.is_default || parsed.is_default === true;
						let successor: number | undefined;
						if (parsed.is_default === false && cur.is_default) {
							const [next] = await select<{ id: string }>(this.db, SUCCESSOR_SQL, [sender, id], t);
							if (next) {
								successor = Number(next.id);
								isDefault = false;
							}
						}
						const n = WAREHOUSE_COLUMNS.length;
						const sets = WAREHOUSE_COLUMNS.map((c, i) => `${c} = $${i + 3}`);
						const { rows } = await exec<StoredWarehouse>(
							this.db,
							`UPDATE warehouses.warehouses w SET ${sets.join(", ")},
							   is_default = $${n + 3}, version = $${n + 4}, updated_at = now()
							 WHERE w.id = $1 AND w.sender_id = $2
							 RETURNING ${COLUMNS}`,
							[id, sender, ...WAREHOUSE_COLUMNS.map((c) => v[c] ?? null), isDefault, version],
							t,
						);
						if (successor !== undefined) {
							// After ours is cleared (one default per account is a unique index).
							await exec(
								this.db,
								"UPDATE warehouses.warehouses SET is_default = true, updated_at = now() WHERE id = $1",
								[successor],
								t,
							);
						}
						if (reregister) await this.queueRegistrations(t, id, version, couriers);
						return { row: rows[0], reregister };
					});
				} catch (err) {
					if (isNameConflict(err)) throw validationFailed(["warehouse_name: already exists"]);
					throw err;
				}
				if (outcome.reregister) await this.enqueue(id, outcome.row.version);
				// cached resolutions elsewhere (intake) must see the change
				this.broker.broadcast("warehouses.changed", { sender_id: sender, id });
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
			async handler(this: This, ctx: Context<{ id?: unknown }, { user?: AuthUser }>) {
				const sender = senderOf(ctx);
				const id = parsePositiveInt(ctx.params?.id);
				if (id === null) throw notFound();
				await this.db.transaction(async (t) => {
					await lockAccount(this.db, sender, t);
					const cur = await this.readOne(sender, id, { t });
					if (!cur) throw notFound();
					let usage: WarehouseUsage;
					try {
						usage = await ctx.call<WarehouseUsage, { sender_id: number; warehouse_id: number }>(
							"intake.warehouseUsage",
							{ sender_id: sender, warehouse_id: id },
							{ timeout: CALL_TIMEOUT_MS },
						);
					} catch (err) {
						this.logger.warn(`warehouse ${id}: usage unavailable: ${(err as Error).message}`);
						throw apiError(
							503,
							"service_unavailable",
							"Cannot check the warehouse's open orders right now; retry",
						);
					}
					if (Number(usage?.count) > 0) {
						throw apiError(
							409,
							"warehouse_in_use",
							`${usage.count} open order(s) still ship from this warehouse`,
							{
								count: Number(usage.count),
								unshipped: Number(usage.unshipped ?? 0),
								awaiting_pickup: Number(usage.awaiting_pickup ?? 0),
								order_ids: (usage.order_ids ?? []).slice(0, MAX_BLOCKER_IDS).map(Number),
							},
						);
					}
					await exec(
						this.db,
						`UPDATE warehouses.warehouses
						 SET active = false, retired = true, retired_at = now(), is_default = false, updated_at = now()
						 WHERE id = $1`,
						[id],
						t,
					);
					if (cur.is_default) {
						await exec(
							this.db,
							`UPDATE warehouses.warehouses SET is_default = true, updated_at = now()
							 WHERE id = (${SUCCESSOR_SQL})`,
							[sender, id],
							t,
						);
					}
				});
				this.broker.broadcast("warehouses.changed", { sender_id: sender, id });
				return { data: { id, deleted: 1 } };
			},
		},

		/**
		 * Internal, on every order create (≥ 1,000 req/s): `{sender_id, id}` →
		 * the caller's active warehouse as a WarehouseRow, or null (missing, not
		 * theirs, retired, malformed id). One primary-key query.
		 * `courier_registered` is computed from the stored registrations;
		 * `shipped_30d` is not counted here (0).
		 */
		resolve: {
			params: { sender_id: { type: "any" }, id: { type: "any" } },
			async handler(
				this: This,
				ctx: Context<{ sender_id: unknown; id: unknown }>,
			): Promise<WarehouseView | null> {
				const sender = parsePositiveInt(ctx.params.sender_id);
				const id = parsePositiveInt(ctx.params.id);
				if (sender === null || id === null) return null;
				const row = await this.readOne(sender, id, { registered: true });
				return row ? toView(row) : null;
			},
		},

		/**
		 * Internal: `{sender_id, id, include_retired?}` → the account's warehouse
		 * (retired too when `include_retired`), as in `resolve`, or null.
		 */
		get: {
			params: {
				sender_id: { type: "any" },
				id: { type: "any" },
				include_retired: { type: "boolean", optional: true },
			},
			async handler(
				this: This,
				ctx: Context<{ sender_id: unknown; id: unknown; include_retired?: boolean }>,
			): Promise<WarehouseView | null> {
				const sender = parsePositiveInt(ctx.params.sender_id);
				const id = parsePositiveInt(ctx.params.id);
				if (sender === null || id === null) return null;
				const row = await this.readOne(sender, id, {
					registered: true,
					includeRetired: ctx.params.include_retired === true,
				});
				return row ? toView(row) : null;
			},
		},

		/**
		 * Job of queue `warehouse-registration`: registers version `version` of
		 * warehouse `warehouse_id` with every active courier
		 * (`adapterFor(courier).registerWarehouse`). Idempotent: couriers already
		 * answered for this version are skipped; a stale version (superseded) or a
		 * retired warehouse is a no-op. Courier said no (CourierRefused) → row
		 * `refused` with the courier's words in `reason`. Courier unreachable →
		 * the row stays `pending` (reason notes the error) and the job throws so
		 * BullMQ retries with backoff. → `{registered, refused, skipped?}`.
		 */
		registerWithCouriers: {
			params: {
				warehouse_id: { type: "number", integer: true, positive: true, convert: true },
				version: { type: "number", integer: true, positive: true, convert: true },
			},
			async handler(this: This, ctx: Context<{ warehouse_id: number; version: number }>) {
				const { warehouse_id, version } = ctx.params;
				const [w] = await select<StoredWarehouse>(
					this.db,
					`SELECT ${COLUMNS} FROM warehouses.warehouses w WHERE w.id = $1`,
					[warehouse_id],
				);
				if (!w || w.retired) return { registered: 0, refused: 0, skipped: "retired" };
				if (w.version !== version) return { registered: 0, refused: 0, skipped: "stale_version" };
				const all = await ctx.call<CourierInfo[], Record<string, never>>(
					"rates.listCouriers",
					{},
					{ timeout: CALL_TIMEOUT_MS },
				);
				const couriers = (all ?? []).filter((c) => c.active);
				const ids = couriers.map((c) => c.logistic_id);
				await exec(this.db, UPSERT_PENDING_SQL, [warehouse_id, ids, version]);
				await exec(
					this.db,
					"DELETE FROM warehouses.courier_registrations WHERE warehouse_id = $1 AND NOT (logistic_id = ANY($2::int[]))",
					[warehouse_id, ids],
				);
				const rows = await select<StoredRegistration>(
					this.db,
					"SELECT * FROM warehouses.courier_registrations WHERE warehouse_id = $1 AND version = $2",
					[warehouse_id, version],
				);
				const pending = new Set(rows.filter((r) => r.status === "pending").map((r) => r.logistic_id));
				const loc = pickupLocationOf(w);
				const record = (
					logistic_id: number,
					status: string,
					reason: string | null,
					locationId: string | null,
				) =>
					exec(
						this.db,
						`UPDATE warehouses.courier_registrations
						 SET status = $4, reason = $5, courier_location_id = COALESCE($6, courier_location_id), updated_at = now()
						 WHERE warehouse_id = $1 AND logistic_id = $2 AND version = $3`,
						[warehouse_id, logistic_id, version, status, reason, locationId],
					);
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
									throw new CourierRefused((err as Error).message);
								}
								const res = await adapter.registerWarehouse(loc);
								await record(c.logistic_id, "registered", null, res.courier_location_id);
								registered++;
							} catch (err) {
								if (err instanceof CourierRefused) {
									await record(c.logistic_id, "refused", err.message.slice(0, 1000), null);
									refused++;
									this.logger.info(
										`warehouse ${warehouse_id} v${version}: refused by courier ${c.logistic_id}`,
									);
								} else {
									const msg = (err as Error)?.message ?? String(err);
									await record(c.logistic_id, "pending", `courier unavailable: ${msg}`.slice(0, 1000), null);
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
		 * that is now active. → `{enqueued}`.
		 */
		sweepRegistrations: {
			params: { full: { type: "boolean", optional: true } },
			async handler(this: This, ctx: Context<{ full?: boolean }>) {
				return { enqueued: await this.sweep(Boolean(ctx.params.full)) };
			},
		},
	},
	methods: {
		/** Active couriers from `rates.listCouriers`, or undefined when rates cannot be reached. */
		async activeCouriers(this: This, ctx: Context | undefined): Promise<CourierInfo[] | undefined> {
			try {
				const call = ctx ? ctx.call.bind(ctx) : this.broker.call.bind(this.broker);
				const all = (await call("rates.listCouriers", {}, { timeout: CALL_TIMEOUT_MS })) as CourierInfo[];
				return (all ?? []).filter((c) => c.active);
			} catch (err) {
				this.logger.warn(`courier list unavailable: ${(err as Error).message}`);
				return undefined;
			}
		},

		/** Orders shipped per warehouse id over the last 30 days; undefined when intake cannot be reached. */
		async shippedCounts(
			this: This,
			ctx: Context,
			sender: number,
		): Promise<Record<string, number> | undefined> {
			try {
				const since = new Date(Date.now() - 30 * 24 * 3600 * 1000).toISOString();
				return (
					(await ctx.call<Record<string, number>, { sender_id: number; since: string }>(
						"intake.shippedCounts",
						{ sender_id: sender, since },
						{ timeout: CALL_TIMEOUT_MS },
					)) ?? {}
				);
			} catch (err) {
				this.logger.warn(`shipped counts unavailable: ${(err as Error).message}`);
				return undefined;
			}
		},

		/**
		 * Checks the well-formed pincodes sent against the India Post directory
		 * (`pincode.lookupMany`); unknown ones add `<field>: not a known Indian
		 * pincode` to `parsed.details`. Skipped (logged) when the pincode service
		 * cannot answer: the courier registration would still refuse a bad one.
		 */
		async checkPincodes(this: This, ctx: Context, parsed: ParsedWarehouse): Promise<void> {
			if (!parsed.pincodes.length) return;
			let found: Record<string, { found?: boolean }>;
			try {
				found = await ctx.call<Record<string, { found?: boolean }>, { pincodes: string[] }>(
					"pincode.lookupMany",
					{ pincodes: [...new Set(parsed.pincodes.map((p) => p.pincode))] },
					{ timeout: CALL_TIMEOUT_MS },
				);
			} catch (err) {
				this.logger.warn(`pincode check skipped: ${(err as Error).message}`);
				return;
			}
			for (const p of parsed.pincodes) {
				if (found?.[p.pincode] && found[p.pincode].found === false) {
					parsed.details.push(`${p.field}: not a known Indian pincode`);
				}
			}
		},

		/**
		 * One warehouse of `sender` by id (one primary-key query), or null: active
		 * and non-retired unless `includeRetired`; with `registered`, plus
		 * `courier_registered`; with `t`, read in that transaction and locked.
		 */
		async readOne(
			this: This,
			sender: number,
			id: number,
			{ includeRetired = false, registered = false, t }: ReadOptions = {},
		): Promise<StoredWarehouse | null> {
			const [row] = await select<StoredWarehouse>(
				this.db,
				`SELECT ${COLUMNS}${registered ? `, ${REGISTERED_SQL} AS courier_registered` : ""}
				 FROM warehouses.warehouses w
				 WHERE w.id = $1 AND w.sender_id = $2 ${includeRetired ? "" : "AND w.active AND NOT w.retired"}
				 ${t ? "FOR UPDATE" : ""}`,
				[id, sender],
				t,
			);
			return row ?? null;
		},

		/**
		 * §2.9 rows with courier registration state and `shipped_30d`. `known`:
		 * the active couriers the caller already asked for (undefined inside:
		 * the list was unavailable), so they are not asked for twice.
		 */
		async views(
			this: This,
			ctx: Context,
			sender: number,
			rows: StoredWarehouse[],
			known?: { couriers: CourierInfo[] | undefined },
		): Promise<WarehouseView[]> {
			if (!rows.length) return [];
			const [regs, couriers, shipped] = await Promise.all([
				select<StoredRegistration>(
					this.db,
					`SELECT * FROM warehouses.courier_registrations
					 WHERE warehouse_id = ANY($1::bigint[]) AND logistic_id <> ${PLACEHOLDER_LOGISTIC_ID}`,
					[rows.map((r) => String(r.id))],
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
			return rows.map((w) => {
				const reg = registrationView(w, byWarehouse.get(String(w.id)) ?? [], couriers);
				return toView(w, {
					...reg,
					shipped_30d: shipped ? Number(shipped[String(w.id)] ?? 0) : null,
				});
			});
		},

		/**
		 * Writes `pending` registration rows for `version` (one per active courier,
		 * or the placeholder when the courier list is unknown) in transaction `t`.
		 */
		async queueRegistrations(
			this: This,
			t: Transaction,
			id: number,
			version: number,
			couriers: CourierInfo[] | undefined,
		): Promise<void> {
			const ids = couriers ? couriers.map((c) => c.logistic_id) : [PLACEHOLDER_LOGISTIC_ID];
			if (!ids.length) return;
			await exec(this.db, UPSERT_PENDING_SQL, [id, ids, version], t);
		},

		/**
		 * Enqueues the registration job of a committed version (jobId
		 * `wh-<id>-v<version>` dedupes). A failure (Redis down) is logged only:
		 * the pending rows make the sweeper retry.
		 */
		async enqueue(this: This, id: number, version: number): Promise<void> {
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
					`warehouse ${id} v${version}: enqueue failed (sweeper will retry): ${(err as Error).message}`,
				);
			}
		},

		/**
		 * Re-enqueues warehouses whose pending registration rows are older than
		 * `staleMs`; with `full`, also warehouses lacking a current-version row for
		 * an active courier. Returns how many jobs were (re-)added.
		 */
		async sweep(this: This, full: boolean): Promise<number> {
			const found = new Map<number, number>();
			const stale = await select<{ id: string; version: number }>(
				this.db,
				`SELECT DISTINCT w.id, w.version
				 FROM warehouses.courier_registrations r
				 JOIN warehouses.warehouses w ON w.id = r.warehouse_id
				 WHERE r.status = 'pending' AND r.updated_at < now() - ($1::int * interval '1 millisecond')
				   AND NOT w.retired
				 LIMIT 500`,
				[this.staleMs],
			);
			for (const r of stale) found.set(Number(r.id), r.version);
			if (full) {
				const couriers = await this.activeCouriers(undefined);
				if (couriers?.length) {
					const missing = await select<{ id: string; version: number }>(
						this.db,
						`SELECT w.id, w.version FROM warehouses.warehouses w
						 WHERE NOT w.retired AND w.updated_at < now() - ($2::int * interval '1 millisecond')
						   AND EXISTS (SELECT 1 FROM unnest($1::int[]) AS l(id) WHERE NOT EXISTS (
						     SELECT 1 FROM warehouses.courier_registrations r
						     WHERE r.warehouse_id = w.id AND r.logistic_id = l.id AND r.version = w.version))
						 LIMIT 500`,
						[couriers.map((c) => c.logistic_id), this.staleMs],
					);
					for (const r of missing) found.set(Number(r.id), r.version);
				}
			}
			for (const [id, version] of found) await this.enqueue(id, version);
			return found.size;
		},
	},
	created(this: This) {
		const ms = (name: string, dflt: number) => {
			const n = Number(process.env[name]);
			return Number.isFinite(n) && n > 0 ? n : dflt;
		};
		this.sweepMs = ms("WAREHOUSE_SWEEP_MS", 30_000);
		this.staleMs = ms("WAREHOUSE_REGISTRATION_STALE_MS", 60_000);
		this.sweeps = 0;
		this.sweeping = false;
	},
	async started(this: This) {
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
	stopped(this: This) {
		if (this.sweepTimer) clearInterval(this.sweepTimer);
		this.sweepTimer = undefined;
	},
} satisfies ServiceSchema<any, WarehousesMethods, WarehousesVars>;

export default WarehousesService;
