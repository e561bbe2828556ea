/**
 * COD status of shipments from the `shipment.status_changed` channel (issue
 * 27; docs/decisions/0102-cod-remittance.md): billing records every shipment
 * it hears of — for a COD one the amount to collect, from intake, once — and
 * moves its cash forward: pending → collected on delivery, → not_collected
 * when it goes back (RTO), is lost or damaged, or its booking is cancelled.
 * Remitted and paid come from the couriers' remittances (./remittance.ts)
 * and the payouts.
 */
import type { Caller, CodShipment, ShipmentStatusChanged } from "../contracts";
import { call } from "../contracts/call";
import { toPaise, toRupees } from "../shared/money";
import type { ShipmentStatus } from "../shared/shipment-status";
import type { BillingDeps } from "./deps";
import { applyShipmentStatus, type CodTarget, codShipmentOf, insertShipment } from "./store";

/** Statuses after which the courier will not collect the COD amount. */
const NOT_COLLECTED: ReadonlySet<ShipmentStatus> = new Set([
	"rto_initiated",
	"rto_in_transit",
	"rto_delivered",
	"lost",
	"damaged",
	"cancelled",
]);

/** Where a status puts a COD shipment's cash: delivered → collected; RTO, lost, damaged, cancelled → not_collected. */
export function codTargetOf(status: ShipmentStatus): CodTarget {
	if (status === "delivered") return "collected";
	return NOT_COLLECTED.has(status) ? "not_collected" : "pending";
}

/** Timeout (ms) of the `intake.getOrder` call made the first time billing hears of a shipment. */
const ORDER_TIMEOUT_MS = 5_000;

/**
 * Applies one status change (at-least-once, any order: a change older than
 * the one applied is dropped by its `seq`). The first change of a shipment
 * asks intake for its order (payment mode, COD amount); an order intake no
 * longer knows is logged and skipped.
 * @throws when intake cannot be asked (the channel redelivers the message)
 */
export async function applyStatusChange(
	deps: BillingDeps,
	via: Caller,
	e: ShipmentStatusChanged,
): Promise<void> {
	const fact = { awb_number: e.awb_number, seq: e.seq, target: codTargetOf(e.status), at: e.status_at };
	if (await applyShipmentStatus(deps.db, fact)) return;
	const order = await call(
		via,
		"intake.getOrder",
		{ sender_id: e.sender_id, order_id: e.order_id },
		{ timeout: ORDER_TIMEOUT_MS, unavailable: false },
	);
	if (!order) {
		deps.logger.warn("status change of an order intake does not know: skipped", {
			awb_number: e.awb_number,
			order_id: e.order_id,
		});
		return;
	}
	const cod = order.payment_mode === "cod";
	await insertShipment(deps.db, {
		...fact,
		sender_id: e.sender_id,
		order_id: e.order_id,
		logistic_id: e.logistic_id,
		payment_mode: cod ? "cod" : "prepaid",
		cod_amount_paise: cod ? toPaise(order.product.cod_amount ?? 0) : 0,
	});
}

/** `billing.codStatus`: the COD money of the sender's shipment `awb_number` (rupees), or null. */
export async function codStatusOf(
	deps: BillingDeps,
	sender_id: number,
	awb_number: string,
): Promise<CodShipment | null> {
	const r = await codShipmentOf(deps.db, sender_id, awb_number);
	if (!r) return null;
	return {
		awb_number: r.awb_number,
		cod_status: r.cod_status,
		cod_amount: toRupees(r.cod_amount_paise),
		collected_at: r.collected_at ? r.collected_at.toISOString() : null,
		remittance:
			r.remittance_reference && r.remitted_on
				? {
						reference: r.remittance_reference,
						remitted_on: r.remitted_on,
						amount: toRupees(r.remitted_paise ?? 0),
					}
				: null,
	};
}
