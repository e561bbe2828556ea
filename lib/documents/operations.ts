/**
 * The operations behind the `documents` actions (spec §4.4, §7 documents
 * exception): the single label (bearer and signed link share
 * {@link labelFile}), bulk labels, manifests and their copies, the internal
 * label row. Plain functions over {@link DocumentsDeps}; each answers a
 * {@link FileAnswer} the service turns into its binary answer. SQL in
 * ./store.ts and ./manifest-store.ts; input parsing in ./bulk.ts and
 * ./manifest-request.ts; the order, shipment and warehouses from intake,
 * booking and warehouses (./source.ts).
 */
import type { Context } from "moleculer";
import { type Caller, type CallMeta, call, type LabelInfo, PICKUP_MAX_PACKAGES } from "../contracts";
import { errorBodyOf, fail } from "../platform/errors";
import { parsePositiveInt } from "../shared/fields";
import { verifyLabelToken } from "../shared/label-link";
import { loadBulkLabels, renderBulkLabels, stampBulkDownloads } from "./bulk";
import { buildLabelData } from "./data";
import type { DocumentsDeps } from "./deps";
import { renderLabel } from "./label";
import { renderManifest } from "./manifest";
import { makeManifests, manifestHeaders, parseManifestNo, printedSection } from "./manifest-request";
import { manifestByNo, type StoredManifest } from "./manifest-store";
import { courierIssuesOwnLabel, describeFile } from "./policy";
import { carrierLabelMissing, labelNotFound, loadBookedOrder, loadWarehouses } from "./source";
import { labelInfo, stampDownload, storedLabel } from "./store";

/**
 * A binary answer: its bytes, its media type (meta `$responseType`) and its
 * HTTP headers (meta `$responseHeaders`, turned into headers by the gateway).
 */
export interface FileAnswer {
	bytes: Buffer;
	type: string;
	headers: Record<string, string>;
}

/** A label ready to answer: its bytes, media type and download file name. */
export interface LabelFile {
	bytes: Buffer;
	type: string;
	fileName: string;
}

/** Characters kept in a download file name (the AWB is already validated; this is belt and braces). */
function safeFileName(s: string): string {
	return s.replace(/[^A-Za-z0-9._-]/g, "_");
}

/** The headers of a bearer download: shown inline, never cached by a shared cache. */
function inlineHeaders(fileName: string): Record<string, string> {
	return {
		"Content-Disposition": `inline; filename="${safeFileName(fileName)}"`,
		"Cache-Control": "private, no-store",
	};
}

/**
 * The headers of a signed-link download (spec §4.4): an attachment, never
 * sniffed, sandboxed with no sources, no Referer leaking the token onwards,
 * never cached by a shared cache.
 */
function linkHeaders(fileName: string): Record<string, string> {
	return {
		"Content-Disposition": `attachment; filename="${safeFileName(fileName)}"`,
		"X-Content-Type-Options": "nosniff",
		"Content-Security-Policy": "sandbox; default-src 'none'",
		"Referrer-Policy": "no-referrer",
		"Cache-Control": "private, no-store",
	};
}

/** The bytes of a rendered PDF as a Buffer (no copy). */
function pdfBuffer(pdf: Uint8Array): Buffer {
	return Buffer.from(pdf.buffer, pdf.byteOffset, pdf.byteLength);
}

/** 404 `{message:"not found"}` of a signed link (the gateway answers it as plain text, §7). */
const linkNotFound = () => fail("documents.not_found");

/**
 * The single-label code path, shared by `documents.label` (bearer) and
 * `documents.labelLink` (signed link): the label of the caller's order
 * `order_id`: the courier's captured file for a courier-issued label, else
 * the 4 × 6 inch PDF we draw; stamps `label_downloaded_at` on success.
 * With `awb`, the order's live shipment must hold that AWB (else 404
 * `{message:"not found"}`: the link's AWB was cancelled or re-booked).
 * Throws the label route's errors (404 not found, 409 not_ready_to_ship,
 * 409 carrier_label_missing; collaborators' failures as they came).
 */
export async function labelFile(
	deps: DocumentsDeps,
	via: Caller,
	sender_id: number,
	order_id: number,
	awb?: string,
): Promise<LabelFile> {
	const { order, shipment } = await loadBookedOrder(via, sender_id, order_id);
	if (awb !== undefined && shipment.awb_number !== awb) throw labelNotFound();
	// Our own row of this AWB is read while the warehouses are asked (one
	// round trip less); a courier-issued label then leaves the warehouses unused.
	const [stored, parties] = await Promise.all([
		storedLabel(deps.db, sender_id, order_id, shipment.awb_number),
		loadWarehouses(via, sender_id, order),
	]);
	const key = {
		order_id,
		sender_id,
		awb_number: shipment.awb_number,
		logistic_id: shipment.logistic_id,
	};

	if (stored?.source === "courier" || (!stored && courierIssuesOwnLabel(shipment))) {
		// no row yet: the capture is pending (Retry-After); a row without a file: recorded missing
		if (!stored?.courier_file?.length) throw carrierLabelMissing(!stored);
		const file = Buffer.from(stored.courier_file);
		const { type, ext } = describeFile(file, stored.content_type);
		await stampDownload(deps.db, key);
		return { bytes: file, type, fileName: `label-${shipment.awb_number}.${ext}` };
	}

	const pdf = await renderLabel(buildLabelData({ order, shipment, ...parties }));
	await stampDownload(deps.db, key);
	return { bytes: pdfBuffer(pdf), type: "application/pdf", fileName: `label-${shipment.awb_number}.pdf` };
}

/**
 * The path's `orderId` of `documents.label` (a string from the path, a number
 * from internal callers) as a positive integer, untrimmed.
 * @throws 400 `{message:"orderId must be a positive integer"}` (`documents.bad_order_id`)
 */
export function parseLabelOrderId(raw: unknown): number {
	const order_id = parsePositiveInt(raw, { trim: false });
	if (order_id === null) throw fail("documents.bad_order_id");
	return order_id;
}

/** `documents.label`: the caller's label of `order_id` ({@link labelFile}), answered inline. */
export async function bearerLabel(
	deps: DocumentsDeps,
	via: Caller,
	sender_id: number,
	order_id: number,
): Promise<FileAnswer> {
	const label = await labelFile(deps, via, sender_id, order_id);
	return { bytes: label.bytes, type: label.type, headers: inlineHeaders(label.fileName) };
}

/**
 * `documents.labels`: the labels of `order_ids` (parsed, distinct) as ONE
 * PDF (./bulk.ts); stamps every order's download only once the whole batch is
 * rendered. Throws the batch errors of ./bulk.ts.
 */
export async function bulkLabels(
	deps: DocumentsDeps,
	via: Caller,
	sender_id: number,
	order_ids: readonly number[],
): Promise<FileAnswer> {
	const labels = await loadBulkLabels(via, deps.db, sender_id, order_ids);
	const pdf = await renderBulkLabels(labels);
	await stampBulkDownloads(deps.db, labels);
	return {
		bytes: pdfBuffer(pdf),
		type: "application/pdf",
		headers: inlineHeaders(`labels-${labels.length}.pdf`),
	};
}

/**
 * `documents.labelLink`: the label of the AWB a signed link `token` names
 * (lib/shared/label-link.ts), through {@link labelFile} for the owner `booking.awbOwner`
 * names, answered as an attachment. A bad token, an AWB no live booking holds
 * and the bearer route's 404 / 409 all become 404 `{message:"not found"}`;
 * other failures are rethrown as they came.
 */
export async function linkedLabel(
	deps: DocumentsDeps,
	ctx: Context<unknown, CallMeta>,
	token: unknown,
): Promise<FileAnswer> {
	const awb = verifyLabelToken(token);
	if (awb === null) throw linkNotFound();
	const owner = await call(ctx, "booking.awbOwner", { awb_number: awb }, { unavailable: false });
	if (!owner) throw linkNotFound();
	let label: LabelFile;
	try {
		label = await labelFile(deps, ctx, owner.sender_id, owner.order_id, awb);
	} catch (err) {
		const status = errorBodyOf(err)?.status;
		if (status === 404 || status === 409) throw linkNotFound();
		throw err;
	}
	return { bytes: label.bytes, type: label.type, headers: linkHeaders(label.fileName) };
}

/**
 * `documents.manifest`: makes and commits the manifests of `order_ids`
 * (./manifest-request.ts `makeManifests`: manifests, parcels and outbox rows
 * in one transaction), renders them as one PDF, then has the outbox rows
 * delivered to booking (`deps.relayNow`, after the render, which it would
 * slow). Throws the errors of `makeManifests`.
 */
export async function newManifest(
	deps: DocumentsDeps,
	via: Caller,
	sender_id: number,
	order_ids: number[],
	schedulePickup = false,
): Promise<FileAnswer> {
	const stored = await makeManifests(via, deps.db, sender_id, order_ids);
	const pdf = await renderManifest(stored.map(printedSection));
	// committed: booking is told now (after the render, which it would slow); the timer retries failures
	deps.relayNow(stored.map((m) => m.outbox_id));
	const headers = manifestHeaders(stored);
	if (schedulePickup) Object.assign(headers, await manifestPickups(via, sender_id, stored));
	return { bytes: pdfBuffer(pdf), type: "application/pdf", headers };
}

/**
 * The pickups of a manifest made with `schedule_pickup: true` (issue 28;
 * docs/decisions/0107-pickup-requests.md): per section (courier, warehouse), the live pickup
 * request for the courier's next pickup day, made when there is none
 * (`warehouses.ensurePickup`, its parcels as the expected count). The manifest is committed
 * whatever happens here. → headers `x-pickup-ids` (the pickup ids in section order, `none`
 * where none could be made) and, when any could not, `x-pickup-errors` (`<manifest no>:
 * <error code>` per such section, `;`-separated).
 */
async function manifestPickups(
	via: Caller,
	sender_id: number,
	stored: StoredManifest[],
): Promise<Record<string, string>> {
	const errors: string[] = [];
	const ids = await Promise.all(
		stored.map(async (m) => {
			if (!m.pickup_address_id) {
				errors.push(`${m.manifest_no}: no pickup warehouse`);
				return "none";
			}
			try {
				const { pickup } = await call(
					via,
					"warehouses.ensurePickup",
					{
						sender_id,
						warehouse_id: m.pickup_address_id,
						logistic_id: m.logistic_id,
						expected_package_count: Math.min(m.parcels.length, PICKUP_MAX_PACKAGES),
					},
					{ unavailable: false },
				);
				return String(pickup.id);
			} catch (err) {
				errors.push(`${m.manifest_no}: ${errorCodeOf(err)}`);
				return "none";
			}
		}),
	);
	return errors.length
		? { "x-pickup-ids": ids.join(","), "x-pickup-errors": errors.join(";") }
		: { "x-pickup-ids": ids.join(",") };
}

/** The error code an action failed with (`error` of its §2.11 body), else `service_unavailable`. */
function errorCodeOf(err: unknown): string {
	const error = errorBodyOf(err)?.body.error;
	return typeof error === "string" ? error : "service_unavailable";
}

/**
 * `documents.manifestCopy`: the stored manifest `rawNo` of the caller printed
 * again. Throws 404 `documents.not_found` for a malformed, unknown or another
 * account's number.
 */
export async function manifestCopy(
	deps: DocumentsDeps,
	sender_id: number,
	rawNo: unknown,
): Promise<FileAnswer> {
	const no = parseManifestNo(rawNo);
	const m = no ? await manifestByNo(deps.db, sender_id, no) : null;
	if (!m) throw fail("documents.not_found");
	const pdf = await renderManifest([printedSection(m)]);
	return { bytes: pdfBuffer(pdf), type: "application/pdf", headers: manifestHeaders([m]) };
}

/** `documents.labelInfo`: the label row of an order (./store.ts `labelInfo`), or null. */
export function labelRecord(
	deps: DocumentsDeps,
	sender_id: number,
	order_id: number,
): Promise<LabelInfo | null> {
	return labelInfo(deps.db, sender_id, order_id);
}
