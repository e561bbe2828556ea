/**
 * NDR cases from the durable `shipment.status_changed` channel (issue 9;
 * docs/decisions/0038-ndr-cases.md; consumer group `ndr`, at-least-once):
 *
 * - `undelivered` opens the shipment's case (in `action_required`, with the
 *   courier's reason mapped by ./reasons.ts, what the list needs of the order
 *   from `intake.getOrder` and of the shipment from `booking.getShipment`; the
 *   buyer's message is the notifications service's, from the same channel), or
 *   counts a new failed attempt on its open case;
 * - `delivered` closes it in tab `delivered` (delivered after NDR);
 * - `rto_initiated`, `rto_in_transit`, `rto_delivered` close it in tab `rto`;
 * - `lost`, `damaged`, `cancelled` close it in no tab (`closed`);
 * - other statuses change nothing.
 *
 * Idempotent (./store.ts): a redelivered event changes nothing. A failure
 * (database, intake or booking unreachable) throws, so the channel
 * redelivers the event.
 */
import { type Caller, call, type ShipmentStatusChanged } from "../contracts";
import type { NdrDeps } from "./deps";
import { ndrReasonOf } from "./reasons";
import { type CaseOpening, closeLiveCase, recordUndelivered, type UndeliveredOutcome } from "./store";

/** Statuses that close a case, and the tab they close it in. */
const CLOSING: Partial<Record<string, "delivered" | "rto" | "closed">> = {
	delivered: "delivered",
	rto_initiated: "rto",
	rto_in_transit: "rto",
	rto_delivered: "rto",
	lost: "closed",
	damaged: "closed",
	cancelled: "closed",
};

/**
 * Applies one `shipment.status_changed` event (see the module doc). Answers
 * what happened, for logs and tests.
 * @throws when the event could not be applied (the channel redelivers it)
 */
export async function applyStatusEvent(
	deps: NdrDeps,
	via: Caller,
	e: ShipmentStatusChanged,
): Promise<UndeliveredOutcome | { kind: "closed"; ids: number[] } | { kind: "ignored" }> {
	if (e.status === "undelivered") return applyUndelivered(deps, via, e);
	const to = CLOSING[e.status];
	if (!to) return { kind: "ignored" };
	return { kind: "closed", ids: await closeLiveCase(deps.db, e, to) };
}

/** The courier's words of a failed attempt: its remarks, else its status words, else the status name. */
function wordsOf(e: ShipmentStatusChanged): string {
	return (e.remarks || e.courier_status || e.status_name || "undelivered").trim().slice(0, 500);
}

async function applyUndelivered(
	deps: NdrDeps,
	via: Caller,
	e: ShipmentStatusChanged,
): Promise<UndeliveredOutcome> {
	const words = wordsOf(e);
	let reason = ndrReasonOf(e.remarks);
	if (reason === "other") reason = ndrReasonOf(e.courier_status);
	const attempt = { event: e, reason, words };
	const out = await recordUndelivered(deps.db, attempt, deps.settings.deadlineMs, null);
	if (out.kind !== "needs_opening") return out;
	return recordUndelivered(deps.db, attempt, deps.settings.deadlineMs, await openingOf(deps, via, e));
}

/**
 * What a new case records of its order (`intake.getOrder`: reference, payment,
 * declared total, consignee) and shipment (`booking.getShipment`: booking
 * attempt, courier name). A shipment booking no longer lists (cancelled
 * meanwhile) takes its attempt id from the event id `<attempt_id>-<seq>`.
 * @throws 503 when intake or booking cannot be asked (the event is redelivered)
 */
async function openingOf(deps: NdrDeps, via: Caller, e: ShipmentStatusChanged): Promise<CaseOpening> {
	const key = { sender_id: e.sender_id, order_id: e.order_id };
	const [order, shipment] = await Promise.all([
		call(via, "intake.getOrder", key, deps.callOptions()),
		call(via, "booking.getShipment", key, deps.callOptions()),
	]);
	const live = shipment && shipment.awb_number === e.awb_number ? shipment : null;
	const cod = order?.payment_mode === "cod";
	return {
		attempt_id: live?.attempt_id ?? Number(e.event_id.split("-")[0]),
		courier_name: live?.courier_name ?? "",
		customer_order_no: order?.customer_order_no ?? "",
		payment_mode: cod ? "cod" : "prepaid",
		order_value_paise: Math.round((order?.product.declared_order_total ?? 0) * 100),
		cod_amount_paise: cod ? Math.round((order?.product.cod_amount ?? 0) * 100) : null,
		consignee_name: order?.consignee.name ?? null,
		consignee_city: order?.consignee.city ?? null,
		consignee_pincode: order?.consignee.pincode ?? null,
	};
}
