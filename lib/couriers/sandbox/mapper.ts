/**
 * Mapper of the sandbox courier connector: our shapes (lib/couriers/types.ts)
 * ↔ the simulator's Delhivery-like wire format (./wire.ts).
 *
 * Interpretation of answers (after the proxy has turned timeouts, connection
 * failures and 5xx into CourierUnavailable):
 * - a definitive "no" (create package `status: "Fail"`, 4xx with the courier's
 *   error text, cancel `status: false`) → {@link CourierRefused} with the courier's words;
 * - 401/403/404 (credentials or account problems) and answers we cannot read →
 *   {@link CourierUnavailable}: the courier did not decide on the parcel.
 */
import type { Address } from "../../contracts";
import type { NdrAct } from "../../contracts/ndr";
import type { ShipmentStatus } from "../../shared/shipment-status";
import {
	type BookRequest,
	type BookResult,
	type CourierLabel,
	CourierRefused,
	CourierUnavailable,
	type NdrActionDetails,
	NoCourierLabel,
	type PickupLocation,
	type PickupRequest,
	type RegisterResult,
	type TrackingScan,
} from "../types";
import type { ProxyFileResponse, ProxyResponse } from "./proxy";
import {
	SCAN_KINDS,
	UNKNOWN_PICKUP_MARKER,
	type WireCancelRequest,
	type WireCancelResponse,
	type WireCreateRequest,
	type WireCreateResponse,
	type WireNdrAction,
	type WireNdrRequest,
	type WireNdrResponse,
	type WirePickupRequest,
	type WirePickupResponse,
	type WirePushScan,
	type WireShipment,
	type WireTrackResponse,
	type WireTrackShipment,
	type WireWarehouse,
	type WireWarehouseResponse,
} from "./wire";

/** Refusal raised when the courier does not know the pickup location (register it, then retry). */
export class PickupLocationUnknown extends CourierRefused {
	constructor(message: string, courierCode?: string) {
		super(message, courierCode);
		this.name = "PickupLocationUnknown";
	}
}

/** An address's street lines as one line (`landmark` is not sent to the courier). */
function oneLine(a: Address): string {
	return a.address_2 ? `${a.address_1}, ${a.address_2}` : a.address_1;
}

/** The wire's `payment_mode`: a reverse shipment is a "Pickup", else "COD" or "Prepaid". */
function wirePaymentMode(req: BookRequest): WireShipment["payment_mode"] {
	if (req.direction === "reverse") return "Pickup";
	return req.payment === "cod" ? "COD" : "Prepaid";
}

/** Builds the form body of `POST /api/cmu/create.json` (weights kg → grams). */
export function toCreateForm(req: BookRequest): Record<string, string> {
	const c = req.consignee;
	const data: WireCreateRequest = {
		pickup_location: { name: req.pickup_location_code },
		shipments: [
			{
				name: c.name,
				add: c.address_1,
				add_2: c.address_2 ?? null,
				city: c.city,
				state: c.state,
				pin: c.pincode,
				country: "India",
				phone: c.phone,
				email: c.email ?? null,
				order: req.reference,
				client_order_no: req.order_no,
				payment_mode: wirePaymentMode(req),
				cod_amount: req.payment === "cod" ? req.cod_amount : 0,
				total_amount: req.declared_value,
				weight: Math.round(req.weight_kg * 1000),
				...(req.dimensions_cm
					? {
							shipment_length: req.dimensions_cm.length,
							shipment_width: req.dimensions_cm.width,
							shipment_height: req.dimensions_cm.height,
						}
					: {}),
				products_desc: req.product_description,
				seller_name: req.pickup.name,
				return_name: req.return_address.name,
				return_add: oneLine(req.return_address),
				return_city: req.return_address.city,
				return_state: req.return_address.state,
				return_pin: req.return_address.pincode,
				return_phone: req.return_address.phone,
				return_country: "India",
			},
		],
	};
	return { format: "json", data: JSON.stringify(data) };
}

function textOf(body: unknown): string {
	if (typeof body === "string") return body.slice(0, 300);
	const b = body as { error?: unknown; rmk?: unknown; message?: unknown; detail?: unknown } | null;
	const e = b?.error ?? b?.rmk ?? b?.message ?? b?.detail;
	if (Array.isArray(e)) return e.map(String).join("; ");
	if (typeof e === "string") return e;
	return JSON.stringify(body ?? null).slice(0, 300);
}

/** Non-decisions common to every endpoint: credentials, unknown account, unreadable answers. */
function guard(res: ProxyResponse, courierCode: string, what: string): void {
	if (res.status === 401 || res.status === 403) {
		throw new CourierUnavailable(`${courierCode} ${what}: credentials refused (HTTP ${res.status})`);
	}
	if (res.status === 404)
		throw new CourierUnavailable(`${courierCode} ${what}: not found at the courier (HTTP 404)`);
	if (typeof res.body !== "object" || res.body === null) {
		throw new CourierUnavailable(`${courierCode} ${what}: unreadable answer (HTTP ${res.status})`);
	}
}

function refusal(message: string, courierCode: string): CourierRefused {
	return message.includes(UNKNOWN_PICKUP_MARKER)
		? new PickupLocationUnknown(message, courierCode)
		: new CourierRefused(message, courierCode);
}

/** Reads the create answer: the booked package, or a refusal with the courier's remarks. */
export function parseCreate(res: ProxyResponse, courierCode: string, reference: string): BookResult {
	guard(res, courierCode, "create");
	if (res.status >= 400) throw refusal(textOf(res.body), courierCode);
	const body = res.body as WireCreateResponse;
	const pkg = body.packages?.find((p) => p.refnum === reference) ?? body.packages?.[0];
	if (!pkg) {
		if (body.success === false && body.rmk) throw refusal(body.rmk, courierCode);
		throw new CourierUnavailable(`${courierCode} create: answer without a package`);
	}
	if (pkg.status !== "Success" || !pkg.waybill) {
		const words = (pkg.remarks ?? []).filter(Boolean).join("; ") || body.rmk || "shipment refused";
		throw refusal(words, courierCode);
	}
	return {
		reference: pkg.refnum || reference,
		awb_number: pkg.waybill,
		routing_code: pkg.sort_code || null,
		status: "booked",
	};
}

function resultOf(s: WireTrackShipment): BookResult {
	return {
		reference: s.ReferenceNo,
		awb_number: s.AWB,
		routing_code: s.SortCode || null,
		status: s.Status?.StatusType === "CN" ? "cancelled" : "booked",
	};
}

/** Reads a look-up by reference: the shipment, or null when the courier has never seen it. */
export function parseLookup(res: ProxyResponse, courierCode: string, reference: string): BookResult | null {
	guard(res, courierCode, "lookup");
	if (res.status >= 400) throw new CourierUnavailable(`${courierCode} lookup: ${textOf(res.body)}`);
	const body = res.body as WireTrackResponse;
	const hit = (body.ShipmentData ?? []).map((d) => d.Shipment).find((s) => s && s.ReferenceNo === reference);
	return hit ? resultOf(hit) : null;
}

/**
 * Delhivery NDR ("non-delivery") status codes a real courier sends with an
 * undelivered attempt, besides the sandbox's own `EOD-74`.
 */
const NDR_STATUS_CODES = ["EOD-6", "EOD-11", "EOD-15", "EOD-43", "EOD-69", "EOD-86", "EOD-104"];

/**
 * Normalized status by the courier's `StatusCode`: the sandbox scans, then the
 * known NDR codes. The courier's "Manifested" (`X-UCI`, the simulator's create
 * scan `SCAN_KINDS.manifested`) only says "shipment data received": it is our
 * `booked`; Ready-for-pickup (`manifested`) is set by our own manifest (spec §3).
 */
const BY_STATUS_CODE = new Map<string, ShipmentStatus>([
	...Object.values(SCAN_KINDS).map((k): [string, ShipmentStatus] => [
		k.StatusCode.toUpperCase(),
		k.code === "manifested" ? "booked" : k.code,
	]),
	...NDR_STATUS_CODES.map((c): [string, ShipmentStatus] => [c, "undelivered"]),
]);

/** Default normalized status by Delhivery `ScanType` / `StatusType` when neither code nor words decide. */
const BY_SCAN_TYPE: Record<string, ShipmentStatus> = {
	UD: "in_transit",
	PU: "picked_up",
	PP: "picked_up",
	DL: "delivered",
	RT: "rto_in_transit",
	CN: "cancelled",
	LT: "lost",
};

/**
 * Maps one sandbox (Delhivery-protocol) scan to a {@link ShipmentStatus};
 * never throws. Nothing from a courier maps to `manifested` (Ready-for-pickup):
 * our own manifest (`POST /v1/documents/manifest`, spec §3) sets it; the
 * courier's "Manifested" scan (`X-UCI`, Delhivery's "shipment data received",
 * the first scan of every booked parcel) is our `booked`. In this order:
 *
 * 1. By `StatusCode` (case-insensitive):
 *
 * | StatusCode | Scan (words) | ScanType | status |
 * |---|---|---|---|
 * | X-UCI | Manifested | UD | booked |
 * | X-ASP | Pickup Scheduled | UD | pickup_scheduled |
 * | X-PPOM | Picked Up | PU | picked_up |
 * | X-DLL2F | In Transit | UD | in_transit |
 * | X-DDD3FD | Dispatched | UD | out_for_delivery |
 * | EOD-38 | Delivered | DL | delivered |
 * | EOD-74 (and NDR codes EOD-6, -11, -15, -43, -69, -86, -104) | Pending | UD | undelivered |
 * | RT-101 | RTO Initiated | RT | rto_initiated |
 * | RT-102 | In Transit | RT | rto_in_transit |
 * | RT-110 | RTO Delivered | DL | rto_delivered |
 * | LT-100 | Lost | LT | lost |
 * | ST-108 | Damaged | UD | damaged |
 * | X-CN | Canceled | CN | cancelled |
 *
 * 2. An unknown code by `ScanType` and the words (case-insensitive): CN →
 *    cancelled; words "lost" → lost, "damage" → damaged; DL → rto_delivered
 *    when the words say "RTO" / "return", else delivered; RT → rto_initiated
 *    when the words say "initiat", else rto_in_transit; otherwise the words
 *    "manifest" → booked, "not picked" / "schedul" / (PP) "pending" →
 *    pickup_scheduled, "picked" → picked_up, "dispatched" / "out for
 *    delivery" → out_for_delivery, "undelivered" / "not delivered" / (UD)
 *    "pending" → undelivered, "in transit" → in_transit.
 * 3. Else the default by ScanType: UD → in_transit, PU / PP → picked_up,
 *    DL → delivered, RT → rto_in_transit, CN → cancelled, LT → lost; an
 *    unknown ScanType → in_transit.
 */
export function statusOfScan(scan: {
	StatusCode?: string;
	ScanType?: string;
	Scan?: string;
}): ShipmentStatus {
	const byCode = BY_STATUS_CODE.get(
		String(scan.StatusCode ?? "")
			.trim()
			.toUpperCase(),
	);
	if (byCode) return byCode;
	const type = String(scan.ScanType ?? "")
		.trim()
		.toUpperCase();
	const words = String(scan.Scan ?? "")
		.trim()
		.toLowerCase();
	if (type === "CN") return "cancelled";
	if (/\blost\b/.test(words)) return "lost";
	if (words.includes("damage")) return "damaged";
	if (type === "DL") return /\brto\b|return/.test(words) ? "rto_delivered" : "delivered";
	if (type === "RT") return words.includes("initiat") ? "rto_initiated" : "rto_in_transit";
	if (words.includes("manifest")) return "booked";
	if (/not picked|schedul/.test(words) || (type === "PP" && words.includes("pending")))
		return "pickup_scheduled";
	if (words.includes("picked")) return "picked_up";
	if (/dispatched|out for delivery/.test(words)) return "out_for_delivery";
	if (/undelivered|not delivered/.test(words) || (type === "UD" && words.includes("pending")))
		return "undelivered";
	if (words.includes("in transit")) return "in_transit";
	return BY_SCAN_TYPE[type] ?? "in_transit";
}

/**
 * A courier time as ISO-8601 UTC, or null when unreadable. A time without a
 * zone (Delhivery sends `2024-03-05T14:02:11.000` or `2024-03-05 14:02:11`)
 * is India Standard Time (+05:30).
 */
export function courierTimeToUtc(t: unknown): string | null {
	if (typeof t !== "string" || !t.trim()) return null;
	let s = t.trim().replace(/^(\d{4}-\d{2}-\d{2}) (\d)/, "$1T$2");
	if (/T\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(s)) s += "+05:30";
	const ms = Date.parse(s);
	return Number.isNaN(ms) ? null : new Date(ms).toISOString();
}

/** Oldest first; scans of the same time keep the courier's order (stable sort). */
function oldestFirst(scans: TrackingScan[]): TrackingScan[] {
	return scans.sort((a, b) => a.at.localeCompare(b.at));
}

/** The normalized scans of one tracked shipment, oldest first; scans without a readable time are left out. */
function scansOfShipment(s: WireTrackShipment): TrackingScan[] {
	const out: TrackingScan[] = [];
	for (const { ScanDetail: d } of s.Scans ?? []) {
		const at = d ? courierTimeToUtc(d.ScanDateTime) : null;
		if (!d || !at) continue;
		out.push({
			status: statusOfScan(d),
			courier_code: String(d.StatusCode || d.ScanType || ""),
			courier_status: String(d.Scan ?? ""),
			location: String(d.ScannedLocation ?? ""),
			at,
			...(d.Instructions ? { remarks: String(d.Instructions) } : {}),
		});
	}
	return oldestFirst(out);
}

/**
 * Reads a track answer of several waybills (`?waybill=a,b,c`): per AWB asked
 * and known to the courier its scans, oldest first (scans without a readable
 * time are left out); AWBs the courier does not know are absent, as are
 * shipments it answered but we did not ask for. An answer we cannot read or
 * a 4xx → {@link CourierUnavailable}.
 */
export function parseTrackMany(
	res: ProxyResponse,
	courierCode: string,
	awb_numbers: readonly string[],
): Map<string, TrackingScan[]> {
	guard(res, courierCode, "track");
	if (res.status >= 400) throw new CourierUnavailable(`${courierCode} track: ${textOf(res.body)}`);
	const body = res.body as WireTrackResponse;
	if (body.ShipmentData !== undefined && !Array.isArray(body.ShipmentData))
		throw new CourierUnavailable(`${courierCode} track: unreadable answer (ShipmentData)`);
	const asked = new Set(awb_numbers);
	const out = new Map<string, TrackingScan[]>();
	for (const entry of body.ShipmentData ?? []) {
		const s = entry?.Shipment;
		if (!s || typeof s.AWB !== "string" || !asked.has(s.AWB) || out.has(s.AWB)) continue;
		out.set(s.AWB, scansOfShipment(s));
	}
	return out;
}

/** Reads tracking scans of `awb_number`, oldest first. Unknown AWB → CourierRefused. */
export function parseTrack(res: ProxyResponse, courierCode: string, awb_number: string): TrackingScan[] {
	const scans = parseTrackMany(res, courierCode, [awb_number]).get(awb_number);
	if (!scans) {
		const body = res.body as WireTrackResponse;
		throw new CourierRefused(body.Error || `No such waybill: ${awb_number}`, courierCode);
	}
	return scans;
}

/**
 * Reads a pushed scan body ({@link WirePushScan} or an array of them; the
 * signature is checked before, ./signature.ts): per AWB, in the order first
 * seen, its scans oldest first. Throws {@link CourierRefused} naming the
 * problem for a body that is not JSON, not an object or array of objects, or
 * an entry without `Shipment.AWB` or a readable `Status.StatusDateTime`.
 */
export function parsePush(
	raw: Buffer,
	courierCode?: string,
): { awb_number: string; scans: TrackingScan[] }[] {
	let body: unknown;
	try {
		body = JSON.parse(raw.toString("utf8"));
	} catch {
		throw new CourierRefused("Malformed JSON body", courierCode);
	}
	const entries = Array.isArray(body) ? body : [body];
	const byAwb = new Map<string, TrackingScan[]>();
	entries.forEach((e: unknown, i) => {
		const where = Array.isArray(body) ? `entry ${i}: ` : "";
		const ship = (e as Partial<WirePushScan> | null)?.Shipment;
		if (!ship || typeof ship !== "object")
			throw new CourierRefused(`${where}Shipment is required`, courierCode);
		const awb = typeof ship.AWB === "string" ? ship.AWB.trim() : "";
		if (!awb) throw new CourierRefused(`${where}Shipment.AWB is required`, courierCode);
		const st = ship.Status;
		if (!st || typeof st !== "object")
			throw new CourierRefused(`${where}Shipment.Status is required`, courierCode);
		const at = courierTimeToUtc(st.StatusDateTime);
		if (!at)
			throw new CourierRefused(`${where}Shipment.Status.StatusDateTime is not a readable time`, courierCode);
		const scans = byAwb.get(awb) ?? [];
		scans.push({
			status: statusOfScan({ StatusCode: st.StatusCode, ScanType: st.StatusType, Scan: st.Status }),
			courier_code: String(st.StatusCode || st.StatusType || ""),
			courier_status: String(st.Status ?? ""),
			location: String(st.StatusLocation ?? ""),
			at,
			...(st.Instructions ? { remarks: String(st.Instructions) } : {}),
		});
		byAwb.set(awb, scans);
	});
	return [...byAwb].map(([awb_number, scans]) => ({ awb_number, scans: oldestFirst(scans) }));
}

/** Builds the cancel body of `POST /api/p/edit`. */
export function toCancel(awb_number: string): WireCancelRequest {
	return { waybill: awb_number, cancellation: "true" };
}

/** Reads a cancel answer; a refusal carries the courier's words. */
export function parseCancel(res: ProxyResponse, courierCode: string): { cancelled: boolean } {
	guard(res, courierCode, "cancel");
	const body = res.body as WireCancelResponse;
	if (res.status >= 400 || body.status !== true)
		throw new CourierRefused(body.error || textOf(body), courierCode);
	return { cancelled: true };
}

/** Builds the warehouse registration body (`name` = our warehouse code). */
export function toWarehouse(loc: PickupLocation): WireWarehouse {
	const a = loc.address;
	const r = loc.return_address;
	return {
		name: loc.warehouse_code,
		registered_name: loc.warehouse_name,
		phone: a.phone,
		email: a.email ?? null,
		address: a.address_1,
		address_2: a.address_2 ?? null,
		city: a.city,
		state: a.state,
		pin: a.pincode,
		country: "India",
		return_address: oneLine(r),
		return_city: r.city,
		return_state: r.state,
		return_pin: r.pincode,
		return_country: "India",
		gstin: loc.gstin ?? null,
	};
}

/** Reads a registration answer; a refusal carries the courier's words. */
export function parseWarehouse(res: ProxyResponse, courierCode: string, loc: PickupLocation): RegisterResult {
	guard(res, courierCode, "warehouse registration");
	const body = res.body as WireWarehouseResponse;
	if (res.status >= 400 || body.success !== true) throw new CourierRefused(textOf(body), courierCode);
	return { courier_location_id: body.data?.name ?? loc.warehouse_code };
}

/** The body of a pickup request or reschedule (time `HH:mm` → `HH:mm:00`). */
export function toPickupBody(req: PickupRequest): WirePickupRequest {
	return {
		pickup_location: req.pickup_location_code,
		pickup_date: req.date,
		pickup_time: `${req.time}:00`,
		expected_package_count: req.expected_packages,
	};
}

/**
 * Reads an answer of the pickup calls ({@link WirePickupResponse}): the pickup id (and, for a
 * cancel, whether it is cancelled). 4xx with words → CourierRefused (`error.message`, else the
 * field-keyed words); credentials refused, 404, 5xx or no id → CourierUnavailable.
 */
export function parsePickupAnswer(
	res: ProxyResponse,
	courierCode: string,
	what: string,
): { pickup_id: string; cancelled: boolean } {
	guard(res, courierCode, what);
	const body = res.body as WirePickupResponse & Record<string, unknown>;
	if (res.status >= 400 && res.status < 500) {
		const words =
			body.error?.message ??
			Object.values(body)
				.filter((v): v is string => typeof v === "string")
				.join("; ");
		throw new CourierRefused(words || `${what} refused (HTTP ${res.status})`, courierCode);
	}
	const id = body.pickup_id;
	if (res.status >= 500 || (typeof id !== "number" && typeof id !== "string") || String(id) === "") {
		throw new CourierUnavailable(`${courierCode} ${what}: no pickup id in the answer (HTTP ${res.status})`);
	}
	return { pickup_id: String(id), cancelled: body.status === "cancelled" };
}

/** Media types a courier label file may have (anything else is not a label we can serve). */
export const LABEL_TYPES: Record<string, (b: Buffer) => boolean> = {
	"application/pdf": (b) => b.subarray(0, 5).toString("latin1") === "%PDF-",
	"image/png": (b) => b.subarray(0, 8).equals(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])),
};

/**
 * Reads a `GET /api/p/packing_slip?wbns=<awb>` answer: 200 with a PDF (or
 * PNG) whose bytes start as its media type says → the label, bytes untouched;
 * 200 JSON `packages_found: 0` → {@link NoCourierLabel} (the courier has no
 * label for the AWB: definitive); 401/403/404, an empty body, another media
 * type or bytes that do not match it → CourierUnavailable (the courier did
 * not decide; retry later).
 */
export function parseLabel(res: ProxyFileResponse, courierCode: string, awb_number: string): CourierLabel {
	const what = `${courierCode} packing slip of ${awb_number}`;
	if (res.status === 401 || res.status === 403)
		throw new CourierUnavailable(`${what}: credentials refused (HTTP ${res.status})`);
	if (res.status === 404) throw new CourierUnavailable(`${what}: not found at the courier (HTTP 404)`);
	if (res.status === 200 && res.content_type === "application/json") {
		let body: unknown = null;
		try {
			body = JSON.parse(res.bytes.toString("utf8"));
		} catch {
			/* unreadable: below */
		}
		const b = body as { packages_found?: unknown } | null;
		if (b && typeof b === "object" && Number(b.packages_found) === 0)
			throw new NoCourierLabel(`${what}: the courier has no label for this AWB`, courierCode);
		throw new CourierUnavailable(`${what}: unreadable answer`);
	}
	const matches = LABEL_TYPES[res.content_type];
	if (res.status !== 200 || !res.bytes.length || !matches?.(res.bytes)) {
		throw new CourierUnavailable(
			`${what}: unreadable answer (HTTP ${res.status}, ${res.content_type || "no type"}, ${res.bytes.length} bytes)`,
		);
	}
	return { bytes: res.bytes, content_type: res.content_type };
}

/**
 * Builds the body of `POST /api/p/update` for one act (Delhivery's shape):
 * DEFER_DLV `action_data.deferred_date`; EDIT_DETAILS `action_data.phone`
 * and/or the address as one line `add` (address_1, address_2, "Near
 * <landmark>", city, state, the parts given) with `pin` when given;
 * RE-ATTEMPT no `action_data`.
 */
export function toNdrUpdate(awb_number: string, act: NdrAct, details: NdrActionDetails): WireNdrRequest {
	const entry: WireNdrAction = { waybill: awb_number, act };
	if (act === "DEFER_DLV" && details.deferred_date)
		entry.action_data = { deferred_date: details.deferred_date };
	if (act === "EDIT_DETAILS") {
		const a = details.address;
		const data: NonNullable<WireNdrAction["action_data"]> = {};
		if (details.phone) data.phone = details.phone;
		if (a) {
			data.add = [a.address_1, a.address_2, a.landmark ? `Near ${a.landmark}` : null, a.city, a.state]
				.filter((p): p is string => typeof p === "string" && p !== "")
				.join(", ");
			if (a.pincode) data.pin = a.pincode;
		}
		entry.action_data = data;
	}
	return { data: [entry] };
}

/**
 * Reads an answer of `POST /api/p/update` for the act on `awb_number`: the
 * upload id when the act was accepted. The act refused (its package
 * `status: "Fail"`, `success: false` with `error`, or a 4xx with the
 * courier's text) → {@link CourierRefused} with the courier's words;
 * 401/403/404, or an answer without a readable upload id → CourierUnavailable.
 */
export function parseNdrUpdate(
	res: ProxyResponse,
	courierCode: string,
	awb_number: string,
): { request_id: string } {
	guard(res, courierCode, "NDR update");
	if (res.status >= 400) throw new CourierRefused(textOf(res.body), courierCode);
	const body = res.body as WireNdrResponse;
	const pkg = Array.isArray(body.packages) ? body.packages.find((p) => p?.waybill === awb_number) : undefined;
	if (pkg && pkg.status !== "Success")
		throw new CourierRefused(String(pkg.remarks || body.error || "NDR action refused"), courierCode);
	if (body.success !== true) {
		if (typeof body.error === "string" && body.error) throw new CourierRefused(body.error, courierCode);
		throw new CourierUnavailable(`${courierCode} NDR update: unreadable answer`);
	}
	if (typeof body.request_id !== "string" || !body.request_id)
		throw new CourierUnavailable(`${courierCode} NDR update: answer without a request id`);
	return { request_id: body.request_id };
}
