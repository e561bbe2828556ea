/**
 * documents: shipping labels (spec §4.4). Owns the `documents` schema
 * (`documents.labels`, lib/documents/store.ts).
 *
 * Implemented: `GET /v1/documents/label/{orderId}` (action `documents.label`),
 * the signed link `GET /v1/documents/label/t/{token}` (`documents.labelLink`,
 * same code path: lib/documents/operations.ts `labelFile`) and the internal `documents.labelInfo`.
 * Bulk labels (issue 8): `POST /v1/documents/label` (`documents.labels`,
 * lib/documents/bulk.ts): ONE document (lib/documents/label.ts
 * `createLabelDocument` + `drawLabelPage`, fonts embedded once) over
 * lib/documents/source.ts `loadBookedOrder` per order, the batch's
 * courier-issued labels from lib/documents/store.ts `courierLabelsOf`.
 * Courier-issued labels: captured at booking (`documents.captureCourierLabel`,
 * lib/documents/capture.ts), served as stored with their own media type.
 *
 * Manifests (issue 8): `POST /v1/documents/manifest` (`documents.manifest`),
 * `GET /v1/documents/manifest/{manifestNo}` (`documents.manifestCopy`) and the
 * documents outbox relay to `booking.markManifested` (lib/documents/manifest*.ts).
 *
 * The handlers parse and answer; the operations are plain functions over
 * `DocumentsDeps` (lib/documents/deps.ts) in lib/documents/operations.ts and
 * capture.ts; SQL in lib/documents/store.ts and manifest-store.ts. The service
 * shape every service follows: docs/ARCHITECTURE.md §1, docs/decisions/0091-service-shape.md.
 *
 * Errors follow the §7 documents exception: 400 and 404 answer `{message}`
 * (no `error` key), 409 answers `{code, message}`.
 */
import type { Context } from "moleculer";
import type { CallMeta } from "../lib/contracts";
import { DOCUMENTS_ROUTES } from "../lib/contracts/http/documents";
import { parseOrderIds } from "../lib/documents/bulk";
import { captureCourierLabel } from "../lib/documents/capture";
import type { DocumentsDeps } from "../lib/documents/deps";
import { warmLabelFonts } from "../lib/documents/font";
import { documentsRelayTimings, ManifestRelay } from "../lib/documents/manifest-relay";
import { parseManifestOrderIds } from "../lib/documents/manifest-request";
import { DOCUMENTS_MIGRATIONS } from "../lib/documents/migrations";
import {
	bearerLabel,
	bulkLabels,
	type FileAnswer,
	labelRecord,
	linkedLabel,
	manifestCopy,
	newManifest,
	parseLabelOrderId,
} from "../lib/documents/operations";
import { senderOf } from "../lib/platform/auth";
import { fail } from "../lib/platform/errors";
import { defineService } from "../lib/platform/service";
import { labelLinkConfigured } from "../lib/shared/label-link";
import { DbMixin } from "../mixins/db.mixin";

/** Sets the binary-answer meta the gateway (moleculer-web) turns into HTTP headers; answers the bytes. */
function answer(ctx: Context<unknown, CallMeta>, file: FileAnswer): Buffer {
	ctx.meta.$responseType = file.type;
	ctx.meta.$responseHeaders = file.headers;
	return file.bytes;
}

/** State set in `started` (db comes from the DbMixin). */
interface DocumentsVars {
	/** the documents outbox relay (booking.markManifested of manifests), lib/documents/manifest-relay.ts */
	manifestRelay: ManifestRelay;
}

export default defineService<DocumentsVars>()({
	name: "documents",
	mixins: [DbMixin("documents", DOCUMENTS_MIGRATIONS)],
	settings: {},
	methods: {
		/** What lib/documents needs of this service. */
		deps(): DocumentsDeps {
			return {
				db: this.db,
				broker: this.broker,
				logger: this.logger,
				relayNow: (outbox_ids) => this.manifestRelay.kick(outbox_ids),
			};
		},
	},
	actions: {
		/**
		 * `GET /v1/documents/label/{orderId}` (spec §4.4): the caller's shipping label.
		 *
		 * Params: `orderId` (string from the path; a number from internal callers).
		 * Answers a Buffer: the 4 × 6 inch PDF we draw (lib/documents/label.ts), or
		 * the courier's own captured file for a courier-issued label; meta
		 * `$responseType` (`application/pdf`) and `$responseHeaders`
		 * (`Content-Disposition: inline; filename="label-<awb>.pdf"`,
		 * `Cache-Control: private, no-store`). Every successful download upserts
		 * `documents.labels` and stamps `label_downloaded_at` (UTC).
		 *
		 * Errors (§7 documents exception): 400 `{message:"orderId must be a positive integer"}`;
		 * 404 `{message:"not found"}` (not the caller's, or no such order);
		 * 409 `{code:"not_ready_to_ship", message:"order is not booked yet"}` (no live
		 * booked shipment: not booked, in progress, failed or cancelled);
		 * 409 `{code:"carrier_label_missing", message}` (courier-issued label not captured);
		 * 401 without an authenticated caller. The order, its shipment and its
		 * warehouses are read from intake, booking and warehouses; one that cannot
		 * be asked answers 503 `service_unavailable` (through the gateway).
		 */
		label: {
			// up to 200 pages, or a courier-issued label fetched at the courier (issue 12)
			timeout: 15_000,
			access: DOCUMENTS_ROUTES["documents.label"].access,
			async handler(ctx): Promise<Buffer> {
				const order_id = parseLabelOrderId(ctx.params?.orderId);
				return answer(ctx, await bearerLabel(this.deps(), ctx, senderOf(ctx), order_id));
			},
		},

		/**
		 * `POST /v1/documents/label` (spec §4.4, §7): the labels of several of the
		 * caller's orders as ONE PDF (lib/documents/bulk.ts;
		 * docs/decisions/0024-bulk-labels.md).
		 *
		 * Params: `order_ids` (JSON array of 1 to 200 positive integers or digit
		 * strings; duplicates dropped, the first position kept). Answers a Buffer:
		 * one document, one page per order in the requested order (a captured
		 * courier-issued label: its own pages), fonts embedded once; meta
		 * `$responseType` `application/pdf` and `$responseHeaders` as the single
		 * label (`Content-Disposition: inline; filename="labels-<n>.pdf"`, n = the
		 * number of orders). Stamps `label_downloaded_at` of every order, only
		 * when the whole batch is answered.
		 *
		 * Errors (§7 documents exception; the whole batch fails, no partial PDF):
		 * 400 `{message}` (`order_ids is required: …`, `order_ids must not be
		 * empty`, `max 200 orders per request`, `order_ids[<i>] must be a positive
		 * integer`); 404 `{message:"orders not found: <ids>"}` (missing or another
		 * account's, identical); 409 `{code:"not_ready_to_ship", message,
		 * order_ids}`; 409 `{code:"carrier_label_missing", message, order_ids}`;
		 * 409 `{code:"carrier_label_unmergeable", message, order_ids}`; 401
		 * without a caller; a collaborator that cannot be asked → 503 (through the gateway).
		 */
		labels: {
			// up to 200 pages, or a courier-issued label fetched at the courier (issue 12)
			timeout: 15_000,
			access: DOCUMENTS_ROUTES["documents.labels"].access,
			async handler(ctx): Promise<Buffer> {
				const order_ids = parseOrderIds(ctx.params);
				return answer(ctx, await bulkLabels(this.deps(), ctx, senderOf(ctx), order_ids));
			},
		},

		/**
		 * `GET /v1/documents/label/t/{token}` (spec §4.4, §5 rule 7): the label of
		 * an AWB through its signed link; no bearer token (the gateway's `links`
		 * route, rate-limited per client address). Params: `token` (string from
		 * the path) `{awb}.{hmac}`, verified by lib/shared/label-link.ts (current and
		 * previous secrets, constant time). Answers the same bytes as the bearer
		 * route for that order (our PDF, or the courier's captured file with its
		 * own type; the same code path, lib/documents/operations.ts `labelFile`), and stamps
		 * `label_downloaded_at` the same way; meta `$responseHeaders`:
		 * `Content-Disposition: attachment; filename="label-<awb>.<ext>"`,
		 * `X-Content-Type-Options: nosniff`, `Content-Security-Policy: sandbox;
		 * default-src 'none'`, `Referrer-Policy: no-referrer`,
		 * `Cache-Control: private, no-store`.
		 *
		 * Errors: 404 `{message:"not found"}` (answered by the gateway as a
		 * plain-text body, §7) for a bad token (empty, malformed, tampered,
		 * another key), an AWB no live booking holds (unknown, cancelled,
		 * re-booked) and a courier-issued label never captured (the 409s of the
		 * bearer route become 404 here). An unreachable collaborator: 503
		 * `service_unavailable` (through the gateway).
		 */
		labelLink: {
			async handler(ctx): Promise<Buffer> {
				return answer(ctx, await linkedLabel(this.deps(), ctx, ctx.params?.token));
			},
		},

		/**
		 * `POST /v1/documents/manifest` (spec §4.4, §3 manifest row, §7): the courier
		 * handover manifest of the caller's booked orders.
		 *
		 * Params: `order_ids` (JSON array of 1 to 200 positive integers or digit
		 * strings; duplicates dropped); `schedule_pickup` (boolean, default false;
		 * issue 28): also make the pickup request of each section's courier and
		 * warehouse for the courier's next pickup day when none exists (headers
		 * `x-pickup-ids`, `x-pickup-errors`; lib/documents/operations.ts `manifestPickups`). Answers a Buffer: ONE A4 PDF, one section per
		 * (courier, pickup warehouse) with its own manifest number
		 * `MF-<yyyymmdd IST>-<seq>` (lib/documents/manifest.ts); meta `$responseType`
		 * `application/pdf` and `$responseHeaders` `x-manifest-no` (numbers,
		 * comma-separated, section order), `x-manifest-count` (parcels),
		 * `Content-Disposition: inline; filename="manifest-<first no>.pdf"`,
		 * `Cache-Control: private, no-store`. The manifests, their parcels (an AWB on
		 * at most one live manifest: unique index) and the outbox rows carrying
		 * `booking.markManifested` (Ready-for-pickup, then `shipment.status_changed`
		 * from booking, §6) commit in ONE transaction before the answer; the outbox is
		 * delivered right after and retried until booking acknowledges it.
		 *
		 * Errors (§7 documents exception): 400 `{message}` (`order_ids is required: …`,
		 * `order_ids must not be empty`, `max 200 orders per request`,
		 * `order_ids[<i>] must be a positive integer`); 404 `{message:"orders not found:
		 * <ids>"}` (missing or another account's); 409 `{code:"not_ready_to_ship",
		 * message, order_ids, already_manifested_order_ids, reasons}`; 409
		 * `{code:"already_manifested", message, order_ids:[], already_manifested_order_ids,
		 * manifest_nos}` (also for the loser of two concurrent requests); 401 without a
		 * caller; 403 `{error:"Read-only role"}` for merchant_finance, merchant_support and
		 * merchant_staff (a write nothing undoes: §5 rule 1, checked at the gateway and here
		 * before anything is read or stored); a collaborator that cannot be asked → 503
		 * (through the gateway).
		 */
		manifest: {
			// up to 200 pages, or a courier-issued label fetched at the courier (issue 12)
			timeout: 15_000,
			access: DOCUMENTS_ROUTES["documents.manifest"].access,
			async handler(ctx): Promise<Buffer> {
				const order_ids = parseManifestOrderIds(ctx.params);
				const schedule = ctx.params?.schedule_pickup;
				if (schedule !== undefined && typeof schedule !== "boolean")
					throw fail("documents.bad_schedule_pickup");
				return answer(ctx, await newManifest(this.deps(), ctx, senderOf(ctx), order_ids, schedule === true));
			},
		},

		/**
		 * `GET /v1/documents/manifest/{manifestNo}` (ours;
		 * docs/decisions/0032-manifests.md): prints a stored manifest (one
		 * section) again, with the rows, warehouse, date and totals stored when it
		 * was made; same headers as `documents.manifest`. Changes nothing. 404
		 * `{message:"not found"}` for a malformed, unknown or another account's
		 * number.
		 */
		manifestCopy: {
			// up to 200 pages, or a courier-issued label fetched at the courier (issue 12)
			timeout: 15_000,
			access: DOCUMENTS_ROUTES["documents.manifestCopy"].access,
			async handler(ctx): Promise<Buffer> {
				return answer(ctx, await manifestCopy(this.deps(), senderOf(ctx), ctx.params?.manifestNo));
			},
		},

		/** Ops / tests: delivers the due documents outbox rows now → `{delivered, failed}`. */
		relayOutbox: {
			async handler(): Promise<{ delivered: number; failed: number }> {
				return this.manifestRelay.runOnce();
			},
		},

		/**
		 * Internal: the label row of an order (its most recently created AWB), for
		 * tests and other services. Params `{sender_id, order_id}` (positive
		 * integers). Answers `LabelInfo` (lib/contracts/documents.ts) `{order_id, sender_id, awb_number,
		 * logistic_id, source, has_courier_file, label_downloaded_at,
		 * first_downloaded_at, download_count, created_at}` (timestamps ISO-8601
		 * UTC) or null when no label was ever downloaded or recorded.
		 */
		labelInfo: {
			params: {
				sender_id: { type: "number", integer: true, positive: true, convert: true },
				order_id: { type: "number", integer: true, positive: true, convert: true },
			},
			async handler(ctx) {
				return labelRecord(this.deps(), ctx.params.sender_id, ctx.params.order_id);
			},
		},

		/**
		 * Internal (booking's `courier_label` outbox row, delivered when a shipment
		 * of a courier that issues its own label is booked; spec §4.4, §7): fetches
		 * the courier's label file through its adapter and stores it (bytea, with
		 * its media type) so downloads serve it without asking the courier.
		 * Params `{sender_id, order_id, awb_number, logistic_id}`. Idempotent per
		 * AWB: answers `CourierLabelCaptured` `{awb_number, status, content_type,
		 * bytes}`, status `captured`, `already_captured` (the courier is not asked)
		 * or `missing` (the courier definitively has none: recorded, downloads
		 * answer 409 `carrier_label_missing`). Throws 503 `courier_unavailable`
		 * when the courier cannot be reached (the relay redelivers with backoff).
		 * lib/documents/capture.ts.
		 */
		captureCourierLabel: {
			params: {
				sender_id: { type: "number", integer: true, positive: true, convert: true },
				order_id: { type: "number", integer: true, positive: true, convert: true },
				awb_number: { type: "string", min: 1, max: 64, trim: true },
				logistic_id: { type: "number", integer: true, positive: true, convert: true },
			},
			async handler(ctx) {
				return captureCourierLabel(this.deps(), ctx, ctx.params);
			},
		},
	},
	/** Reads and parses the label fonts once per process, so the first label is not slow. */
	created() {
		warmLabelFonts();
	},
	/**
	 * Refuses to run without a link secret (signed label links;
	 * docs/ARCHITECTURE.md §2: fail loudly at start), then starts the manifest
	 * outbox relay.
	 */
	started() {
		if (!labelLinkConfigured())
			throw new Error("documents: LABEL_LINK_SECRET is required (signed label links)");
		// the manifest outbox relay (the DbMixin's started ran first: the db is set)
		const { db, broker, logger } = this.deps();
		this.manifestRelay = new ManifestRelay({ db, broker, logger, timings: documentsRelayTimings() });
		this.manifestRelay.start();
	},
	/** Stops the manifest outbox relay (undelivered rows stay for the next start or another instance). */
	async stopped() {
		await this.manifestRelay?.stop();
	},
});
