/**
 * Mapper of the Delhivery B2C connector: our shapes → Delhivery requests
 * ({@link WireRequest}, exactly what the golden fixtures in
 * test/fixtures/couriers/delhivery hold) and Delhivery answers → our shapes.
 * Pure functions; the proxy does the HTTP.
 *
 * Answers: a definitive "no" (success:false / status "Fail" with rmk or
 * remarks, 4xx with an error) → {@link CourierRefused} with Delhivery's words;
 * an answer we cannot read → {@link CourierUnavailable}.
 */
import type { NdrAct } from "../../contracts/ndr";
import type { ShipmentStatus } from "../../shared/shipment-status";
import {
	type BookRequest,
	type BookResult,
	type CourierRate,
	CourierRefused,
	CourierUnavailable,
	type NdrActionDetails,
	type NdrUploadOutcome,
	type PickupLocation,
	type PickupRequest,
	type PincodeServiceability,
	type RateQuery,
	type RegisterResult,
	type TrackingScan,
} from "../types";
import type { WireAnswer, WireRequest } from "./proxy";
import { jsonOf } from "./proxy";

const ACCEPT = { accept: "application/json" };
const JSON_POST = { accept: "application/json", "content-type": "application/json" };

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === "object" && v !== null && !Array.isArray(v);
const str = (v: unknown): string => (typeof v === "string" ? v : typeof v === "number" ? String(v) : "");

/** `address_1, address_2, landmark` joined (Delhivery has one address line). */
function line(a: { address_1: string; address_2?: string | null; landmark?: string | null }): string {
	return [a.address_1, a.address_2, a.landmark].filter((p) => p?.trim()).join(", ");
}

/** `POST /api/backend/clientwarehouse/create/` of a pickup location. */
export function toWarehouseCreate(loc: PickupLocation): WireRequest {
	const a = loc.address;
	const r = loc.return_address;
	return {
		method: "POST",
		path: "/api/backend/clientwarehouse/create/",
		query: {},
		headers: JSON_POST,
		body: {
			name: loc.warehouse_code,
			registered_name: loc.warehouse_name,
			phone: a.phone,
			email: a.email ?? "",
			address: line(a),
			city: a.city,
			pin: a.pincode,
			country: "India",
			return_address: line(r),
			return_city: r.city,
			return_state: r.state,
			return_pin: r.pincode,
			return_country: "India",
		},
	};
}

/** `POST /api/backend/clientwarehouse/edit/` of a pickup location that exists already. */
export function toWarehouseEdit(loc: PickupLocation): WireRequest {
	return {
		method: "POST",
		path: "/api/backend/clientwarehouse/edit/",
		query: {},
		headers: JSON_POST,
		body: {
			name: loc.warehouse_code,
			registered_name: loc.warehouse_name,
			phone: loc.address.phone,
			address: line(loc.address),
			pin: loc.address.pincode,
		},
	};
}

/** The courier's error words of a warehouse answer (`error` list or string). */
function errorWords(o: Obj): string {
	const e = o.error;
	if (Array.isArray(e)) return e.map(str).filter(Boolean).join("; ");
	if (isObj(e)) return str(e.message);
	return str(e) || str(o.rmk) || str(o.message);
}

/**
 * A warehouse create/edit answer: the location id, or "exists" when create
 * says the name is taken (then the adapter edits). Refusal → CourierRefused.
 */
export function parseWarehouse(ans: WireAnswer, loc: PickupLocation): RegisterResult | "exists" {
	const o = jsonOf(ans, "Delhivery warehouse");
	if (!isObj(o)) throw new CourierUnavailable("Delhivery warehouse: unreadable answer");
	if (o.success === true)
		return { courier_location_id: str(isObj(o.data) ? o.data.name : "") || loc.warehouse_code };
	const words = errorWords(o);
	if (/already exists/i.test(words)) return "exists";
	if (!words) throw new CourierUnavailable(`Delhivery warehouse: HTTP ${ans.status} without a reason`);
	throw new CourierRefused(words);
}

/** `GET /waybill/api/bulk/json/?count=N`. */
export function toWaybills(count: number): WireRequest {
	return {
		method: "GET",
		path: "/waybill/api/bulk/json/",
		query: { count: String(count) },
		headers: ACCEPT,
		body: null,
	};
}

/** The waybills of a bulk answer (a JSON string of comma-separated waybills, or a list). */
export function parseWaybills(ans: WireAnswer): string[] {
	const o = jsonOf(ans, "Delhivery waybills");
	const list = typeof o === "string" ? o.split(",") : Array.isArray(o) ? o.map(str) : null;
	if (ans.status >= 400 && isObj(o)) throw new CourierRefused(errorWords(o) || `HTTP ${ans.status}`);
	if (!list) throw new CourierUnavailable("Delhivery waybills: unreadable answer");
	return list.map((w) => w.trim()).filter(Boolean);
}

/** `POST /api/cmu/create.json`, form `format=json&data=<JSON>`; payment_mode Prepaid / COD / Pickup (reverse). */
export function toCreate(req: BookRequest): WireRequest {
	const c = req.consignee;
	const r = req.return_address;
	const d = req.dimensions_cm;
	const payment_mode = req.direction === "reverse" ? "Pickup" : req.payment === "cod" ? "COD" : "Prepaid";
	const shipment: Obj = {
		name: c.name,
		add: line(c),
		city: c.city,
		state: c.state,
		pin: c.pincode,
		country: "India",
		phone: c.phone,
		email: c.email ?? "",
		order: req.reference,
		client_order_no: req.order_no,
		payment_mode,
		cod_amount: payment_mode === "COD" ? req.cod_amount : 0,
		total_amount: req.declared_value,
		weight: Math.round(req.weight_kg * 1000),
		...(d ? { shipment_length: d.length, shipment_width: d.width, shipment_height: d.height } : {}),
		products_desc: req.product_description,
		quantity: 1,
		seller_name: req.pickup.name,
		return_name: r.name,
		return_add: line(r),
		return_city: r.city,
		return_state: r.state,
		return_pin: r.pincode,
		return_phone: r.phone,
		return_country: "India",
	};
	return {
		method: "POST",
		path: "/api/cmu/create.json",
		query: {},
		headers: { accept: "application/json", "content-type": "application/x-www-form-urlencoded" },
		body: {
			format: "json",
			data: { shipments: [shipment], pickup_location: { name: req.pickup_location_code } },
		},
	};
}

/** A create answer: the booked package, or CourierRefused with Delhivery's remarks / rmk. */
export function parseCreate(ans: WireAnswer, reference: string): BookResult {
	const o = jsonOf(ans, "Delhivery create");
	if (!isObj(o) || (!Array.isArray(o.packages) && typeof o.success !== "boolean"))
		throw new CourierUnavailable("Delhivery create: unreadable answer");
	const pkgs = (Array.isArray(o.packages) ? o.packages : []).filter(isObj);
	const mine = pkgs.find((p) => str(p.refnum) === reference) ?? pkgs[0];
	if (mine && str(mine.status).toLowerCase() === "success" && str(mine.waybill)) {
		return {
			reference,
			awb_number: str(mine.waybill),
			routing_code: str(mine.sort_code) || null,
			status: "booked",
		};
	}
	const remarks = mine && Array.isArray(mine.remarks) ? mine.remarks.map(str).filter((s) => s.trim()) : [];
	const words = remarks.join("; ") || str(o.rmk) || errorWords(o);
	if (words) throw new CourierRefused(words);
	throw new CourierUnavailable("Delhivery create: no package and no reason in the answer");
}

/** `GET /api/v1/packages/json/?waybill=a,b` (up to 50). */
export function toTrack(awbs: string[]): WireRequest {
	return {
		method: "GET",
		path: "/api/v1/packages/json/",
		query: { waybill: awbs.join(",") },
		headers: ACCEPT,
		body: null,
	};
}

/** `GET /api/v1/packages/json/?ref_ids=<reference>`: the shipment booked under our reference. */
export function toLookup(reference: string): WireRequest {
	return {
		method: "GET",
		path: "/api/v1/packages/json/",
		query: { ref_ids: reference },
		headers: ACCEPT,
		body: null,
	};
}

/**
 * Delhivery status codes whose meaning the ScanType alone does not give
 * (public status code lists; the rest fall to {@link statusOfScan}'s rules).
 */
export const STATUS_CODES: Readonly<Record<string, ShipmentStatus>> = {
	"X-UCI": "booked",
	"FMPUR-101": "pickup_scheduled",
	"X-PPOM": "picked_up",
	"X-PIOM": "picked_up",
	"X-DDD3FD": "out_for_delivery",
	"EOD-38": "delivered",
	"EOD-74": "undelivered",
	"EOD-11": "undelivered",
	"EOD-69": "undelivered",
	"EOD-6": "undelivered",
	"RT-101": "rto_initiated",
	"RT-110": "rto_delivered",
	"X-CNCL": "cancelled",
};

/**
 * Normalized status of one Delhivery scan. Order: ScanType CN → cancelled;
 * RT → rto (a delivered RT / RTO scan → rto_delivered); DL → delivered (or
 * rto_delivered when the words say RTO); then {@link STATUS_CODES}; then the
 * words (manifested, picked, dispatched / out for delivery, pending, lost,
 * damage); then by ScanType: PP / PU → picked_up, UD → in_transit.
 */
export function statusOfScan(s: {
	ScanType?: unknown;
	StatusCode?: unknown;
	Scan?: unknown;
}): ShipmentStatus {
	const type = str(s.ScanType).trim().toUpperCase();
	const code = str(s.StatusCode).trim().toUpperCase();
	const words = str(s.Scan).trim().toLowerCase();
	if (type === "CN" || words === "cancelled" || words === "canceled") return "cancelled";
	if (type === "RT") {
		if (code === "RT-110" || words.includes("delivered")) return "rto_delivered";
		if (code === "RT-101" || words.includes("initiat")) return "rto_initiated";
		return "rto_in_transit";
	}
	if (type === "DL")
		return /\brto\b|return/.test(words) || code.startsWith("RT-") ? "rto_delivered" : "delivered";
	const byCode = STATUS_CODES[code];
	if (byCode) return byCode;
	if (/\blost\b/.test(words)) return "lost";
	if (words.includes("damage")) return "damaged";
	if (words.includes("manifest")) return "booked";
	if (words.includes("not picked") || words.includes("schedul")) return "pickup_scheduled";
	if (words.includes("picked")) return "picked_up";
	if (/dispatched|out for delivery/.test(words)) return "out_for_delivery";
	if (words.includes("pending") || words.includes("undelivered")) return "undelivered";
	if (type === "PP" || type === "PU") return "picked_up";
	return "in_transit";
}

/** A Delhivery time as ISO-8601 UTC; a time without zone is IST (+05:30). Null when unreadable. */
export function courierTimeToUtc(t: unknown): string | null {
	const raw = str(t).trim();
	if (!raw) return null;
	let s = raw.replace(/^(\d{4}-\d{2}-\d{2}) (\d)/, "$1T$2");
	if (!/(Z|[+-]\d{2}:?\d{2})$/.test(s)) s += "+05:30";
	const ms = Date.parse(s);
	return Number.isNaN(ms) ? null : new Date(ms).toISOString();
}

/** One scan detail (track `ScanDetail` or push `Status`) as a {@link TrackingScan}; null when it has no time. */
function scanOf(d: Obj, code?: string): TrackingScan | null {
	const at = courierTimeToUtc(d.ScanDateTime ?? d.StatusDateTime);
	if (!at) return null;
	const courier_code = code ?? str(d.StatusCode);
	const scan: TrackingScan = {
		status: statusOfScan({
			ScanType: d.ScanType ?? d.StatusType,
			StatusCode: courier_code,
			Scan: d.Scan ?? d.Status,
		}),
		courier_code,
		courier_status: str(d.Scan ?? d.Status),
		location: str(d.ScannedLocation ?? d.StatusLocation),
		at,
	};
	const remarks = str(d.Instructions);
	if (remarks) scan.remarks = remarks;
	return scan;
}

/** The shipments of a track answer; `[]` for Delhivery's "No such waybill" answer. */
function shipmentsOf(ans: WireAnswer, what: string): Obj[] {
	const o = jsonOf(ans, what);
	if (!isObj(o)) throw new CourierUnavailable(`${what}: unreadable answer`);
	if (Array.isArray(o.ShipmentData))
		return o.ShipmentData.filter(isObj).map((x) => (isObj(x.Shipment) ? x.Shipment : {}));
	if (typeof o.Error === "string" && /no such waybill/i.test(o.Error)) return [];
	if (ans.status >= 400 && errorWords(o)) throw new CourierRefused(errorWords(o));
	throw new CourierUnavailable(`${what}: unreadable answer`);
}

/** Scans of each AWB of a track answer, oldest first; unknown AWBs absent. */
export function parseTrackMany(ans: WireAnswer): Map<string, TrackingScan[]> {
	const out = new Map<string, TrackingScan[]>();
	for (const sh of shipmentsOf(ans, "Delhivery track")) {
		const awb = str(sh.AWB);
		if (!awb) continue;
		const scans = (Array.isArray(sh.Scans) ? sh.Scans : [])
			.map((x) => (isObj(x) && isObj(x.ScanDetail) ? scanOf(x.ScanDetail) : null))
			.filter((x): x is TrackingScan => x !== null)
			.sort((a, b) => a.at.localeCompare(b.at));
		out.set(awb, scans);
	}
	return out;
}

/** Scans of one AWB; Delhivery does not know it → CourierRefused with its words. */
export function parseTrack(ans: WireAnswer, awb: string): TrackingScan[] {
	const scans = parseTrackMany(ans).get(awb);
	if (!scans) throw new CourierRefused("No such waybill or Order Id found");
	return scans;
}

/** A look-up by reference: the shipment, or null when Delhivery never saw the reference. */
export function parseLookup(ans: WireAnswer, reference: string): BookResult | null {
	const shs = shipmentsOf(ans, "Delhivery lookup");
	const sh = shs.find((s) => str(s.ReferenceNo) === reference) ?? shs[0];
	if (!sh || !str(sh.AWB)) return null;
	const st = isObj(sh.Status) ? sh.Status : {};
	const cancelled = str(st.StatusType).toUpperCase() === "CN" || /cancel/i.test(str(st.Status));
	return {
		reference,
		awb_number: str(sh.AWB),
		routing_code: str(sh.SortCode ?? sh.Sortcode) || null,
		status: cancelled ? "cancelled" : "booked",
	};
}

/** `POST /api/p/edit` `{"waybill","cancellation":"true"}`. */
export function toCancel(awb: string): WireRequest {
	return {
		method: "POST",
		path: "/api/p/edit",
		query: {},
		headers: JSON_POST,
		body: { waybill: awb, cancellation: "true" },
	};
}

/** A cancel answer: `status:true` → cancelled; else CourierRefused with Delhivery's words. */
export function parseCancel(ans: WireAnswer): { cancelled: boolean } {
	const o = jsonOf(ans, "Delhivery cancel");
	if (!isObj(o)) throw new CourierUnavailable("Delhivery cancel: unreadable answer");
	if (o.status === true) return { cancelled: true };
	const words = errorWords(o) || str(o.remark);
	if (words) throw new CourierRefused(words);
	throw new CourierUnavailable("Delhivery cancel: unreadable answer");
}

/** `GET /api/p/packing_slip?wbns=<awb>&pdf=true`. */
export function toPackingSlip(awb: string): WireRequest {
	return {
		method: "GET",
		path: "/api/p/packing_slip",
		query: { wbns: awb, pdf: "true" },
		headers: ACCEPT,
		body: null,
	};
}

/** A packing slip answer: the PDF link to download, or the PDF itself (base64). None → "none". */
export function parsePackingSlip(ans: WireAnswer): { link: string } | { bytes: Buffer } | "none" {
	const o = jsonOf(ans, "Delhivery packing slip");
	if (!isObj(o) || !Array.isArray(o.packages))
		throw new CourierUnavailable("Delhivery packing slip: unreadable answer");
	const p = o.packages.find(isObj);
	if (!p) return "none";
	if (str(p.pdf_download_link)) return { link: str(p.pdf_download_link) };
	if (str(p.pdf_encoding)) return { bytes: Buffer.from(str(p.pdf_encoding), "base64") };
	throw new CourierUnavailable("Delhivery packing slip: no PDF in the answer");
}

/** `POST /api/p/update` with one act (`RE-ATTEMPT`, `DEFER_DLV`, `EDIT_DETAILS`). */
export function toNdrUpdate(awb: string, act: NdrAct, details: NdrActionDetails): WireRequest {
	const action_data: Obj = {};
	if (act === "DEFER_DLV" && details.deferred_date) action_data.deferred_date = details.deferred_date;
	if (act === "EDIT_DETAILS") {
		if (details.phone) action_data.phone = details.phone;
		if (details.address) {
			action_data.add = line(details.address);
			if (details.address.pincode) action_data.pin = details.address.pincode;
		}
	}
	const item: Obj = { waybill: awb, act };
	if (Object.keys(action_data).length) item.action_data = action_data;
	return { method: "POST", path: "/api/p/update", query: {}, headers: JSON_POST, body: { data: [item] } };
}

/** An NDR answer: its `request_id` (upload id); refusal → CourierRefused with Delhivery's words. */
export function parseNdrUpdate(ans: WireAnswer): { request_id: string } {
	const o = jsonOf(ans, "Delhivery NDR");
	if (!isObj(o)) throw new CourierUnavailable("Delhivery NDR: unreadable answer");
	const id = str(o.request_id ?? o.upload_wbn);
	if (id && o.success !== false) return { request_id: id };
	const words = errorWords(o);
	if (words) throw new CourierRefused(words);
	throw new CourierUnavailable("Delhivery NDR: no request id in the answer");
}

/** `GET /api/cmu/get_bulk_upl/<request_id>`: the outcome of an NDR upload (`request_id` percent-encoded in the path). */
export function toNdrStatus(request_id: string): WireRequest {
	return {
		method: "GET",
		path: `/api/cmu/get_bulk_upl/${encodeURIComponent(request_id)}`,
		query: {},
		headers: ACCEPT,
		body: null,
	};
}

/** Per-waybill words of an NDR upload status that mean "refused" (lower case). */
const NDR_REFUSED_WORDS = new Set(["failure", "fail", "failed", "error"]);

/**
 * An NDR upload status answer `{request_id, status, results:[{waybill, act, status, remarks}]}`
 * (shape from the simulator; Delhivery does not publish it): per waybill `Success` → accepted,
 * `Failure` / `Fail` / `Error` → refused with its remarks, anything else (`Pending`,
 * `In Progress`, no status) → pending. No `results` yet → `[]` (every AWB still pending).
 * 400 / 404 (unknown upload id) → CourierRefused with Delhivery's words; HTML, malformed JSON,
 * another status or an unreadable body → CourierUnavailable.
 */
export function parseNdrStatus(ans: WireAnswer, request_id: string): NdrUploadOutcome[] {
	if (ans.status === 400 || ans.status === 404) {
		let words = "";
		try {
			const o = JSON.parse(ans.text) as unknown;
			if (isObj(o)) words = errorWords(o);
		} catch {
			/* not JSON: our words */
		}
		throw new CourierRefused(words || `Delhivery does not know NDR upload ${request_id}`);
	}
	const o = jsonOf(ans, "Delhivery NDR status");
	if (ans.status < 200 || ans.status >= 300)
		throw new CourierUnavailable(`Delhivery NDR status: HTTP ${ans.status}`);
	if (!isObj(o)) throw new CourierUnavailable("Delhivery NDR status: unreadable answer");
	if (o.results === undefined || o.results === null) return [];
	if (!Array.isArray(o.results)) throw new CourierUnavailable("Delhivery NDR status: unreadable results");
	const out: NdrUploadOutcome[] = [];
	for (const r of o.results) {
		if (!isObj(r) || !str(r.waybill)) continue;
		const word = str(r.status).trim().toLowerCase();
		const remarks = str(r.remarks).trim() || null;
		const state = word === "success" ? "accepted" : NDR_REFUSED_WORDS.has(word) ? "refused" : "pending";
		out.push({ awb_number: str(r.waybill), state, remarks });
	}
	return out;
}

/** `POST /fm/request/new/` (time `HH:mm` → `HH:mm:00`). */
export function toPickup(req: PickupRequest): WireRequest {
	return {
		method: "POST",
		path: "/fm/request/new/",
		query: {},
		headers: JSON_POST,
		body: {
			pickup_location: req.pickup_location_code,
			pickup_date: req.date,
			pickup_time: `${req.time}:00`,
			expected_package_count: req.expected_packages,
		},
	};
}

/**
 * A pickup answer: its `pickup_id`. Refusal → CourierRefused with Delhivery's
 * words: `error` (`{pr_exist, error:{message}}`), else a 4xx answer's
 * field-keyed messages (e.g. `{"pickup_date":"Pickup date cannot be in past"}`),
 * joined with "; ". No id and no words → CourierUnavailable.
 */
export function parsePickup(ans: WireAnswer): { pickup_id: string } {
	const o = jsonOf(ans, "Delhivery pickup");
	if (!isObj(o)) throw new CourierUnavailable("Delhivery pickup: unreadable answer");
	const id = str(o.pickup_id);
	if (id) return { pickup_id: id };
	const fieldWords =
		ans.status >= 400
			? Object.values(o)
					.flat()
					.filter((v): v is string => typeof v === "string" && v.trim() !== "")
					.join("; ")
			: "";
	const words = errorWords(o) || fieldWords;
	if (words) throw new CourierRefused(words);
	throw new CourierUnavailable("Delhivery pickup: no pickup id in the answer");
}

/** `GET /api/kinko/v1/invoice/charges/.json?md&cgm&o_pin&d_pin&ss&pt&cod`. */
export function toRate(q: RateQuery): WireRequest {
	return {
		method: "GET",
		path: "/api/kinko/v1/invoice/charges/.json",
		query: {
			md: q.mode === "express" ? "E" : "S",
			cgm: String(Math.round(q.weight_kg * 1000)),
			o_pin: q.from_pin,
			d_pin: q.to_pin,
			ss: q.leg === "rto" ? "RTO" : q.leg === "dto" ? "DTO" : "Delivered",
			pt: q.payment === "cod" ? "COD" : "Pre-paid",
			cod: String(q.payment === "cod" ? q.cod_amount : 0),
		},
		headers: ACCEPT,
		body: null,
	};
}

/** A rate answer: `total_amount` and the non-zero numeric `charge_*`, `gross_amount` and taxes. */
export function parseRate(ans: WireAnswer): CourierRate {
	const o = jsonOf(ans, "Delhivery rate");
	const row = Array.isArray(o)
		? o.find(isObj)
		: isObj(o) && typeof o.total_amount === "number"
			? o
			: undefined;
	if (!row) {
		if (isObj(o) && errorWords(o)) throw new CourierRefused(errorWords(o));
		throw new CourierUnavailable("Delhivery rate: unreadable answer");
	}
	if (typeof row.total_amount !== "number") throw new CourierUnavailable("Delhivery rate: no total_amount");
	const breakdown: Record<string, number> = {};
	for (const [k, v] of Object.entries(row))
		if ((k.startsWith("charge_") || k === "gross_amount") && typeof v === "number" && v !== 0)
			breakdown[k] = v;
	if (isObj(row.tax_data))
		for (const [k, v] of Object.entries(row.tax_data)) if (typeof v === "number" && v !== 0) breakdown[k] = v;
	return { total: row.total_amount, breakdown };
}

/** `GET /c/api/pin-codes/json/?filter_codes=a,b`. */
export function toServiceability(pincodes: string[]): WireRequest {
	return {
		method: "GET",
		path: "/c/api/pin-codes/json/",
		query: { filter_codes: pincodes.join(",") },
		headers: ACCEPT,
		body: null,
	};
}

/** A pin-codes answer by pincode (`Y`/`N` flags; max amount / weight 0 → null). */
export function parseServiceability(ans: WireAnswer): Map<string, PincodeServiceability> {
	const o = jsonOf(ans, "Delhivery pin-codes");
	if (!isObj(o) || !Array.isArray(o.delivery_codes)) {
		if (isObj(o) && ans.status >= 400 && errorWords(o)) throw new CourierRefused(errorWords(o));
		throw new CourierUnavailable("Delhivery pin-codes: unreadable answer");
	}
	const yes = (v: unknown) => str(v).trim().toUpperCase() === "Y";
	const amount = (v: unknown) => (typeof v === "number" && v > 0 ? v : null);
	const out = new Map<string, PincodeServiceability>();
	for (const d of o.delivery_codes) {
		const p = isObj(d) && isObj(d.postal_code) ? d.postal_code : null;
		if (!p || !str(p.pin)) continue;
		out.set(str(p.pin), {
			prepaid: yes(p.pre_paid),
			cod: yes(p.cod),
			pickup: yes(p.pickup),
			reverse: yes(p.repl),
			oda: yes(p.is_oda),
			max_amount: amount(p.max_amount),
			max_weight_kg: amount(p.max_weight),
			sort_code: str(p.sort_code) || null,
		});
	}
	return out;
}

/** Pushed scans (one `{Shipment:{AWB, Status, NSLCode}}` or a list of them). Unreadable → CourierRefused. */
export function parsePush(raw: Buffer): { awb_number: string; scans: TrackingScan[] }[] {
	let o: unknown;
	try {
		o = JSON.parse(raw.toString("utf8"));
	} catch {
		throw new CourierRefused("Delhivery push body is not JSON");
	}
	const items = Array.isArray(o) ? o : [o];
	return items.map((it) => {
		const sh = isObj(it) && isObj(it.Shipment) ? it.Shipment : null;
		if (!sh || !str(sh.AWB)) throw new CourierRefused("Delhivery push body has no Shipment.AWB");
		const st = isObj(sh.Status) ? sh.Status : {};
		const scan = scanOf(st, str(sh.NSLCode ?? st.StatusCode));
		if (!scan) throw new CourierRefused("Delhivery push body has no Status.StatusDateTime");
		return { awb_number: str(sh.AWB), scans: [scan] };
	});
}
