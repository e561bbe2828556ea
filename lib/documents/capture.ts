/**
 * Capturing a courier-issued label (spec §4.4 "or the courier's own file",
 * §7 `carrier_label_missing`): when a shipment of a courier that issues its
 * own label is booked, booking's outbox has `documents.captureCourierLabel`
 * run this (acknowledged, redelivered with backoff until it answers). The file
 * is fetched from the courier once, through its adapter (lib/couriers
 * `fetchLabel`), and stored in `documents.labels` (bytea, with the courier's
 * media type); downloads serve it from there and never ask the courier again.
 */
import type { Sequelize } from "sequelize";
import { type Caller, type CourierLabelCapture, type CourierLabelCaptured, call } from "../contracts";
import { adapterFor, type CourierAdapter, CourierRefused } from "../couriers";
import { fail } from "../platform/errors";
import type { DocumentsDeps } from "./deps";
import { describeFile } from "./policy";
import { recordCourierLabel, storedLabel } from "./store";

/**
 * Fetches and stores the courier's label file of `p.awb_number` (in `deps.db`,
 * through ./store.ts; the courier's record asked through `via`); idempotent per
 * (order, AWB):
 * - already captured → `already_captured`, the courier is not asked;
 * - the courier answers the file → stored with its media type, `captured`;
 * - a definitive "no file" (the courier has none for the AWB, does not issue
 *   labels, has no integration, or is unknown to the rate catalog) → recorded
 *   as missing with the reason, `missing` (downloads answer 409
 *   `carrier_label_missing`; running the capture again later can still fill it);
 * - the courier unreachable, 5xx or unreadable → throws 503
 *   `courier_unavailable` (booking's relay redelivers the row with backoff).
 * A failure to ask `rates.getCourier` is rethrown as it came (redelivered too).
 * Concurrent calls for the same (account, order, AWB) in one process share one
 * capture (booking's outbox may deliver a row twice at once).
 */
export function captureCourierLabel(
	deps: Pick<DocumentsDeps, "db">,
	via: Caller,
	p: CourierLabelCapture,
): Promise<CourierLabelCaptured> {
	// single flight per (account, order, AWB) in this process: booking's outbox may deliver the same row twice
	// at once (at-least-once, by design); the second delivery waits for the first's answer instead of asking the
	// courier again. Across replicas the stored-file check below keeps it idempotent.
	const key = `${p.sender_id}:${p.order_id}:${p.awb_number}`;
	const running = inFlight.get(key);
	if (running) return running;
	const run = captureOnce(via, deps.db, p).finally(() => inFlight.delete(key));
	inFlight.set(key, run);
	return run;
}

/** Captures in progress in this process, by `sender_id:order_id:awb_number` (see {@link captureCourierLabel}). */
const inFlight = new Map<string, Promise<CourierLabelCaptured>>();

/** One capture of {@link captureCourierLabel} (the check of the stored file, then the courier). */
async function captureOnce(
	via: Caller,
	db: Sequelize,
	p: CourierLabelCapture,
): Promise<CourierLabelCaptured> {
	const stored = await storedLabel(db, p.sender_id, p.order_id, p.awb_number);
	if (stored?.source === "courier" && stored.courier_file?.length) {
		return {
			awb_number: p.awb_number,
			status: "already_captured",
			content_type: describeFile(stored.courier_file, stored.content_type).type,
			bytes: stored.courier_file.length,
		};
	}
	const missing = async (reason: string): Promise<CourierLabelCaptured> => {
		await recordCourierLabel(db, { ...p, file: null, missing_reason: reason.slice(0, 500) });
		return { awb_number: p.awb_number, status: "missing", content_type: null, bytes: 0 };
	};
	const courier = await call(via, "rates.getCourier", { logistic_id: p.logistic_id }, { unavailable: false });
	if (!courier) return missing(`courier ${p.logistic_id} is not in the rate catalog`);
	let adapter: CourierAdapter;
	try {
		adapter = adapterFor(courier);
	} catch {
		return missing(`${courier.logistic_name} has no courier integration`);
	}
	let label: Awaited<ReturnType<CourierAdapter["fetchLabel"]>>;
	try {
		label = await adapter.fetchLabel(p.awb_number);
	} catch (err) {
		if (err instanceof CourierRefused) return missing(`${courier.logistic_name}: ${err.message}`);
		throw fail("courier_unavailable", {
			courier: courier.logistic_name,
			awb: p.awb_number,
			why: (err as Error).message,
		});
	}
	const { type } = describeFile(label.bytes, label.content_type);
	await recordCourierLabel(db, { ...p, file: label.bytes, content_type: type });
	return { awb_number: p.awb_number, status: "captured", content_type: type, bytes: label.bytes.length };
}
