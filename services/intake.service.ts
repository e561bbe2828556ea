/**
 * intake: the order aggregate (docs/ARCHITECTURE.md §1).
 *
 * Owns `intake.orders` (lib/intake/migrations.ts): the merchant's order fields plus
 * the booking state and lifecycle status that other services report to it.
 *
 * Gateway-facing: `intake.createOrder` (POST /v1/intake/order, spec §2.1, §4.1),
 * `intake.createReverse` (POST /v1/intake/reverse, §2.2, §4.1), `intake.status`
 * (GET /v1/orders/status, §2.4, §4.3), `intake.listOrders` (GET /v1/orders) and
 * `intake.orderDetail` (GET /v1/orders/{id}) (§2.5, §2.12, §4.3; lib/intake/list.ts);
 * the unshipped queue (§2.5, §3, §4.3; lib/intake/unshipped.ts): `intake.listUnshipped`,
 * `intake.unshippedErrorTypes`, `intake.unshippedCounts` (GET /v1/orders/unshipped,
 * …/error-types, …/counts), `intake.editUnshipped` (PATCH /v1/orders/unshipped/{id}),
 * `intake.hideOrder` (POST /v1/orders/{id}/hide).
 * Internal (lib/contracts/intake.ts): `intake.getOrder`, `intake.applyBookingUpdate`,
 * `intake.warehouseUsage`, `intake.adoptOrphanOrders`, `intake.shippedCounts`.
 */
import type { Readable } from "node:stream";
import type { Context } from "moleculer";
import { senderOf } from "../lib/auth";
import { assertNotB2B } from "../lib/channel";
import { coalesce } from "../lib/coalesce";
import { setting } from "../lib/config";
import {
	type BookingUpdate,
	type BulkDecisionResult,
	type BulkJob,
	type BulkJobSummary,
	type BulkReviewRow,
	type BulkUploadResult,
	type CallMeta,
	type CreateOrderResult,
	type CreateReverseResult,
	type CursorPage,
	call,
	type FailureCode,
	type HideOrderResult,
	type HttpParams,
	type OrderBookingState,
	type OrderDetail,
	type OrderListRow,
	type ShipmentDirection,
	type StatusRecord,
	type UnshippedCounts,
	type UnshippedEditResult,
	type UnshippedErrorTypeEntry,
	type UnshippedPage,
} from "../lib/contracts";
import { fail } from "../lib/errors";
import { isPlainObject } from "../lib/fields";
import {
	BULK_QUEUE,
	decideReview,
	jobObject,
	jobsList,
	reviewList,
	templateCsv,
	templateXlsx,
	uploadBulk,
	XLSX_MIME,
} from "../lib/intake/bulk/api";
import { rowsExport } from "../lib/intake/bulk/export";
import { insertBulkJob } from "../lib/intake/bulk/jobs-store";
import { enqueueBulkJob, processBulkJob, requeueUnfinished } from "../lib/intake/bulk/process";
import {
	BULK_ONLY_ACTIONS,
	type BulkRole,
	bulkNice,
	bulkRole,
	lowerThreadsPriority,
} from "../lib/intake/bulk/role";
import { createFromRow } from "../lib/intake/bulk/rows";
import { unfinishedJobs } from "../lib/intake/bulk/store";
import {
	type ListRowDb,
	listPage,
	type OrderListQuery,
	orderDetail,
	orderNotFound,
	parseOrderId,
	parseOrderListQuery,
} from "../lib/intake/list";
import { orderPageReader, orderRow } from "../lib/intake/list-store";
import { INTAKE_MIGRATIONS } from "../lib/intake/migrations";
import { BOOKING_STATE_TIMEOUT_MS, mayLag, readThrough } from "../lib/intake/read-through";
import {
	adoptOrphanOrders,
	applyBookingUpdates,
	findStatus,
	getOrder,
	insertOrder,
	type StoredStatus,
	shippedCounts,
	storedReference,
	updateKey,
	warehouseUsage,
} from "../lib/intake/store";
import {
	EDIT_WINDOW_DAYS,
	errorTypeEntries,
	nextUnshippedCursor,
	notEditable,
	parseCountsDirection,
	parseReceiverPatch,
	parseUnshippedQuery,
} from "../lib/intake/unshipped";
import {
	editBlocker,
	editReceiver,
	errorTypeCounts,
	hideOrder,
	orderReference,
	queueCounts,
	unshippedPage,
} from "../lib/intake/unshipped-store";
import { type OrderInput, parseOrderInput } from "../lib/intake/validation";
import { WarehouseCache } from "../lib/intake/warehouse-cache";
import { labelLinkConfigured } from "../lib/label-link";
import { defineService } from "../lib/service";
import { EventOutboxRelay } from "../lib/webhooks/publish";
import { DbMixin } from "../mixins/db.mixin";
import { WorkerMixin } from "../mixins/worker.mixin";

/** Timeout of the `warehouses.resolve` call (ms). */
const RESOLVE_TIMEOUT_MS = 5_000;

/** Settings of an intake instance: its bulk role and nice (set in `merged` from the environment). */
interface IntakeSettings {
	bulkRole: BulkRole;
	bulkNice: number;
}

/** State set in `created`. */
interface IntakeVars {
	/** relays `intake.event_outbox` (order.created) to the `merchant.events` channel (issue 11; made in `started`) */
	eventRelay: EventOutboxRelay | undefined;
	warehouseCache: WarehouseCache;
	/** booking updates of concurrent calls applied together (lib/coalesce.ts; made in `started`: needs the db) */
	bookingUpdates: (us: BookingUpdate[]) => Promise<Set<string>>;
	/** `GET /v1/orders` pages; concurrent requests share statements (lib/intake/list-store.ts; made in `started`) */
	orderPages: (sender_id: number, q: OrderListQuery) => Promise<ListRowDb[]>;
}

/**
 * 403 `cannot create order for another sender` when the body names a sender
 * (top-level `sender_id` or `order.sender_id`) other than the caller; a value
 * equal to the caller's id (number or digit string), null or "" is ignored.
 */
function assertOwnSender(body: Record<string, unknown>, sender: number): void {
	const named = [body.sender_id, isPlainObject(body.order) ? body.order.sender_id : undefined];
	for (const v of named) {
		if (v === undefined || v === null || v === "") continue;
		const n =
			typeof v === "number"
				? v
				: typeof v === "string" && /^\s*\d+\s*$/.test(v)
					? Number(v.trim())
					: Number.NaN;
		if (n !== sender) {
			throw fail("cannot create order for another sender");
		}
	}
}

/** Every `BookingUpdate.failure_code` (lib/contracts/intake.ts). */
const FAILURE_CODES: readonly FailureCode[] = [
	"courier_refused",
	"courier_unreachable",
	"pickup_unavailable",
	"order_changed",
	"booking_error",
];

/** Timeout of the booking / documents calls of `intake.orderDetail` (ms). */
const DETAIL_CALL_TIMEOUT_MS = 3_000;

/** Internal-action id params: positive integers (digit strings converted). */
const idParam = { type: "number", integer: true, positive: true, convert: true } as const;

export default defineService<IntakeVars>()({
	name: "intake",
	mixins: [
		DbMixin("intake", INTAKE_MIGRATIONS),
		WorkerMixin([
			{
				queue: BULK_QUEUE,
				action: "intake.processBulkJob",
				// one file at a time per process: a file is CPU-bound and ~25 MB in memory
				concurrency: () => setting("INTAKE_BULK_CONCURRENCY"),
				// a killed worker's job runs again (from its checkpoint) after this lock expires
				lockDuration: () => setting("INTAKE_BULK_LOCK_MS"),
				// a 25 MB XLSX takes ~30 s here; never let the call time out under a run still going
				callTimeout: 30 * 60_000,
				// INTAKE_BULK_WORKER=off: the API pods leave files to the bulk worker pods (lib/intake/bulk/role.ts)
				enabled: (svc) => (svc.settings as IntakeSettings).bulkRole !== "off",
			},
		]),
	],
	// the bulk role of this instance (lib/intake/bulk/role.ts), read from the environment in `merged`
	settings: { bulkRole: "on" as BulkRole, bulkNice: 10 },
	methods: {
		/**
		 * Shared create path of createOrder / createReverse: sender check, B2B
		 * refusal, validation, warehouse ownership, idempotent insert. Answers
		 * the §4.1 body (`answer`) and the stored reference (`order_no`:
		 * `customer_order_no`, `-R` appended for a return).
		 * @throws ApiError 403 / 400 / 409 as documented on the actions
		 */
		async createFrom(
			ctx: Context<HttpParams, CallMeta>,
			kind: ShipmentDirection,
		): Promise<{ answer: CreateOrderResult; order_no: string }> {
			const sender = senderOf(ctx);
			const body: Record<string, unknown> = isPlainObject(ctx.params) ? ctx.params : {};
			assertOwnSender(body, sender);
			assertNotB2B(body);
			const input: OrderInput = parseOrderInput(body, kind);
			await this.assertOwnWarehouses(ctx, sender, input.warehouse_refs);

			const res = await insertOrder(this.db, sender, input);
			if (!res.created && res.direction !== input.direction) {
				throw fail("reference_in_use", storedReference(input), res.direction);
			}
			if (res.created) {
				ctx.meta.$statusCode = 201;
				this.logger.info("order created", {
					sender_id: sender,
					order_id: res.order_id,
					direction: input.direction,
				});
				return { answer: { order_id: res.order_id }, order_no: storedReference(input) };
			}
			ctx.meta.$statusCode = 200;
			return { answer: { order_id: res.order_id, deduped: true }, order_no: storedReference(input) };
		},

		/**
		 * Checks that every warehouse id the body names is one of the caller's
		 * active warehouses (`warehouses.resolve`, positive answers cached per
		 * lib/intake/warehouse-cache.ts). Not found and not yours are the same
		 * answer (§1 rule 4).
		 * @throws ApiError 400 `invalid_pickup_address` naming the first bad field
		 */
		async assertOwnWarehouses(
			ctx: Context<unknown, CallMeta>,
			sender: number,
			refs: OrderInput["warehouse_refs"],
		): Promise<void> {
			const cache = this.warehouseCache;
			const owned = async (id: number): Promise<boolean> => {
				if (cache.has(sender, id)) return true;
				const since = cache.begin();
				const warehouse = await call(
					ctx,
					"warehouses.resolve",
					{ sender_id: sender, id },
					{ timeout: RESOLVE_TIMEOUT_MS, unavailable: false },
				);
				if (warehouse) cache.remember(sender, id, since);
				return warehouse !== null;
			};
			// one lookup per distinct id (pickup and RTO are often the same warehouse)
			const byId = new Map<number, Promise<boolean>>();
			for (const { id } of refs) if (!byId.has(id)) byId.set(id, owned(id));
			const resolved = await Promise.all(refs.map((ref) => byId.get(ref.id)!));
			const bad = refs.find((_, i) => !resolved[i]);
			if (bad) throw fail("invalid_pickup_address", { field: bad.field });
		},

		/**
		 * Read-your-writes (lib/intake/read-through.ts): when the stored state
		 * may lag behind a newer booking attempt (`not_shipped`, `failed`), asks
		 * `booking.orderState` (timeout {@link BOOKING_STATE_TIMEOUT_MS}) and
		 * answers booking's state when its attempt is newer; when booking cannot
		 * be asked, the stored record.
		 */
		async statusOf(
			ctx: Context<HttpParams, CallMeta>,
			sender: number,
			s: StoredStatus,
		): Promise<StatusRecord> {
			if (!mayLag(s)) return s.record;
			let b: OrderBookingState | null = null;
			try {
				b = await call(
					ctx,
					"booking.orderState",
					{ sender_id: sender, order_id: s.order_id },
					{ timeout: BOOKING_STATE_TIMEOUT_MS, unavailable: false },
				);
			} catch (err) {
				this.logger.debug(`status of order ${s.order_id}: booking not asked: ${(err as Error)?.message}`);
			}
			return readThrough(s, b);
		},
	},
	actions: {
		/**
		 * Internal, BullMQ queue `intake-bulk`: processes (or resumes from its
		 * checkpoint) bulk job `job_id` (lib/intake/bulk/process.ts). A refused
		 * file ends the job `failed` (answered, not thrown); infrastructure
		 * errors throw and BullMQ retries.
		 */
		processBulkJob: {
			params: { job_id: idParam },
			async handler(ctx): Promise<{ status: "completed" | "failed" | "skipped"; error?: string }> {
				return processBulkJob(
					{
						db: this.db,
						logger: this.logger,
						lookupMany: (pincodes) =>
							call(ctx, "pincode.lookupMany", { pincodes }, { timeout: 10_000, unavailable: false }),
					},
					ctx.params.job_id,
				);
			},
		},

		/**
		 * POST /v1/intake/order — create a forward order (spec §2.1, §3, §4.1, §7).
		 *
		 * Body: `{customer_order_no, channel?, receiver{…}, product{…}, order{…}}`;
		 * field rules (types, bounds, normalisation) are documented in
		 * lib/intake/validation.ts (e.g. pincode `^[1-9]\d{5}$`, mobile 10 digits
		 * starting 6–9 with optional +91/91/0 prefix stored as 10 digits, weight kg
		 * in (0, 50], money rupees ≥ 0 with ≤ 2 decimals, dimensions cm in (0, 300],
		 * COD amount required > 0 and ≤ declared total when `order_type` = 1).
		 * Unknown fields are ignored. The order is created `not_shipped`, status
		 * `new`; creating does not book (§1 rule 5).
		 *
		 * Answers (checks in this order):
		 * - 403 `{error:"cannot create order for another sender", message}`: the body's
		 *   `sender_id` (top level or in `order`) is not the caller's (equal: ignored).
		 * - 400 `unsupported_channel`: B2B / multi-box input (`boxes`, `packages`,
		 *   `is_b2b`, a box count above 1, `channel: "B2B"`, …).
		 * - 400 `validation_failed` with `details` (one `field: reason` per failing field).
		 * - 400 `invalid_pickup_address`: `order.pickup_address_id` (or
		 *   `order.rto_address_id`) is not one of the caller's active warehouses
		 *   (not found and not yours are the same answer, §1 rule 4).
		 * - 409 `reference_in_use`: the reference is held by a return (a forward
		 *   `customer_order_no` equal to an existing return's stored `…-R`).
		 * - 201 `{order_id}` (committed before the answer); 200 `{order_id, deduped:true}`
		 *   when the caller already has a live order with this `customer_order_no`
		 *   (nothing is written; concurrent identical calls create one order). An
		 *   order whose booking was cancelled released its number: the same
		 *   `customer_order_no` then creates a new order (201).
		 * Read-only roles: 403 `Read-only role`; roles without `orders.write`: 403 `forbidden`.
		 */
		createOrder: {
			access: { writes: true, capability: "orders.write" },
			async handler(ctx): Promise<CreateOrderResult> {
				return (await this.createFrom(ctx, "forward")).answer;
			},
		},

		/**
		 * POST /v1/intake/reverse — create a return (reverse) order (spec §2.2, §4.1, §7).
		 *
		 * Body: the forward shape (`customer_order_no`, `channel?`, `receiver`,
		 * `product`, `order`) where `receiver` is where the courier collects the
		 * return (the buyer) and `order` also carries `forward_source`
		 * (`tekipost` | `external`, required), `old_fwd_awb_no` (required, 1–50 of
		 * `A-Z a-z 0-9 -`), `reverse_pickup_address_id?` (the caller's warehouse the
		 * return goes back to; when given it is the order's warehouse, overriding
		 * `pickup_address_id`; one of the two is required) and `return_address?`
		 * (object: name, address_1, address_2, landmark, city, state, pincode,
		 * mobile_no, all optional). Returns are prepaid: `order_type` absent or 0,
		 * `cod_amount` absent or 0. Stored reference: `customer_order_no` + `-R`,
		 * `shipment_type` 1, so a return never collides with its forward order;
		 * its status is queried with the `-R` reference.
		 *
		 * Answers: as `intake.createOrder` (403 another sender, 400
		 * `unsupported_channel`, 400 `validation_failed`, 400
		 * `invalid_pickup_address` for any named warehouse id not the caller's, 409
		 * `reference_in_use` when a forward order already holds `…-R`), 201
		 * `{order_id, order_no}`, duplicate 200 `{order_id, deduped:true, order_no}`:
		 * `order_no` is the stored reference (`<customer_order_no>-R`), the one
		 * `GET /v1/orders/status?order_no=` and the lists know the return by.
		 */
		createReverse: {
			access: { writes: true, capability: "orders.write" },
			async handler(ctx): Promise<CreateReverseResult> {
				const { answer, order_no } = await this.createFrom(ctx, "reverse");
				return { ...answer, order_no };
			},
		},

		/**
		 * GET /v1/orders/status?order_no=… — booking status record (spec §2.4, §4.3, §7).
		 *
		 * `order_no` is the stored reference, matched exactly (surrounding
		 * whitespace trimmed; a return is queried with its `-R` suffix).
		 * 200 `{order_no, state, awb_number, courier, status, failure_reason, created_at}`:
		 * `state` ∈ not_shipped | booking_in_progress | booked | failed;
		 * `awb_number`/`courier` null unless booked; `failure_reason` null unless
		 * failed; `status` the lifecycle status (values in lib/shipment-status.ts:
		 * new, booking_queued, booked, booking_failed, manifested, pickup_scheduled, picked_up,
		 * in_transit, out_for_delivery, delivered, undelivered, rto_initiated,
		 * rto_in_transit, rto_delivered, cancelled, lost, damaged); `created_at`
		 * ISO-8601 UTC.
		 * A reference reused after a cancellation answers the live order (else
		 * the newest). Read-your-writes: once `POST /v1/shipping/book` answered
		 * 202 this never reads `not_shipped` (booking's state is read through
		 * while its update is on the way; see the `statusOf` method).
		 * 400 `{error:"order_no is required"}` when absent or empty; 404
		 * `order_not_found` when the account has no order with that reference
		 * (another merchant's reference included; never means "not yet booked").
		 */
		status: {
			access: { auth: true },
			async handler(ctx): Promise<StatusRecord> {
				const sender = senderOf(ctx);
				const raw = ctx.params?.order_no;
				const orderNo = typeof raw === "number" ? String(raw) : typeof raw === "string" ? raw.trim() : "";
				if (!orderNo) throw fail("order_no is required");
				const found = await findStatus(this.db, sender, orderNo);
				if (!found) throw fail("order_not_found");
				return this.statusOf(ctx, sender, found);
			},
		},

		/**
		 * Internal: `{sender_id, order_id}` → the {@link OrderRecord} (`direction`
		 * forward/reverse, `payment_mode` prepaid/cod, `consignee` Address with
		 * phone = the stored 10-digit mobile, city/state "" when not given;
		 * product money rupees, weight kg, dimensions cm; `reverse` details for
		 * returns; booking state and status; ISO-8601 UTC timestamps) or null when
		 * it does not exist or is not that sender's.
		 */
		getOrder: {
			params: { sender_id: idParam, order_id: idParam },
			async handler(ctx) {
				return getOrder(this.db, ctx.params.sender_id, ctx.params.order_id);
			},
		},

		/**
		 * Internal: applies a {@link BookingUpdate} from booking (delivered from its
		 * outbox, retried until acknowledged). Idempotent and ordered: applied only
		 * when `(attempt_id, seq)` is newer than the order's last applied pair, in
		 * one conditional UPDATE; a re-delivered or stale update (or an order that is
		 * not that sender's) answers `{applied:false}` without error. Sets state,
		 * status, awb_number, courier, logistic_id, failure_reason, failure_code
		 * (omitted: kept within the same attempt, cleared for a new one),
		 * booked_at (when the order becomes booked), status_at (given ISO-8601
		 * time, else now) and the lifecycle timestamps manifested_at,
		 * picked_up_at, delivered_at, rto_at, closed_at (rules in
		 * lib/intake/store.ts `applyBookingUpdates`). Status `cancelled` releases
		 * the order number (a later create with the same `customer_order_no`
		 * makes a new order). A malformed update (e.g. `status_at` not a time) is
		 * a ValidationError.
		 */
		applyBookingUpdate: {
			params: {
				order_id: idParam,
				sender_id: idParam,
				attempt_id: idParam,
				seq: { type: "number", integer: true, min: 0, convert: true },
				state: { type: "enum", values: ["not_shipped", "booking_in_progress", "booked", "failed"] },
				status: { type: "string", min: 1, max: 64 },
				awb_number: { type: "string", max: 64, optional: true, nullable: true },
				courier: { type: "string", max: 128, optional: true, nullable: true },
				logistic_id: { type: "number", integer: true, positive: true, optional: true, nullable: true },
				failure_reason: { type: "string", max: 2000, optional: true, nullable: true },
				failure_code: { type: "enum", values: FAILURE_CODES, optional: true, nullable: true },
				// converted to a Date by the validator (any Date.parse-able time); stored as timestamptz
				status_at: { type: "date", convert: true, optional: true, nullable: true },
			},
			async handler(ctx) {
				const applied = (await this.bookingUpdates([ctx.params])).has(updateKey(ctx.params));
				if (!applied)
					this.logger.debug("booking update not applied (stale, duplicate or unknown order)", {
						order_id: ctx.params.order_id,
						attempt_id: ctx.params.attempt_id,
						seq: ctx.params.seq,
					});
				return { applied };
			},
		},

		/**
		 * Internal: `{sender_id, warehouse_id}` → {@link WarehouseUsage}: the open
		 * orders shipping from that warehouse (for §4.5 `warehouse_in_use`).
		 * `unshipped`: state not_shipped / failed / booking_in_progress;
		 * `awaiting_pickup`: booked, not yet picked up; `count` both; `order_ids` up
		 * to 20, newest first. Closed orders (delivered, rto_delivered, cancelled,
		 * lost, damaged) are not counted.
		 */
		warehouseUsage: {
			params: { sender_id: idParam, warehouse_id: idParam },
			async handler(ctx) {
				return warehouseUsage(this.db, ctx.params.sender_id, ctx.params.warehouse_id);
			},
		},

		/**
		 * Internal: `{sender_id, warehouse_id}` → `{count}`. Gives the sender's
		 * not-yet-shipped orders that have no pickup warehouse this one (§4.5
		 * `orders_repaired`).
		 */
		adoptOrphanOrders: {
			params: { sender_id: idParam, warehouse_id: idParam },
			async handler(ctx) {
				const count = await adoptOrphanOrders(this.db, ctx.params.sender_id, ctx.params.warehouse_id);
				if (count) this.logger.info("orphan orders adopted", { sender_id: ctx.params.sender_id, count });
				return { count };
			},
		},

		/**
		 * Internal: `{sender_id, since}` (`since` an ISO-8601 timestamp) →
		 * `{[warehouse_id]: n}`: the sender's orders booked at or after `since`,
		 * per pickup warehouse (§2.9 `shipped_30d`); warehouses with none are
		 * absent. An unparsable `since` fails validation (ValidationError).
		 */
		shippedCounts: {
			params: { sender_id: idParam, since: { type: "date", convert: true } },
			async handler(ctx) {
				// the validator has converted the ISO string to a Date; new Date() reads either
				return shippedCounts(this.db, ctx.params.sender_id, new Date(ctx.params.since));
			},
		},

		// --- orders read side (GET /v1/orders, GET /v1/orders/{id}) ---

		/**
		 * GET /v1/orders — the caller's orders, newest first (spec §2.5, §2.12,
		 * §3, §4.3, §4.8, §7; decisions in
		 * docs/decisions/0030-orders-read-side.md).
		 *
		 * Query (all optional; empty = absent; other keys, `sender_id` included,
		 * ignored): `bucket` (rts, pickup, manifest, transit, delivered, rto,
		 * exceptions, cancelled, all; default all; statuses per bucket in
		 * lib/shipment-status.ts), `limit` (1–1000, default 50), `cursor` (a
		 * `nextCursor` of this list, same account and filters; `limit` may
		 * change), `awb_number` (exact), `order_no` (exact stored reference; a
		 * return also by its `customer_order_no` without `-R`), `shipment_type`
		 * (0/1), `date_from` / `date_to` (inclusive `YYYY-MM-DD` India Standard
		 * Time days of `created_at`), `city` (≤ 100 characters, case-insensitive
		 * exact match on the receiver's city). Hidden orders are never listed.
		 *
		 * 200 `{data:[OrderListRow…], pagination:{mode:"cursor", limit, nextCursor}}`
		 * (row fields in lib/contracts/intake.ts OrderListRow: rupees, ISO-8601
		 * UTC); `nextCursor` null on the last page. Keyset on order_id: walking
		 * the cursors visits every order that existed at the start exactly once;
		 * orders created meanwhile are not seen.
		 *
		 * Errors: 400 `bucket: unrecognised` (`field` "bucket"); 400
		 * `validation_failed` with `field` and `details` for any other bad
		 * filter; 400 `cursor: unrecognised shape` (tampered, another account's,
		 * another list's, or issued for other filters). Any authenticated role.
		 */
		listOrders: {
			access: { auth: true },
			async handler(ctx): Promise<CursorPage<OrderListRow>> {
				const sender = senderOf(ctx);
				const q = parseOrderListQuery(ctx.params ?? {}, sender);
				return listPage(sender, q, await this.orderPages(sender, q));
			},
		},

		/**
		 * GET /v1/orders/{id} — the caller's order with its shipment (spec §2.5,
		 * §4.3, §7): every field of lib/contracts/intake.ts OrderDetail (order,
		 * receiver, product, warehouse ids, courier, AWB, `charges` from
		 * booking's booked shipment, lifecycle status with `status_name`,
		 * `order_status_id`, `bucket` and every timestamp, `channel`,
		 * `tracking_url`, `label_downloaded_at` from documents). A hidden order
		 * is still answered (with `hidden_at`). Booking and documents are asked
		 * only once the order has an AWB, in parallel
		 * ({@link DETAIL_CALL_TIMEOUT_MS} each).
		 *
		 * Errors: 400 `validation_failed` (`field` "id") when `id` is not a
		 * positive integer; 404 `order not found` for a missing or another
		 * account's order (the same answer, §1 rule 4); 503
		 * `service_unavailable` when booking or documents cannot be asked.
		 * Any authenticated role.
		 */
		orderDetail: {
			access: { auth: true },
			async handler(ctx): Promise<OrderDetail> {
				const sender = senderOf(ctx);
				const order_id = parseOrderId(ctx.params?.id);
				const row = await orderRow(this.db, sender, order_id);
				if (!row) throw orderNotFound();
				if (!row.awb_number) return orderDetail(row, null, null);
				const key = { sender_id: sender, order_id };
				const opts = { timeout: DETAIL_CALL_TIMEOUT_MS };
				const [shipment, label] = await Promise.all([
					call(ctx, "booking.getShipment", key, opts),
					call(ctx, "documents.labelInfo", key, opts),
				]);
				const downloaded = label && label.awb_number === row.awb_number ? label.label_downloaded_at : null;
				return orderDetail(row, shipment, downloaded);
			},
		},

		// --- unshipped queue (GET /v1/orders/unshipped*, PATCH /v1/orders/unshipped/{id}, POST /v1/orders/{id}/hide) ---

		/**
		 * GET /v1/orders/unshipped — the caller's stuck orders (spec §2.5, §2.12,
		 * §4.3, §4.8, §7; rules in lib/intake/unshipped.ts).
		 *
		 * The queue: not hidden, not cancelled, state not_shipped /
		 * booking_in_progress / failed. Query: `limit` (1–1000, default 50),
		 * `cursor`, `error_type` (closed list of `/v1/orders/unshipped/error-types`),
		 * `customer_order_no` (stored reference, exact), `pickup_address_id`,
		 * `order_type` (`0`/`1`), `amount_min` / `amount_max` (rupees, inclusive
		 * bounds of the declared order total); empty values count as absent.
		 * 200 `{data:[UnshippedRow], pagination:{mode:"cursor", limit, nextCursor}}`,
		 * newest first (keyset on order_id); rows carry `order_value` (rupees),
		 * `channel`, `confirmation`, `address` (§2.1 receiver names), `error_type`
		 * and `reason` (lib/contracts/intake.ts `UnshippedRow`).
		 * 400 `order_type: must be 0 (prepaid) or 1 (COD)`, `amount_min: must be a
		 * rupee amount` / `amount_max: …` (body `field`); 400 `validation_failed`
		 * (`details`, `field`) for `limit`, `error_type`, `customer_order_no`,
		 * `pickup_address_id`, amount_min > amount_max; 400 `cursor: unrecognised
		 * shape` (garbage, tampered, another account's or other filters' cursor).
		 */
		listUnshipped: {
			access: { auth: true },
			async handler(ctx): Promise<UnshippedPage> {
				const sender = senderOf(ctx);
				const q = parseUnshippedQuery(ctx.params ?? {}, sender);
				const page = await unshippedPage(this.db, sender, q);
				const last = page.rows.at(-1);
				return {
					data: page.rows,
					pagination: {
						mode: "cursor",
						limit: q.limit,
						nextCursor: page.more && last ? nextUnshippedCursor(sender, q.filters, last.order_id) : null,
					},
				};
			},
		},

		/**
		 * GET /v1/orders/unshipped/error-types — the values `error_type` accepts
		 * (spec §4.3: shape "not shown"; ours). No query. 200 `{data:[{error_type,
		 * label, description, count}]}`, every type of the closed list in a fixed
		 * order, `count` the caller's unshipped orders of that type now (both
		 * directions; 0 when none).
		 */
		unshippedErrorTypes: {
			access: { auth: true },
			async handler(ctx): Promise<{ data: UnshippedErrorTypeEntry[] }> {
				const sender = senderOf(ctx);
				return { data: errorTypeEntries(await errorTypeCounts(this.db, sender)) };
			},
		},

		/**
		 * GET /v1/orders/unshipped/counts — the queue's counts (spec §4.3, §7).
		 * Query `shipment_type`: `0` forward (default when absent or empty), `1`
		 * reverse. Forward 200 `{total, unshipped, failed, in_queue}`: `unshipped`
		 * state not_shipped, `failed` failed, `in_queue` booking_in_progress,
		 * `total` their sum. Reverse 200 `{unshipped, failed}`: `unshipped` counts
		 * not_shipped and booking_in_progress returns (the reverse shape has no
		 * `in_queue`), so unshipped + failed is the reverse queue.
		 * 400 `shipment_type: must be 0 (forward) or 1 (reverse)` (body `field`).
		 */
		unshippedCounts: {
			access: { auth: true },
			async handler(ctx): Promise<UnshippedCounts> {
				const sender = senderOf(ctx);
				const direction = parseCountsDirection(ctx.params ?? {});
				const c = await queueCounts(this.db, sender, direction);
				if (direction === "reverse") return { unshipped: c.not_shipped + c.in_queue, failed: c.failed };
				return {
					total: c.not_shipped + c.failed + c.in_queue,
					unshipped: c.not_shipped,
					failed: c.failed,
					in_queue: c.in_queue,
				};
			},
		},

		/**
		 * PATCH /v1/orders/unshipped/{id} — edit the buyer's details of an
		 * unbooked order (spec §3, §4.3, §7; allow-list and rules in
		 * lib/intake/unshipped.ts `parseReceiverPatch`).
		 *
		 * Body: flat §2.1 receiver keys `name, address_1, address_2, landmark,
		 * city, state, pincode, mobile_no`, each validated and normalised as on
		 * create; `sender_id` ignored. Editable: the caller's order, not hidden,
		 * not cancelled, state not_shipped or failed, created less than
		 * {@link EDIT_WINDOW_DAYS} days ago. Booking's own state is read through
		 * first (`booking.orderState`, short timeout; skipped when booking cannot
		 * be asked): an attempt queued or booked there, not yet reported to
		 * intake, also refuses the edit. The write is one conditional UPDATE.
		 * 200 `{order_id, status, changed}`: `changed` the fields whose value
		 * changed (`edited_at` stamped only then); an empty body answers
		 * `changed: []`.
		 * Errors: 400 `validation_failed` (`details`, `field` the offending key:
		 * a key outside the allow-list or a value the create rules refuse; a path
		 * id that is not a positive integer: `field` "id"); 404 `order not found`
		 * (missing or another account's); 409 `not_editable` (`reason`: booked,
		 * booking_in_progress, cancelled, hidden, expired). Read-only roles: 403
		 * `Read-only role`; roles without `orders.write`: 403 `forbidden`.
		 */
		editUnshipped: {
			access: { writes: true, capability: "orders.write" },
			async handler(ctx): Promise<UnshippedEditResult> {
				const sender = senderOf(ctx);
				const params = ctx.params ?? {};
				const order_id = parseOrderId(params.id);
				const patch = parseReceiverPatch(params);
				let b: OrderBookingState | null = null;
				try {
					b = await call(
						ctx,
						"booking.orderState",
						{ sender_id: sender, order_id },
						{ timeout: BOOKING_STATE_TIMEOUT_MS, unavailable: false },
					);
				} catch (err) {
					this.logger.debug(`edit of order ${order_id}: booking not asked: ${(err as Error)?.message}`);
				}
				if (b && (b.state === "booking_in_progress" || b.state === "booked")) throw notEditable(b.state);
				const done = await editReceiver(this.db, sender, order_id, patch, EDIT_WINDOW_DAYS);
				if (!done) {
					const why = await editBlocker(this.db, sender, order_id, EDIT_WINDOW_DAYS);
					if (why === "missing") throw orderNotFound();
					throw notEditable(why);
				}
				if (done.changed.length)
					this.logger.info("unshipped order edited", { sender_id: sender, order_id, changed: done.changed });
				return { order_id, status: done.status, changed: done.changed };
			},
		},

		/**
		 * POST /v1/orders/{id}/hide — hide an order from every list and count
		 * (spec §3, §4.3, §7). Any of the caller's orders, in any state; never
		 * contacts the courier. Closes the order's open cancellation through
		 * `booking.closeCancellation` (`closed`, `refunded` rupees from booking's
		 * wallet ledger), then stamps `hidden_at` (the first time only).
		 * Idempotent: hiding again answers `{order_id, order_no, hidden:true}` again
		 * with booking's `closed` / `refunded` read again.
		 * 200 `{order_id, order_no, hidden:true, closed, refunded}`; 400
		 * `validation_failed` (`field` "id") for a path id that is not a positive
		 * integer; 404 `order not found` (missing or another account's; booking
		 * is not asked); 503 `service_unavailable` when booking cannot be asked
		 * (nothing hidden; retry). Read-only roles: 403 `Read-only role`; roles
		 * without `orders.write`: 403 `forbidden`.
		 */
		hideOrder: {
			access: { writes: true, capability: "orders.write" },
			async handler(ctx): Promise<HideOrderResult> {
				const sender = senderOf(ctx);
				const order_id = parseOrderId(ctx.params?.id);
				if ((await orderReference(this.db, sender, order_id)) === null) throw orderNotFound();
				const { closed, refunded } = await call(ctx, "booking.closeCancellation", {
					sender_id: sender,
					order_id,
				});
				const order_no = await hideOrder(this.db, sender, order_id);
				if (order_no === null) throw orderNotFound();
				this.logger.info("order hidden", { sender_id: sender, order_id, closed, refunded });
				return { order_id, order_no, hidden: true, closed, refunded };
			},
		},

		// --- bulk upload (issue 10; lib/intake/bulk/api.ts;
		// docs/decisions/0039-bulk-upload-api.md) ---

		/**
		 * POST /v1/intake/bulk — multipart upload of a CSV or XLSX of orders (spec
		 * §2.3, §4.1, §7; issue 10, issue 25). The gateway's upload route hands
		 * the RAW multipart body over as `ctx.stream` (over NATS in chunks) with
		 * params `{query, content_type}` (lib/contracts/intake.ts
		 * BulkUploadParams); the form is parsed here (lib/intake/bulk/multipart.ts),
		 * so `sender_address_id` (form field, before or after the file, or
		 * `?sender_address_id=`) and `import_file` may come in any order.
		 *
		 * Answers: 413 `file_too_large` as soon as the file passes 25 MB; 400
		 * `invalid_multipart` (not multipart/form-data, malformed, cut short,
		 * more than one file or too many parts / fields); then, once the body
		 * has ended, in this order: 400 `validation_failed` (a control character
		 * in a field name or value, the file name or its content type); 400
		 * `ambiguous_parameter` (`sender_address_id` in query and form, or twice
		 * in the form); 400 `sender_address_id (pickup warehouse) required`; 400
		 * `import_file_required`; 415 `unsupported_file_type` (not .csv /
		 * .xlsx); 400 `file_type_mismatch` (name and content type disagree); 400
		 * `invalid_pickup_address` (not one of the caller's active warehouses,
		 * `warehouses.resolve`); 400 `empty_file`; 400 `file_refused` (an XLSX
		 * past a zip bound: entries, sizes, ratio, shared strings, or local
		 * headers that disagree with its central directory); 400
		 * `file_content_mismatch` (bytes not a zip holding an XLSX workbook / not
		 * UTF-8 text without NUL). Nothing is stored before every check passed.
		 * 202 `{job_id, status:"queued"}` once the job row and the file's bytes
		 * are committed (one transaction) and the BullMQ job `bulk-<id>` is added
		 * to `intake-bulk`. Read-only roles 403 `Read-only role`; roles without
		 * `orders.write` 403 `forbidden`.
		 */
		bulkUpload: {
			// streams a file of up to 25 MB from the gateway (issue 12)
			timeout: 60_000,
			access: { writes: true, capability: "orders.write" },
			async handler(ctx): Promise<BulkUploadResult> {
				const sender = senderOf(ctx);
				const res = await uploadBulk({
					sender_id: sender,
					query: ctx.params?.query ?? {},
					content_type: ctx.params?.content_type ?? "",
					stream: (ctx.stream as Readable | null) ?? null,
					assertWarehouse: (id) =>
						this.assertOwnWarehouses(ctx, sender, [{ field: "sender_address_id", id }]),
					store: (job) => insertBulkJob(this.db, job),
					enqueue: async (job_id) => {
						await enqueueBulkJob(job_id);
					},
					warn: (msg, extra) => this.logger.warn(msg, extra),
				});
				this.logger.info("bulk upload queued", { sender_id: sender, job_id: res.job_id });
				ctx.meta.$statusCode = 202;
				return res;
			},
		},

		/**
		 * GET /v1/intake/jobs — the caller's bulk jobs, newest first (§2.12
		 * envelope; `limit` 1–500, default 50; `cursor`). Rows: the job object
		 * without `created_order_ids` and `rows` (lib/contracts/intake.ts
		 * BulkJobSummary). 400 `cursor: unrecognised shape`. Any authenticated role.
		 */
		bulkJobs: {
			access: { auth: true },
			async handler(ctx): Promise<{ data: BulkJobSummary[]; pagination: BulkJob["rows"]["pagination"] }> {
				return jobsList(this.db, senderOf(ctx), ctx.params ?? {});
			},
		},

		/**
		 * GET /v1/intake/jobs/{id} — the job object (lib/contracts/intake.ts
		 * BulkJob): status, counts, progress, created order ids (first 1000),
		 * error, timestamps, and `rows`: one §2.12 page of per-row outcomes in row
		 * order (`?limit=` 1–500 default 50, `?cursor=`, `?outcome=` one outcome).
		 * 404 `not found` for another account's job or one that never existed.
		 * Any authenticated role.
		 */
		bulkJob: {
			access: { auth: true },
			async handler(ctx): Promise<BulkJob> {
				return jobObject(this.db, senderOf(ctx), ctx.params ?? {});
			},
		},

		/**
		 * GET /v1/intake/bulk/template.csv | template.xlsx — the upload template:
		 * the canonical header row and one example row (columns in
		 * lib/intake/bulk/columns.ts; README table). Any authenticated role.
		 * 404 `not found` for another extension.
		 */
		bulkTemplate: {
			access: { auth: true },
			async handler(ctx): Promise<Buffer> {
				const format = ctx.params?.format;
				if (format !== "csv" && format !== "xlsx") throw fail("not found");
				ctx.meta.$responseType = format === "csv" ? "text/csv; charset=utf-8" : XLSX_MIME;
				ctx.meta.$responseHeaders = {
					"Content-Disposition": `attachment; filename="orders-template.${format}"`,
				};
				return format === "csv" ? templateCsv() : templateXlsx();
			},
		},

		/**
		 * GET /v1/intake/jobs/{id}/review — the job's rows waiting for a decision
		 * (outcome `review`), in row order, each with `review_reason` and `data`
		 * (the row's cells by canonical column); §2.12 page (`limit`, `cursor`).
		 * 404 `not found`. Capability `orders.write`.
		 */
		bulkReview: {
			access: { auth: true, capability: "orders.write" },
			async handler(ctx): Promise<{ data: BulkReviewRow[]; pagination: BulkJob["rows"]["pagination"] }> {
				return reviewList(this.db, senderOf(ctx), ctx.params ?? {});
			},
		},

		/**
		 * GET /v1/intake/jobs/{id}/rows.csv[?outcome=failed,review] — the job's
		 * rows of those outcomes (default failed and review; `rejected` too) as a
		 * CSV in the upload template's layout plus `row_no`, `outcome`, `errors`,
		 * `review_reason`, every cell neutralised against spreadsheet formulas;
		 * streamed (lib/intake/bulk/export.ts). Corrected and uploaded again, it
		 * reads as the rows first uploaded. 404 `not found` (bad id, another
		 * account's job, none); 400 `validation_failed` (outcome). Any
		 * authenticated role (as the job itself and the orders list).
		 */
		bulkRowsCsv: {
			access: { auth: true },
			async handler(ctx): Promise<Readable> {
				const out = await rowsExport(this.db, senderOf(ctx), ctx.params ?? {});
				ctx.meta.$responseType = "text/csv; charset=utf-8";
				ctx.meta.$responseHeaders = {
					"Content-Disposition": `attachment; filename="${out.file_name}"`,
					"Cache-Control": "private, no-store",
				};
				return out.stream;
			},
		},

		/**
		 * POST /v1/intake/jobs/{id}/review/{row}/{decision} — `row` a row number
		 * or `all`, `decision` `approve` or `reject` (lib/intake/bulk/api.ts
		 * `decideReview`). Approve creates the order through the same path as
		 * POST /v1/intake/order (`createFromRow`): `approved` with `order_id`
		 * (`deduped: true` when the reference already had a live order), or
		 * `failed` with `errors` when it no longer validates. 200 `{job_id,
		 * decided:[…], in_review}`; 404 `not found` (job or row); 409
		 * `not_in_review` (one row already decided); 400 `validation_failed`
		 * (decision). Read-only roles 403; capability `orders.write`.
		 */
		bulkReviewDecide: {
			access: { writes: true, capability: "orders.write" },
			async handler(ctx): Promise<BulkDecisionResult> {
				const sender = senderOf(ctx);
				const res = await decideReview(this.db, sender, ctx.params ?? {}, (job, row_no) =>
					createFromRow(this.db, ctx, sender, job, row_no),
				);
				if (res.decided.length)
					this.logger.info("bulk review decided", {
						sender_id: sender,
						job_id: res.job_id,
						rows: res.decided.length,
					});
				return res;
			},
		},
	},

	events: {
		/** A warehouse changed or was retired (broadcast by warehouses): forget its cached resolution. */
		"warehouses.changed": {
			handler(ctx): void {
				this.warehouseCache.evict(Number(ctx.params?.sender_id), Number(ctx.params?.id));
			},
		},
	},
	/**
	 * Reads `INTAKE_BULK_WORKER` and `INTAKE_BULK_NICE` (lib/intake/bulk/role.ts;
	 * an unknown role throws: the process does not start) into
	 * `settings.bulkRole` / `settings.bulkNice`. With
	 * `only` (a bulk worker pod) every action but `processBulkJob` is
	 * removed, so this node advertises no other intake action and NATS never
	 * hands it an API call.
	 */
	merged(schema) {
		const role = bulkRole();
		// kept on the instance (read by the worker mixin and `started`): brokers of one process may differ (tests)
		const settings: IntakeSettings = { bulkRole: role, bulkNice: bulkNice() };
		schema.settings = { ...schema.settings, ...settings };
		if (role !== "only") return;
		const actions = (schema.actions ?? {}) as Record<string, unknown>;
		for (const name of Object.keys(actions)) if (!BULK_ONLY_ACTIONS.includes(name)) actions[name] = false;
	},
	created() {
		this.warehouseCache = new WarehouseCache(setting("INTAKE_WAREHOUSE_CACHE_MS"));
	},
	/**
	 * Refuses to run without a link secret (the signed `label_url` of status,
	 * detail and list rows; docs/ARCHITECTURE.md §2: fail loudly at start), then
	 * starts the coalesced update writer, the bulk re-enqueue and the event
	 * relay.
	 */
	async started() {
		if (!labelLinkConfigured()) throw new Error("intake: LABEL_LINK_SECRET is required (signed label links)");
		this.bookingUpdates = coalesce((us: BookingUpdate[]) => applyBookingUpdates(this.db, us));
		this.orderPages = orderPageReader(this.db);
		// bulk jobs left queued/processing (a lost enqueue, a crashed pod): re-add their queue entries
		void unfinishedJobs(this.db)
			.then((ids) => requeueUnfinished(this.db, ids))
			.then((n) => n && this.logger.info(`bulk: re-enqueued ${n} unfinished job(s)`))
			.catch((e: Error) => this.logger.warn(`bulk: re-enqueue at start failed: ${e.message}`));
		if (this.settings.bulkRole === "only") {
			// a bulk worker pod: background work only, at a lower CPU priority; the API pods relay the outbox
			const nice = this.settings.bulkNice;
			const n = lowerThreadsPriority(nice);
			this.logger.info(`bulk worker only (INTAKE_BULK_WORKER=only): nice ${nice} on ${n} thread(s)`);
			return;
		}
		this.eventRelay = new EventOutboxRelay(this.db, "intake", this.broker, this.logger);
		await this.eventRelay.start();
	},
	async stopped() {
		await this.eventRelay?.stop();
		this.eventRelay = undefined;
	},
});
