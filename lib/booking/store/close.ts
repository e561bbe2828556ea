/**
 * SQL of `booking.closeCancellation` (intake's `POST /v1/orders/{id}/hide`,
 * spec §3 row "any visible order → hide", §4.3): closing an order's open
 * cancellation and reading what the ledger refunded for it. Money in paise.
 */
import type { Sequelize } from "sequelize";
import { select } from "../../platform/db";

/**
 * In ONE statement: stamps `cancel_closed_at` on the sender's attempts of
 * `order_id` whose cancel is open (requested while the courier call was in
 * flight, attempt still queued or claimed, not closed before), and sums the
 * order's refunds in the wallet ledger. The worker still settles a closed
 * attempt as before (it never books it and cancels a late AWB at the
 * courier): closing only ends the merchant's open request. Another
 * sender's order matches nothing (closed false, 0 refunded).
 * @returns `closed`: whether this call closed one; `refunded_paise`: refunds of the order (≥ 0)
 */
export async function closeOpenCancellation(
	db: Sequelize,
	sender_id: number,
	order_id: number,
): Promise<{ closed: boolean; refunded_paise: number }> {
	const [row] = await select<{ closed: string | number; refunded: string | number }>(
		db,
		`WITH c AS (
		   UPDATE booking.attempts SET cancel_closed_at = now(), updated_at = now()
		   WHERE order_id = $1 AND sender_id = $2 AND cancel_requested_at IS NOT NULL
		     AND cancel_closed_at IS NULL AND state IN ('queued', 'claimed')
		   RETURNING attempt_id)
		 SELECT (SELECT count(*) FROM c) AS closed,
		        (SELECT COALESCE(sum(amount_paise), 0) FROM booking.ledger
		          WHERE order_id = $1 AND sender_id = $2 AND kind = 'refund') AS refunded`,
		[order_id, sender_id],
	);
	return { closed: Number(row.closed) > 0, refunded_paise: Number(row.refunded) };
}
