/**
 * Delhivery B2C adapter: the {@link CourierAdapter} interface on Delhivery's
 * published protocol (DOMAIN.md "A real courier API: Delhivery B2C";
 * docs/ARCHITECTURE.md §1). Settings from the environment (./settings.ts),
 * HTTP in ./proxy.ts, shapes in ./mapper.ts; golden wire fixtures in
 * test/fixtures/couriers/delhivery. No retries here: callers retry after a look-up.
 */
import { timingSafeEqual } from "node:crypto";
import { RateLimiterMemory, RateLimiterQueue } from "rate-limiter-flexible";
import type { NdrAct } from "../../contracts/ndr";
import {
	type BookRequest,
	type BookResult,
	type CourierAdapter,
	type CourierLabel,
	type CourierRate,
	CourierUnavailable,
	type NdrActionDetails,
	type NdrUploadOutcome,
	NoCourierLabel,
	type PickupLocation,
	type PickupRequest,
	type PincodeServiceability,
	type RateQuery,
	type RegisterResult,
	type TrackingScan,
} from "../types";
import * as m from "./mapper";
import { send } from "./proxy";
import { type DelhiverySettings, delhiverySettings } from "./settings";

export { STATUS_CODES, statusOfScan } from "./mapper";
export { type DelhiverySettings, delhiverySettings } from "./settings";

/** Header carrying the shared token on Delhivery's scan pushes (lower case). */
export const DELHIVERY_PUSH_TOKEN_HEADER = "x-delhivery-token";
/** Most waybills one track call takes (Delhivery: 50). */
export const DELHIVERY_TRACK_BATCH = 50;
/** Most pincodes one pin-codes call takes (our choice: keeps the URL short). */
export const DELHIVERY_SERVICEABILITY_BATCH = 50;

/** Rate limiter + answer cache shared by every adapter of one base URL (the limit is per IP, i.e. per process here). */
interface RateGate {
	queue: RateLimiterQueue;
	cache: Map<string, { at: number; rate: CourierRate }>;
}
const GATES = new Map<string, RateGate>();

/** Forgets every rate limiter and rate cache (tests). */
export function resetDelhiveryRateGates(): void {
	GATES.clear();
}

function gateOf(s: DelhiverySettings): RateGate {
	const key = `${s.baseUrl}|${s.rateLimit}|${s.rateWindowMs}`;
	let g = GATES.get(key);
	if (!g) {
		const limiter = new RateLimiterMemory({ points: s.rateLimit, duration: s.rateWindowMs / 1000 });
		g = { queue: new RateLimiterQueue(limiter, { maxQueueSize: 1000 }), cache: new Map() };
		GATES.set(key, g);
	}
	return g;
}

/** One Delhivery account (token + base URL) behind the adapter interface. */
export class DelhiveryAdapter implements CourierAdapter {
	readonly settings: DelhiverySettings;
	readonly trackBatchSize = DELHIVERY_TRACK_BATCH;
	readonly serviceabilityBatchSize = DELHIVERY_SERVICEABILITY_BATCH;

	/**
	 * @param courierCode our courier code (e.g. `delhivery-surface`)
	 * @param settings overrides of the environment's settings (tests)
	 * Throws an Error when the base URL or token is not configured.
	 */
	constructor(courierCode: string, settings: Partial<DelhiverySettings> = {}) {
		const env = { ...process.env };
		if (settings.baseUrl) env.DELHIVERY_BASE_URL = settings.baseUrl;
		if (settings.token) env.DELHIVERY_TOKEN = settings.token;
		this.settings = { ...delhiverySettings(courierCode, env), ...settings };
	}

	/** Whether labels are Delhivery's packing slips (`DELHIVERY_OWN_LABEL`, default true). */
	get issuesOwnLabel(): boolean {
		return this.settings.ownLabel;
	}

	/** `POST /api/backend/clientwarehouse/create/`, then `/edit/` when the name exists already. */
	async registerWarehouse(loc: PickupLocation): Promise<RegisterResult> {
		const created = m.parseWarehouse(await send(this.settings, m.toWarehouseCreate(loc)), loc);
		if (created !== "exists") return created;
		const edited = m.parseWarehouse(await send(this.settings, m.toWarehouseEdit(loc)), loc);
		if (edited === "exists") throw new CourierUnavailable("Delhivery warehouse edit answered 'exists'");
		return edited;
	}

	/** `GET /waybill/api/bulk/json/?count=N`: N waybills from the account's pool. */
	async prefetchWaybills(count: number): Promise<string[]> {
		return m.parseWaybills(await send(this.settings, m.toWaybills(count)));
	}

	/** `POST /api/cmu/create.json`; refusals (success:false, status Fail) → CourierRefused with rmk/remarks. */
	async book(req: BookRequest): Promise<BookResult> {
		return m.parseCreate(await send(this.settings, m.toCreate(req)), req.reference);
	}

	/** `GET /api/v1/packages/json/?ref_ids=<reference>`; null when Delhivery never saw it. */
	async lookupByReference(reference: string): Promise<BookResult | null> {
		return m.parseLookup(await send(this.settings, m.toLookup(reference)), reference);
	}

	/** `POST /api/p/edit` `{waybill, cancellation:"true"}`. */
	async cancel(awb_number: string): Promise<{ cancelled: boolean }> {
		return m.parseCancel(await send(this.settings, m.toCancel(awb_number)));
	}

	/** `GET /api/v1/packages/json/?waybill=<awb>`; unknown AWB → CourierRefused. */
	async track(awb_number: string): Promise<TrackingScan[]> {
		return m.parseTrack(await send(this.settings, m.toTrack([awb_number])), awb_number);
	}

	/** `GET /api/v1/packages/json/?waybill=a,b,…` (≤ 50); unknown AWBs absent. */
	async trackMany(awb_numbers: string[]): Promise<Map<string, TrackingScan[]>> {
		if (awb_numbers.length === 0) return new Map();
		if (awb_numbers.length > DELHIVERY_TRACK_BATCH)
			throw new Error(`trackMany takes at most ${DELHIVERY_TRACK_BATCH} AWBs`);
		return m.parseTrackMany(await send(this.settings, m.toTrack(awb_numbers)));
	}

	/** A push is authentic when header `x-delhivery-token` equals `DELHIVERY_WEBHOOK_TOKEN` (constant-time; unset → never). */
	verifyPush(_raw: Buffer, headers: Record<string, string | undefined>): boolean {
		const want = Buffer.from(this.settings.webhookToken);
		const got = Buffer.from(headers[DELHIVERY_PUSH_TOKEN_HEADER] ?? "");
		return want.length > 0 && got.length === want.length && timingSafeEqual(got, want);
	}

	/** Scans of a pushed body (mapper `parsePush`); unreadable → CourierRefused. */
	parsePush(raw: Buffer): { awb_number: string; scans: TrackingScan[] }[] {
		return m.parsePush(raw);
	}

	/**
	 * `GET /api/p/packing_slip?wbns=<awb>&pdf=true`, then the PDF from its
	 * `pdf_download_link` (fetched without the token) or its base64. No
	 * package → NoCourierLabel; account without own labels → NoCourierLabel, no call.
	 */
	async fetchLabel(awb_number: string): Promise<CourierLabel> {
		if (!this.issuesOwnLabel)
			throw new NoCourierLabel(
				`${this.settings.courierCode} does not issue its own labels`,
				this.settings.courierCode,
			);
		const slip = m.parsePackingSlip(await send(this.settings, m.toPackingSlip(awb_number)));
		if (slip === "none") throw new NoCourierLabel(`Delhivery has no packing slip for ${awb_number}`);
		if ("bytes" in slip) return { bytes: slip.bytes, content_type: "application/pdf" };
		const file = await send(
			this.settings,
			{
				method: "GET",
				path: "/packing_slip_pdf",
				query: {},
				headers: { accept: "application/pdf" },
				body: null,
			},
			slip.link,
		);
		if (file.status !== 200 || !file.bytes.subarray(0, 5).equals(Buffer.from("%PDF-")))
			throw new CourierUnavailable(`Delhivery packing slip PDF: HTTP ${file.status}, not a PDF`);
		return { bytes: file.bytes, content_type: file.content_type || "application/pdf" };
	}

	/** `POST /api/p/update` with one act; answers Delhivery's upload id as `request_id`. */
	async ndrAction(
		awb_number: string,
		act: NdrAct,
		details: NdrActionDetails,
	): Promise<{ request_id: string }> {
		return m.parseNdrUpdate(await send(this.settings, m.toNdrUpdate(awb_number, act, details)));
	}

	/**
	 * `GET /api/cmu/get_bulk_upl/<request_id>`: the outcome per waybill of an NDR upload
	 * ({@link CourierAdapter.ndrActionStatus}; mapper `parseNdrStatus`). Unknown upload id →
	 * CourierRefused; unreachable, 5xx or unreadable → CourierUnavailable.
	 */
	async ndrActionStatus(request_id: string): Promise<NdrUploadOutcome[]> {
		return m.parseNdrStatus(await send(this.settings, m.toNdrStatus(request_id)), request_id);
	}

	/** `POST /fm/request/new/`. */
	async requestPickup(req: PickupRequest): Promise<{ pickup_id: string }> {
		return m.parsePickup(await send(this.settings, m.toPickup(req)));
	}

	/**
	 * `GET /api/kinko/v1/invoice/charges/.json`. At most `rateLimit` calls per
	 * `rateWindowMs` leave this process (40 a minute): a further call waits
	 * for the window; the same query within `rateCacheMs` is answered from cache.
	 */
	async rate(q: RateQuery): Promise<CourierRate> {
		const req = m.toRate(q);
		const key = new URLSearchParams(req.query).toString();
		const gate = gateOf(this.settings);
		const hit = gate.cache.get(key);
		if (hit && Date.now() - hit.at < this.settings.rateCacheMs) return hit.rate;
		await gate.queue.removeTokens(1);
		const rate = m.parseRate(await send(this.settings, req));
		gate.cache.set(key, { at: Date.now(), rate });
		if (gate.cache.size > 10_000) gate.cache.delete(gate.cache.keys().next().value ?? key);
		return rate;
	}

	/** `GET /c/api/pin-codes/json/?filter_codes=…` (≤ {@link DELHIVERY_SERVICEABILITY_BATCH}); unserved pincodes absent. */
	async serviceability(pincodes: string[]): Promise<Map<string, PincodeServiceability>> {
		if (pincodes.length === 0) return new Map();
		return m.parseServiceability(await send(this.settings, m.toServiceability(pincodes)));
	}
}
