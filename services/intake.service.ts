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
 *
 * The handlers parse and answer; the work is plain functions over `IntakeDeps`
 * (lib/intake/deps.ts, built by `deps()`): lib/intake/orders.ts (create, status,
 * the internal actions), lib/intake/requests.ts (the orders list and detail, the
 * unshipped queue, hide), lib/intake/bulk/requests.ts (the bulk import). SQL only
 * in the store modules (lib/intake/store.ts, list-store.ts, unshipped-store.ts,
 * bulk/store.ts, bulk/jobs-store.ts). The service shape: docs/ARCHITECTURE.md §1,
 * docs/decisions/0091-service-shape.md.
 */
import type { Readable } from "node:stream";
import { COD_STATUSES, type FailureCode } from "../lib/contracts";
import { INTAKE_ROUTES } from "../lib/contracts/http/intake";
import { INTAKE_BULK_ROUTES } from "../lib/contracts/http/intake-bulk";
import { XLSX_MIME } from "../lib/contracts/http/intake-bulk-input";
import { BULK_QUEUE, templateCsv, templateXlsx } from "../lib/intake/bulk/api";
import {
	decideRows,
	exportRows,
	jobOf,
	listJobs,
	processJob,
	requeueAtStart,
	reviewRows,
	uploadFile,
} from "../lib/intake/bulk/requests";
import {
	BULK_ONLY_ACTIONS,
	type BulkRole,
	bulkNice,
	bulkRole,
	lowerThreadsPriority,
} from "../lib/intake/bulk/role";
import { type IntakeDeps, type IntakeWriters, intakeWriters } from "../lib/intake/deps";
import { parseOrderId, parseOrderListQuery } from "../lib/intake/list";
import { INTAKE_MIGRATIONS } from "../lib/intake/migrations";
import {
	adoptOrphans,
	applyBookingUpdate,
	createOrderFrom,
	orderRecord,
	orderStatus,
	shippedSince,
	usageOf,
} from "../lib/intake/orders";
import {
	editUnshipped,
	hideOrderOf,
	listOrders,
	listUnshipped,
	orderDetailOf,
	unshippedCounts,
	unshippedErrorTypes,
} from "../lib/intake/requests";
import { applyCodStatuses } from "../lib/intake/store";
import { parseCountsDirection, parseReceiverPatch, parseUnshippedQuery } from "../lib/intake/unshipped";
import { WarehouseCache } from "../lib/intake/warehouse-cache";
import { senderOf } from "../lib/platform/auth";
import { setting } from "../lib/platform/config";
import { fail } from "../lib/platform/errors";
import { EventOutboxRelay } from "../lib/platform/merchant-events-outbox";
import { defineService } from "../lib/platform/service";
import { labelLinkConfigured } from "../lib/shared/label-link";
import { DbMixin } from "../mixins/db.mixin";
import { WorkerMixin } from "../mixins/worker.mixin";

/** Settings of an intake instance: its bulk role and nice (set in `merged` from the environment). */
interface IntakeSettings {
	bulkRole: BulkRole;
	bulkNice: number;
}

/** State set in `created` / `started`. */
interface IntakeVars {
	/** the coalescing readers and writers ({@link IntakeWriters}: made in `started`, they need the db) */
	writers: IntakeWriters;
	/** relays `intake.event_outbox` (order.created) to the `merchant.events` channel (issue 11; made in `started`) */
	eventRelay: EventOutboxRelay | undefined;
	warehouseCache: WarehouseCache;
}

/** Every `BookingUpdate.failure_code` (lib/contracts/intake.ts). */
const FAILURE_CODES: readonly FailureCode[] = [
	"courier_refused",
	"courier_unreachable",
	"pickup_unavailable",
	"order_changed",
	"booking_error",
];

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
		/** The {@link IntakeDeps} the lib/intake/ modules run on (writers made in `started`). */
		deps(): IntakeDeps {
			return {
				db: this.db,
				logger: this.logger,
				warehouseCache: this.warehouseCache,
				...this.writers,
			};
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
			async handler(ctx) {
				return processJob(this.deps(), ctx, ctx.params.job_id);
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
			access: INTAKE_ROUTES["intake.createOrder"].access,
			async handler(ctx) {
				const r = await createOrderFrom(this.deps(), ctx, senderOf(ctx), ctx.params, "forward");
				ctx.meta.$statusCode = r.created ? 201 : 200;
				return r.answer;
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
			access: INTAKE_ROUTES["intake.createReverse"].access,
			async handler(ctx) {
				const r = await createOrderFrom(this.deps(), ctx, senderOf(ctx), ctx.params, "reverse");
				ctx.meta.$statusCode = r.created ? 201 : 200;
				return { ...r.answer, order_no: r.order_no };
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
		 * failed; `status` the lifecycle status (values in lib/shared/shipment-status.ts:
		 * new, booking_queued, booked, booking_failed, manifested, pickup_scheduled, picked_up,
		 * in_transit, out_for_delivery, delivered, undelivered, rto_initiated,
		 * rto_in_transit, rto_delivered, cancelled, lost, damaged); `created_at`
		 * ISO-8601 UTC.
		 * A reference reused after a cancellation answers the live order (else
		 * the newest). Read-your-writes: once `POST /v1/shipping/book` answered
		 * 202 this never reads `not_shipped` (booking's state is read through
		 * while its update is on the way; lib/intake/orders.ts `statusOf`).
		 * 400 `{error:"order_no is required"}` when absent or empty; 404
		 * `order_not_found` when the account has no order with that reference
		 * (another merchant's reference included; never means "not yet booked").
		 */
		status: {
			access: INTAKE_ROUTES["intake.status"].access,
			async handler(ctx) {
				return orderStatus(this.deps(), senderOf(ctx), ctx.params?.order_no);
			},
		},

		/**
		 * Internal: `{sender_id, order_id}` → the {@link OrderRecord} (`direction`
		 * forward/reverse, `payment_mode` prepaid/cod, `consignee` Address with
		 * phone = the stored 10-digit mobile, city/state "" when not given;
		 * product money rupees, weight kg, dimensions cm; `reverse` details for
		 * returns; booking state and status; ISO-8601 UTC timestamps) or null when
		 * it does not exist or is not that sender's. `for_booking: true` (booking's
		 * checks before it opens an attempt) also enters the order in
		 * `intake.booking_requests`, committed before the answer, so status reads
		 * know booking may hold an attempt (docs/decisions/0129-status-without-booking.md).
		 */
		getOrder: {
			params: { sender_id: idParam, order_id: idParam, for_booking: { type: "boolean", optional: true } },
			async handler(ctx) {
				const { sender_id, order_id, for_booking } = ctx.params;
				return orderRecord(this.deps(), sender_id, order_id, for_booking === true);
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
				return applyBookingUpdate(this.deps(), ctx.params);
			},
		},

		/**
		 * Internal, from billing's outbox (lib/billing/relay.ts): `{items:
		 * [{awb_number, sender_id, order_id, cod_status, version}]}` (1–500) →
		 * `{applied}`: per AWB the newest version kept (lib/intake/store.ts
		 * `applyCodStatuses`); a redelivery or an older one applies nothing.
		 * Read by the orders list's `cod_status` filter.
		 */
		applyCodStatuses: {
			params: {
				items: {
					type: "array",
					min: 1,
					max: 500,
					items: {
						type: "object",
						props: {
							awb_number: { type: "string", min: 1, max: 64 },
							sender_id: idParam,
							order_id: idParam,
							cod_status: { type: "enum", values: [...COD_STATUSES] },
							version: { type: "number", integer: true, min: 1 },
						},
					},
				},
			},
			async handler(ctx) {
				return { applied: await applyCodStatuses(this.deps().db, ctx.params.items) };
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
				return usageOf(this.deps(), ctx.params.sender_id, ctx.params.warehouse_id);
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
				return adoptOrphans(this.deps(), ctx.params.sender_id, ctx.params.warehouse_id);
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
				return shippedSince(this.deps(), ctx.params.sender_id, ctx.params.since);
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
		 * lib/shared/shipment-status.ts), `limit` (1–1000, default 50), `cursor` (a
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
			access: INTAKE_ROUTES["intake.listOrders"].access,
			async handler(ctx) {
				const sender = senderOf(ctx);
				return listOrders(this.deps(), sender, parseOrderListQuery(ctx.params ?? {}, sender));
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
		 * (lib/intake/requests.ts `DETAIL_CALL_TIMEOUT_MS` each).
		 *
		 * Errors: 400 `validation_failed` (`field` "id") when `id` is not a
		 * positive integer; 404 `order not found` for a missing or another
		 * account's order (the same answer, §1 rule 4); 503
		 * `service_unavailable` when booking or documents cannot be asked.
		 * Any authenticated role.
		 */
		orderDetail: {
			access: INTAKE_ROUTES["intake.orderDetail"].access,
			async handler(ctx) {
				return orderDetailOf(this.deps(), ctx, senderOf(ctx), parseOrderId(ctx.params?.id));
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
			access: INTAKE_ROUTES["intake.listUnshipped"].access,
			async handler(ctx) {
				const sender = senderOf(ctx);
				return listUnshipped(this.deps(), sender, parseUnshippedQuery(ctx.params ?? {}, sender));
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
			access: INTAKE_ROUTES["intake.unshippedErrorTypes"].access,
			async handler(ctx) {
				return unshippedErrorTypes(this.deps(), senderOf(ctx));
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
			access: INTAKE_ROUTES["intake.unshippedCounts"].access,
			async handler(ctx) {
				return unshippedCounts(this.deps(), senderOf(ctx), parseCountsDirection(ctx.params ?? {}));
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
		 * `EDIT_WINDOW_DAYS` (30; lib/contracts/http/intake-input.ts) days ago. Booking's own state is read through
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
			access: INTAKE_ROUTES["intake.editUnshipped"].access,
			async handler(ctx) {
				const sender = senderOf(ctx);
				const params = ctx.params ?? {};
				const order_id = parseOrderId(params.id);
				return editUnshipped(this.deps(), ctx, sender, order_id, parseReceiverPatch(params));
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
			access: INTAKE_ROUTES["intake.hideOrder"].access,
			async handler(ctx) {
				return hideOrderOf(this.deps(), ctx, senderOf(ctx), parseOrderId(ctx.params?.id));
			},
		},

		// --- bulk upload (issue 10; lib/intake/bulk/api.ts;
		// docs/decisions/0039-bulk-upload-api.md) ---

		/**
		 * POST /v1/intake/bulk — multipart upload of a CSV or XLSX of orders (spec
		 * §2.3, §4.1, §7; issue 10, issue 25). The gateway's upload route hands
		 * the RAW multipart body over as `ctx.stream` (over NATS in chunks) with
		 * params `{query, content_type}` (lib/contracts/intake.ts
		 * UploadParams); the form is parsed here (lib/intake/bulk/multipart.ts),
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
			access: INTAKE_BULK_ROUTES["intake.bulkUpload"].access,
			async handler(ctx) {
				const stream = (ctx.stream as Readable | null) ?? null;
				const res = await uploadFile(this.deps(), ctx, senderOf(ctx), ctx.params, stream);
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
			access: INTAKE_BULK_ROUTES["intake.bulkJobs"].access,
			async handler(ctx) {
				return listJobs(this.deps(), senderOf(ctx), ctx.params ?? {});
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
			access: INTAKE_BULK_ROUTES["intake.bulkJob"].access,
			async handler(ctx) {
				return jobOf(this.deps(), senderOf(ctx), ctx.params ?? {});
			},
		},

		/**
		 * GET /v1/intake/bulk/template.csv | template.xlsx — the upload template:
		 * the canonical header row and one example row (columns in
		 * lib/intake/bulk/columns.ts; README table). Any authenticated role.
		 * 404 `not found` for another extension.
		 */
		bulkTemplate: {
			access: INTAKE_BULK_ROUTES["intake.bulkTemplate"].access,
			async handler(ctx) {
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
			access: INTAKE_BULK_ROUTES["intake.bulkReview"].access,
			async handler(ctx) {
				return reviewRows(this.deps(), senderOf(ctx), ctx.params ?? {});
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
			access: INTAKE_BULK_ROUTES["intake.bulkRowsCsv"].access,
			async handler(ctx) {
				const out = await exportRows(this.deps(), senderOf(ctx), ctx.params ?? {});
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
			access: INTAKE_BULK_ROUTES["intake.bulkReviewDecide"].access,
			async handler(ctx) {
				return decideRows(this.deps(), ctx, senderOf(ctx), ctx.params ?? {});
			},
		},
	},

	events: {
		/** A warehouse changed or was retired (broadcast by warehouses): forget its cached resolution. */
		"warehouses.changed": {
			handler(ctx) {
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
		this.writers = intakeWriters(this.db, this.broker);
		// bulk jobs left queued/processing (a lost enqueue, a crashed pod): re-add their queue entries
		void requeueAtStart(this.deps());
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
