/**
 * The `billing` service (issue 27; docs/decisions/0101-billing-service.md;
 * docs/ARCHITECTURE.md §1): owns every rupee of an account in the `billing`
 * schema — today the wallet ledger (the charge of each booked attempt, the
 * refund of each cancelled one, recorded by booking and delivered through
 * booking's outbox, each once), the balances kept with it, the credit
 * limit booking enforces (mirrored for the wallet), and the COD money of
 * each shipment (its `cod_status` from the `shipment.status_changed`
 * channel, group `billing`; the couriers' remittance files reconciled line
 * by line), the payouts, and weight discrepancies (couriers' weight files
 * reconciled, the extra charge held, accepted, disputed with images,
 * resolved by ops, auto-accepted after 7 days; merchant events from its
 * `billing.event_outbox`). Serves `GET /v1/wallet`, `/v1/remittances*`,
 * `/v1/weight-discrepancies*` and its ops routes.
 *
 * Handlers parse and answer; the work is in lib/billing/operations.ts over
 * `BillingDeps`, SQL in lib/billing/store.ts.
 */

import type { Readable } from "node:stream";
import { applyStatusChange, codStatusOf } from "../lib/billing/cod";
import type { BillingDeps } from "../lib/billing/deps";
import {
	acceptDiscrepancy,
	autoAccept,
	discrepancyDetail,
	discrepancyList,
	disputeDiscrepancy,
	disputeImage,
	reconcileWeights,
	resolveDiscrepancy,
	weightTolerance,
} from "../lib/billing/discrepancies";
import { BILLING_MIGRATIONS } from "../lib/billing/migrations";
import { mirrorCreditLimit, recordMovements, walletFor } from "../lib/billing/operations";
import {
	payoutCsv,
	payoutDetail,
	payoutList,
	payoutPaid,
	payoutSettings,
	runCycle,
	summaryOf,
	updatePayoutSettings,
} from "../lib/billing/payouts";
import { relayOutbox } from "../lib/billing/relay";
import { reconcileRemittance } from "../lib/billing/remittance";
import { parseWalletQuery } from "../lib/billing/wallet";
import { SHIPMENT_STATUS_CHANNEL } from "../lib/contracts";
import {
	BILLING_ROUTES,
	PAYOUT_CYCLE_BODY,
	PAYOUT_PAID_BODY,
	PAYOUT_SETTINGS_BODY,
	REMITTANCE_BODY,
	RESOLVE_BODY,
	TOLERANCE_BODY,
	WEIGHT_REPORT_BODY,
} from "../lib/contracts/http/billing";
import { senderOf } from "../lib/platform/auth";
import { setting } from "../lib/platform/config";
import { cursorSecretConfigured } from "../lib/platform/cursor";
import { EventOutboxRelay } from "../lib/platform/merchant-events-outbox";
import { defineService } from "../lib/platform/service";
import { istDay } from "../lib/shared/ist-date";
import { DbMixin } from "../mixins/db.mixin";

/** State set in `started`. */
interface BillingVars {
	/** the payout check (BILLING_PAYOUT_CHECK_MS): runs today's cycle on cycle days */
	payoutTimer: NodeJS.Timeout | undefined;
	/** a payout check in progress (never two at once in one pod) */
	checking: Promise<unknown> | undefined;
	/** relays `billing.event_outbox` (weight_discrepancy.opened, cod.exception, remittance.paid) to the merchant events channel */
	eventRelay: EventOutboxRelay | undefined;
	/** the `billing.outbox` relay timer (BILLING_RELAY_MS): COD statuses to intake */
	relayTimer: NodeJS.Timeout | undefined;
	/** a relay run in progress (never two at once in one pod) */
	relaying: Promise<unknown> | undefined;
	/** set while stopping: a relay run ends after its round */
	stopping: boolean;
}

export default defineService<BillingVars>()({
	name: "billing",
	mixins: [DbMixin("billing", BILLING_MIGRATIONS)],
	methods: {
		/** What lib/billing needs of this service. */
		deps(): BillingDeps {
			return { db: this.db, logger: this.logger };
		},

		/** One relay run of `billing.outbox` (./lib/billing/relay.ts); skipped while the previous one runs. */
		relayTick(): void {
			if (this.relaying) return;
			this.relaying = relayOutbox(this.deps(), this.broker, () => this.stopping)
				.catch((err: Error) => this.logger.warn(`billing outbox relay: ${err.message}`))
				.finally(() => {
					this.relaying = undefined;
				});
		},

		/**
		 * The periodic check (BILLING_PAYOUT_CHECK_MS): weight discrepancies past
		 * their response window auto-accepted, and today's payout cycle (IST)
		 * for the accounts whose cycle days include today (idempotent); skipped
		 * while the previous check runs.
		 */
		payoutCheck(): void {
			if (this.checking) return;
			const today = istDay();
			this.checking = autoAccept(this.deps())
				.catch((err: Error) => this.logger.warn(`weight discrepancy auto-accept: ${err.message}`))
				// every day: each account's own cycle days decide who is paid today
				.then(() => runCycle(this.deps(), today))
				.catch((err: Error) => this.logger.warn(`payout cycle ${today}: ${err.message}`))
				.finally(() => {
					this.checking = undefined;
				});
		},
	},
	actions: {
		/**
		 * GET /v1/wallet (ours; docs/decisions/0020-wallet.md; §2.12, §4.8): the
		 * caller's post-paid wallet. Query `limit` (integer 1–1000, default 20),
		 * `cursor` (a `nextCursor` of this route). Answers 200
		 * `{balance, credit_limit, data:[{id, kind:"charge"|"refund", amount, order_id, attempt_id,
		 * awb_number, note, created_at}], pagination:{mode:"cursor", limit,
		 * nextCursor}}`: money in rupees (balance = refunds − charges, negative =
		 * owed; credit_limit null = none), movements newest first, `created_at`
		 * when booking recorded the movement (UTC), `nextCursor` null on the last
		 * page. Only the caller's account. A movement appears once booking's
		 * outbox delivered it (moments after the booking or cancel).
		 *
		 * Access: every authenticated role (read-only roles may read).
		 *
		 * Errors: 400 `validation_failed` details `limit: must be an integer from 1 to 1000`;
		 * 400 `cursor: unrecognised shape` (not a cursor this route issued to this account).
		 */
		wallet: {
			access: BILLING_ROUTES["billing.wallet"].access,
			async handler(ctx) {
				const sender = senderOf(ctx);
				return walletFor(this.deps(), sender, parseWalletQuery(ctx.params, sender));
			},
		},

		/**
		 * GET /v1/remittances (ours; docs/decisions/0104-cod-payouts.md): the
		 * caller's COD payouts, newest first. Query `limit` (1–1000, default
		 * 20), `status` (`scheduled` | `paid`), `cursor`. 200 `{data: Payout[],
		 * pagination}` (rupees; cycle dates IST). Access: every authenticated role.
		 * Errors: 400 `validation_failed` (limit, status); 400 `cursor: unrecognised shape`.
		 */
		remittances: {
			access: BILLING_ROUTES["billing.remittances"].access,
			async handler(ctx) {
				return payoutList(this.deps(), senderOf(ctx), ctx.params);
			},
		},

		/**
		 * GET /v1/remittances/summary (ours): where the caller's COD money is —
		 * collected, remitted, in scheduled payouts — and the next cycle day
		 * (IST) with what it would pay now (rupees). Access: every authenticated role.
		 */
		remittanceSummary: {
			access: BILLING_ROUTES["billing.remittanceSummary"].access,
			async handler(ctx) {
				return summaryOf(this.deps(), senderOf(ctx));
			},
		},

		/**
		 * GET /v1/remittances/settings (ours; docs/decisions/0104-cod-payouts.md):
		 * the caller's payout settings {@link PayoutSettings} (defaults when never
		 * set). Access: every authenticated role.
		 */
		remittanceSettings: {
			access: BILLING_ROUTES["billing.remittanceSettings"].access,
			async handler(ctx) {
				return payoutSettings(this.deps(), senderOf(ctx));
			},
		},

		/**
		 * PUT /v1/remittances/settings (capability `billing.write`): `{cycle_days?,
		 * delay_days?, early_cod?, settle_charges_from_cod?}` replaces the caller's
		 * payout settings (left out: default). 200 {@link PayoutSettings}.
		 * Errors: 400 `validation_failed`; 403 `Read-only role` / `forbidden`.
		 */
		setRemittanceSettings: {
			access: BILLING_ROUTES["billing.setRemittanceSettings"].access,
			params: PAYOUT_SETTINGS_BODY,
			async handler(ctx) {
				return updatePayoutSettings(this.deps(), senderOf(ctx), ctx.params);
			},
		},

		/**
		 * GET /v1/remittances/{id} (ours): one of the caller's payouts with its
		 * shipments (rupees). Access: every authenticated role.
		 * Errors: 400 `validation_failed` (id); 404 `remittance_not_found` (missing and another account's alike).
		 */
		remittance: {
			access: BILLING_ROUTES["billing.remittance"].access,
			async handler(ctx) {
				return payoutDetail(this.deps(), senderOf(ctx), ctx.params.id);
			},
		},

		/**
		 * GET /v1/remittances/{id}/export.csv (ours): the caller's payout, one
		 * CSV line per shipment (lib/billing/payouts.ts `payoutCsv`: rupees, UTC,
		 * formula-safe cells, BOM, CRLF), as an attachment. Access: every
		 * authenticated role.
		 * Errors: 400 `validation_failed` (id); 404 `remittance_not_found`.
		 */
		remittanceCsv: {
			access: BILLING_ROUTES["billing.remittanceCsv"].access,
			async handler(ctx) {
				const out = await payoutCsv(this.deps(), senderOf(ctx), ctx.params.id);
				ctx.meta.$responseType = "text/csv; charset=utf-8";
				ctx.meta.$responseHeaders = {
					"Content-Disposition": `attachment; filename="${out.file_name}"`,
					"Cache-Control": "private, no-store",
				};
				return out.csv;
			},
		},

		/**
		 * POST /v1/ops/payout-cycles (ops token; also the payout check): makes
		 * the payouts of `{cycle_date?}` (IST `YYYY-MM-DD`, default today);
		 * idempotent per account and cycle. 200 {@link PayoutCycleResult} (rupees).
		 * Errors: 400 `validation_failed` (cycle_date).
		 */
		runPayoutCycle: {
			params: PAYOUT_CYCLE_BODY,
			async handler(ctx) {
				return runCycle(this.deps(), ctx.params.cycle_date);
			},
		},

		/**
		 * POST /v1/ops/remittances/{id}/paid (ops token): `{utr}` records the
		 * bank transfer; the payout becomes `paid`, its shipments' `cod_status`
		 * `paid`; the same UTR again answers it unchanged. 200 the payout (rupees).
		 * Errors: 400 `validation_failed` (id, utr); 404 `remittance_not_found`; 409 `payout_already_paid`.
		 */
		markPayoutPaid: {
			params: { id: { type: "string", min: 1, max: 20 }, ...PAYOUT_PAID_BODY },
			async handler(ctx) {
				return payoutPaid(this.deps(), ctx.params.id, ctx.params.utr);
			},
		},

		/**
		 * GET /v1/weight-discrepancies (ours; docs/decisions/0105-weight-discrepancies.md):
		 * the caller's discrepancies, newest first. Query `limit` (1–1000,
		 * default 20), `status`, `from` / `to` (IST days), `awb_number`, `cursor`.
		 * 200 {@link DiscrepancyPage} (rupees, kg, cm, UTC). Access: every authenticated role.
		 * Errors: 400 `validation_failed`; 400 `cursor: unrecognised shape`.
		 */
		discrepancies: {
			access: BILLING_ROUTES["billing.discrepancies"].access,
			async handler(ctx) {
				return discrepancyList(this.deps(), senderOf(ctx), ctx.params);
			},
		},

		/**
		 * GET /v1/weight-discrepancies/{id}: one of the caller's discrepancies.
		 * Errors: 400 `validation_failed` (id); 404 `discrepancy_not_found`.
		 */
		discrepancy: {
			access: BILLING_ROUTES["billing.discrepancy"].access,
			async handler(ctx) {
				return discrepancyDetail(this.deps(), senderOf(ctx), ctx.params.id);
			},
		},

		/**
		 * GET /v1/weight-discrepancies/{id}/images/{n}: image `n` of the caller's
		 * dispute (JPEG or PNG bytes, no metadata), private, not cached.
		 * Errors: 400 `validation_failed` (id, n); 404 `discrepancy_not_found`.
		 */
		discrepancyImage: {
			access: BILLING_ROUTES["billing.discrepancyImage"].access,
			async handler(ctx) {
				const img = await disputeImage(this.deps(), senderOf(ctx), ctx.params.id, ctx.params.n);
				ctx.meta.$responseType = img.content_type;
				ctx.meta.$responseHeaders = {
					"Cache-Control": "private, no-store",
					"X-Content-Type-Options": "nosniff",
				};
				return img.bytes;
			},
		},

		/**
		 * POST /v1/weight-discrepancies/{id}/accept (capability `billing.write`):
		 * the caller accepts the courier's weight; the hold stays as the charge.
		 * Errors: 400 `validation_failed`; 403 `Read-only role` / `forbidden`; 404 `discrepancy_not_found`;
		 * 409 `discrepancy_not_open` (`status`).
		 */
		acceptDiscrepancy: {
			access: BILLING_ROUTES["billing.acceptDiscrepancy"].access,
			async handler(ctx) {
				return acceptDiscrepancy(this.deps(), senderOf(ctx), ctx.params.id);
			},
		},

		/**
		 * POST /v1/weight-discrepancies/{id}/dispute (capability `billing.write`;
		 * the gateway's `upload` route: `ctx.stream` is the raw multipart body,
		 * params `{query, content_type, path:{id}}`): `reason` and 1–5 `images`.
		 * Errors: 400 `validation_failed` (id), `invalid_dispute`; 413 `image_too_large`; 403 `Read-only role`;
		 * 404 `discrepancy_not_found`; 409 `discrepancy_not_open`.
		 */
		disputeDiscrepancy: {
			// streams up to 5 images of 5 MB from the gateway, then decodes each
			timeout: 60_000,
			access: BILLING_ROUTES["billing.disputeDiscrepancy"].access,
			async handler(ctx) {
				return disputeDiscrepancy(
					this.deps(),
					senderOf(ctx),
					ctx.params,
					(ctx.stream as Readable | null) ?? null,
				);
			},
		},

		/**
		 * POST /v1/ops/weight-discrepancies/{id}/resolve (ops token) `{outcome: "won"|"lost", note?}`.
		 * Errors: 400 `validation_failed`; 404 `discrepancy_not_found`; 409 `discrepancy_not_disputed`.
		 */
		resolveDiscrepancy: {
			params: { id: { type: "string", min: 1, max: 20 }, ...RESOLVE_BODY },
			async handler(ctx) {
				return resolveDiscrepancy(this.deps(), ctx.params.id, ctx.params.outcome, ctx.params.note ?? null);
			},
		},

		/**
		 * GET /v1/ops/weight-discrepancies/{id}/images/{n} (ops token): image `n` of any account's dispute.
		 * Errors: 400 `validation_failed`; 404 `discrepancy_not_found`.
		 */
		opsDiscrepancyImage: {
			params: { id: { type: "string", min: 1, max: 20 }, n: { type: "string", min: 1, max: 20 } },
			async handler(ctx) {
				const img = await disputeImage(this.deps(), null, ctx.params.id, ctx.params.n);
				ctx.meta.$responseType = img.content_type;
				ctx.meta.$responseHeaders = {
					"Cache-Control": "private, no-store",
					"X-Content-Type-Options": "nosniff",
				};
				return img.bytes;
			},
		},

		/**
		 * POST /v1/ops/weight-reports (ops token; also internal): a courier's
		 * weight file `{csv, logistic_id?}` (lib/billing/discrepancies.ts): opens
		 * the discrepancies beyond tolerance. 200 {@link WeightReport} (rupees).
		 * Errors: 400 `validation_failed`, `invalid_weight_file`; 503 when intake, warehouses or rates
		 * cannot be asked (nothing recorded; send the file again).
		 */
		reconcileWeights: {
			params: WEIGHT_REPORT_BODY,
			async handler(ctx) {
				const { csv, logistic_id } = ctx.params;
				return reconcileWeights(
					this.deps(),
					ctx,
					csv,
					logistic_id === undefined ? null : Number(logistic_id),
				);
			},
		},

		/**
		 * PUT /v1/ops/accounts/{sender_id}/weight-tolerance (ops token) `{grams, percent}`.
		 * Errors: 400 `validation_failed`.
		 */
		setWeightTolerance: {
			params: { sender_id: { type: "string", min: 1, max: 20 }, ...TOLERANCE_BODY },
			async handler(ctx) {
				return weightTolerance(this.deps(), ctx.params.sender_id, ctx.params.grams, ctx.params.percent);
			},
		},

		/**
		 * Internal (the periodic check; tests): open discrepancies whose
		 * response window ended at `now` (ISO-8601, default now) become `auto_accepted`.
		 */
		autoAcceptDiscrepancies: {
			params: { now: { type: "string", optional: true } },
			async handler(ctx) {
				const now = ctx.params.now ? new Date(ctx.params.now) : new Date();
				return autoAccept(this.deps(), Number.isNaN(now.getTime()) ? new Date() : now);
			},
		},

		/**
		 * Internal (booking's outbox kind `ledger_entry`): records movements
		 * `{entries: LedgerEntryEvent[]}` (paise, 1–500), each once (idempotent
		 * on `(attempt_id, kind)`), with the balances in the same statement.
		 * Answers `{recorded}`: how many were new (0 for a redelivery).
		 * Errors: a malformed entry (not integer paise, unknown kind) throws; the outbox redelivers it.
		 */
		recordEntries: {
			params: {
				entries: {
					type: "array",
					min: 1,
					max: 500,
					items: {
						type: "object",
						props: {
							sender_id: { type: "number", integer: true, positive: true },
							attempt_id: { type: "number", integer: true, positive: true },
							order_id: { type: "number", integer: true, positive: true },
							kind: { type: "enum", values: ["charge", "refund"] },
							amount_paise: { type: "number", integer: true, min: 0 },
							awb_number: { type: "string", nullable: true },
							note: { type: "string", nullable: true },
							occurred_at: { type: "string" },
						},
					},
				},
			},
			async handler(ctx) {
				return recordMovements(this.deps(), ctx.params.entries);
			},
		},

		/**
		 * Internal (booking's outbox kind `credit_limit`): mirrors an account's
		 * credit limit `{sender_id, credit_limit_paise (null = none), version}`
		 * when `version` is newer than the stored one. Answers `{applied}`.
		 */
		applyCreditLimit: {
			params: {
				sender_id: { type: "number", integer: true, positive: true },
				credit_limit_paise: { type: "number", integer: true, min: 0, nullable: true },
				version: { type: "number", integer: true, min: 0 },
			},
			async handler(ctx) {
				return mirrorCreditLimit(this.deps(), ctx.params);
			},
		},

		/**
		 * Internal (intake's order detail, `GET /v1/orders/{id}`): the COD money
		 * of the sender's shipment `{sender_id, awb_number}`: `{awb_number,
		 * cod_status, cod_amount (rupees), collected_at (UTC), remittance:
		 * {reference, remitted_on (YYYY-MM-DD), amount (rupees)} | null}`, or
		 * null when billing holds no COD shipment of that sender with that AWB
		 * (prepaid, unknown, another sender's).
		 */
		codStatus: {
			params: {
				sender_id: { type: "number", integer: true, positive: true, convert: true },
				awb_number: { type: "string", min: 1, max: 64 },
			},
			async handler(ctx) {
				return codStatusOf(this.deps(), ctx.params.sender_id, ctx.params.awb_number);
			},
		},

		/**
		 * POST /v1/ops/cod-remittances (ops token, docs/decisions/0103-ops-routes.md; also
		 * called internally): a courier's COD remittance file `{csv, logistic_id?}`
		 * (CSV `awb_number,amount,remittance_reference,remittance_date`: rupees
		 * with ≤ 2 decimals, `YYYY-MM-DD`; at most 8 MB) reconciled line by line
		 * (lib/billing/remittance.ts): a line paying a collected COD shipment
		 * with its exact amount makes it `remitted`; any other line is a
		 * reconciliation exception (`amount_mismatch`, `unknown_awb`,
		 * `not_delivered`, `duplicate`, `invalid_line`). One transaction; the same
		 * file again answers its stored outcome (`duplicate_file: true`).
		 * Answers {@link RemittanceReport} (rupees).
		 * Errors: 400 `validation_failed` (body); 400 `invalid_remittance_file` (header lacks a column,
		 * unreadable CSV, larger than 8 MB).
		 */
		reconcileRemittance: {
			params: REMITTANCE_BODY,
			async handler(ctx) {
				const { csv, logistic_id } = ctx.params;
				// a number once validated (`convert: true`)
				return reconcileRemittance(this.deps(), csv, logistic_id === undefined ? null : Number(logistic_id));
			},
		},
	},
	channels: {
		[SHIPMENT_STATUS_CHANNEL]: {
			group: "billing",
			/** One status change (at-least-once; lib/billing/cod.ts); a throw makes the channel redeliver it. */
			async handler(payload) {
				await applyStatusChange(this.deps(), this.broker, payload);
			},
		},
	},
	created() {
		this.payoutTimer = undefined;
		this.checking = undefined;
		this.eventRelay = undefined;
		this.relayTimer = undefined;
		this.relaying = undefined;
		this.stopping = false;
	},
	/**
	 * Refuses to run without a cursor secret (wallet and payout pages are signed; docs/ARCHITECTURE.md §2: fail
	 * loudly at start); starts the payout check (BILLING_PAYOUT_CHECK_MS).
	 */
	async started() {
		if (!cursorSecretConfigured()) {
			throw new Error("billing: CURSOR_SECRET or LABEL_LINK_SECRET is required (signed page cursors)");
		}
		this.payoutTimer = setInterval(() => this.payoutCheck(), setting("BILLING_PAYOUT_CHECK_MS"));
		this.payoutTimer.unref();
		this.eventRelay = new EventOutboxRelay(this.db, "billing", this.broker, this.logger);
		await this.eventRelay.start();
		this.stopping = false;
		this.relayTimer = setInterval(() => this.relayTick(), setting("BILLING_RELAY_MS"));
		this.relayTimer.unref();
	},
	async stopped() {
		this.stopping = true;
		if (this.relayTimer) clearInterval(this.relayTimer);
		await this.relaying;
		if (this.payoutTimer) clearInterval(this.payoutTimer);
		await this.eventRelay?.stop();
		await this.checking;
	},
});
