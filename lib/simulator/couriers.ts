/**
 * The sandbox couriers the simulator plays (docs/ARCHITECTURE.md §4) and their
 * rules: AWB formats, refused pincodes, refusal wording (shipments and pickup
 * locations), emittable tracking events, answer delays. Pure: no I/O.
 */

import type { SimulatorEvent } from "../contracts";
import { sandboxOwnLabelCouriers, sandboxSettings } from "../couriers/sandbox/settings";
import {
	SCAN_KINDS,
	UNKNOWN_PICKUP_MARKER,
	type WireShipment,
	type WireWarehouse,
} from "../couriers/sandbox/wire";
import { setting } from "../platform/config";

/** Static description of one simulated courier. */
export interface SimCourier {
	code: string;
	name: string;
	/** leading digits of its AWBs */
	awbPrefix: string;
	/** total AWB length in digits */
	awbLength: number;
	cod: boolean;
}

/** The simulated couriers by code. */
export const SIM_COURIERS: Record<string, SimCourier> = {
	"sbx-express": { code: "sbx-express", name: "SBX Express", awbPrefix: "14", awbLength: 14, cod: true },
	"sbx-surface": { code: "sbx-surface", name: "SBX Surface", awbPrefix: "15", awbLength: 15, cod: true },
	"sbx-reverse": { code: "sbx-reverse", name: "SBX Reverse", awbPrefix: "12", awbLength: 12, cod: false },
	"sbx-lite": { code: "sbx-lite", name: "SBX Lite", awbPrefix: "13", awbLength: 13, cod: false },
};

/**
 * Whether `courier` issues its own label file (serves packing slips):
 * `SANDBOX_OWN_LABEL_COURIERS` (default `sbx-lite`), read at each call, the
 * same list the sandbox adapter's `issuesOwnLabel` answers from.
 */
export function issuesOwnLabel(courier: SimCourier): boolean {
	return sandboxOwnLabelCouriers().includes(courier.code);
}

/**
 * Marker in the consignee name: the first create of each of the shipment's
 * references answers 503 before anything is booked (remembered in
 * `simulator.faults`), later ones book.
 */
export const CREATE_5XX_MARKER = "SIMULATE_5XX";

/** Marker in the consignee name: a create that booked the shipment holds its answer for the configured hang. */
export const CREATE_TIMEOUT_MARKER = "SIMULATE_TIMEOUT";

/** Marker in the consignee name: every create of the shipment is refused with the courier's words. */
export const REFUSE_MARKER = "SIMULATE_REFUSE";

/** Whether shipment `s`'s consignee name carries fault `marker`. */
export function markedWith(s: WireShipment, marker: string): boolean {
	return String(s.name ?? "").includes(marker);
}

/**
 * Marker in the consignee name: the first packing slip asked for each of the
 * shipment's waybills answers 503 (remembered in `simulator.faults`), later ones work.
 */
export const LABEL_5XX_MARKER = "SIMULATE_LABEL_5XX";

/**
 * Marker in the consignee name: the first NDR act (`POST /api/p/update`) for
 * each of the shipment's waybills answers 503 (remembered in
 * `simulator.faults`), later ones are decided normally.
 */
export const NDR_5XX_MARKER = "SIMULATE_NDR_5XX";

/** Marker in the consignee name: every NDR act for the shipment's waybills answers 503 (courier down). */
export const NDR_DOWN_MARKER = "SIMULATE_NDR_DOWN";

/** Days after the first pending (undelivered) scan, IST calendar days, a DEFER_DLV date may be (Delhivery). */
export const DEFER_DLV_MAX_DAYS = 6;

/** Pincodes every sandbox courier refuses (delivery and pickup). */
export const REFUSED_PINCODES = ["000000", "999999", "111111"];

/**
 * Tracking events that can be emitted on demand (`simulator.emitScan`,
 * `POST /couriers/<code>/sandbox/scan`): every scan kind of SCAN_KINDS (every
 * normalized status but `booked`) except `manifested` and `cancelled`, the
 * simulator's own (on create and cancel).
 */
export const EMITTABLE_EVENTS: readonly SimulatorEvent[] = Object.keys(SCAN_KINDS).filter(
	(k): k is SimulatorEvent => k !== "manifested" && k !== "cancelled",
);

/** Whether `event` is one of {@link EMITTABLE_EVENTS}. */
export function isEmittable(event: unknown): event is SimulatorEvent {
	return typeof event === "string" && (EMITTABLE_EVENTS as readonly string[]).includes(event);
}

/** Maximum weight the sandbox couriers carry, grams. */
const MAX_WEIGHT_G = 30_000;

const HUBS: Record<string, string> = {
	"11": "DEL",
	"12": "GGN",
	"20": "NOI",
	"40": "BOM",
	"41": "PNQ",
	"38": "AMD",
	"56": "BLR",
	"60": "MAA",
	"50": "HYD",
	"70": "CCU",
	"30": "JAI",
	"22": "LKO",
};

/** Sort / routing code printed on the label, e.g. `BOM/400` (hub of the first two digits of the pincode). */
export function sortCode(pin: string): string {
	return `${HUBS[pin.slice(0, 2)] ?? `H${pin.slice(0, 2)}`}/${pin.slice(0, 3)}`;
}

/** Delay before a create answers, ms: `SANDBOX_COURIER_DELAY_MS` (≥ 0), else random 100–300 ms. */
export function configuredDelay(): number {
	return setting("SANDBOX_COURIER_DELAY_MS") ?? 100 + Math.floor(Math.random() * 200);
}

/** How long a `SIMULATE_TIMEOUT` create holds its answer, ms: `SANDBOX_COURIER_HANG_MS`, else the adapter timeout + 3 s. */
export function configuredHang(): number {
	return setting("SANDBOX_COURIER_HANG_MS") ?? sandboxSettings("sbx-express").timeoutMs + 3000;
}

/**
 * Reasons `courier` refuses shipment `s` (empty when acceptable), in the
 * courier's words: unregistered pickup location, `SIMULATE_REFUSE`, missing
 * name or address, pincode malformed or refused, phone not 10 digits, weight
 * (grams) not positive or over 30 kg, COD not offered or without an amount,
 * unknown payment mode, missing client reference.
 */
export function refusalsOf(
	courier: SimCourier,
	s: WireShipment,
	pickupKnown: boolean,
	pickupName: string,
): string[] {
	const out: string[] = [];
	if (!pickupKnown) {
		out.push(`${UNKNOWN_PICKUP_MARKER}: pickup location "${pickupName}" is not registered`);
	}
	if (markedWith(s, REFUSE_MARKER)) out.push(`Shipment rejected by the courier (${REFUSE_MARKER})`);
	if (!String(s.name ?? "").trim() || !String(s.add ?? "").trim())
		out.push("Consignee name and address are required");
	const pin = String(s.pin ?? "");
	if (!/^\d{6}$/.test(pin)) out.push(`Invalid consignee pincode "${pin}": must be 6 digits`);
	else if (REFUSED_PINCODES.includes(pin)) out.push(`Non serviceable pincode ${pin}`);
	if (!/^\d{10}$/.test(String(s.phone ?? ""))) out.push("Invalid consignee phone: must be 10 digits");
	const w = Number(s.weight);
	if (!Number.isFinite(w) || w <= 0) out.push("Weight must be greater than zero");
	else if (w > MAX_WEIGHT_G) out.push(`Weight ${(w / 1000).toFixed(2)} kg exceeds the 30 kg limit`);
	if (s.payment_mode === "COD") {
		if (!courier.cod) out.push(`COD is not available on ${courier.name}`);
		else if (!(Number(s.cod_amount) > 0)) out.push("COD amount must be greater than zero");
	} else if (!["Prepaid", "Pickup"].includes(String(s.payment_mode))) {
		out.push(`Unknown payment_mode "${s.payment_mode}"`);
	}
	if (!String(s.order ?? "").trim()) out.push("order (client reference) is required");
	return out;
}

/**
 * Reasons a courier refuses pickup location `w` (empty when acceptable): name
 * missing or under 3 characters, address under 10 characters, phone not 10
 * digits, pin / return_pin malformed or refused, city or state missing.
 */
export function warehouseRefusals(w: WireWarehouse): string[] {
	const out: string[] = [];
	if (!String(w.name ?? "").trim()) out.push("name is required");
	if (String(w.registered_name ?? w.name ?? "").trim().length < 3)
		out.push("Warehouse name must be at least 3 characters");
	if (String(w.address ?? "").trim().length < 10) {
		out.push("Address is too short: give at least 10 characters (building, street, area)");
	}
	if (!/^\d{10}$/.test(String(w.phone ?? ""))) out.push("Invalid phone number: must be 10 digits");
	for (const [label, pin] of [
		["pin", w.pin],
		["return_pin", w.return_pin],
	] as const) {
		const p = String(pin ?? "");
		if (!/^\d{6}$/.test(p)) out.push(`${label} must be 6 digits`);
		else if (REFUSED_PINCODES.includes(p)) out.push(`Pickup not serviceable at pincode ${p}`);
	}
	if (!String(w.city ?? "").trim() || !String(w.state ?? "").trim()) out.push("city and state are required");
	return out;
}
