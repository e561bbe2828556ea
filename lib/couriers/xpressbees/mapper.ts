/**
 * Xpressbees mapper: our shapes ↔ Xpressbees' JSON (ship API `shipments2`).
 * Pure functions; the proxy does the HTTP. Every parser turns the answer into
 * our result, {@link CourierRefused} (Xpressbees said no: `status: false`, or a
 * 4xx JSON answer; its `message` words kept) or {@link CourierUnavailable}
 * (an answer we cannot read: the outcome is unknown).
 *
 * Units on the wire: weight grams, dimensions cm, money rupees; times IST
 * `YYYY-MM-DD HH:mm[:ss]`.
 */
import type { NdrAct } from "../../contracts/ndr";
import type { ShipmentStatus } from "../../shared/shipment-status";
import type {
	BookRequest,
	BookResult,
	CourierRate,
	NdrActionDetails,
	RateQuery,
	TrackingScan,
} from "../types";
import { CourierDuplicate, CourierRefused, CourierUnavailable } from "../types";
import type { XbResponse } from "./proxy";

/** Package size sent when a booking has no dimensions (Xpressbees requires them), cm. */
export const DEFAULT_DIMENSION_CM = 10;

/** An address part of a shipment body. */
export interface XbParty {
	name: string;
	address: string;
	address_2: string;
	city: string;
	state: string;
	pincode: string;
	phone: string;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);

/** Words of a refusal that says the order number is taken (see {@link parseShipment}). */
const DUPLICATE_WORDS = /already\s+exist|duplicate/i;

/** The courier's words of a refusal: `message` as a string, a list or an object of field messages. */
export function wordsOf(body: unknown, fallback: string): string {
	const m = isObj(body) ? body.message : undefined;
	if (typeof m === "string" && m.trim()) return m.trim();
	if (Array.isArray(m)) return m.map(String).join("; ") || fallback;
	if (isObj(m)) return Object.values(m).flat().map(String).join("; ") || fallback;
	return fallback;
}

/**
 * The `data` of a successful answer: throws CourierRefused on `status: false`
 * or a 4xx, CourierUnavailable when `status: true` is missing.
 */
export function dataOf(res: XbResponse, what: string): unknown {
	const body = res.body;
	if (isObj(body) && body.status === false) throw new CourierRefused(wordsOf(body, `${what} refused`));
	if (res.status >= 400) throw new CourierRefused(wordsOf(body, `${what} refused: HTTP ${res.status}`));
	if (!isObj(body) || body.status !== true)
		throw new CourierUnavailable(`xpressbees ${what}: unreadable answer`);
	return body.data;
}

function party(a: BookRequest["consignee"]): XbParty {
	return {
		name: a.name,
		address: a.address_1,
		address_2: [a.address_2, a.landmark].filter((x): x is string => !!x?.trim()).join(", "),
		city: a.city,
		state: a.state,
		pincode: a.pincode,
		phone: a.phone,
	};
}

/**
 * `POST /api/shipments2` body of a forward `req`. `order_number` is our
 * reference with `unique_order_number: "yes"` (Xpressbees refuses a second
 * shipment of the same order number: a retried booking is never doubled); our
 * order number rides as the item's `sku`. Weight in grams, dimensions in cm,
 * amounts in rupees.
 */
export function toShipment(req: BookRequest, courierId: string | null): Obj {
	const dims = dimensionsOf(req);
	const body: Obj = {
		order_number: req.reference,
		unique_order_number: "yes",
		payment_type: req.payment,
		order_amount: req.declared_value,
		discount: 0,
		shipping_charges: 0,
		cod_charges: 0,
		collectable_amount: req.payment === "cod" ? req.cod_amount : 0,
		package_weight: Math.round(req.weight_kg * 1000),
		package_length: dims.length,
		package_breadth: dims.width,
		package_height: dims.height,
		request_auto_pickup: "yes",
		consignee: party(req.consignee),
		pickup: { warehouse_name: req.pickup_location_code, ...party(req.pickup) },
		order_items: [{ name: req.product_description, qty: 1, price: req.declared_value, sku: req.order_no }],
	};
	if (courierId) body.courier_id = courierId;
	return body;
}

/**
 * `POST /api/reverseshipments` body of a reverse `req` (Xpressbees books
 * returns on their own endpoint): `order_id` our reference, `consignee` the
 * customer the parcel is collected from, `pickup` the warehouse it goes back
 * to (Xpressbees' names), one product line (`product_amount` rupees as text),
 * weight in grams, dimensions in cm, no doorstep quality check (`qccheck`
 * "0", so no product images are sent).
 */
export function toReverseShipment(req: BookRequest): Obj {
	const dims = dimensionsOf(req);
	return {
		order_id: req.reference,
		request_auto_pickup: "yes",
		consignee: party(req.consignee),
		pickup: { warehouse_name: req.pickup_location_code, ...party(req.return_address) },
		categories: "Others",
		product_name: req.product_description,
		product_qty: "1",
		product_amount: String(req.declared_value),
		package_weight: Math.round(req.weight_kg * 1000),
		package_length: String(dims.length),
		package_breadth: String(dims.width),
		package_height: String(dims.height),
		qccheck: "0",
	};
}

/** The parcel's dimensions (cm), {@link DEFAULT_DIMENSION_CM} each when not given. */
function dimensionsOf(req: BookRequest): { length: number; width: number; height: number } {
	return (
		req.dimensions_cm ?? {
			length: DEFAULT_DIMENSION_CM,
			width: DEFAULT_DIMENSION_CM,
			height: DEFAULT_DIMENSION_CM,
		}
	);
}

/**
 * Reads the booking answer `{status: true, data: {awb_number, status, …}}`.
 * A refusal of the order number as already used (`unique_order_number:
 * "yes"`) throws CourierDuplicate, with the AWB when the answer carries
 * `data.awb_number`: the shipment exists at Xpressbees. Xpressbees does not
 * publish the words, so a message saying "already exist(s)" or "duplicate"
 * is taken as that refusal.
 */
export function parseShipment(res: XbResponse, reference: string): BookResult {
	const body = res.body;
	if (isObj(body) && (body.status === false || res.status >= 400)) {
		const words = wordsOf(body, "shipment create refused");
		if (DUPLICATE_WORDS.test(words)) {
			const awb = isObj(body.data) ? body.data.awb_number : undefined;
			const known = typeof awb === "string" || typeof awb === "number";
			throw new CourierDuplicate(words, known ? String(awb) : null);
		}
	}
	const data = dataOf(res, "shipment create");
	const awb = isObj(data) ? data.awb_number : undefined;
	if (typeof awb !== "string" && typeof awb !== "number") {
		throw new CourierUnavailable("xpressbees shipment create: answer without awb_number");
	}
	const status = isObj(data) && String(data.status).toLowerCase() === "cancelled" ? "cancelled" : "booked";
	return { reference, awb_number: String(awb), routing_code: null, status };
}

/** Reads the cancel answer `{status: true, message}`. */
export function parseCancel(res: XbResponse): { cancelled: boolean } {
	dataOf(res, "cancel");
	return { cancelled: true };
}

/** Xpressbees tracking status codes → our status. */
export const STATUS_OF_CODE: Readonly<Record<string, ShipmentStatus>> = {
	pp: "pickup_scheduled",
	pu: "picked_up",
	it: "in_transit",
	ofd: "out_for_delivery",
	dl: "delivered",
	ud: "undelivered",
	ex: "undelivered",
	rt: "rto_initiated",
	"rt-it": "rto_in_transit",
	"rt-dl": "rto_delivered",
	lt: "lost",
	dg: "damaged",
	cn: "cancelled",
};

/** IST `YYYY-MM-DD HH:mm[:ss]` (or ISO with offset) → ISO-8601 UTC; null when unreadable. */
export function utcOfIst(t: string): string | null {
	const m = /^(\d{4})-(\d{2})-(\d{2})[ T](\d{2}):(\d{2})(?::(\d{2}))?$/.exec(t.trim());
	if (m) {
		const ms = Date.UTC(+m[1], +m[2] - 1, +m[3], +m[4], +m[5], +(m[6] ?? 0)) - 330 * 60_000;
		return new Date(ms).toISOString();
	}
	const d = new Date(t);
	return /[zZ]|[+-]\d{2}:?\d{2}$/.test(t) && !Number.isNaN(d.getTime()) ? d.toISOString() : null;
}

/**
 * Reads `GET /api/shipments2/track/<awb>`: `data.history[]` of `{status_code,
 * location, event_time, message}` → scans oldest first. Events of a code not in
 * {@link STATUS_OF_CODE} or with an unreadable time are left out. Unknown AWB
 * (`status: false`) → CourierRefused.
 */
export function parseTrack(res: XbResponse): TrackingScan[] {
	const data = dataOf(res, "track");
	const history = isObj(data) && Array.isArray(data.history) ? data.history : null;
	if (!history) throw new CourierUnavailable("xpressbees track: answer without history");
	const scans: TrackingScan[] = [];
	for (const h of history) {
		if (!isObj(h)) continue;
		const code = String(h.status_code ?? "");
		const status = STATUS_OF_CODE[code.toLowerCase()];
		const at = typeof h.event_time === "string" ? utcOfIst(h.event_time) : null;
		if (!status || !at) continue;
		const words = typeof h.message === "string" ? h.message : code;
		const scan: TrackingScan = {
			status,
			courier_code: code,
			courier_status: words,
			location: typeof h.location === "string" ? h.location : "",
			at,
		};
		if (status === "undelivered" && words) scan.remarks = words;
		scans.push(scan);
	}
	return scans.sort((a, b) => a.at.localeCompare(b.at));
}

/**
 * `POST /api/ndr/create` body: RE-ATTEMPT → `re-attempt`; DEFER_DLV →
 * `re-attempt` with `action_data.re_attempt_date`; EDIT_DETAILS → one
 * `change_phone` and/or one `change_address` entry. Throws CourierRefused when
 * the act lacks what it needs (no date; neither phone nor address).
 */
export function toNdr(awb: string, act: NdrAct, d: NdrActionDetails): Obj[] {
	if (act === "RE-ATTEMPT") return [{ awb, action: "re-attempt" }];
	if (act === "DEFER_DLV") {
		if (!d.deferred_date) throw new CourierRefused("DEFER_DLV needs a deferred date");
		return [{ awb, action: "re-attempt", action_data: { re_attempt_date: d.deferred_date } }];
	}
	const out: Obj[] = [];
	if (d.phone) out.push({ awb, action: "change_phone", action_data: { phone: d.phone } });
	if (d.address) {
		const a = d.address;
		out.push({
			awb,
			action: "change_address",
			action_data: {
				address_1: a.address_1,
				address_2: [a.address_2, a.landmark].filter((x): x is string => !!x?.trim()).join(", "),
			},
		});
	}
	if (!out.length) throw new CourierRefused("EDIT_DETAILS needs a phone or an address");
	return out;
}

/**
 * Reads the NDR answer: a list of `{awb, status, message}`, bare or as the
 * `data` of `{status: true, data: [...]}`; `status: false` anywhere (or a 4xx)
 * → CourierRefused (its message). Xpressbees answers no request id: ours is
 * `<awb>:<act>`.
 */
export function parseNdr(res: XbResponse, awb: string, act: NdrAct): { request_id: string } {
	const body = res.body;
	if (isObj(body) && body.status === false) throw new CourierRefused(wordsOf(body, "ndr refused"));
	if (res.status >= 400) throw new CourierRefused(wordsOf(body, `ndr refused: HTTP ${res.status}`));
	const list = Array.isArray(body) ? body : isObj(body) && Array.isArray(body.data) ? body.data : null;
	if (!list?.length) throw new CourierUnavailable("xpressbees ndr: unreadable answer");
	for (const x of list) {
		if (isObj(x) && x.status === false) throw new CourierRefused(wordsOf(x, "ndr refused"));
		if (!isObj(x) || x.status !== true) throw new CourierUnavailable("xpressbees ndr: unreadable answer");
	}
	return { request_id: `${awb}:${act}` };
}

/** `POST /api/courier/serviceability` body of a rate query (forward deliveries only; weight grams). */
export function toRate(q: RateQuery): Obj {
	if (q.leg !== "delivered") throw new CourierRefused(`${q.leg} rates not supported by Xpressbees`);
	return {
		origin: q.from_pin,
		destination: q.to_pin,
		payment_type: q.payment,
		order_amount: q.payment === "cod" ? q.cod_amount : 0,
		weight: Math.round(q.weight_kg * 1000),
		length: DEFAULT_DIMENSION_CM,
		breadth: DEFAULT_DIMENSION_CM,
		height: DEFAULT_DIMENSION_CM,
	};
}

/**
 * Reads the rate answer: `data[]` of `{id, name, freight_charges, cod_charges,
 * total_charges}`; picks `courierId` when set, else the first whose name says
 * the mode ("air" for express, "surface" for surface). None → CourierRefused.
 */
export function parseRate(res: XbResponse, q: RateQuery, courierId: string | null): CourierRate {
	const data = dataOf(res, "rate");
	if (!Array.isArray(data)) throw new CourierUnavailable("xpressbees rate: answer without a list");
	const word = q.mode === "express" ? "air" : "surface";
	const hit = data.filter(isObj).find((r) =>
		courierId
			? String(r.id) === courierId
			: String(r.name ?? "")
					.toLowerCase()
					.includes(word),
	);
	if (!hit)
		throw new CourierRefused(
			`no Xpressbees ${courierId ? `service ${courierId}` : q.mode} rate for this lane`,
		);
	const total = Number(hit.total_charges);
	if (!Number.isFinite(total)) throw new CourierUnavailable("xpressbees rate: total_charges unreadable");
	const breakdown: Record<string, number> = {};
	for (const k of ["freight_charges", "cod_charges"]) {
		const v = Number(hit[k]);
		if (hit[k] !== undefined && Number.isFinite(v)) breakdown[k] = v;
	}
	return { total, breakdown };
}
