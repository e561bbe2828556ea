/**
 * `warehouses` service (spec §2.9, §3 last paragraph, §4.5, §7, §8): a
 * merchant's pickup warehouses, their default, and their registration with
 * every active courier as a pickup location. Contract: lib/contracts/warehouses.ts.
 * The handlers parse and answer; the operations are plain functions over
 * `WarehousesDeps` (lib/warehouses/deps.ts): lib/warehouses/operations.ts
 * (list, create, update, remove, reads), registration.ts (courier
 * registration jobs and the sweeper), remote.ts (calls to rates, intake,
 * pincode); SQL and transactions in lib/warehouses/store.ts; the flat §2.9
 * row and the contract `Warehouse`: lib/warehouses/rows.ts. The service shape
 * every service follows: docs/ARCHITECTURE.md §1, docs/decisions/0091-service-shape.md.
 *
 * Gateway-facing actions (account from `ctx.meta.user` only; any `sender_id`
 * in the request is ignored):
 * - `warehouses.list`   GET    /v1/warehouses            → 200 `{data:[row…]}`
 * - `warehouses.create` POST   /v1/warehouses            → 201 `{data:{id, orders_repaired}}`
 * - `warehouses.update` PATCH  /v1/warehouses/:id        → 200 `{data: row}`
 * - `warehouses.remove` DELETE /v1/warehouses/:id        → 200 `{data:{id, deleted:1}}`
 * - pickup requests (issue 28; lib/warehouses/pickups.ts, docs/decisions/0107-pickup-requests.md):
 *   `warehouses.createPickup` POST /v1/pickups → 201, `warehouses.pickups` GET /v1/pickups,
 *   `warehouses.pickup` GET /v1/pickups/:id, `warehouses.changePickup` PATCH /v1/pickups/:id,
 *   `warehouses.cancelPickup` POST /v1/pickups/:id/cancel
 *
 * Internal actions:
 * - `warehouses.resolve` `{sender_id, id}` → Warehouse | null (active, caller's; one indexed query)
 * - `warehouses.get` `{sender_id, id, include_retired?}` → Warehouse | null
 * - `warehouses.registerWithCouriers` `{warehouse_id, version}` (BullMQ job of queue
 *   `warehouse-registration`, one per warehouse version, jobId `wh-<id>-v<version>`)
 * - `warehouses.sweepRegistrations` `{full?}` → `{enqueued}` (what the sweeper timer runs)
 * - `warehouses.ensurePickup` (documents' manifest option), `warehouses.sweepPickups` (what the
 *   pickup timer runs every `PICKUP_SWEEP_MS`: resend, picked up, missed + `pickup.missed`)
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
import {
	PICKUP_CHANGE_BODY,
	PICKUP_CREATE_BODY,
	PICKUPS_QUERY,
	PICKUPS_ROUTES,
} from "../lib/contracts/http/pickups";
import { WAREHOUSES_ROUTES } from "../lib/contracts/http/warehouses";
import { PICKUP_MAX_PACKAGES } from "../lib/contracts/warehouses";
import { senderOf } from "../lib/platform/auth";
import { setting } from "../lib/platform/config";
import { EventOutboxRelay } from "../lib/platform/merchant-events-outbox";
import { defineService } from "../lib/platform/service";
import type { WarehousesDeps } from "../lib/warehouses/deps";
import { WAREHOUSES_MIGRATIONS } from "../lib/warehouses/migrations";
import {
	createWarehouse,
	findWarehouse,
	includesRetired,
	listWarehouseViews,
	patchWarehouse,
	removeWarehouse,
	warehouseIdOf,
} from "../lib/warehouses/operations";
import {
	cancelPickup,
	changePickup,
	createPickup,
	ensurePickup,
	getPickup,
	pickupIdOf,
	pickupPage,
	sweepPickups,
} from "../lib/warehouses/pickups";
import { REGISTRATION_QUEUE, registerWithCouriers, sweepRegistrations } from "../lib/warehouses/registration";
import { parseCreate } from "../lib/warehouses/validation";
import { DbMixin } from "../mixins/db.mixin";
import { WorkerMixin } from "../mixins/worker.mixin";

/** State set in `created` / `started`. */
interface WarehousesVars {
	sweepTimer?: NodeJS.Timeout;
	/** ms between sweeps (`WAREHOUSE_SWEEP_MS`) */
	sweepMs: number;
	/** ms after which a pending registration is stale (`WAREHOUSE_REGISTRATION_STALE_MS`) */
	staleMs: number;
	sweeps: number;
	sweeping: boolean;
	/** the pickup sweep's timer (`PICKUP_SWEEP_MS`) and its run in progress */
	pickupTimer?: NodeJS.Timeout;
	pickupSweep: Promise<unknown> | undefined;
	/** relays `warehouses.event_outbox` (`pickup.missed`) to the merchant events channel */
	eventRelay: EventOutboxRelay | undefined;
}

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
		/** What lib/warehouses needs of this service. */
		deps(): WarehousesDeps {
			return { db: this.db, broker: this.broker, logger: this.logger, staleMs: this.staleMs };
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
			access: WAREHOUSES_ROUTES["warehouses.list"].access,
			async handler(ctx) {
				const sender = senderOf(ctx);
				return {
					data: await listWarehouseViews(this.deps(), ctx, sender, includesRetired(ctx.params?.include)),
				};
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
			access: WAREHOUSES_ROUTES["warehouses.create"].access,
			async handler(ctx) {
				const sender = senderOf(ctx);
				const created = await createWarehouse(this.deps(), ctx, sender, parseCreate(ctx.params));
				ctx.meta.$statusCode = 201;
				return { data: created };
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
			access: WAREHOUSES_ROUTES["warehouses.update"].access,
			async handler(ctx) {
				const sender = senderOf(ctx);
				const id = warehouseIdOf(ctx.params?.id);
				const { id: _pathId, ...body } = ctx.params ?? {};
				return { data: await patchWarehouse(this.deps(), ctx, sender, id, body) };
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
			access: WAREHOUSES_ROUTES["warehouses.remove"].access,
			async handler(ctx) {
				const sender = senderOf(ctx);
				const id = warehouseIdOf(ctx.params?.id);
				await removeWarehouse(this.deps(), ctx, sender, id);
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
				return findWarehouse(this.deps(), ctx.params.sender_id, ctx.params.id);
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
				const { sender_id, id, include_retired } = ctx.params;
				return findWarehouse(this.deps(), sender_id, id, include_retired === true);
			},
		},

		/**
		 * POST /v1/pickups (issue 28; docs/decisions/0107-pickup-requests.md). Body
		 * `{warehouse_id, logistic_id, pickup_date?, slot?, expected_package_count}` (IST day and
		 * slot; lib/warehouses/pickups.ts `createPickup` has every rule). → 201 the request
		 * (`scheduled`, or `requested` when the courier could not be reached: the sweep asks again).
		 * Errors: 400 `validation_failed`, `invalid_pickup_address`, `unknown_logistic`,
		 * `invalid_pickup_date` (`next_pickup_date`); 409 `pickup_exists` (`pickup`); 422
		 * `pickup_failed` (the courier's words); 503 `service_unavailable`; 403 read-only / capability.
		 */
		createPickup: {
			access: PICKUPS_ROUTES["warehouses.createPickup"].access,
			params: PICKUP_CREATE_BODY,
			async handler(ctx) {
				// validated and converted by PICKUP_CREATE_BODY (numbers, absent optionals)
				const p = ctx.params;
				const view = await createPickup(this.deps(), ctx, senderOf(ctx), {
					warehouse_id: Number(p.warehouse_id),
					logistic_id: Number(p.logistic_id),
					pickup_date: p.pickup_date ?? undefined,
					slot: p.slot ?? undefined,
					expected_package_count: Number(p.expected_package_count),
				});
				ctx.meta.$statusCode = 201;
				return view;
			},
		},

		/**
		 * GET /v1/pickups: the caller's requests, newest first, cursor-paged; query `limit`
		 * (1–100, default 20), `from` / `to` (pickup day, IST), `warehouse_id`, `logistic_id`,
		 * `status`, `cursor`. Access: every authenticated role.
		 * Errors: 400 `validation_failed`, `cursor: unrecognised shape`.
		 */
		pickups: {
			access: PICKUPS_ROUTES["warehouses.pickups"].access,
			params: PICKUPS_QUERY,
			async handler(ctx) {
				const q = ctx.params;
				const num = (v: string | number | null | undefined) => (v == null ? undefined : Number(v));
				return pickupPage(this.deps(), senderOf(ctx), {
					limit: num(q.limit),
					from: q.from ?? undefined,
					to: q.to ?? undefined,
					warehouse_id: num(q.warehouse_id),
					logistic_id: num(q.logistic_id),
					status: q.status ?? undefined,
					cursor: q.cursor ?? undefined,
				});
			},
		},

		/**
		 * GET /v1/pickups/:id: one of the caller's requests. Access: every authenticated role.
		 * Errors: 404 `pickup_not_found` (malformed id, missing, another account's).
		 */
		pickup: {
			access: PICKUPS_ROUTES["warehouses.pickup"].access,
			async handler(ctx) {
				return getPickup(this.deps(), senderOf(ctx), pickupIdOf(ctx.params.id));
			},
		},

		/**
		 * PATCH /v1/pickups/:id `{pickup_date?, slot?, expected_package_count?}`: reschedules an
		 * open request through the courier (lib/warehouses/pickups.ts `changePickup`). → 200 it.
		 * Errors: 400 `validation_failed` (`body: no updatable field`), `invalid_pickup_date`,
		 * `invalid_pickup_address`; 404 `pickup_not_found`; 409 `pickup_not_changeable`,
		 * `pickup_exists`; 422 `pickup_failed`; 503 `pickup_unavailable`; 403 read-only / capability.
		 */
		changePickup: {
			access: PICKUPS_ROUTES["warehouses.changePickup"].access,
			params: { id: { type: "string", min: 1, max: 40 }, ...PICKUP_CHANGE_BODY },
			async handler(ctx) {
				const { id, pickup_date, slot, expected_package_count } = ctx.params;
				return changePickup(this.deps(), ctx, senderOf(ctx), pickupIdOf(id), {
					pickup_date: pickup_date ?? undefined,
					slot: slot ?? undefined,
					expected_package_count: expected_package_count == null ? undefined : Number(expected_package_count),
				});
			},
		},

		/**
		 * POST /v1/pickups/:id/cancel: cancels an open request through the courier; a
		 * cancelled one answers unchanged. → 200 it. Errors: 404 `pickup_not_found`; 409
		 * `pickup_not_changeable` (picked up, missed); 422 `pickup_failed`; 503
		 * `pickup_unavailable`; 403 read-only / capability.
		 */
		cancelPickup: {
			access: PICKUPS_ROUTES["warehouses.cancelPickup"].access,
			async handler(ctx) {
				return cancelPickup(this.deps(), ctx, senderOf(ctx), pickupIdOf(ctx.params.id));
			},
		},

		/**
		 * Internal (documents' `schedule_pickup` manifest option): `{sender_id, warehouse_id,
		 * logistic_id, expected_package_count}` → `{pickup, created}`: the live request of that
		 * warehouse and courier for the courier's next pickup day, or a new one. Errors as
		 * `createPickup` (§2.11 envelopes).
		 */
		ensurePickup: {
			params: {
				sender_id: { type: "number", integer: true, positive: true },
				warehouse_id: { type: "number", integer: true, positive: true },
				logistic_id: { type: "number", integer: true, positive: true },
				expected_package_count: { type: "number", integer: true, min: 1, max: PICKUP_MAX_PACKAGES },
			},
			async handler(ctx) {
				const { sender_id, ...input } = ctx.params;
				return ensurePickup(this.deps(), ctx, sender_id, input);
			},
		},

		/** Ops: one pickup sweep now (lib/warehouses/pickups.ts `sweepPickups`). → `{resent, picked_up, missed}`. */
		sweepPickups: {
			async handler(ctx) {
				return sweepPickups(this.deps(), ctx);
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
				return registerWithCouriers(this.deps(), ctx, ctx.params.warehouse_id, ctx.params.version);
			},
		},

		/**
		 * Internal: one sweep of the registration sweeper (see the file header).
		 * `{full?: boolean}` also looks for warehouses missing a row for a courier
		 * that is now active. → `{enqueued}` (jobs (re-)added).
		 */
		sweepRegistrations: {
			params: { full: { type: "boolean", optional: true } },
			async handler(ctx) {
				return { enqueued: await sweepRegistrations(this.deps(), Boolean(ctx.params.full)) };
			},
		},
	},
	created() {
		this.sweepMs = setting("WAREHOUSE_SWEEP_MS");
		this.staleMs = setting("WAREHOUSE_REGISTRATION_STALE_MS");
		this.sweeps = 0;
		this.sweeping = false;
		this.pickupSweep = undefined;
		this.eventRelay = undefined;
	},
	async started() {
		this.sweepTimer = setInterval(() => {
			if (this.sweeping || !this.broker.started) return;
			this.sweeping = true;
			this.sweeps += 1;
			sweepRegistrations(this.deps(), this.sweeps % 10 === 0)
				.catch((err: Error) => this.logger.warn(`registration sweep failed: ${err.message}`))
				.finally(() => {
					this.sweeping = false;
				});
		}, this.sweepMs);
		this.sweepTimer.unref?.();
		this.pickupTimer = setInterval(() => {
			if (this.pickupSweep || !this.broker.started) return;
			this.pickupSweep = sweepPickups(this.deps(), this.broker)
				.catch((err: Error) => this.logger.warn(`pickup sweep failed: ${err.message}`))
				.finally(() => {
					this.pickupSweep = undefined;
				});
		}, setting("PICKUP_SWEEP_MS"));
		this.pickupTimer.unref?.();
		this.eventRelay = new EventOutboxRelay(this.db, "warehouses", this.broker, this.logger);
		await this.eventRelay.start();
	},
	async stopped() {
		if (this.sweepTimer) clearInterval(this.sweepTimer);
		this.sweepTimer = undefined;
		if (this.pickupTimer) clearInterval(this.pickupTimer);
		this.pickupTimer = undefined;
		await this.pickupSweep;
		await this.eventRelay?.stop();
	},
});
