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
import {
	type BookRequest,
	type BookResult,
	CourierRefused,
	CourierUnavailable,
	type PickupLocation,
	type RegisterResult,
	type TrackingScan,
} from "../types";
import type { ProxyResponse } from "./proxy";
import {
	SCAN_KINDS,
	UNKNOWN_PICKUP_MARKER,
	type WireCancelRequest,
	type WireCancelResponse,
	type WireCreateRequest,
	type WireCreateResponse,
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

const BY_STATUS_CODE = new Map(Object.values(SCAN_KINDS).map((k) => [k.StatusCode, k.code]));

/** Reads tracking scans of `awb_number`, oldest first. Unknown AWB → CourierRefused. */
export function parseTrack(res: ProxyResponse, courierCode: string, awb_number: string): TrackingScan[] {
	guard(res, courierCode, "track");
	if (res.status >= 400) throw new CourierUnavailable(`${courierCode} track: ${textOf(res.body)}`);
	const body = res.body as WireTrackResponse;
	const s = (body.ShipmentData ?? []).map((d) => d.Shipment).find((x) => x && x.AWB === awb_number);
	if (!s) throw new CourierRefused(body.Error || `No such waybill: ${awb_number}`, courierCode);
	return (s.Scans ?? [])
		.map(({ ScanDetail: d }) => ({
			status: d.Scan,
			code: BY_STATUS_CODE.get(d.StatusCode) ?? d.Scan.toLowerCase().replace(/\s+/g, "_"),
			location: d.ScannedLocation,
			at: new Date(d.ScanDateTime).toISOString(),
			...(d.Instructions ? { remarks: d.Instructions } : {}),
		}))
		.sort((a, b) => a.at.localeCompare(b.at));
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
