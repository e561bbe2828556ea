/**
 * documents: shipping labels (spec §4.4). Owns the `documents` schema
 * (`documents.labels`, lib/documents/store.ts).
 *
 * Implemented: `GET /v1/documents/label/{orderId}` (action `documents.label`)
 * and the internal `documents.labelInfo`.
 * Later issues (seams): bulk labels (`POST /v1/documents/label`: build ONE
 * document with lib/documents/label.ts `createLabelDocument` + `drawLabelPage`
 * over lib/documents/source.ts `loadBookedOrder` + `loadWarehouses` for each
 * order, checking `storedLabel` as the single label does), manifests, signed label links, and
 * capturing courier-issued labels (`recordCourierLabel`, `courierIssuesOwnLabel`).
 *
 * Errors follow the §7 documents exception: 400 and 404 answer `{message}`
 * (no `error` key), 409 answers `{code, message}`.
 */
import type { Context } from "moleculer";
import { senderOf } from "../lib/auth";
import type { CallMeta } from "../lib/contracts";
import { buildLabelData } from "../lib/documents/data";
import { warmLabelFonts } from "../lib/documents/font";
import { renderLabel } from "../lib/documents/label";
import { DOCUMENTS_MIGRATIONS } from "../lib/documents/migrations";
import { courierIssuesOwnLabel, describeFile } from "../lib/documents/policy";
import { carrierLabelMissing, loadBookedOrder, loadWarehouses } from "../lib/documents/source";
import { labelInfo, stampDownload, storedLabel } from "../lib/documents/store";
import { documentsError } from "../lib/errors";
import { parsePositiveInt } from "../lib/fields";
import { defineService } from "../lib/service";
import { DbMixin } from "../mixins/db.mixin";

/** Characters kept in a download file name (the AWB is already validated; this is belt and braces). */
function safeFileName(s: string): string {
	return s.replace(/[^A-Za-z0-9._-]/g, "_");
}

/** Sets the binary-answer meta the gateway (moleculer-web) turns into HTTP headers. */
function answerFile(ctx: Context<unknown, CallMeta>, type: string, fileName: string): void {
	ctx.meta.$responseType = type;
	ctx.meta.$responseHeaders = {
		"Content-Disposition": `inline; filename="${safeFileName(fileName)}"`,
		"Cache-Control": "private, no-store",
	};
}

export default defineService()({
	name: "documents",
	mixins: [DbMixin("documents", DOCUMENTS_MIGRATIONS)],
	settings: {},
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
			access: { auth: true },
			async handler(ctx) {
				const order_id = parsePositiveInt(ctx.params?.orderId, { trim: false });
				if (order_id === null) throw documentsError(400, "orderId must be a positive integer");
				const sender_id = senderOf(ctx);
				const { order, shipment } = await loadBookedOrder(ctx, sender_id, order_id);
				// Our own row of this AWB is read while the warehouses are asked (one
				// round trip less); a courier-issued label then leaves the warehouses unused.
				const [stored, parties] = await Promise.all([
					storedLabel(this.db, sender_id, order_id, shipment.awb_number),
					loadWarehouses(ctx, sender_id, order),
				]);
				const key = {
					order_id,
					sender_id,
					awb_number: shipment.awb_number,
					logistic_id: shipment.logistic_id,
				};

				if (stored?.source === "courier" || (!stored && courierIssuesOwnLabel(shipment))) {
					if (!stored?.courier_file?.length) throw carrierLabelMissing();
					const file = Buffer.from(stored.courier_file);
					const { type, ext } = describeFile(file);
					await stampDownload(this.db, key);
					answerFile(ctx, type, `label-${shipment.awb_number}.${ext}`);
					return file;
				}

				const pdf = await renderLabel(buildLabelData({ order, shipment, ...parties }));
				await stampDownload(this.db, key);
				answerFile(ctx, "application/pdf", `label-${shipment.awb_number}.pdf`);
				return Buffer.from(pdf.buffer, pdf.byteOffset, pdf.byteLength);
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
				return labelInfo(this.db, ctx.params.sender_id, ctx.params.order_id);
			},
		},
	},
	/** Reads and parses the label fonts once per process, so the first label is not slow. */
	created() {
		warmLabelFonts();
	},
});
