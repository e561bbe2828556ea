/**
 * Helpers of the book/sync, fall-over and retry specs (on top of ./setup.ts):
 * calling `booking.bookSync` as a merchant and reading the wallet ledger.
 */
import type { ServiceBroker } from "moleculer";
import { getSequelize, select } from "../../../lib/platform/db";
import { as } from "../../helpers/broker";
import { callAs } from "../../helpers/call";

/** Calls `booking.bookSync` as merchant `sender`; the result and the HTTP status set (200 unless set). */
export async function bookSync(broker: ServiceBroker, sender: number, params: Record<string, unknown>) {
	const opts = as(sender);
	const res: any = await callAs(broker, "booking.bookSync", params, opts);
	return { res, status: ((opts.meta as any).$statusCode ?? 200) as number };
}

/** The ledger rows of an attempt, oldest first. */
export async function ledgerOf(attempt_id: number): Promise<any[]> {
	return select(getSequelize(), "SELECT * FROM booking.ledger WHERE attempt_id = $1 ORDER BY id", [
		attempt_id,
	]);
}
