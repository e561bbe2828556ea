/**
 * NDR actions at the courier (spec §4.2 `POST /v1/shipping/ndr`, §7; DOMAIN
 * "Delhivery NDR actions"): the DEFER_DLV window, the call through the
 * courier's adapter and the NDR retry policy. The `ndr` service calls
 * {@link sendNdrAction} once it has found the order's open case.
 *
 * Retry policy (docs/decisions/0037-ndr-courier-actions.md): a transient
 * failure (CourierUnavailable: timeout, connection reset or refused, 5xx, an
 * unreadable answer) is retried by p-retry with exponential backoff and
 * jitter: at most `NDR_ACTION_ATTEMPTS` calls (default 3), the n-th retry
 * after `NDR_ACTION_BACKOFF_MS` × 2^(n−1) × a random factor in [1, 2]
 * (default 500 ms: 0.5–1 s, then 1–2 s), no retry started after
 * {@link NDR_RETRY_WINDOW_MS}. Then 503 `ndr_unavailable`. A refusal
 * (CourierRefused) is never retried. Acts are safe to repeat: the courier
 * treats the same act on the same pending attempt as one request (the
 * sandbox answers the same request id).
 */
import pRetry from "p-retry";
import { type Caller, type CallOptions, call } from "../contracts";
import type { NdrActInput } from "../contracts/ndr";
import {
	adapterFor,
	type CourierAdapter,
	CourierRefused,
	CourierUnavailable,
	type NdrActionDetails,
} from "../couriers";
import { setting } from "../platform/config";
import { fail, validationFailed } from "../platform/errors";

/** Days after the first failed delivery (IST day) a DEFER_DLV date may be (DOMAIN: "at most 6 days"). */
export const DEFER_WINDOW_DAYS = 6;

/** No retry is started once this long (ms) has passed since the first call (keeps the request under the broker's 20 s). */
export const NDR_RETRY_WINDOW_MS = 10_000;

const IST_OFFSET_MS = 330 * 60_000;
const DAY_MS = 86_400_000;

/** The India Standard Time calendar day (`YYYY-MM-DD`) of instant `t`. */
export function istDay(t: Date | string): string {
	return new Date(new Date(t).getTime() + IST_OFFSET_MS).toISOString().slice(0, 10);
}

/** Calendar day `day` (`YYYY-MM-DD`) plus `n` days. */
export function addDays(day: string, n: number): string {
	return new Date(Date.parse(`${day}T00:00:00Z`) + n * DAY_MS).toISOString().slice(0, 10);
}

/**
 * The NDR retry policy in force: `NDR_ACTION_ATTEMPTS` (integer ≥ 1, default 3), `NDR_ACTION_BACKOFF_MS` (integer ≥ 0, default 500).
 * @throws Error naming the variable when a value is not allowed (lib/platform/config.ts)
 */
export function ndrRetryPolicy(env: NodeJS.ProcessEnv = process.env): {
	attempts: number;
	backoffMs: number;
} {
	return {
		attempts: setting("NDR_ACTION_ATTEMPTS", env),
		backoffMs: setting("NDR_ACTION_BACKOFF_MS", env),
	};
}

/**
 * Checks a DEFER_DLV date against the courier's window: after today (IST) and
 * at most {@link DEFER_WINDOW_DAYS} days after the IST day of
 * `first_pending_at` (the case's first failed delivery, ISO-8601).
 * @throws ApiError 400 `validation_failed` with one `deferred_date: …` detail naming the allowed range
 */
export function checkDeferWindow(
	deferred_date: string,
	first_pending_at: string,
	now: Date = new Date(),
): void {
	const today = istDay(now);
	const last = addDays(istDay(first_pending_at), DEFER_WINDOW_DAYS);
	if (deferred_date <= today)
		throw validationFailed([`deferred_date: must be after today (${today}, India time)`]);
	if (deferred_date > last) {
		throw validationFailed([
			`deferred_date: must be at most ${DEFER_WINDOW_DAYS} days after the first failed delivery (on or before ${last})`,
		]);
	}
}

/** The act's details for the adapter (the DEFER_DLV date, the EDIT_DETAILS phone / address). */
function detailsOf(input: NdrActInput): NdrActionDetails {
	return {
		...(input.deferred_date ? { deferred_date: input.deferred_date } : {}),
		...(input.phone ? { phone: input.phone } : {}),
		...(input.address ? { address: input.address } : {}),
	};
}

/** Options of {@link sendNdrAction}. */
export interface SendNdrOptions {
	/** the present instant (the DEFER_DLV "after today"); default the clock */
	now?: Date;
	/** options of the `rates.getCourier` call (timeout); `unavailable` is always `ndr_unavailable` */
	callOptions?: CallOptions;
}

/**
 * Sends the merchant's NDR act to the shipment's courier (§4.2): checks the
 * DEFER_DLV window first ({@link checkDeferWindow}, no courier call when out
 * of it), finds the courier (`rates.getCourier` → `adapterFor`) and calls its
 * adapter's `ndrAction` under the NDR retry policy (module doc).
 * @param req.awb_number the shipment's AWB; `logistic_id` its courier;
 *   `input` the parsed body (./act-input.ts); `first_pending_at` ISO-8601 of
 *   the case's first failed delivery
 * @returns the courier's request id (Delhivery: the upload id, `UPL…`) and
 *   `polls`: whether the courier decides the act later and its adapter can be
 *   asked the outcome (`ndrActionStatus`; then ./act-status.ts polls it)
 * @throws ApiError 400 `validation_failed` (DEFER_DLV date out of the window);
 *   422 `reattempt_failed` with the courier's words (refused, or a courier
 *   with no integration here); 503 `ndr_unavailable` (rates or the courier
 *   unreachable after the retries)
 */
export async function sendNdrAction(
	via: Caller,
	req: { awb_number: string; logistic_id: number; input: NdrActInput; first_pending_at: string },
	opts: SendNdrOptions = {},
): Promise<{ request_id: string; polls: boolean }> {
	const { input } = req;
	if (input.ndr_act === "DEFER_DLV")
		checkDeferWindow(input.deferred_date ?? "", req.first_pending_at, opts.now ?? new Date());
	const courier = await call(
		via,
		"rates.getCourier",
		{ logistic_id: req.logistic_id },
		{ ...opts.callOptions, unavailable: "ndr_unavailable" },
	);
	let adapter: CourierAdapter | null = null;
	try {
		adapter = courier && adapterFor(courier);
	} catch {
		/* no integration */
	}
	const name = courier?.logistic_name ?? `courier ${req.logistic_id}`;
	if (!adapter) {
		throw fail("reattempt_failed", { courier: name, awb: req.awb_number });
	}
	const ndr = adapter.ndrAction.bind(adapter);
	const { attempts, backoffMs } = ndrRetryPolicy();
	const details = detailsOf(input);
	try {
		const polls = typeof adapter.ndrActionStatus === "function";
		const sent = await pRetry(() => ndr(req.awb_number, input.ndr_act, details), {
			retries: attempts - 1,
			factor: 2,
			minTimeout: backoffMs,
			randomize: true,
			maxRetryTime: NDR_RETRY_WINDOW_MS,
			shouldRetry: ({ error }) => error instanceof CourierUnavailable,
		});
		return { request_id: sent.request_id, polls };
	} catch (err) {
		if (err instanceof CourierRefused) throw fail("reattempt_failed", { refused: err.message });
		throw fail("ndr_unavailable", name, input.ndr_act, req.awb_number);
	}
}
