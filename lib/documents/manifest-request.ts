/**
 * `POST /v1/documents/manifest` (spec §4.4, §3 manifest row, §7): the input
 * rules, the readiness checks and the sections of a manifest request. The
 * PDF is ./manifest.ts, the SQL ./manifest-store.ts, the delivery to
 * booking ./manifest-relay.ts.
 *
 * Decisions (docs/decisions/0032-manifests.md):
 * - `order_ids`: a JSON array of 1 to 200 positive integers (JSON integers or
 *   digit strings, as `orderId` of the single label); more than 200 entries →
 *   400 `{message:"max 200 orders per request"}`; duplicates are dropped
 *   (first position kept): a parcel is printed once.
 * - 404 `{message:"orders not found: <ids>"}` when any id is missing or
 *   another account's (identical answers), before any readiness check.
 * - Ready = a live booked forward shipment with an AWB (booking), whose
 *   lifecycle status (intake) is not past pickup (`picked_up` or later,
 *   `undelivered`, RTO, terminal, `booking_failed`), and whose AWB is on no
 *   live manifest. A return (reverse) shipment is collected from the buyer,
 *   never handed over at the warehouse: not ready.
 * - Both 409s carry the same lists: `order_ids` (not ready for any reason but
 *   an existing manifest, with `reasons` `{<order_id>: "not_booked" |
 *   "reverse" | "past_pickup" | "cancelled"}`) and `already_manifested_order_ids`
 *   (on a live manifest). `already_manifested` when `order_ids` is empty
 *   (every problem is an existing manifest; the body adds `manifest_nos`),
 *   otherwise `not_ready_to_ship`.
 * - One section per (courier, pickup warehouse), in the order each pair
 *   first appears in `order_ids`; rows in request order; one manifest number
 *   per section.
 */
import pMap from "p-map";
import type { Sequelize } from "sequelize";
import type { Caller, HttpParams, OrderRecord, ShipmentRecord, Warehouse } from "../contracts";
import { errorBodyOf, fail, failWith } from "../platform/errors";
import { codAmountOf } from "../shared/cod-amount";
import { toPaise, toRupees } from "../shared/money";
import { isLifecycleStatus, rankOf } from "../shared/shipment-status";
import { parseOrderIds } from "./bulk";
import type { ManifestSection } from "./manifest";
import {
	type CourierAwb,
	createManifests,
	isManifestConflict,
	type ManifestWarehouse,
	manifestedAwbs,
	type NewManifest,
	type StoredManifest,
} from "./manifest-store";
import { loadBookedOrder, loadWarehouses } from "./source";

/** Collaborator calls in flight at once for one request (intake + booking per order). */
const LOAD_CONCURRENCY = 50;

/**
 * The `order_ids` of a manifest request, with the rules and 400 messages of
 * bulk labels (./bulk.ts `parseOrderIds`): 1 to 200 positive integers (JSON
 * integers or digit strings), duplicates dropped (first position kept).
 * Throws 400 `{message}`: `order_ids is required: an array of 1 to 200
 * positive integers`, `order_ids must not be empty`, `max 200 orders per
 * request`, `order_ids[<i>] must be a positive integer`.
 */
export const parseManifestOrderIds: (params: HttpParams | undefined) => number[] = parseOrderIds;

/** Why an order cannot be manifested (the 409 body's `reasons`). */
export type NotReadyReason = "not_booked" | "reverse" | "past_pickup" | "cancelled";

type Loaded =
	| { order_id: number; kind: "ready"; order: OrderRecord; shipment: ShipmentRecord }
	| { order_id: number; kind: "missing" }
	| { order_id: number; kind: "not_ready"; reason: NotReadyReason; parcel: CourierAwb | null };

/** The (courier, AWB) key of a parcel. */
const keyOf = (p: CourierAwb) => `${p.logistic_id}:${p.awb_number}`;

/** Rank of `picked_up`: a lifecycle status at or past it is past pickup. */
const PICKED_UP_RANK = rankOf("picked_up");

/** Why a booked order is not ready from its lifecycle status (intake), or null when it is ready. */
function statusProblem(order: OrderRecord): NotReadyReason | null {
	const s = order.status;
	if (!isLifecycleStatus(s)) return null;
	if (s === "cancelled") return "cancelled";
	if (s === "booking_failed") return "not_booked";
	return rankOf(s) >= PICKED_UP_RANK ? "past_pickup" : null;
}

/** Loads one order and its booked shipment (intake, booking) and classifies it. */
async function loadOne(via: Caller, sender_id: number, order_id: number): Promise<Loaded> {
	try {
		const { order, shipment } = await loadBookedOrder(via, sender_id, order_id);
		if (order.direction === "reverse")
			return { order_id, kind: "not_ready", reason: "reverse", parcel: shipment };
		const problem = statusProblem(order);
		if (problem) return { order_id, kind: "not_ready", reason: problem, parcel: shipment };
		return { order_id, kind: "ready", order, shipment };
	} catch (err) {
		const e = errorBodyOf(err);
		if (e?.status === 404) return { order_id, kind: "missing" };
		if (e?.status === 409 && e.body.code === "not_ready_to_ship")
			return { order_id, kind: "not_ready", reason: "not_booked", parcel: null };
		throw err;
	}
}

/** The printed snapshot of a pickup warehouse. */
function warehouseSnapshot(w: Warehouse | null, id: number | null): ManifestWarehouse | null {
	if (!w) return null;
	const p = w.pickup;
	const cityLine = [p.city, p.state].filter(Boolean).join(", ");
	return {
		id: id ?? w.id,
		name: p.warehouse_name,
		lines: [[p.address_1, p.address_2].filter(Boolean).join(", "), `${cityLine} ${p.pincode}`.trim()].filter(
			Boolean,
		),
		phone: p.phone || null,
	};
}

/** The 409 of a request whose orders are not all ready (see the module notes). */
function notReadyConflict(
	notReady: Array<{ order_id: number; reason: NotReadyReason }>,
	manifested: Array<{ order_id: number; manifest_no: string }>,
) {
	const already_manifested_order_ids = manifested.map((m) => m.order_id);
	if (!notReady.length) {
		return failWith("already_manifested", {
			order_ids: [],
			already_manifested_order_ids,
			manifest_nos: [...new Set(manifested.map((m) => m.manifest_no))],
		});
	}
	return failWith(
		"not_ready_to_ship",
		{
			order_ids: notReady.map((n) => n.order_id),
			already_manifested_order_ids,
			reasons: Object.fromEntries(notReady.map((n) => [String(n.order_id), n.reason])),
		},
		"manifest",
	);
}

/** A stored section as printed (paise → rupees). */
export function printedSection(m: StoredManifest): ManifestSection {
	return {
		manifest_no: m.manifest_no,
		courier_name: m.courier_name,
		warehouse: m.warehouse,
		created_at: m.created_at,
		parcels: m.parcels.map((p) => ({
			awb_number: p.awb_number,
			order_no: p.order_no,
			consignee_name: p.consignee_name,
			pincode: p.pincode,
			weight_kg: p.weight_kg,
			cod_amount: toRupees(p.cod_paise),
		})),
	};
}

/**
 * Makes the manifest(s) of `order_ids` (already parsed) for `sender_id`:
 * loads every order and shipment (intake, booking; in parallel), checks
 * them, reads the pickup warehouses (one call per distinct warehouse), and
 * stores every section with its parcels and outbox rows in ONE transaction.
 * Answers the stored sections (in print order) after the commit.
 *
 * Throws 404 `{message:"orders not found: …"}`, 409 `not_ready_to_ship` /
 * `already_manifested` (see the module notes; also when a concurrent request
 * took an AWB first: the unique index decides); a collaborator failure as it
 * came (the gateway answers an unreachable service 503).
 */
export async function makeManifests(
	via: Caller,
	db: Sequelize,
	sender_id: number,
	order_ids: number[],
): Promise<StoredManifest[]> {
	const loaded = await pMap(order_ids, (id) => loadOne(via, sender_id, id), {
		concurrency: LOAD_CONCURRENCY,
	});
	const missing = loaded.filter((l) => l.kind === "missing").map((l) => l.order_id);
	if (missing.length) throw fail("documents.orders_not_found", missing);

	const ready = loaded.filter((l): l is Extract<Loaded, { kind: "ready" }> => l.kind === "ready");
	const others = loaded.filter((l): l is Extract<Loaded, { kind: "not_ready" }> => l.kind === "not_ready");
	const parcels = [...ready.map((r) => r.shipment), ...others.flatMap((o) => o.parcel ?? [])];
	const onManifest = new Map((await manifestedAwbs(db, sender_id, parcels)).map((m) => [keyOf(m), m]));
	const manifested = loaded.flatMap((l) => {
		const parcel = l.kind === "ready" ? l.shipment : l.kind === "not_ready" ? l.parcel : null;
		const m = parcel ? onManifest.get(keyOf(parcel)) : undefined;
		return m ? [{ order_id: l.order_id, manifest_no: m.manifest_no }] : [];
	});
	const manifestedIds = new Set(manifested.map((m) => m.order_id));
	const notReady = others.filter((o) => !manifestedIds.has(o.order_id));
	if (notReady.length || manifested.length) throw notReadyConflict(notReady, manifested);

	// sections: (courier, pickup warehouse) in order of first appearance; rows in request order
	const groups = new Map<string, Array<Extract<Loaded, { kind: "ready" }>>>();
	for (const r of ready) {
		const key = `${r.shipment.logistic_id}:${r.order.pickup_address_id ?? 0}`;
		const g = groups.get(key);
		if (g) g.push(r);
		else groups.set(key, [r]);
	}
	const sections: NewManifest[] = await Promise.all(
		[...groups.values()].map(async (rows) => {
			const first = rows[0];
			const pickupId = first.order.pickup_address_id;
			const { pickup } = await loadWarehouses(via, sender_id, { ...first.order, rto_address_id: null });
			return {
				sender_id,
				logistic_id: first.shipment.logistic_id,
				courier_name: first.shipment.courier_name,
				pickup_address_id: pickupId,
				warehouse: warehouseSnapshot(pickup, pickupId),
				parcels: rows.map(({ order, shipment }) => ({
					order_id: order.order_id,
					awb_number: shipment.awb_number,
					order_no: order.customer_order_no,
					consignee_name: order.consignee.name,
					pincode: order.consignee.pincode,
					weight_kg: Number(order.product.physical_weight ?? 0),
					cod_paise: toPaise(codAmountOf(order)),
				})),
			};
		}),
	);

	try {
		return await createManifests(db, sections);
	} catch (err) {
		if (!isManifestConflict(err)) throw err;
		// a concurrent manifest committed first over some of these AWBs
		const taken = new Map((await manifestedAwbs(db, sender_id, parcels)).map((m) => [keyOf(m), m]));
		const lost = ready.flatMap((r) => {
			const m = taken.get(keyOf(r.shipment));
			return m ? [{ order_id: r.order_id, manifest_no: m.manifest_no }] : [];
		});
		if (!lost.length) throw err;
		throw notReadyConflict([], lost);
	}
}

/**
 * Response headers of a manifest download: `x-manifest-no` (the manifest
 * numbers, comma-separated in section order), `x-manifest-count` (parcels in
 * the PDF), `Content-Disposition: inline; filename="manifest-<first no>.pdf"`
 * and `Cache-Control: private, no-store`.
 */
export function manifestHeaders(sections: StoredManifest[]): Record<string, string> {
	const nos = sections.map((s) => s.manifest_no);
	return {
		"Content-Disposition": `inline; filename="manifest-${(nos[0] ?? "none").replace(/[^A-Za-z0-9._-]/g, "_")}.pdf"`,
		"Cache-Control": "private, no-store",
		"x-manifest-no": nos.join(","),
		"x-manifest-count": String(sections.reduce((a, s) => a + s.parcels.length, 0)),
	};
}

/** A manifest number as issued (`MF-<yyyymmdd>-<6+ digits>`), or null. */
export function parseManifestNo(v: unknown): string | null {
	return typeof v === "string" && /^MF-\d{8}-\d{6,18}$/.test(v) ? v : null;
}
