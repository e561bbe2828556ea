/**
 * The HTTP routes of the `documents` service: labels, signed label links and
 * handover manifests (spec §4.4, §3 manifest row, §5 rule 7, §7, §8;
 * docs/decisions/0007-labels.md, docs/decisions/0023-label-answers.md,
 * docs/decisions/0024-bulk-labels.md, docs/decisions/0025-indian-scripts.md,
 * docs/decisions/0032-manifests.md, docs/decisions/0034-courier-issued-labels.md,
 * docs/decisions/0035-signed-label-links.md, docs/decisions/0036-rate-limits.md).
 * One definition each (issue 26; lib/platform/openapi/route.ts,
 * docs/ARCHITECTURE.md §9).
 *
 * §7 exception for `/v1/documents/*`: 400 and 404 answer `{message}`
 * (`DocumentsError`, no `error` key; the catalogue's `documents.*` entries),
 * 409 answers `{code, message, …}` (`DocumentsConflict`); the signed link's
 * 404 is plain text. Inputs are validated by hand (lib/shared/fields.ts
 * `parsePositiveInt`, lib/documents/bulk.ts `parseOrderIds`,
 * manifest-request.ts `parseManifestNo`, lib/shared/label-link.ts
 * `verifyLabelToken`) and described by hand here. The 409s that carry a
 * `Retry-After` header, and the bearer label's 404 (JSON, or plain text for
 * the token-less link path), are answers as written in `responses`: a
 * catalogued error (`errors`) documents no header and one media type.
 */
import { ID_PATH_SCHEMA, json, ref } from "../../platform/openapi/components";
import { idInput } from "../../platform/openapi/helpers";
import { defineRoutes } from "../../platform/openapi/route";
import type { JsonSchema, Response } from "../../platform/openapi/types";
import { LINK_TAG_LENGTH } from "../../shared/label-link";
import { MAX_BULK_LABELS } from "../documents";

/** A binary body of media type `type`. */
const binary = (type: string): JsonSchema => ({ type: "string", contentMediaType: type });

/** A response header's schema (a plain string or integer). */
interface HeaderSchema {
	type: "string" | "integer";
	pattern?: string;
	minimum?: number;
}

/**
 * A response header object of a download (lib/documents); always sent unless `required` is
 * false (the contract check tests the required ones).
 */
const header = (description: string, schema: HeaderSchema = { type: "string" }, required = true) => ({
	description,
	required,
	schema,
});

/** `Cache-Control` of every download. */
const CACHE_CONTROL = header("`private, no-store`");

/** A label download: our PDF, or the courier's captured file with its own type (docs/decisions/0034-courier-issued-labels.md). */
function labelFile(description: string, headers: Response["headers"]): Response {
	return {
		description,
		headers,
		content: {
			"application/pdf": { schema: binary("application/pdf") },
			"image/png": { schema: binary("image/png") },
			"application/octet-stream": { schema: binary("application/octet-stream") },
		},
	};
}

/** A §7 documents 409 `{code, message, …}` with extra documented members. */
function conflict(description: string, properties: Record<string, JsonSchema> = {}): Response {
	return json(description, { allOf: [ref("DocumentsConflict"), { type: "object", properties }] });
}

/** The `Retry-After` of a 409 `carrier_label_missing` whose capture is still pending (lib/documents/source.ts). */
const CAPTURE_RETRY_AFTER: Response["headers"] = {
	"Retry-After": {
		description:
			"seconds to wait (1): only on `carrier_label_missing` while the courier's label is still being captured (no capture recorded yet, e.g. just after an async booking); absent when the capture is recorded as missing",
		schema: { type: "integer", minimum: 0 },
	},
};

/** An array of order ids (a 409 member). */
const ids = (description: string): JsonSchema => ({ type: "array", items: { type: "integer" }, description });

/** `order_ids` body of bulk labels and manifests (lib/documents/bulk.ts `parseOrderIds`). */
const ORDER_IDS_BODY: JsonSchema = {
	type: "object",
	description:
		"Validated by hand (lib/documents/bulk.ts `parseOrderIds`; the same rules and messages for labels and manifests). Duplicates are dropped, the first position kept. Unknown keys are ignored.",
	required: ["order_ids"],
	properties: {
		order_ids: {
			type: "array",
			minItems: 1,
			maxItems: MAX_BULK_LABELS,
			items: idInput("an order id."),
			description: `1 to ${MAX_BULK_LABELS} of the caller's order ids (more than ${MAX_BULK_LABELS} elements is refused before duplicates are dropped)`,
		},
	},
};

/** Body of POST /v1/documents/manifest: the order ids and the pickup option (issue 28). */
const MANIFEST_BODY: JsonSchema = {
	...ORDER_IDS_BODY,
	properties: {
		...ORDER_IDS_BODY.properties,
		schedule_pickup: {
			type: "boolean",
			default: false,
			description:
				"ours (docs/decisions/0107-pickup-requests.md): also make, per section (courier, warehouse), the pickup request for the courier's next pickup day when none exists, its parcels as the expected count; the answer's `x-pickup-ids` header names the requests",
		},
	},
};

/** The 400 of bulk labels and manifests (lib/documents/bulk.ts `parseOrderIds`). */
const ORDER_IDS_400 = {
	code: "documents.bad_order_ids",
	when: `\`{message}\` (spec §7 documents exception): \`order_ids is required: an array of 1 to ${MAX_BULK_LABELS} positive integers\` (absent, null, not an array), \`order_ids must not be empty\`, \`max ${MAX_BULK_LABELS} orders per request\`, \`order_ids[<i>] must be a positive integer\` (the first bad element).`,
} as const;

/** Headers of a manifest PDF (first answer and copy). */
const MANIFEST_HEADERS: Response["headers"] = {
	"x-manifest-no": header(
		"the manifest numbers `MF-<yyyymmdd IST>-<seq>`, one per section (courier, pickup warehouse), comma-separated without spaces, in section order",
		{ type: "string", pattern: "^MF-\\d{8}-\\d{6,18}(,MF-\\d{8}-\\d{6,18})*$" },
	),
	"x-manifest-count": header("parcels in the PDF", { type: "string", pattern: "^[0-9]+$" }),
	"x-pickup-ids": header(
		"with `schedule_pickup: true` only: per section, in section order, comma-separated, the pickup request id (GET /v1/pickups/{id}) made or found for the courier's next pickup day, `none` where none could be made",
		{ type: "string", pattern: "^(none|[0-9]+)(,(none|[0-9]+))*$" },
		false,
	),
	"x-pickup-errors": header(
		"with `schedule_pickup: true`, when a section got no pickup: `<manifest no>: <error code>` per such section, `;`-separated (e.g. `pickup_failed`, `invalid_pickup_date`); the manifest itself is made",
		{ type: "string" },
		false,
	),
	"Content-Disposition": header('`inline; filename="manifest-<first number>.pdf"`'),
	"Cache-Control": CACHE_CONTROL,
};

/** The manifest PDF answer (docs/decisions/0032-manifests.md). */
const MANIFEST_PDF: Response = {
	description:
		"One A4 PDF, one section per (courier, pickup warehouse), each with its own manifest number, rows in request order, totals and signature boxes (docs/decisions/0032-manifests.md).",
	headers: MANIFEST_HEADERS,
	content: { "application/pdf": { schema: binary("application/pdf") } },
};

// ---------------------------------------------------------------------------
// Routes
// ---------------------------------------------------------------------------

/** The documents routes, keyed by the action that answers each. */
export const DOCUMENTS_ROUTES = defineRoutes({
	"documents.label": {
		route: "GET /v1/documents/label/:orderId",
		access: { auth: true },
		tag: "documents",
		operationId: "documents_label",
		summary: "Download an order's shipping label",
		description:
			"Spec §4.4: the 4 × 6 inch label PDF of one of the caller's booked orders, or the courier's own captured file when the courier issues its labels (its media type). Every download stamps `label_downloaded_at`. Any authenticated role.",
		path: { orderId: { description: "the order id, a positive integer", schema: ID_PATH_SCHEMA } },
		responses: {
			"200": labelFile("The label.", {
				"Content-Disposition": header('`inline; filename="label-<awb>.<pdf|png>"`'),
				"Cache-Control": CACHE_CONTROL,
			}),
			// `documents.not_found`, or the link route's plain text: two media types
			"404": {
				description:
					'`{message:"not found"}`: not the caller\'s order, or no such order (spec §7). `GET /v1/documents/label/t` (`orderId` = `t`) is the signed-link route without a token: plain-text `Not found` (see `GET /v1/documents/label/t/{token}`).',
				content: {
					"application/json": { schema: ref("DocumentsError") },
					"text/plain": { schema: { type: "string", examples: ["Not found\n"] } },
				},
			},
			// `not_ready_to_ship`, `carrier_label_missing`: with the `Retry-After` header
			"409": {
				...conflict(
					"`not_ready_to_ship` (no live booked shipment: not booked, in progress, failed or cancelled); `carrier_label_missing` (the courier issues its own label and it was not captured; with `Retry-After` while its capture is still pending) (spec §7).",
				),
				headers: CAPTURE_RETRY_AFTER,
			},
		},
		errors: [{ code: "documents.bad_order_id", when: '`{message:"orderId must be a positive integer"}`.' }],
	},
	"documents.labels": {
		route: "POST /v1/documents/label",
		access: { auth: true },
		tag: "documents",
		operationId: "documents_labels",
		summary: "Download several labels as one PDF",
		description:
			"Spec §4.4, §7, §8: ONE PDF with one page per order in the requested order (a captured courier-issued label: its own pages). All or nothing: one order failing fails the batch, nothing is stamped; on success every order gets `label_downloaded_at`. Any authenticated role.",
		bodySchema: ORDER_IDS_BODY,
		responses: {
			"200": {
				description: "The labels.",
				headers: {
					"Content-Disposition": header('`inline; filename="labels-<n>.pdf"` (n = orders after duplicates)'),
					"Cache-Control": CACHE_CONTROL,
				},
				content: { "application/pdf": { schema: binary("application/pdf") } },
			},
			// `not_ready_to_ship`, `carrier_label_missing`, `carrier_label_unmergeable`: with the `Retry-After` header
			"409": {
				...conflict(
					"The first failing check lists every id failing it: `not_ready_to_ship` (not booked yet), `carrier_label_missing` (courier-issued labels not captured, spec §7; with `Retry-After` when every one of them is still pending), `carrier_label_unmergeable` (a captured courier file that is not a readable PDF or PNG).",
					{ order_ids: ids("the orders failing the check, in request order") },
				),
				headers: CAPTURE_RETRY_AFTER,
			},
		},
		errors: [
			ORDER_IDS_400,
			{
				code: "documents.orders_not_found",
				when: '`{message:"orders not found: <ids>"}`: missing or another account\'s orders (identical).',
			},
		],
	},
	"documents.manifest": {
		route: "POST /v1/documents/manifest",
		access: { auth: true, writes: true },
		tag: "documents",
		operationId: "documents_manifest",
		summary: "Build the courier handover manifest",
		description:
			"Spec §4.4, §3 manifest row, §6, §7, §8: a write with side effects. For the caller's ready-to-ship orders (a live booked forward shipment not past pickup and on no live manifest) stores one manifest per (courier, pickup warehouse) and answers the PDF (with `schedule_pickup: true`, also the pickup request of each section: header `x-pickup-ids`); the shipments then move to Ready-for-pickup (`manifested`) and `shipment.status_changed` is sent, shortly after the answer; nothing undoes it. Read-only roles (merchant_finance, merchant_support, merchant_staff) are refused with 403 `Read-only role` before anything is read or stored, as every other write.",
		bodySchema: MANIFEST_BODY,
		responses: { "200": MANIFEST_PDF },
		errors: [
			ORDER_IDS_400,
			{
				code: "documents.bad_schedule_pickup",
				when: "`{message}`: `schedule_pickup` not a boolean; nothing stored.",
			},
			{
				code: "documents.orders_not_found",
				when: '`{message:"orders not found: <ids>"}`: missing or another account\'s orders, checked before readiness; nothing stored.',
			},
			{
				code: "not_ready_to_ship",
				when: "nothing stored; packages not ready (§7; `reasons` per order: not_booked, cancelled, past_pickup, reverse)",
				extra: {
					order_ids: ids("orders not ready for a reason other than an existing manifest"),
					already_manifested_order_ids: ids("orders whose AWB is already on a live manifest"),
					reasons: {
						type: "object",
						additionalProperties: {
							type: "string",
							enum: ["not_booked", "cancelled", "past_pickup", "reverse"],
						},
						description: "`not_ready_to_ship`: order id → reason",
					},
				},
			},
			{
				code: "already_manifested",
				when: "nothing stored; every problem is an AWB already on a live manifest, also for the loser of two concurrent requests (§7; `order_ids` is then empty, `manifest_nos` names the manifests).",
				extra: {
					manifest_nos: {
						type: "array",
						items: { type: "string" },
						description: "`already_manifested`: the manifests holding them",
					},
				},
			},
		],
	},
	"documents.manifestCopy": {
		route: "GET /v1/documents/manifest/:manifestNo",
		access: { auth: true },
		tag: "documents",
		operationId: "documents_manifestCopy",
		summary: "Print a stored manifest again",
		description:
			"Ours (docs/decisions/0032-manifests.md): prints one stored manifest again from its stored rows (same number, rows, warehouse, date, totals and headers). Changes nothing. Any authenticated role.",
		path: {
			manifestNo: {
				description: "a manifest number as issued, `MF-<yyyymmdd>-<seq>`",
				schema: { type: "string", pattern: "^MF-\\d{8}-\\d{6,18}$" },
			},
		},
		responses: { "200": { ...MANIFEST_PDF, description: "The stored manifest (one section)." } },
		errors: [
			{
				code: "documents.not_found",
				when: '`{message:"not found"}`: a malformed, unknown or another account\'s number.',
			},
		],
	},
	"documents.labelLink": {
		route: "GET /v1/documents/label/t{/:token}",
		kind: "link",
		tag: "documents",
		operationId: "documents_labelLink",
		summary: "Download a label through its signed link",
		description:
			"Spec §4.4, §5 rule 7; docs/decisions/0035-signed-label-links.md: no Authorization header — the token `{awb}.{hmac}` in the path is the credential (treat the URL as secret). Answers the same file as the bearer label route, as an attachment, and stamps `label_downloaded_at` the same way. Rate-limited per client address (`RATE_LIMIT_LINK_PER_MIN`, default 120 a minute, bad tokens counted too). The link stops working when its AWB is no longer a live booking or its signing secret is retired.",
		path: {
			token: {
				description: `\`{awb}.{hmac}\`: the AWB (\`^[A-Za-z0-9][A-Za-z0-9-]{3,39}$\`), a dot, and ${LINK_TAG_LENGTH} base64url characters of HMAC-SHA256`,
			},
		},
		responses: {
			"200": labelFile("The label, as an attachment.", {
				"Content-Disposition": header('`attachment; filename="label-<awb>.<pdf|png>"`'),
				"X-Content-Type-Options": header("`nosniff`"),
				"Content-Security-Policy": header("`sandbox; default-src 'none'`"),
				"Referrer-Policy": header("`no-referrer`"),
				"Cache-Control": CACHE_CONTROL,
			}),
			// plain text, not `{message}` (spec §7)
			"404": {
				description:
					"Plain text `Not found` (spec §7): a bad token (empty, malformed, tampered, another key), an AWB no live booking holds, or a courier-issued label never captured; every 400/404 on this path (an undecodable path included).",
				headers: { "Referrer-Policy": header("`no-referrer`"), "Cache-Control": CACHE_CONTROL },
				content: { "text/plain": { schema: { type: "string", examples: ["Not found\n"] } } },
			},
		},
		errors: [
			{ code: "service_unavailable", when: "a service the download needs is unreachable; retry (gateway)." },
		],
	},
});
