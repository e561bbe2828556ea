/**
 * Xpressbees courier adapter (issue 14): the {@link CourierAdapter} interface
 * over Xpressbees' ship API — JSON bodies and a login token that expires
 * (./proxy.ts), unlike Delhivery's static token and `format=json&data=` forms.
 *
 * What Xpressbees' API offers and what this adapter does with each operation:
 * - `book` → forward `POST /api/shipments2` (pickup address inline, `request_auto_pickup: "yes"`);
 *   reverse `POST /api/reverseshipments` (Xpressbees' return pickups, their own body)
 * - `track` → `GET /api/shipments2/track/<awb>`; `trackMany` = one track call per AWB (batch size 1)
 * - `cancel` → `POST /api/shipments2/cancel`
 * - `ndrAction` → `POST /api/ndr/create`
 * - `rate` → `POST /api/courier/serviceability` (lane price list; forward deliveries only)
 * - `registerWarehouse`: Xpressbees registers no pickup locations (the address travels with each
 *   shipment): answers our warehouse code without a call.
 * - `lookupByReference`: no look-up by order number → CourierRefused("… not supported by Xpressbees");
 *   a retried booking never doubles the parcel (`unique_order_number: "yes"`): the refusal of a taken
 *   order number is CourierDuplicate, which the booking worker settles without another courier.
 * - `verifyPush` false / `parsePush` CourierRefused: no push scheme published; scans are polled.
 * - `fetchLabel`: NoCourierLabel (labels are drawn by documents); `issuesOwnLabel` false.
 * - `prefetchWaybills`, `requestPickup`, `serviceability`: not offered, left undefined.
 */
import type { NdrAct } from "../../contracts/ndr";
import type {
	BookRequest,
	BookResult,
	CourierAdapter,
	CourierLabel,
	CourierRate,
	NdrActionDetails,
	PickupLocation,
	RateQuery,
	RegisterResult,
	TrackingScan,
} from "../types";
import { CourierRefused, NoCourierLabel } from "../types";
import {
	parseCancel,
	parseNdr,
	parseRate,
	parseShipment,
	parseTrack,
	toNdr,
	toRate,
	toReverseShipment,
	toShipment,
} from "./mapper";
import { callXpressbees } from "./proxy";
import { type XpressbeesSettings, xpressbeesSettings } from "./settings";

export { forgetXpressbeesTokens, xpressbeesToken } from "./proxy";
export type { XpressbeesLogger, XpressbeesSettings } from "./settings";

/** One Xpressbees account behind the adapter interface. */
export class XpressbeesAdapter implements CourierAdapter {
	readonly settings: XpressbeesSettings;
	/** Xpressbees tracks one AWB per call. */
	readonly trackBatchSize = 1;
	/** Xpressbees issues a label URL, but this account does not use it: documents draws the label. */
	readonly issuesOwnLabel = false;

	/** @param courierCode our courier code; settings from the environment (./settings.ts), overridable. */
	constructor(courierCode: string, settings: Partial<XpressbeesSettings> = {}) {
		this.settings = { ...xpressbeesSettings(courierCode), ...settings };
	}

	private unsupported(what: string): CourierRefused {
		return new CourierRefused(`${what} not supported by Xpressbees`, this.settings.courierCode);
	}

	/** No call: Xpressbees takes the pickup address with each shipment. Answers `loc.warehouse_code`. */
	async registerWarehouse(loc: PickupLocation): Promise<RegisterResult> {
		return { courier_location_id: loc.warehouse_code };
	}

	/**
	 * Forward: `POST /api/shipments2`; reverse: `POST /api/reverseshipments`.
	 * Refusal (unserviceable pincode …) → CourierRefused; a taken order number → CourierDuplicate.
	 */
	async book(req: BookRequest): Promise<BookResult> {
		const reverse = req.direction === "reverse";
		const res = await callXpressbees(this.settings, {
			method: "POST",
			path: reverse ? "/api/reverseshipments" : "/api/shipments2",
			json: reverse ? toReverseShipment(req) : toShipment(req, this.settings.courierId),
		});
		return parseShipment(res, req.reference);
	}

	/** Not offered by Xpressbees: always throws CourierRefused (no call). */
	async lookupByReference(_reference: string): Promise<BookResult | null> {
		throw this.unsupported("look-up by reference");
	}

	/** `POST /api/shipments2/cancel` `{awb}`. Refusal (already delivered …) → CourierRefused. */
	async cancel(awb_number: string): Promise<{ cancelled: boolean }> {
		const res = await callXpressbees(this.settings, {
			method: "POST",
			path: "/api/shipments2/cancel",
			json: { awb: awb_number },
		});
		return parseCancel(res);
	}

	/** `GET /api/shipments2/track/<awb>`: scans oldest first; unknown AWB → CourierRefused. */
	async track(awb_number: string): Promise<TrackingScan[]> {
		const res = await callXpressbees(this.settings, {
			method: "GET",
			path: `/api/shipments2/track/${encodeURIComponent(awb_number)}`,
		});
		return parseTrack(res);
	}

	/** One track call per AWB, in order; AWBs Xpressbees refuses are absent. CourierUnavailable passes through. */
	async trackMany(awb_numbers: string[]): Promise<Map<string, TrackingScan[]>> {
		const out = new Map<string, TrackingScan[]>();
		for (const awb of awb_numbers) {
			try {
				out.set(awb, await this.track(awb));
			} catch (err) {
				if (!(err instanceof CourierRefused)) throw err;
			}
		}
		return out;
	}

	/** Xpressbees publishes no push signature scheme: no pushed body is authentic. */
	verifyPush(_raw: Buffer, _headers: Record<string, string | undefined>): boolean {
		return false;
	}

	/** Throws CourierRefused: pushes are not supported (see {@link verifyPush}). */
	parsePush(_raw: Buffer): { awb_number: string; scans: TrackingScan[] }[] {
		throw this.unsupported("scan push");
	}

	/** Throws {@link NoCourierLabel}: this adapter issues no label files. */
	async fetchLabel(_awb_number: string): Promise<CourierLabel> {
		throw new NoCourierLabel(
			`${this.settings.courierCode} does not issue its own labels`,
			this.settings.courierCode,
		);
	}

	/** `POST /api/ndr/create` (./mapper.ts `toNdr`); refusal → CourierRefused; answers `<awb>:<act>`. */
	async ndrAction(
		awb_number: string,
		act: NdrAct,
		details: NdrActionDetails,
	): Promise<{ request_id: string }> {
		const res = await callXpressbees(this.settings, {
			method: "POST",
			path: "/api/ndr/create",
			json: toNdr(awb_number, act, details),
		});
		return parseNdr(res, awb_number, act);
	}

	/** `POST /api/courier/serviceability`: the price of the configured service (or the mode's); rupees. */
	async rate(q: RateQuery): Promise<CourierRate> {
		const body = toRate(q);
		const res = await callXpressbees(this.settings, {
			method: "POST",
			path: "/api/courier/serviceability",
			json: body,
		});
		return parseRate(res, q, this.settings.courierId);
	}
}
