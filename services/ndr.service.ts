/**
 * `ndr` service: failed deliveries (issue 9; spec §2.10, §4.2 `POST
 * /v1/shipping/ndr`, §4.6, §7; DOMAIN.md "Tracking and NDR"; decisions in
 * docs/decisions/0038-ndr-cases.md). Owns the PostgreSQL schema `ndr` (cases,
 * failed attempts, actions, comments; lib/ndr/migrations.ts).
 *
 * - Cases come from the durable channel `shipment.status_changed` (consumer
 *   group `ndr`, at-least-once; lib/ndr/cases.ts): `undelivered` opens the
 *   shipment's one open case or counts a new attempt on it; `delivered`
 *   closes it in tab `delivered`, an RTO status in tab `rto`.
 * - Public (gateway): `ndr.list` — GET /v1/ndr; `ndr.counts` — GET
 *   /v1/ndr/counts; `ndr.comment` — POST /v1/ndr/{id}/comment; `ndr.act` —
 *   POST /v1/shipping/ndr (sent to the courier by lib/ndr/courier-action.ts).
 * - The deadline policy (lib/ndr/policy.ts) runs every `NDR_POLICY_MS` on
 *   each pod (cases leased with FOR UPDATE SKIP LOCKED) and on demand as ops
 *   action `ndr.tick {now?}` (the controllable clock of the tests).
 * - Worker `ndr.checkActStatus` {action_id, n} of BullMQ queue `ndr-act-status`
 *   (lib/ndr/act-status.ts): the courier's later decision on a sent act
 *   (Delhivery decides NDR uploads asynchronously) → action `accepted` /
 *   `refused` (a refused act puts the case back in `action_required`).
 * - The buyer's failed-delivery message is the notifications service's (issue
 *   29, docs/decisions/0109-buyer-messages.md): the list's `notification`
 *   comes from `notifications.ndrMessages` (lib/ndr/requests.ts).
 *
 * Handlers parse and answer; the work is in plain functions over `NdrDeps`
 * (lib/ndr/deps.ts, built by `deps()`): lib/ndr/requests.ts (list, counts,
 * comment, act), cases.ts, policy.ts, act-status.ts; SQL in lib/ndr/store.ts.
 */

import { type CallOptions, SHIPMENT_STATUS_CHANNEL } from "../lib/contracts";
import { NDR_ROUTES } from "../lib/contracts/http/ndr";
import { parseNdrActBody } from "../lib/ndr/act-input";
import { ACT_STATUS_QUEUE, checkActStatus } from "../lib/ndr/act-status";
import { buyerAnswer, buyerCase } from "../lib/ndr/buyer";
import { applyStatusEvent } from "../lib/ndr/cases";
import { messageOf, type NdrDeps } from "../lib/ndr/deps";
import { parseComment, parseNdrListQuery, parseNdrOrderId } from "../lib/ndr/list";
import { NDR_MIGRATIONS } from "../lib/ndr/migrations";
import { policyPass } from "../lib/ndr/policy";
import { addComment, countsFor, listPage, requestAct } from "../lib/ndr/requests";
import { type NdrSettings, ndrSettings } from "../lib/ndr/settings";
import { type AuthUser, senderOf } from "../lib/platform/auth";
import { cursorSecretConfigured } from "../lib/platform/cursor";
import { type UnreachableCode, validationFailed } from "../lib/platform/errors";
import { EventOutboxRelay } from "../lib/platform/merchant-events-outbox";
import { defineService } from "../lib/platform/service";
import { DbMixin } from "../mixins/db.mixin";
import { WorkerMixin } from "../mixins/worker.mixin";

/** State set in `created` / `started` (db comes from the DbMixin). */
interface NdrVars {
	/** relays `ndr.event_outbox` (ndr.opened / ndr.closed) to `merchant.events` (issue 11) */
	eventRelay: EventOutboxRelay | undefined;
	settings: NdrSettings;
	timer: NodeJS.Timeout | undefined;
	/** a timer pass in progress (a pass never overlaps the previous one of this pod) */
	passing: Promise<unknown> | undefined;
}

export default defineService<NdrVars>()({
	name: "ndr",
	mixins: [
		DbMixin("ndr", NDR_MIGRATIONS),
		WorkerMixin([{ queue: ACT_STATUS_QUEUE, action: "ndr.checkActStatus", concurrency: 4 }]),
	],
	methods: {
		/** Options of calls to other services: the configured timeout; failures become 503 `unavailable`. */
		callOptions(unavailable?: UnreachableCode | false): CallOptions {
			return { timeout: this.settings.callTimeoutMs, unavailable: unavailable ?? "service_unavailable" };
		},

		/** What lib/ndr needs of this service. */
		deps(): NdrDeps {
			return {
				db: this.db,
				broker: this.broker,
				settings: this.settings,
				logger: this.logger,
				callOptions: (u) => this.callOptions(u),
			};
		},

		/** The timer's policy pass (the clock's now); skipped while the previous one runs. */
		tick(): void {
			if (this.passing) return;
			this.passing = policyPass(this.deps(), this.broker, new Date())
				.catch((err) => this.logger.warn(`ndr policy pass: ${messageOf(err)}`))
				.finally(() => {
					this.passing = undefined;
				});
		},
	},
	actions: {
		/**
		 * GET /v1/ndr (spec §4.6, §2.10, §2.12, §4.8). Query: `tab` (required,
		 * no default: `action_required`, `action_requested`, `delivered`, `rto`),
		 * `limit` (1–1000, default 50), `cursor`, `awb_number` (exact),
		 * `date_from` (`YYYY-MM-DD`, real calendar day, IST, inclusive, on the
		 * first failed attempt). 200 {@link NdrPage}: the caller's cases of the
		 * tab, newest first, each the case plus `order_value` (rupees) and
		 * `notification` (row: lib/contracts/ndr.ts `NdrRow`). Access: any
		 * authenticated role.
		 * Errors: 400 `bad_tab` (message lists the tabs), `bad_date`,
		 * `validation_failed` (limit, awb_number), `cursor: unrecognised shape`.
		 */
		list: {
			access: NDR_ROUTES["ndr.list"].access,
			async handler(ctx) {
				const sender = senderOf(ctx);
				return listPage(this.deps(), sender, parseNdrListQuery(ctx.params, sender));
			},
		},

		/**
		 * GET /v1/ndr/counts (spec §4.6): 200 `{action_required,
		 * action_requested, delivered, rto}`, each the total `GET /v1/ndr`
		 * lists for that tab (no filters). Access: any authenticated role.
		 */
		counts: {
			access: NDR_ROUTES["ndr.counts"].access,
			async handler(ctx) {
				return countsFor(this.deps(), senderOf(ctx));
			},
		},

		/**
		 * POST /v1/ndr/{id}/comment (spec §4.6, §7, §8): `id` the order id;
		 * body `{comment}` (1–255 characters after trimming). The comment goes
		 * on the order's newest NDR case (open or closed). 201 {@link NdrComment}
		 * `{id, ndr_id, order_id, awb_number, comment, created_by,
		 * created_by_role, created_at}`.
		 * Access: capability `ndr.act` and `writes`: the read-only roles
		 * `merchant_finance`, `merchant_support` and `merchant_staff` get 403
		 * `{error:"Read-only role"}` before the capability is looked at
		 * (merchant_support holds `ndr.act`, §4.6 refuses it all the same).
		 * Errors: 400 `validation_failed` (`id`, `comment` not a string),
		 * `empty_comment`, `comment_too_long`; 404 `order not found` (no NDR
		 * case for that order on the caller's account: missing and another
		 * account's are the same answer).
		 */
		comment: {
			access: NDR_ROUTES["ndr.comment"].access,
			async handler(ctx) {
				const sender = senderOf(ctx);
				const order_id = parseNdrOrderId(ctx.params.id);
				const text = parseComment(ctx.params);
				const row = await addComment(this.deps(), sender, ctx.meta.user as AuthUser, order_id, text);
				ctx.meta.$statusCode = 201;
				return row;
			},
		},

		/**
		 * POST /v1/shipping/ndr (spec §4.2, §7). Body `{order_id, logistic_id,
		 * ndr_act (RE-ATTEMPT default, DEFER_DLV, EDIT_DETAILS), deferred_date?,
		 * phone?, address?}` (lib/ndr/act-input.ts). The order's open case is
		 * required; the act goes to the courier through its adapter with the NDR
		 * retry policy (lib/ndr/courier-action.ts), and is recorded (by the
		 * caller's `sub`, with the courier's request id or its error). The case
		 * moves to tab `action_requested`. At a courier that decides acts later
		 * (Delhivery) the outcome is then polled (`ndr.checkActStatus`). 200 {@link NdrActAnswer} `{status:
		 * "requested", awb, forward_id: "bk_<attempt id>", order_id, ndr_act,
		 * request_id}`.
		 * Access: `writes` (read-only roles 403 `Read-only role`: §5 rule 3
		 * calls accepting them a defect, as on booking). No capability.
		 * Errors: 400 `invalid_ndr_act`, `validation_failed` (body; `logistic_id`
		 * not the shipment's courier; a DEFER_DLV date outside the window);
		 * 404 `order not found` (no such order on the account); 409
		 * `no_open_ndr` (the order has no open NDR case), `ndr_attempts_exhausted`
		 * (the last attempt failed: the shipment goes RTO); 422
		 * `reattempt_failed` (the courier's words); 503 `ndr_unavailable`,
		 * `service_unavailable`.
		 */
		act: {
			// the courier's NDR call (5 s courier timeout, retried once; issue 12)
			timeout: 20_000,
			access: NDR_ROUTES["ndr.act"].access,
			async handler(ctx) {
				const sender = senderOf(ctx);
				const input = parseNdrActBody(ctx.params);
				return requestAct(
					this.deps(),
					ctx,
					sender,
					{ by: "merchant", actor: (ctx.meta.user as AuthUser).sub },
					input,
				);
			},
		},

		/**
		 * Worker of BullMQ queue `ndr-act-status` (lib/ndr/act-status.ts
		 * `checkActStatus`; at-least-once, idempotent): poll number `n` (from 0)
		 * of the courier's decision on sent action `action_id`. Accepted → the
		 * action `accepted`; refused (or an upload id the courier does not know)
		 * → `refused` with the courier's words and the case back in
		 * `action_required`; undecided or unreachable → the next poll (doubling
		 * delay from `NDR_ACT_POLL_MS`, at most 1 h apart, for 24 h). Answers
		 * {@link NdrActCheck} `{action_id, status, rescheduled}`. Throws only
		 * when the database or queue fails (the job is retried). Not aliased over HTTP.
		 */
		checkActStatus: {
			params: {
				action_id: { type: "number", integer: true, positive: true, convert: true },
				n: { type: "number", integer: true, min: 0, optional: true, convert: true },
			},
			async handler(ctx) {
				return checkActStatus(this.deps(), ctx, ctx.params.action_id, ctx.params.n ?? 0);
			},
		},

		/**
		 * Internal (the buyer's tracking page, issue 29; lib/ndr/buyer.ts):
		 * `{sender_id, awb_number}` → the AWB's live case as the buyer's page needs
		 * it ({@link NdrBuyerCase}), or null (none, or another account's). Not aliased.
		 */
		buyerCase: {
			params: {
				sender_id: { type: "number", integer: true, positive: true },
				awb_number: { type: "string", min: 1, max: 100 },
			},
			async handler(ctx) {
				return buyerCase(this.deps(), ctx.params.sender_id, ctx.params.awb_number);
			},
		},

		/**
		 * Internal (the tracking page's form, issue 29; lib/ndr/buyer.ts `buyerAnswer`): the
		 * buyer's answer to the latest failed attempt, applied as an action `by: buyer` (or kept
		 * for the merchant's approval). → the answer as kept on the case. Errors: 409
		 * `no_open_ndr`, `ndr_attempt_changed`; 400 `validation_failed`; 503 `ndr_unavailable`,
		 * `service_unavailable`. Not aliased.
		 */
		buyerAnswer: {
			timeout: 20_000,
			params: {
				sender_id: { type: "number", integer: true, positive: true },
				awb_number: { type: "string", min: 1, max: 100 },
				attempt_no: { type: "number", integer: true, positive: true },
				choice: { type: "enum", values: ["reattempt", "update", "decline"] },
				details: {
					type: "object",
					strict: "remove",
					props: {
						deferred_date: { type: "string", max: 10, optional: true },
						address_1: { type: "string", max: 255, optional: true },
						landmark: { type: "string", max: 255, optional: true },
						phone: { type: "string", max: 20, optional: true },
					},
				},
				apply: { type: "boolean" },
			},
			async handler(ctx) {
				return buyerAnswer(this.deps(), ctx, ctx.params);
			},
		},

		/**
		 * Ops / tests: one policy pass now (lib/ndr/policy.ts), as of `now`
		 * (ISO-8601; default the clock) → {@link NdrTickResult}
		 * `{reattempted, rto, failed}`. Not aliased over HTTP.
		 */
		tick: {
			params: { now: { type: "string", optional: true, min: 1, max: 64 } },
			async handler(ctx) {
				const now = ctx.params.now ? new Date(ctx.params.now) : new Date();
				if (Number.isNaN(now.getTime())) throw validationFailed(["now: must be an ISO-8601 time"]);
				return policyPass(this.deps(), ctx, now);
			},
		},
	},
	channels: {
		[SHIPMENT_STATUS_CHANNEL]: {
			group: "ndr",
			/** One status change (at-least-once; lib/ndr/cases.ts); a throw makes the channel redeliver it. */
			async handler(payload) {
				await applyStatusEvent(this.deps(), this.broker, payload);
			},
		},
	},
	created() {
		this.settings = ndrSettings();
		this.timer = undefined;
		this.passing = undefined;
	},
	/** Refuses to run without a cursor secret (list pages are signed); starts the policy timer. */
	async started() {
		if (!cursorSecretConfigured()) {
			throw new Error("ndr: CURSOR_SECRET or LABEL_LINK_SECRET is required (signed page cursors)");
		}
		this.timer = setInterval(() => this.tick(), this.settings.policyMs);
		this.eventRelay = new EventOutboxRelay(this.db, "ndr", this.broker, this.logger);
		await this.eventRelay.start();
	},
	async stopped() {
		if (this.timer) clearInterval(this.timer);
		this.timer = undefined;
		await this.passing;
		await this.eventRelay?.stop();
		this.eventRelay = undefined;
	},
});
