/**
 * Sandbox courier adapter: the {@link CourierAdapter} interface over real HTTP
 * against the local simulator (services/simulator.service.ts), so timeouts,
 * retries and reconciliation are exercised exactly as with a real courier
 * (ARCHITECTURE §1, §4).
 */
import type {
	BookRequest,
	BookResult,
	CourierAdapter,
	PickupLocation,
	RegisterResult,
	TrackingScan,
} from "../types";
import {
	parseCancel,
	parseCreate,
	parseLookup,
	parseTrack,
	parseWarehouse,
	toCancel,
	toCreateForm,
	toWarehouse,
} from "./mapper";
import { callCourier } from "./proxy";
import { type SandboxSettings, sandboxSettings } from "./settings";

export { PickupLocationUnknown } from "./mapper";

/** One sandbox courier account (courier code + token) behind the adapter interface. */
export class SandboxAdapter implements CourierAdapter {
	readonly settings: SandboxSettings;

	/** @param courierCode the simulator's courier code, e.g. `sbx-express` */
	constructor(courierCode: string, settings: Partial<SandboxSettings> = {}) {
		this.settings = { ...sandboxSettings(courierCode), ...settings };
	}

	/** `POST /api/backend/clientwarehouse/create/`; an existing name is updated (idempotent). */
	async registerWarehouse(loc: PickupLocation): Promise<RegisterResult> {
		const res = await callCourier(this.settings, {
			method: "POST",
			path: "/api/backend/clientwarehouse/create/",
			json: toWarehouse(loc),
		});
		return parseWarehouse(res, this.settings.courierCode, loc);
	}

	/** `POST /api/cmu/create.json`; the simulator dedupes on `reference` (same reference → same AWB). */
	async book(req: BookRequest): Promise<BookResult> {
		const res = await callCourier(this.settings, {
			method: "POST",
			path: "/api/cmu/create.json",
			form: toCreateForm(req),
		});
		return parseCreate(res, this.settings.courierCode, req.reference);
	}

	/** `GET /api/v1/packages/json/?refnum=`; null when the courier has never seen the reference. */
	async lookupByReference(reference: string): Promise<BookResult | null> {
		const res = await callCourier(this.settings, {
			method: "GET",
			path: "/api/v1/packages/json/",
			query: { refnum: reference },
		});
		return parseLookup(res, this.settings.courierCode, reference);
	}

	/** `POST /api/p/edit` with `cancellation: "true"`. */
	async cancel(awb_number: string): Promise<{ cancelled: boolean }> {
		const res = await callCourier(this.settings, {
			method: "POST",
			path: "/api/p/edit",
			json: toCancel(awb_number),
		});
		return parseCancel(res, this.settings.courierCode);
	}

	/** `GET /api/v1/packages/json/?waybill=`; scans oldest first. */
	async track(awb_number: string): Promise<TrackingScan[]> {
		const res = await callCourier(this.settings, {
			method: "GET",
			path: "/api/v1/packages/json/",
			query: { waybill: awb_number },
		});
		return parseTrack(res, this.settings.courierCode, awb_number);
	}
}
