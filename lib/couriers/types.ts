/**
 * Courier integration interface (docs/ARCHITECTURE.md §1, after Karrio's
 * connectors): one adapter per courier behind this interface; per courier a
 * mapper (our shapes ↔ the courier's), a proxy (its HTTP calls) and settings.
 * Nothing outside lib/couriers ever sees a courier's wire format.
 *
 * Errors: adapters throw {@link CourierRefused} when the courier answered "no"
 * (definitive; its words in `message`) and {@link CourierUnavailable} when the
 * outcome is unknown or the courier is unreachable (timeout, reset, 5xx): the
 * caller must look the reference up before retrying a side-effecting call.
 */

import type { Address, PaymentMode, ShipmentDirection } from "../contracts";
import type { NdrAct, NdrAddress } from "../contracts/ndr";
import type { ShipmentStatus } from "../shared/shipment-status";

/**
 * Warehouse registration as a courier pickup location (lib/couriers/locations.ts
 * `pickupLocationOf`). Addresses: `name` is the contact person the courier asks for.
 */
export interface PickupLocation {
	/** our stable code, used as the courier's pickup location name */
	warehouse_code: string;
	warehouse_name: string;
	/** where the courier collects parcels */
	address: Address;
	/** where the courier returns undeliverable parcels of this location */
	return_address: Address;
	gstin?: string | null;
}

/** Answer of a pickup-location registration. */
export interface RegisterResult {
	/** courier-side id/name of the pickup location */
	courier_location_id: string;
}

/** Forward or reverse shipment booking request. Weights kg, dimensions cm, money rupees. */
export interface BookRequest {
	/** our client reference (booking attempt id as string); the courier dedupes on it */
	reference: string;
	order_no: string;
	direction: ShipmentDirection;
	payment: PaymentMode;
	/** rupees collected on delivery; 0 when prepaid */
	cod_amount: number;
	/** rupees */
	declared_value: number;
	weight_kg: number;
	dimensions_cm?: { length: number; width: number; height: number } | null;
	product_description: string;
	pickup_location_code: string;
	/** the pickup warehouse's address (`name` = its contact person) */
	pickup: Address;
	/** who receives a forward parcel, or where a return is collected; `landmark` is not sent (fold it into `address_2`) */
	consignee: Address;
	/** where an undelivered or returned parcel goes */
	return_address: Address;
}

/** A shipment at the courier: the answer of a booking or of a look-up by reference. */
export interface BookResult {
	reference: string;
	awb_number: string;
	/** routing / sort code printed on the label */
	routing_code: string | null;
	/** "booked" or "cancelled" as the courier reports the reference */
	status: "booked" | "cancelled";
}

/** One tracking scan as a courier reports it, normalized (docs/ARCHITECTURE.md §1). */
export interface TrackingScan {
	/** normalized status (lib/shared/shipment-status.ts) */
	status: ShipmentStatus;
	/** the courier's own status code, e.g. Delhivery StatusCode "EOD-38" */
	courier_code: string;
	/** the courier's own words, e.g. "Delivered" */
	courier_status: string;
	location: string;
	/** ISO-8601 UTC */
	at: string;
	/** courier remarks / NDR reason, when given */
	remarks?: string;
}

/**
 * A label file the courier issued for one AWB, exactly as the courier answered
 * it (spec §4.4 "or the courier's own file"; DOMAIN: Delhivery's packing slip).
 */
export interface CourierLabel {
	/** the file's bytes, untouched */
	bytes: Buffer;
	/** its media type as the courier answered it, parameters dropped, lower case (e.g. `application/pdf`) */
	content_type: string;
}

/**
 * What an NDR act carries besides the AWB (lib/ndr/courier-action.ts): the
 * new date of `DEFER_DLV`, the new phone and/or address of `EDIT_DETAILS`.
 */
export interface NdrActionDetails {
	/** `YYYY-MM-DD` (India Standard Time day), DEFER_DLV */
	deferred_date?: string;
	/** bare 10 digits, EDIT_DETAILS */
	phone?: string;
	/** EDIT_DETAILS */
	address?: NdrAddress;
}

/** What every courier adapter does. */
export interface CourierAdapter {
	/** Registers (or updates) a pickup location; idempotent on `warehouse_code`. */
	registerWarehouse(loc: PickupLocation): Promise<RegisterResult>;
	/** Books a shipment; idempotent on `reference` at the courier. */
	book(req: BookRequest): Promise<BookResult>;
	/** Looks a reference up; null when the courier has never seen it. */
	lookupByReference(reference: string): Promise<BookResult | null>;
	/** Cancels an AWB. */
	cancel(awb_number: string): Promise<{ cancelled: boolean }>;
	/** Tracking scans of one AWB, oldest first. Unknown AWB → CourierRefused; unreachable → CourierUnavailable. */
	track(awb_number: string): Promise<TrackingScan[]>;
	/** Most AWBs one trackMany call takes (Delhivery: 50). */
	readonly trackBatchSize: number;
	/** Scans of up to trackBatchSize AWBs in one call, each list oldest first; AWBs the courier does not know are absent. Throws CourierUnavailable when unreachable. */
	trackMany(awb_numbers: string[]): Promise<Map<string, TrackingScan[]>>;
	/**
	 * Whether a pushed scan webhook body is authentic (HMAC / shared secret per
	 * the courier's scheme). `headers` lower-cased. No secret configured → false
	 * for every push (never a default secret;
	 * docs/decisions/0078-sandbox-scan-signatures.md).
	 */
	verifyPush(raw: Buffer, headers: Record<string, string | undefined>): boolean;
	/**
	 * A key naming one authentic push (e.g. its timestamped signature), for
	 * booking to refuse the same push seen twice within the signature's time
	 * window; absent (or null) when the courier's scheme carries no per-push
	 * value (Delhivery's static token), and then pushes are not checked for replays.
	 */
	pushReplayKey?(headers: Record<string, string | undefined>): string | null;
	/** The scans of a pushed webhook body (already verified). Throws CourierRefused (its words) for a body it cannot read. */
	parsePush(raw: Buffer): { awb_number: string; scans: TrackingScan[] }[];
	/**
	 * Whether this courier account issues its own label file (a setting of the
	 * courier account): booking then has the file captured when the shipment is
	 * booked, and documents serves that file instead of drawing one.
	 */
	readonly issuesOwnLabel: boolean;
	/**
	 * The courier's own label of `awb_number`. Throws {@link NoCourierLabel} (a
	 * CourierRefused: definitive) when this courier issues no labels or has none
	 * for the AWB; CourierUnavailable when unreachable, 5xx or unreadable (retry later).
	 */
	fetchLabel(awb_number: string): Promise<CourierLabel>;
	/**
	 * Sends NDR act `act` for a shipment pending after a failed delivery
	 * (Delhivery `POST /api/p/update`). Answers the courier's request id (at
	 * Delhivery an upload id). Throws {@link CourierRefused} with the courier's
	 * words when it refuses the act (definitive: never retried);
	 * CourierUnavailable when unreachable, timed out, 5xx or unreadable (the
	 * caller may retry: acts are idempotent at the courier per pending attempt).
	 */
	ndrAction(awb_number: string, act: NdrAct, details: NdrActionDetails): Promise<{ request_id: string }>;

	// --- optional operations (issue 14): a courier whose API lacks one leaves it undefined ---

	/** Pre-fetches `count` AWBs from the courier's waybill pool (Delhivery `GET /waybill/api/bulk/json/`). */
	prefetchWaybills?(count: number): Promise<string[]>;
	/**
	 * Asks the courier to collect at a pickup location on a day (Delhivery `POST /fm/request/new/`):
	 * the courier's pickup id. Refused (an unknown location, one already asked for that day, a
	 * date it will not take) → {@link CourierRefused} with its words; unreachable, 5xx or
	 * unreadable → CourierUnavailable (the outcome is unknown: ask again, the courier refuses a
	 * second request for the same location and day).
	 */
	requestPickup?(req: PickupRequest): Promise<{ pickup_id: string }>;
	/**
	 * Moves a pickup request the courier holds (`pickup_id`) to `req`'s day, time and package
	 * count; answers the id it now goes by (the same, or a new one). Absent when the courier's
	 * API has no such call (Delhivery publishes none: lib/warehouses/pickups.ts then asks for a
	 * new request on a new day). Errors as {@link CourierAdapter.requestPickup}.
	 */
	reschedulePickup?(pickup_id: string, req: PickupRequest): Promise<{ pickup_id: string }>;
	/**
	 * Cancels a pickup request the courier holds. Absent when the courier's API has no such
	 * call (Delhivery: the request lapses when nothing is handed over). Refused (already
	 * collected, unknown id) → CourierRefused with its words; unreachable → CourierUnavailable.
	 */
	cancelPickup?(pickup_id: string): Promise<{ cancelled: boolean }>;
	/**
	 * The outcome of an asynchronous NDR act, by the request id {@link CourierAdapter.ndrAction}
	 * answered (Delhivery `GET /api/cmu/get_bulk_upl/<request_id>`): one entry per AWB of the
	 * request; an AWB the courier has not decided yet is `pending` (poll again later).
	 * Throws {@link CourierUnavailable} when unreachable, timed out, 5xx or the answer is
	 * unreadable / unknown; {@link CourierRefused} (its words) for an upload id it does not know.
	 */
	ndrActionStatus?(request_id: string): Promise<NdrUploadOutcome[]>;
	/**
	 * The courier's own price of a shipment (Delhivery `GET /api/kinko/v1/invoice/charges/.json`,
	 * 40 requests a minute: the adapter never sends the 41st within a minute — it waits or answers from cache).
	 */
	rate?(q: RateQuery): Promise<CourierRate>;
	/** Serviceability of up to {@link CourierAdapter.serviceabilityBatchSize} pincodes (Delhivery `GET /c/api/pin-codes/json/`); pincodes the courier does not serve are absent. */
	serviceability?(pincodes: string[]): Promise<Map<string, PincodeServiceability>>;
	/** Most pincodes one serviceability call takes. */
	readonly serviceabilityBatchSize?: number;
}

/**
 * The courier's decision on one AWB of an NDR act request ({@link CourierAdapter.ndrActionStatus}):
 * `accepted` (the act will be carried out), `refused` (definitive; `remarks` the courier's words),
 * `pending` (not decided yet). `remarks` null when the courier gave none.
 */
export type NdrUploadOutcome = {
	awb_number: string;
	state: "accepted" | "refused" | "pending";
	remarks: string | null;
};

/** A pickup request. `date` is an IST calendar day `YYYY-MM-DD`, `time` IST `HH:mm`. */
export interface PickupRequest {
	pickup_location_code: string;
	date: string;
	time: string;
	expected_packages: number;
}

/** A courier rate query. Weight kg; money rupees. */
export interface RateQuery {
	from_pin: string;
	to_pin: string;
	weight_kg: number;
	/** express (air) or surface */
	mode: "express" | "surface";
	payment: PaymentMode;
	/** rupees; 0 when prepaid */
	cod_amount: number;
	/** the leg priced: forward delivery, RTO, or a return (DTO) */
	leg: "delivered" | "rto" | "dto";
}

/** The courier's price. Rupees, GST included in `total`. */
export interface CourierRate {
	total: number;
	/** the courier's components by its own names, rupees */
	breakdown: Record<string, number>;
}

/** What a courier does at one pincode (Delhivery pin-codes API). */
export interface PincodeServiceability {
	/** prepaid deliveries */
	prepaid: boolean;
	/** cash on delivery */
	cod: boolean;
	/** forward pickups from this pincode */
	pickup: boolean;
	/** reverse pickups (returns collected here) */
	reverse: boolean;
	/** out of delivery area (deliveries cost extra / take longer) */
	oda: boolean;
	/** largest COD / shipment value the courier accepts here, rupees (null: not stated) */
	max_amount: number | null;
	/** heaviest parcel accepted here, kg (null: not stated) */
	max_weight_kg: number | null;
	/** the courier's sort code, if given */
	sort_code: string | null;
}

/** The courier said no (definitive). `message` is the courier's words. */
export class CourierRefused extends Error {
	constructor(
		message: string,
		readonly courierCode?: string,
	) {
		super(message);
		this.name = "CourierRefused";
	}
}

/**
 * A shipment create refused because the courier already holds a shipment
 * under our reference (a create retried after an unknown outcome or a
 * crash: the first one went through). The parcel IS booked there: the
 * caller must never book the order with another courier on this answer.
 * `awb_number`: the existing shipment's AWB when the courier said it, else
 * null (then look the reference up, or hand it to ops when the courier has
 * no look-up).
 */
export class CourierDuplicate extends CourierRefused {
	constructor(
		message: string,
		readonly awb_number: string | null,
		courierCode?: string,
	) {
		super(message, courierCode);
		this.name = "CourierDuplicate";
	}
}

/**
 * Definitive "no label file": the courier does not issue its own labels, or
 * has none for the AWB (unknown AWB). `message` says which.
 */
export class NoCourierLabel extends CourierRefused {
	constructor(message: string, courierCode?: string) {
		super(message, courierCode);
		this.name = "NoCourierLabel";
	}
}

/** The courier could not be reached or the outcome is unknown (retry after a look-up). */
export class CourierUnavailable extends Error {
	constructor(message: string) {
		super(message);
		this.name = "CourierUnavailable";
	}
}
