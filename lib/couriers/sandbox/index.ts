/**
 * Sandbox courier adapter: the {@link CourierAdapter} interface over real HTTP
 * against the local simulator (services/simulator.service.ts), so timeouts,
 * retries and reconciliation are exercised exactly as with a real courier
 * (docs/ARCHITECTURE.md §1, §4).
 */
import type { NdrAct } from "../../contracts/ndr";
import type {
	BookRequest,
	BookResult,
	CourierAdapter,
	CourierLabel,
	NdrActionDetails,
	PickupLocation,
	PickupRequest,
	RegisterResult,
	TrackingScan,
} from "../types";
import { NoCourierLabel } from "../types";
import {
	parseCancel,
	parseCreate,
	parseLabel,
	parseLookup,
	parseNdrUpdate,
	parsePickupAnswer,
	parsePush,
	parseTrack,
	parseTrackMany,
	parseWarehouse,
	toCancel,
	toCreateForm,
	toNdrUpdate,
	toPickupBody,
	toWarehouse,
} from "./mapper";
import { callCourier, callCourierFile } from "./proxy";
import { type SandboxSettings, sandboxSettings } from "./settings";
import { checkPushSignature, pushReplayKey } from "./signature";

export { PickupLocationUnknown, statusOfScan } from "./mapper";
export { signedPushHeaders, signPush } from "./signature";

/** Most waybills one sandbox (Delhivery) track call takes. */
export const SANDBOX_TRACK_BATCH = 50;

/** One sandbox courier account (courier code + token) behind the adapter interface. */
export class SandboxAdapter implements CourierAdapter {
	readonly settings: SandboxSettings;
	/** Delhivery's track API takes up to 50 comma-separated waybills. */
	readonly trackBatchSize = SANDBOX_TRACK_BATCH;

	/** @param courierCode the simulator's courier code, e.g. `sbx-express` */
	constructor(courierCode: string, settings: Partial<SandboxSettings> = {}) {
		this.settings = { ...sandboxSettings(courierCode), ...settings };
	}

	/** Whether this courier issues its own label file (`settings.ownLabel`, from `SANDBOX_OWN_LABEL_COURIERS`). */
	get issuesOwnLabel(): boolean {
		return this.settings.ownLabel;
	}

	/**
	 * `GET /api/p/packing_slip?wbns=<awb>` (Delhivery's packing slip): the
	 * courier's label file, bytes untouched. A courier that issues no labels →
	 * {@link NoCourierLabel} without a call; unknown AWB → NoCourierLabel;
	 * unreachable, 5xx or unreadable → CourierUnavailable (./mapper.ts `parseLabel`).
	 */
	async fetchLabel(awb_number: string): Promise<CourierLabel> {
		if (!this.issuesOwnLabel) {
			throw new NoCourierLabel(
				`${this.settings.courierCode} does not issue its own labels`,
				this.settings.courierCode,
			);
		}
		const res = await callCourierFile(
			this.settings,
			{ method: "GET", path: "/api/p/packing_slip", query: { wbns: awb_number } },
			"application/pdf, application/json",
		);
		return parseLabel(res, this.settings.courierCode, awb_number);
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

	/**
	 * `GET /api/v1/packages/json/?waybill=a,b,c`: scans of each AWB the courier
	 * knows, oldest first; unknown AWBs are absent. Duplicates and blanks are
	 * dropped; more than {@link SANDBOX_TRACK_BATCH} AWBs are asked in
	 * consecutive calls of that size. No AWB → an empty map, no call.
	 * Throws CourierUnavailable when the courier is unreachable or answers
	 * something unreadable.
	 */
	async trackMany(awb_numbers: string[]): Promise<Map<string, TrackingScan[]>> {
		const list = [...new Set(awb_numbers.map((a) => a.trim()).filter(Boolean))];
		const out = new Map<string, TrackingScan[]>();
		for (let i = 0; i < list.length; i += this.trackBatchSize) {
			const batch = list.slice(i, i + this.trackBatchSize);
			const res = await callCourier(this.settings, {
				method: "GET",
				path: "/api/v1/packages/json/",
				query: { waybill: batch.join(",") },
			});
			for (const [awb, scans] of parseTrackMany(res, this.settings.courierCode, batch)) out.set(awb, scans);
		}
		return out;
	}

	/**
	 * `POST /api/p/update` (Delhivery's NDR action) with one act
	 * (./mapper.ts `toNdrUpdate`): the upload id when accepted; refused →
	 * CourierRefused with the courier's words; timeout, connection failure,
	 * 5xx, credentials refused or an unreadable answer → CourierUnavailable.
	 * One HTTP call: retries are the caller's policy (lib/ndr/courier-action.ts).
	 */
	async ndrAction(
		awb_number: string,
		act: NdrAct,
		details: NdrActionDetails,
	): Promise<{ request_id: string }> {
		const res = await callCourier(this.settings, {
			method: "POST",
			path: "/api/p/update",
			json: toNdrUpdate(awb_number, act, details),
		});
		return parseNdrUpdate(res, this.settings.courierCode, awb_number);
	}

	/** `POST /fm/request/new/` (Delhivery's pickup request): the courier's pickup id; refusals with its words. */
	async requestPickup(req: PickupRequest): Promise<{ pickup_id: string }> {
		const res = await callCourier(this.settings, {
			method: "POST",
			path: "/fm/request/new/",
			json: toPickupBody(req),
		});
		return { pickup_id: parsePickupAnswer(res, this.settings.courierCode, "pickup request").pickup_id };
	}

	/** `POST /fm/request/<pickup_id>/edit/` (the sandbox's own call): moves the request; the same id. */
	async reschedulePickup(pickup_id: string, req: PickupRequest): Promise<{ pickup_id: string }> {
		const res = await callCourier(this.settings, {
			method: "POST",
			path: `/fm/request/${encodeURIComponent(pickup_id)}/edit/`,
			json: toPickupBody(req),
		});
		return { pickup_id: parsePickupAnswer(res, this.settings.courierCode, "pickup reschedule").pickup_id };
	}

	/** `POST /fm/request/<pickup_id>/cancel/` (the sandbox's own call); refused once collected. */
	async cancelPickup(pickup_id: string): Promise<{ cancelled: boolean }> {
		const res = await callCourier(this.settings, {
			method: "POST",
			path: `/fm/request/${encodeURIComponent(pickup_id)}/cancel/`,
		});
		return { cancelled: parsePickupAnswer(res, this.settings.courierCode, "pickup cancel").cancelled };
	}

	/**
	 * Whether a pushed scan body is authentic (./signature.ts
	 * `checkPushSignature`): header `x-sandbox-signature` is `sha256=<hex
	 * HMAC-SHA256 of "<x-sandbox-timestamp>.<raw>">` under
	 * `settings.webhookSecret` (constant-time compare) and the timestamp is at
	 * most 5 minutes old and 1 minute ahead. No key configured, a missing or
	 * malformed header, a stale timestamp or a wrong signature → false.
	 */
	verifyPush(raw: Buffer, headers: Record<string, string | undefined>): boolean {
		return checkPushSignature(raw, headers, this.settings.webhookSecret) === "ok";
	}

	/** The replay key of a verified push: its signature (./signature.ts `pushReplayKey`). */
	pushReplayKey(headers: Record<string, string | undefined>): string | null {
		return pushReplayKey(headers);
	}

	/**
	 * Scans of a pushed body (Delhivery push shape, one scan per `Shipment`
	 * entry; lib/couriers/sandbox/wire.ts WirePushScan): per AWB its scans,
	 * oldest first. Throws CourierRefused naming what it cannot read.
	 */
	parsePush(raw: Buffer): { awb_number: string; scans: TrackingScan[] }[] {
		return parsePush(raw, this.settings.courierCode);
	}
}
