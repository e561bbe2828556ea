/**
 * The read side and the unshipped queue of `intake` (spec §2.5, §2.12, §3,
 * §4.3): `GET /v1/orders`, `GET /v1/orders/{id}`, `GET
 * /v1/orders/unshipped*`, `PATCH /v1/orders/unshipped/{id}`, `POST
 * /v1/orders/{id}/hide`. Plain functions over {@link IntakeDeps} (./deps.ts)
 * taking parsed input (./list.ts, ./unshipped.ts); SQL in ./list-store.ts and
 * ./unshipped-store.ts.
 */
import type { Context } from "moleculer";
import {
	type CallMeta,
	type CursorPage,
	call,
	type HideOrderResult,
	type OrderBookingState,
	type OrderDetail,
	type OrderListRow,
	type ShipmentDirection,
	type UnshippedCounts,
	type UnshippedEditResult,
	type UnshippedErrorTypeEntry,
	type UnshippedPage,
} from "../contracts";
import { EDIT_WINDOW_DAYS } from "../contracts/http/intake-input";
import type { IntakeDeps } from "./deps";
import {
	forgetOrderDetail,
	keptListPage,
	keptOrderDetail,
	listedPage,
	listPage,
	type OrderListQuery,
	orderDetail,
	orderNotFound,
	unbookedOrderDetail,
} from "./list";
import { UNCHANGED } from "./list-store";
import { BOOKING_STATE_TIMEOUT_MS } from "./read-through";
import {
	errorTypeEntries,
	nextUnshippedCursor,
	notEditable,
	type ReceiverPatch,
	type UnshippedQuery,
} from "./unshipped";
import {
	editBlocker,
	editReceiver,
	errorTypeCounts,
	hideOrder,
	orderReference,
	queueCounts,
	unshippedPage,
} from "./unshipped-store";

/** Timeout of the booking / documents calls of `intake.orderDetail` (ms). */
export const DETAIL_CALL_TIMEOUT_MS = 3_000;

/**
 * `GET /v1/orders`: one cursor page of the caller's orders (./list.ts `listPage`, rows through `orderPages`). A page
 * this process listed lately is first read as its rows' versions (`orderVersions`) and answered from the kept rows
 * when every one is kept under its version (./list.ts `keptListPage`); otherwise it is read whole
 * (docs/decisions/0132-kept-list-pages.md).
 */
export async function listOrders(
	deps: IntakeDeps,
	sender: number,
	q: OrderListQuery,
): Promise<CursorPage<OrderListRow>> {
	const was = listedPage(sender, q);
	if (was !== undefined) {
		const kept = keptListPage(was, sender, q, await deps.orderVersions(sender, q));
		if (kept !== null) return kept;
	}
	return listPage(sender, q, await deps.orderPages(sender, q));
}

/**
 * `GET /v1/orders/{id}`: the caller's order. Without an AWB its answer is kept under the row version and given
 * again while the row is unchanged (./list.ts `unbookedOrderDetail`, docs/decisions/0131-kept-order-details.md);
 * once it has an AWB,
 * `booking.getShipment`, `documents.labelInfo` and, for a COD order,
 * `billing.codStatus` are asked in parallel ({@link DETAIL_CALL_TIMEOUT_MS}
 * each; the label's download time only when it is of the order's current AWB).
 * @throws ApiError 404 `order not found`; 503 when booking, documents or billing cannot be asked
 */
export async function orderDetailOf(
	deps: IntakeDeps,
	ctx: Context<unknown, CallMeta>,
	sender: number,
	order_id: number,
): Promise<OrderDetail> {
	const kept = keptOrderDetail(sender, order_id);
	const row = await deps.orderRow(sender, order_id, kept?.version);
	// UNCHANGED answers only a read that passed a kept version
	if (row === UNCHANGED && kept !== undefined) return kept.answer;
	if (row === null || row === UNCHANGED) throw orderNotFound();
	if (!row.awb_number) return unbookedOrderDetail(sender, row);
	// booked since its answer was kept: that answer will not serve again, so the next read does not ask for it
	if (kept !== undefined) forgetOrderDetail(sender, order_id);
	const key = { sender_id: sender, order_id };
	const opts = { timeout: DETAIL_CALL_TIMEOUT_MS };
	const awb_number = row.awb_number;
	const [shipment, label, cod] = await Promise.all([
		call(ctx, "booking.getShipment", key, opts),
		call(ctx, "documents.labelInfo", key, opts),
		row.order_type === 1 ? call(ctx, "billing.codStatus", { sender_id: sender, awb_number }, opts) : null,
	]);
	const downloaded = label && label.awb_number === row.awb_number ? label.label_downloaded_at : null;
	return orderDetail(row, shipment, downloaded, cod);
}

/** `GET /v1/orders/unshipped`: one cursor page of the caller's queue (newest first). */
export async function listUnshipped(
	deps: IntakeDeps,
	sender: number,
	q: UnshippedQuery,
): Promise<UnshippedPage> {
	const page = await unshippedPage(deps.db, sender, q);
	const last = page.rows.at(-1);
	return {
		data: page.rows,
		pagination: {
			mode: "cursor",
			limit: q.limit,
			nextCursor: page.more && last ? nextUnshippedCursor(sender, q.filters, last.order_id) : null,
		},
	};
}

/** `GET /v1/orders/unshipped/error-types`: every error type with the caller's count of it now. */
export async function unshippedErrorTypes(
	deps: IntakeDeps,
	sender: number,
): Promise<{ data: UnshippedErrorTypeEntry[] }> {
	return { data: errorTypeEntries(await errorTypeCounts(deps.db, sender)) };
}

/**
 * `GET /v1/orders/unshipped/counts`: forward `{total, unshipped, failed,
 * in_queue}`; reverse `{unshipped, failed}` (`unshipped` counts not_shipped
 * and booking_in_progress returns).
 */
export async function unshippedCounts(
	deps: IntakeDeps,
	sender: number,
	direction: ShipmentDirection,
): Promise<UnshippedCounts> {
	const c = await queueCounts(deps.db, sender, direction);
	if (direction === "reverse") return { unshipped: c.not_shipped + c.in_queue, failed: c.failed };
	return {
		total: c.not_shipped + c.failed + c.in_queue,
		unshipped: c.not_shipped,
		failed: c.failed,
		in_queue: c.in_queue,
	};
}

/**
 * `PATCH /v1/orders/unshipped/{id}`: booking's own state read through first
 * (`booking.orderState`, {@link BOOKING_STATE_TIMEOUT_MS}; skipped, logged at
 * debug, when booking cannot be asked), then one conditional UPDATE; logs
 * `unshipped order edited` when a field changed.
 * @throws ApiError 404 `order not found`; 409 `not_editable` (`reason`)
 */
export async function editUnshipped(
	deps: IntakeDeps,
	ctx: Context<unknown, CallMeta>,
	sender: number,
	order_id: number,
	patch: ReceiverPatch,
): Promise<UnshippedEditResult> {
	let b: OrderBookingState | null = null;
	try {
		b = await call(
			ctx,
			"booking.orderState",
			{ sender_id: sender, order_id },
			{ timeout: BOOKING_STATE_TIMEOUT_MS, unavailable: false },
		);
	} catch (err) {
		deps.logger.debug(`edit of order ${order_id}: booking not asked: ${(err as Error)?.message}`);
	}
	if (b && (b.state === "booking_in_progress" || b.state === "booked")) throw notEditable(b.state);
	const done = await editReceiver(deps.db, sender, order_id, patch, EDIT_WINDOW_DAYS);
	if (!done) {
		const why = await editBlocker(deps.db, sender, order_id, EDIT_WINDOW_DAYS);
		if (why === "missing") throw orderNotFound();
		throw notEditable(why);
	}
	if (done.changed.length)
		deps.logger.info("unshipped order edited", { sender_id: sender, order_id, changed: done.changed });
	return { order_id, status: done.status, changed: done.changed };
}

/**
 * `POST /v1/orders/{id}/hide`: the order must be the caller's (else 404,
 * booking not asked); closes its open cancellation (`booking.closeCancellation`),
 * then stamps `hidden_at` (the first time only); logs `order hidden`.
 * @throws ApiError 404 `order not found`; 503 when booking cannot be asked
 */
export async function hideOrderOf(
	deps: IntakeDeps,
	ctx: Context<unknown, CallMeta>,
	sender: number,
	order_id: number,
): Promise<HideOrderResult> {
	if ((await orderReference(deps.db, sender, order_id)) === null) throw orderNotFound();
	const { closed, refunded } = await call(ctx, "booking.closeCancellation", {
		sender_id: sender,
		order_id,
	});
	const order_no = await hideOrder(deps.db, sender, order_id);
	if (order_no === null) throw orderNotFound();
	deps.logger.info("order hidden", { sender_id: sender, order_id, closed, refunded });
	return { order_id, order_no, hidden: true, closed, refunded };
}
