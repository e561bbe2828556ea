/**
 * The merchant's requests on NDR cases behind the `ndr` actions (issue 9;
 * spec §2.10, §4.2 `POST /v1/shipping/ndr`, §4.6, §7; docs/decisions/0038-ndr-cases.md):
 * a page of the list, the counts, a comment, and an act sent to the courier.
 * Plain functions over {@link NdrDeps}, called with input the service has
 * already parsed (./list.ts, ./act-input.ts); SQL in ./store.ts.
 */
import type { Context } from "moleculer";
import {
	type CallMeta,
	call,
	type MessageView,
	type NdrActAnswer,
	type NdrActInput,
	type NdrComment,
	type NdrCounts,
	type NdrPage,
} from "../contracts";
import type { AuthUser } from "../platform/auth";
import { errorBodyOf, fail, validationFailed } from "../platform/errors";
import { recordSentAction } from "./act-status";
import { sendNdrAction } from "./courier-action";
import { messageOf, type NdrDeps } from "./deps";
import { commentOf, countsOf, type NdrListQuery, ndrOrderNotFound, nextCursorOf, rowOf } from "./list";
import {
	countCases,
	insertComment,
	latestCaseOfOrder,
	listCases,
	openCaseOfOrder,
	recordAction,
} from "./store";

/** Courier errors of `sendNdrAction` that are recorded as a failed action (input errors are not). */
const COURIER_ERRORS = new Set(["reattempt_failed", "ndr_unavailable"]);

/**
 * One page of `GET /v1/ndr` for account `sender` and parsed query `q`:
 * the tab's cases newest first (`q.limit` of them; one more is read to know
 * whether a next page exists) and the signed cursor of the next page.
 */
export async function listPage(deps: NdrDeps, sender: number, q: NdrListQuery): Promise<NdrPage> {
	const rows = await listCases(deps.db, {
		sender_id: sender,
		tab: q.tab,
		awb_number: q.awb_number,
		from: q.from,
		before_id: q.before_id,
		take: q.limit + 1,
	});
	const more = rows.length > q.limit;
	const page = rows.slice(0, q.limit);
	const data = page.map((r) => rowOf(r, deps.settings.maxAttempts));
	const messages = await buyerMessages(
		deps,
		sender,
		data.map((r) => r.awb_number),
	);
	for (const r of data) {
		const m = messages[r.awb_number];
		if (m)
			r.notification = {
				channel: m.channel,
				template: m.event,
				status: m.status,
				provider: m.provider,
				recipient: m.recipient,
				sent_at: m.sent_at,
				delivered_at: m.delivered_at,
				failed_at: m.failed_at,
				error: m.error,
				created_at: m.created_at,
			};
	}
	return {
		data,
		pagination: {
			mode: "cursor",
			limit: q.limit,
			nextCursor: nextCursorOf(sender, q, page[page.length - 1]?.id, more),
		},
	};
}

/**
 * The newest `failed_delivery` buyer message of each AWB (`notifications.ndrMessages`, 1 s);
 * {} when the notifications service cannot answer (the rows keep what ndr recorded, if anything).
 */
async function buyerMessages(
	deps: NdrDeps,
	sender_id: number,
	awb_numbers: string[],
): Promise<Record<string, MessageView>> {
	if (awb_numbers.length === 0) return {};
	try {
		return await call(
			deps.broker,
			"notifications.ndrMessages",
			{ sender_id, awb_numbers },
			{ timeout: 1000 },
		);
	} catch (err) {
		deps.logger.warn(`ndr list: buyer messages not read (${messageOf(err)})`);
		return {};
	}
}

/** `GET /v1/ndr/counts`: account `sender`'s cases per tab (no filters). */
export async function countsFor(deps: NdrDeps, sender: number): Promise<NdrCounts> {
	return countsOf(await countCases(deps.db, sender));
}

/**
 * Puts comment `text` (already trimmed and checked) by `user` on the newest
 * NDR case (open or closed) of order `order_id` of account `sender`.
 * → the stored comment. Errors: 404 `order not found` (no NDR case for that
 * order on the account: missing and another account's are the same answer).
 */
export async function addComment(
	deps: NdrDeps,
	sender: number,
	user: AuthUser,
	order_id: number,
	text: string,
): Promise<NdrComment> {
	const c = await latestCaseOfOrder(deps.db, sender, order_id);
	if (!c) throw ndrOrderNotFound();
	const row = await insertComment(deps.db, {
		case_id: c.id,
		sender_id: sender,
		order_id,
		comment: text,
		author: user.sub,
		role: user.role,
	});
	return commentOf(row, c.awb_number);
}

/** Who asks for an act: the merchant (`actor` its token's `sub`) or the buyer on the tracking page. */
export interface ActRequester {
	by: "merchant" | "buyer";
	actor: string;
}

/**
 * Sends an act `input` on the open case of its order to the courier
 * (lib/ndr/courier-action.ts, with the NDR retry policy) and records it by
 * `who` (the merchant's `user.sub`, or the buyer: issue 29): `sent` with the courier's request id, or `failed` with
 * the courier's error (then rethrown); at a courier that decides later the
 * first status poll is scheduled. → {@link NdrActAnswer}.
 * Errors: 404 `order not found`; 409 `no_open_ndr`, `ndr_attempts_exhausted`;
 * 400 `validation_failed` (`logistic_id` not the shipment's courier, a
 * DEFER_DLV date outside the window); 422 `reattempt_failed`; 503
 * `ndr_unavailable`, `service_unavailable`.
 */
export async function requestAct(
	deps: NdrDeps,
	ctx: Context<unknown, CallMeta>,
	sender: number,
	who: ActRequester,
	input: NdrActInput,
): Promise<NdrActAnswer> {
	const c = await openCaseOfOrder(deps.db, sender, input.order_id);
	if (!c) {
		const order = await call(
			ctx,
			"intake.getOrder",
			{ sender_id: sender, order_id: input.order_id },
			deps.callOptions(),
		);
		if (!order) throw fail("order not found");
		throw fail("no_open_ndr", input.order_id);
	}
	if (c.logistic_id !== input.logistic_id)
		throw validationFailed([`logistic_id: the shipment is with courier ${c.logistic_id}`]);
	if (c.attempts >= deps.settings.maxAttempts) {
		throw fail("ndr_attempts_exhausted", c.attempts, c.awb_number);
	}
	const { order_id, logistic_id, ndr_act, ...details } = input;
	const base = {
		case_id: c.id,
		sender_id: sender,
		order_id,
		act: ndr_act,
		by: who.by,
		actor: who.actor,
		details,
		attempt_no: c.attempts,
	};
	let request_id: string;
	let polls: boolean;
	try {
		({ request_id, polls } = await sendNdrAction(
			ctx,
			{
				awb_number: c.awb_number,
				logistic_id,
				input,
				first_pending_at: c.first_pending_at.toISOString(),
			},
			{ callOptions: deps.callOptions() },
		));
	} catch (err) {
		const body = errorBodyOf(err)?.body;
		if (body && COURIER_ERRORS.has(String(body.error))) {
			await recordAction(deps.db, {
				...base,
				status: "failed",
				request_id: null,
				error_code: String(body.error),
				error_message: String(body.message ?? ""),
			});
		}
		throw err;
	}
	await recordSentAction(deps, base, request_id, polls);
	return {
		status: "requested",
		awb: c.awb_number,
		forward_id: `bk_${c.attempt_id}`,
		order_id,
		ndr_act,
		request_id,
	};
}
