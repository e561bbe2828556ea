/**
 * The sandbox couriers' API endpoints (wire format lib/couriers/sandbox/wire.ts,
 * docs/ARCHITECTURE.md §4): each takes the parsed request and answers a
 * {@link Reply} (status, JSON body, optional hang). HTTP parsing and routing
 * are in ./server.ts; the SQL in ./store.ts.
 */

import { randomInt } from "node:crypto";
import type { Logger } from "moleculer";
import type { Sequelize } from "sequelize";
import type { EmittedScan, SimulatorEvent, SimulatorReference, SimulatorState } from "../contracts";
import {
	SCAN_KINDS,
	scanKindOf,
	type WireCancelRequest,
	type WireCancelResponse,
	type WireCreateRequest,
	type WireCreateResponse,
	type WireNdrAction,
	type WireNdrPackage,
	type WireNdrRequest,
	type WireNdrResponse,
	type WirePackage,
	type WirePushScan,
	type WireShipment,
	type WireTrackResponse,
	type WireTrackShipment,
	type WireWarehouse,
	type WireWarehouseResponse,
} from "../couriers/sandbox/wire";
import { isCalendarDay, istDay } from "../shared/ist-date";
import {
	CREATE_5XX_MARKER,
	CREATE_TIMEOUT_MARKER,
	configuredDelay,
	configuredHang,
	DEFER_DLV_MAX_DAYS,
	issuesOwnLabel,
	LABEL_5XX_MARKER,
	markedWith,
	NDR_5XX_MARKER,
	NDR_DOWN_MARKER,
	refusalsOf,
	SIM_COURIERS,
	type SimCourier,
	sortCode,
	warehouseRefusals,
} from "./couriers";
import { packingSlipPdf } from "./label";
import { firePush } from "./push";
import {
	bookRegistered,
	countsPerCourier,
	firstFault,
	firstScanAt,
	insertNdrActions,
	insertPackage,
	insertScan,
	lastScan,
	lastScanCode,
	logCall,
	logCreateCalls,
	markCancelled,
	type NewPackage,
	type PackageRow,
	packageBy,
	packageForScan,
	packagesBy,
	pickupLocation,
	referenceCounts,
	type ScanRow,
	sameNdrAction,
	scansOf,
	upsertPickupLocation,
} from "./store";

/** Answer of an HTTP route. */
export interface Reply {
	status: number;
	/** JSON body (ignored when `file` is given) */
	body: unknown;
	/** a file answer instead of JSON: its media type and bytes */
	file?: { content_type: string; bytes: Buffer };
	/** delay the answer (ms) after the work is done */
	hangMs?: number;
}

/** An HTTP answer thrown from inside a route (status and JSON body as given). */
export class HttpError extends Error {
	constructor(
		readonly status: number,
		readonly body: unknown,
	) {
		super(`HTTP ${status}`);
	}
}

/** Outcome of one shipment of a create, as logged in `simulator.calls`. */
type CreateOutcome = "booked" | "duplicate" | "refused" | "503";

/** Logs create calls: one row per shipment with its outcome (`503` for all when the call failed). */
async function logCreates(
	db: Sequelize,
	courier: SimCourier,
	shipments: WireShipment[],
	outcomes: CreateOutcome[],
): Promise<void> {
	await logCreateCalls(
		db,
		courier.code,
		shipments.map((s, i) => {
			const outcome = outcomes[i] ?? outcomes[0] ?? "";
			return { refnum: String(s.order ?? ""), status: outcome === "503" ? 503 : 200, outcome };
		}),
	);
}

/** The wire package of a booked row (cancelled ones carry the remark "Shipment cancelled"). */
function packageOf(row: PackageRow): WirePackage {
	return {
		waybill: row.waybill,
		refnum: row.refnum,
		status: "Success",
		sort_code: row.sort_code,
		remarks: row.cancelled_at ? ["Shipment cancelled"] : [],
	};
}

/**
 * `POST /api/cmu/create.json`: books each shipment (idempotent on `order`),
 * after {@link configuredDelay}. Faults: `SIMULATE_5XX` answers 503 once per
 * reference before anything is booked; `SIMULATE_TIMEOUT` holds an answer that
 * booked something for {@link configuredHang}. Refusals answer `status:"Fail"`
 * with the courier's remarks. Weights on the wire are grams. One accepted
 * shipment from a registered pickup is one statement ({@link createOne},
 * docs/decisions/0157-sandbox-create-one-statement.md).
 */
export async function create(db: Sequelize, courier: SimCourier, data: WireCreateRequest): Promise<Reply> {
	const shipments = Array.isArray(data?.shipments) ? data.shipments : [];
	if (!shipments.length)
		return { status: 200, body: { success: false, rmk: "shipments are required", packages: [] } };
	const pickupName = String(data.pickup_location?.name ?? "");
	await new Promise((r) => setTimeout(r, configuredDelay()));
	// The usual create (one bookable shipment, the pickup registered): one statement.
	const one = shipments.length === 1 ? await createOne(db, courier, shipments[0], pickupName) : undefined;
	if (one) return one;
	// 503 once per reference, before anything is booked.
	for (const s of shipments) {
		if (!markedWith(s, CREATE_5XX_MARKER)) continue;
		if (await firstFault(db, courier.code, String(s.order ?? ""))) {
			await logCreates(db, courier, shipments, ["503"]);
			return { status: 503, body: { error: "Service temporarily unavailable" } };
		}
	}
	const pickup = await pickupLocation(db, courier.code, pickupName);
	const packages: WirePackage[] = [];
	const outcomes: CreateOutcome[] = [];
	let hang = false;
	for (const s of shipments) {
		const ref = String(s.order ?? "");
		if (markedWith(s, CREATE_TIMEOUT_MARKER)) hang = true;
		// A reference booked before answers its package (a duplicate) even where it would now be refused;
		// a bookable one is inserted at once (ON CONFLICT: booked before → its package).
		const remarks = refusalsOf(courier, s, pickup !== undefined, pickupName);
		if (remarks.length || !pickup) {
			const existing = ref ? await packageBy(db, courier.code, "refnum", ref) : undefined;
			if (existing) {
				packages.push(packageOf(existing));
				outcomes.push("duplicate");
				continue;
			}
			packages.push({ waybill: "", refnum: ref, status: "Fail", sort_code: null, remarks });
			outcomes.push("refused");
			continue;
		}
		const inserted = await insertPackage(db, newPackage(courier, s, pickupName), {
			...FIRST_SCAN,
			location: pickup.city,
		});
		const row = inserted ?? (await packageBy(db, courier.code, "refnum", ref));
		if (!row) throw new Error(`package ${courier.code}/${ref} vanished`);
		packages.push(packageOf(row));
		outcomes.push(inserted ? "booked" : "duplicate");
	}
	await logCreates(db, courier, shipments, outcomes);
	return createReply(packages, hang);
}

/** A booked package's first scan (located in its pickup's city). */
const FIRST_SCAN = { code: "manifested", instructions: "Manifest uploaded by client" } as const;

/** The package to book for shipment `s` of a create from pickup location `pickupName`. */
function newPackage(courier: SimCourier, s: WireShipment, pickupName: string): NewPackage {
	return {
		courierCode: courier.code,
		ref: String(s.order ?? ""),
		awbPrefix: courier.awbPrefix,
		digits: courier.awbLength - courier.awbPrefix.length,
		sortCode: sortCode(String(s.pin)),
		pickupName,
		shipment: s,
	};
}

/**
 * {@link create} of a single shipment the courier accepts, from a registered
 * pickup location: booked (or found booked before) and logged in one
 * statement ({@link bookRegistered}). Undefined, with nothing written, when
 * the shipment needs the general path: a fault marker (`SIMULATE_5XX`), a
 * refusal, or a pickup location not registered.
 */
async function createOne(
	db: Sequelize,
	courier: SimCourier,
	s: WireShipment,
	pickupName: string,
): Promise<Reply | undefined> {
	if (markedWith(s, CREATE_5XX_MARKER)) return undefined;
	if (refusalsOf(courier, s, true, pickupName).length) return undefined;
	const res = await bookRegistered(db, newPackage(courier, s, pickupName), FIRST_SCAN);
	if (!res.known) return undefined;
	const row = res.row ?? (await packageBy(db, courier.code, "refnum", String(s.order ?? "")));
	if (!row) throw new Error(`package ${courier.code}/${s.order} vanished`);
	return createReply([packageOf(row)], markedWith(s, CREATE_TIMEOUT_MARKER));
}

/**
 * The reply to a create with these `packages`: `success` when all booked, the
 * refusals' remarks as `rmk` otherwise; held for {@link configuredHang} when
 * `hang` (SIMULATE_TIMEOUT) and something was booked.
 */
function createReply(packages: WirePackage[], hang: boolean): Reply {
	const ok = packages.every((p) => p.status === "Success");
	const body: WireCreateResponse = {
		success: ok,
		package_count: packages.length,
		packages,
		...(ok ? {} : { rmk: packages.flatMap((p) => p.remarks).join("; ") }),
	};
	// The fault hangs only a create that booked something (the answer is lost, the booking is not).
	const booked = packages.some((p) => p.status === "Success");
	return { status: 200, body, hangMs: hang && booked ? configuredHang() : 0 };
}

/** The wire tracking record of a package and its scans (oldest first); no scan yet → "Manifested". */
function trackOf(row: PackageRow, scans: ScanRow[]): WireTrackShipment {
	const wire = scans.map((s) => {
		const k = scanKindOf(s.code) ?? SCAN_KINDS.in_transit;
		return {
			ScanDetail: {
				Scan: k.Scan,
				ScanType: k.ScanType,
				StatusCode: k.StatusCode,
				ScannedLocation: s.location,
				ScanDateTime: new Date(s.at).toISOString(),
				Instructions: s.instructions,
			},
		};
	});
	const last = wire[wire.length - 1]?.ScanDetail;
	return {
		AWB: row.waybill,
		ReferenceNo: row.refnum,
		SortCode: row.sort_code,
		Status: {
			Status: last?.Scan ?? "Manifested",
			StatusType: last?.ScanType ?? "UD",
			StatusCode: last?.StatusCode ?? "X-UCI",
			StatusLocation: last?.ScannedLocation ?? "",
			StatusDateTime: last?.ScanDateTime ?? new Date().toISOString(),
			Instructions: last?.Instructions ?? "",
		},
		Scans: wire,
	};
}

/**
 * `GET /api/v1/packages/json/?refnum=a,b` or `?waybill=a,b` (comma-separated,
 * the first 50 taken): Delhivery-like track answer with every package found
 * (oldest booked first), each with all its scans; unknown ones are left out.
 * Two queries whatever the count (packages, then their scans). Neither given
 * → 400; nothing found → 200 with `Error`.
 */
export async function lookup(
	db: Sequelize,
	courier: SimCourier,
	refnum: string | null,
	waybill: string | null,
): Promise<Reply> {
	await logCall(db, courier.code, "lookup", refnum ?? waybill ?? "", 200);
	const list = (refnum ?? waybill ?? "")
		.split(",")
		.map((s) => s.trim())
		.filter(Boolean)
		.slice(0, 50);
	if (!list.length) throw new HttpError(400, { ShipmentData: [], Error: "refnum or waybill is required" });
	const rows = await packagesBy(db, courier.code, refnum !== null ? "refnum" : "waybill", list);
	const scans = rows.length
		? await scansOf(
				db,
				rows.map((r) => r.waybill),
			)
		: [];
	const byWaybill = new Map<string, ScanRow[]>();
	for (const s of scans) {
		const list = byWaybill.get(s.waybill);
		if (list) list.push(s);
		else byWaybill.set(s.waybill, [s]);
	}
	const body: WireTrackResponse = {
		ShipmentData: rows.map((r) => ({ Shipment: trackOf(r, byWaybill.get(r.waybill) ?? []) })),
	};
	if (!rows.length) body.Error = "No such waybill or Order Id found";
	return { status: 200, body };
}

/**
 * `POST /api/p/edit` with `cancellation: "true"`: cancels a package not yet
 * picked up. Cancelling twice answers success; every answer is 200 with
 * `status` true/false.
 */
export async function cancelPackage(
	db: Sequelize,
	courier: SimCourier,
	req: Partial<WireCancelRequest> | null,
): Promise<Reply> {
	const waybill = String(req?.waybill ?? "");
	await logCall(db, courier.code, "cancel", waybill, 200);
	const answer = (body: WireCancelResponse): Reply => ({ status: 200, body });
	if (String(req?.cancellation) !== "true")
		return answer({ status: false, waybill, error: "Only cancellation is supported" });
	const pkg = await packageBy(db, courier.code, "waybill", waybill);
	if (!pkg) return answer({ status: false, waybill, error: `No such waybill ${waybill}` });
	if (pkg.cancelled_at) return answer({ status: true, waybill, remark: "Shipment has been cancelled." });
	const lastCode = (await lastScanCode(db, waybill)) ?? "manifested";
	// a concurrent cancel of the same waybill got there first: cancelling twice is a success
	if (lastCode === "cancelled")
		return answer({ status: true, waybill, remark: "Shipment has been cancelled." });
	if (lastCode !== "manifested") {
		return answer({
			status: false,
			waybill,
			error: `Shipment is ${scanKindOf(lastCode)?.Scan ?? lastCode}; it can no longer be cancelled`,
		});
	}
	if (await markCancelled(db, courier.code, waybill))
		await insertScan(db, waybill, "cancelled", "Origin", "Cancelled by client");
	return answer({ status: true, waybill, remark: "Shipment has been cancelled." });
}

/**
 * `POST /api/backend/clientwarehouse/create/` (and `/edit/`): upserts a pickup
 * location by `name`; 400 `{success:false, error: [reasons]}` when refused.
 */
export async function registerWarehouse(
	db: Sequelize,
	courier: SimCourier,
	w: WireWarehouse | null,
): Promise<Reply> {
	const errors = warehouseRefusals(w ?? ({} as WireWarehouse));
	await logCall(db, courier.code, "warehouse", String(w?.name ?? ""), errors.length ? 400 : 200);
	if (!w || errors.length) {
		const body: WireWarehouseResponse = { success: false, error: errors };
		return { status: 400, body };
	}
	await upsertPickupLocation(db, courier.code, w);
	const body: WireWarehouseResponse = {
		success: true,
		data: { name: w.name, pincode: w.pin, message: `Warehouse ${w.name} registered` },
	};
	return { status: 200, body };
}

/**
 * `GET /api/p/packing_slip?wbns=<awb>` (Delhivery's packing slip): for a
 * courier that issues its own labels ({@link issuesOwnLabel}), the label PDF
 * of the first waybill asked (./label.ts; the same bytes on every call);
 * a waybill it does not hold → 200 `{packages_found: 0, packages: []}`; a
 * courier that issues none → 404 `{error}`; no waybill → 400. Fault: a
 * consignee named with {@link LABEL_5XX_MARKER} answers 503 on the first call
 * per waybill. Every call is logged (`label`, the waybill, the status).
 */
export async function packingSlip(db: Sequelize, courier: SimCourier, wbns: string | null): Promise<Reply> {
	const waybill = (wbns ?? "").split(",")[0]?.trim() ?? "";
	const reply = async (): Promise<Reply> => {
		if (!issuesOwnLabel(courier))
			return { status: 404, body: { error: `Packing slips are not enabled for ${courier.name}` } };
		if (!waybill) return { status: 400, body: { error: "wbns is required" } };
		const pkg = await packageBy(db, courier.code, "waybill", waybill);
		if (!pkg) return { status: 200, body: { packages_found: 0, packages: [] } };
		if (String(pkg.shipment.name ?? "").includes(LABEL_5XX_MARKER)) {
			if (await firstFault(db, courier.code, waybill, "label_5xx"))
				return { status: 503, body: { error: "Service temporarily unavailable" } };
		}
		const bytes = await packingSlipPdf(courier, pkg, new Date(pkg.created_at));
		return { status: 200, body: null, file: { content_type: "application/pdf", bytes } };
	};
	const out = await reply();
	await logCall(db, courier.code, "label", waybill, out.status);
	return out;
}

const NDR_ACTS = ["RE-ATTEMPT", "DEFER_DLV", "EDIT_DETAILS"];

/** An act of an upload, with the package's state it is decided on. */
interface NdrEntry {
	waybill: string;
	act: string;
	action_data: Record<string, string>;
	pkg?: PackageRow;
}

/**
 * The courier's decision on one act: its refusal in the courier's words, or
 * the pending scan it answers (accepted). Acceptable only while the last scan
 * is `undelivered` (Pending); DEFER_DLV's date after today (IST) and at most
 * {@link DEFER_DLV_MAX_DAYS} days after the first pending scan's IST day;
 * EDIT_DETAILS needs a 10-digit `phone` and/or an `add`, and cannot change the
 * delivery pincode.
 */
async function decideNdr(
	db: Sequelize,
	e: NdrEntry,
	now: Date,
): Promise<{ refused: string } | { scan_id: string }> {
	if (!NDR_ACTS.includes(e.act))
		return { refused: `Invalid act "${e.act}": must be RE-ATTEMPT, DEFER_DLV or EDIT_DETAILS` };
	if (!e.pkg) return { refused: `No such waybill ${e.waybill}` };
	const last = await lastScan(db, e.waybill);
	if (last?.code !== "undelivered") {
		const words = last ? (scanKindOf(last.code)?.Scan ?? last.code) : "Manifested";
		return { refused: `${e.act} not allowed: shipment is ${words}` };
	}
	const d = e.action_data;
	if (e.act === "DEFER_DLV") {
		const date = d.deferred_date ?? "";
		if (!isCalendarDay(date)) return { refused: "DEFER_DLV needs action_data.deferred_date as YYYY-MM-DD" };
		const today = istDay(now);
		if (date <= today) return { refused: `DEFER_DLV date ${date} must be after today (${today})` };
		const first = istDay((await firstScanAt(db, e.waybill, "undelivered")) ?? now);
		const lastDay = new Date(Date.parse(`${first}T00:00:00Z`) + DEFER_DLV_MAX_DAYS * 86_400_000)
			.toISOString()
			.slice(0, 10);
		if (date > lastDay) {
			return {
				refused: `DEFER_DLV date ${date} is more than ${DEFER_DLV_MAX_DAYS} days after the first pending date ${first} (latest ${lastDay})`,
			};
		}
	}
	if (e.act === "EDIT_DETAILS") {
		if (!d.phone && !d.add) return { refused: "EDIT_DETAILS needs action_data.phone or action_data.add" };
		if (d.phone !== undefined && !/^\d{10}$/.test(d.phone))
			return { refused: "Invalid consignee phone: must be 10 digits" };
		const pin = String(e.pkg.shipment.pin ?? "");
		if (d.pin !== undefined && d.pin !== pin)
			return {
				refused: `EDIT_DETAILS cannot change the delivery pincode (${pin} to ${d.pin}); book a new shipment`,
			};
	}
	return { scan_id: last.id };
}

/** A new upload id, Delhivery style (`UPL` and 20 digits). */
function uploadId(): string {
	return `UPL${Date.now()}${String(randomInt(10_000_000)).padStart(7, "0")}`;
}

/**
 * `POST /api/p/update` (Delhivery's NDR action) with `{data: [{waybill, act,
 * action_data?}]}`: decides each act at once ({@link decideNdr}), records the
 * accepted ones in `simulator.ndr_actions` and answers {@link WireNdrResponse}:
 * the upload id and each act's outcome; `success` false with `error` (the
 * refusals joined) when one was refused. No scan is added: the next attempt's
 * outcome is emitted like any scan (`simulator.emitScan`). A repeated act (same
 * act and data on the same pending scan) answers its first upload id and is
 * not recorded again. Faults (consignee name): {@link NDR_5XX_MARKER} → 503 on
 * the first act per waybill, {@link NDR_DOWN_MARKER} → 503 always. No `data`
 * → 400. Every act is logged in `simulator.calls` (endpoint `ndr`, the
 * waybill, the status, outcome `accepted` | `duplicate` | `refused` | `503`).
 */
export async function ndrUpdate(
	db: Sequelize,
	courier: SimCourier,
	req: Partial<WireNdrRequest> | null,
	now: Date = new Date(),
): Promise<Reply> {
	const raw: Partial<WireNdrAction>[] = Array.isArray(req?.data) ? req.data : [];
	if (!raw.length) {
		await logCall(db, courier.code, "ndr", "", 400, "refused");
		return { status: 400, body: { success: false, error: "data is required" } satisfies WireNdrResponse };
	}
	const entries: NdrEntry[] = [];
	for (const r of raw) {
		const waybill = String(r?.waybill ?? "").trim();
		const data = r?.action_data && typeof r.action_data === "object" ? r.action_data : {};
		const action_data: Record<string, string> = {};
		for (const [k, v] of Object.entries(data)) if (v !== undefined && v !== null) action_data[k] = String(v);
		entries.push({
			waybill,
			act: String(r?.act ?? ""),
			action_data,
			pkg: waybill ? await packageBy(db, courier.code, "waybill", waybill) : undefined,
		});
	}
	for (const e of entries) {
		const name = String(e.pkg?.shipment.name ?? "");
		const down =
			name.includes(NDR_DOWN_MARKER) ||
			(name.includes(NDR_5XX_MARKER) && (await firstFault(db, courier.code, e.waybill, "ndr_5xx")));
		if (down) {
			for (const x of entries) await logCall(db, courier.code, "ndr", x.waybill, 503, "503");
			return { status: 503, body: { error: "Service temporarily unavailable" } };
		}
	}
	const decided = [];
	for (const e of entries) decided.push({ e, d: await decideNdr(db, e, now) });
	const accepted = [];
	for (const { e, d } of decided) {
		if (!("scan_id" in d)) continue;
		const row = {
			courier_code: courier.code,
			waybill: e.waybill,
			scan_id: d.scan_id,
			act: e.act,
			action_data: e.action_data,
		};
		accepted.push({ row, previous: await sameNdrAction(db, row) });
	}
	const previous = new Set(accepted.map((a) => a.previous ?? null));
	const only = previous.size === 1 ? [...previous][0] : null;
	const request_id = only ?? uploadId();
	await insertNdrActions(
		db,
		accepted.filter((a) => a.previous !== request_id).map((a) => ({ ...a.row, request_id })),
	);
	const packages: WireNdrPackage[] = decided.map(({ e, d }) => ({
		waybill: e.waybill,
		act: e.act,
		status: "scan_id" in d ? "Success" : "Fail",
		remarks: "scan_id" in d ? "Request accepted" : d.refused,
	}));
	for (const { e, d } of decided) {
		const outcome = !("scan_id" in d) ? "refused" : only ? "duplicate" : "accepted";
		await logCall(db, courier.code, "ndr", e.waybill, 200, outcome);
	}
	const refusals = packages.filter((p) => p.status === "Fail").map((p) => p.remarks);
	const body: WireNdrResponse = {
		success: refusals.length === 0,
		...(accepted.length ? { request_id } : {}),
		packages,
		...(refusals.length ? { error: refusals.join("; ") } : {}),
	};
	return { status: 200, body };
}

/** The push body (Delhivery's scan-push shape) of scan `scan` of AWB `awb`. */
export function pushBodyOf(awb: string, scan: ScanRow): WirePushScan {
	const k = scanKindOf(scan.code) ?? SCAN_KINDS.in_transit;
	return {
		Shipment: {
			AWB: awb,
			Status: {
				Status: k.Scan,
				StatusCode: k.StatusCode,
				StatusType: k.ScanType,
				StatusLocation: scan.location,
				StatusDateTime: new Date(scan.at).toISOString(),
				Instructions: scan.instructions,
			},
		},
	};
}

/** Options of {@link addScan}. */
export interface AddScanOptions {
	/** NDR reason / remark, sent as the scan's `Instructions` */
	reason?: string;
	/** only an AWB of this courier (the HTTP scan endpoint); absent → any courier */
	courierCode?: string;
	/** when given and `SANDBOX_SCAN_PUSH_URL` is set, the scan is also pushed (./push.ts), failures logged here */
	logger?: Pick<Logger, "warn">;
}

/**
 * Adds tracking scan `event` to booked AWB `awb` (of `opts.courierCode`, or
 * of any courier), at the consignee city (`Origin` for `rto_delivered`), and
 * pushes it (fire-and-forget, ./push.ts) when `opts.logger` is given and
 * `SANDBOX_SCAN_PUSH_URL` is set. Answers `{courier_code, awb_number, code,
 * at}` (at ISO-8601 UTC) and the push in flight (`pushed`, null when none;
 * never rejects), or null for an unknown AWB.
 */
export async function addScan(
	db: Sequelize,
	awb: string,
	event: SimulatorEvent,
	opts: AddScanOptions = {},
): Promise<{ scan: EmittedScan; pushed: Promise<void> | null } | null> {
	const pkg = await packageForScan(db, awb, opts.courierCode);
	if (!pkg) return null;
	const location = event === "rto_delivered" ? "Origin" : (pkg.city ?? "Hub");
	const row = await insertScan(db, awb, event, location, opts.reason ?? "");
	const pushed = opts.logger ? firePush(opts.logger, pkg.courier_code, pushBodyOf(awb, row)) : null;
	return {
		scan: {
			courier_code: pkg.courier_code,
			awb_number: awb,
			code: event,
			at: new Date(row.at).toISOString(),
		},
		pushed,
	};
}

/** Ops view: per courier code its name, COD, AWB length and counts of packages, cancellations, pickup locations. */
export async function stateView(db: Sequelize): Promise<SimulatorState> {
	const { packages: pk, pickupLocations: wh } = await countsPerCourier(db);
	return {
		couriers: Object.values(SIM_COURIERS).map((c) => ({
			code: c.code,
			name: c.name,
			cod: c.cod,
			awb_length: c.awbLength,
			packages: Number(pk.find((r) => r.courier_code === c.code)?.packages ?? 0),
			cancelled: Number(pk.find((r) => r.courier_code === c.code)?.cancelled ?? 0),
			pickup_locations: Number(wh.find((r) => r.courier_code === c.code)?.n ?? 0),
		})),
	};
}

/** Most references {@link referencesView} answers in one call. */
export const MAX_REFERENCES = 500;

/**
 * Ops/test view of client references (our booking attempt ids): per reference
 * asked (in the order asked, duplicates and blanks dropped, at most
 * {@link MAX_REFERENCES}), the packages held at any sandbox courier
 * (cancelled ones with `cancelled_at`, ISO-8601 UTC), how many are live, and
 * how many create calls it received. An unknown reference answers no packages.
 */
export async function referencesView(db: Sequelize, refs: string[]): Promise<SimulatorReference[]> {
	const asked = [...new Set(refs.map((r) => String(r).trim()).filter(Boolean))].slice(0, MAX_REFERENCES);
	if (!asked.length) return [];
	const { packages, creates } = await referenceCounts(db, asked);
	return asked.map((reference) => {
		const held = packages
			.filter((p) => p.refnum === reference)
			.map((p) => ({
				courier_code: p.courier_code,
				awb_number: p.waybill,
				cancelled_at: p.cancelled_at ? new Date(p.cancelled_at).toISOString() : null,
			}));
		return {
			reference,
			packages: held,
			live: held.filter((p) => !p.cancelled_at).length,
			creates: Number(creates.find((c) => c.refnum === reference)?.n ?? 0),
		};
	});
}
