/**
 * The simulator speaking Delhivery's B2C protocol (DOMAIN.md "A real courier
 * API: Delhivery B2C"; issue 14), mounted under {@link DELHIVERY_PREFIX} by
 * ./server.ts, so a sandbox courier is the real Delhivery adapter
 * (lib/couriers/delhivery) pointed at `<simulator URL>/delhivery`.
 *
 * It plays one courier, {@link DELHIVERY_SIM} (`sbx-delhivery`), on the
 * simulator's existing state (schema `simulator`: the same packages, scans,
 * pickup locations, NDR acts, faults and call log as the other sandbox
 * couriers; `simulator.emitScan` and `/references` see its AWBs), with the
 * same refusal rules (./couriers.ts) and fault markers (./api.ts), but the
 * wire shapes of Delhivery's documentation:
 * - `POST /api/cmu/create.json` form `format=json&data=<JSON>`: answers
 *   `{success, package_count, upload_wbn, packages[{status, client, sort_code,
 *   remarks[], waybill, cod_amount, payment, serviceable, refnum}], rmk?, …counts}`;
 *   a refusal answers 200 `success:false` with `rmk` (e.g. "ClientWarehouse
 *   matching query does not exist"); a reference booked before answers its
 *   existing waybill (status Success, remark "Duplicate order id"). A
 *   `waybill` from the pool (`/waybill/api/bulk/json/`) is used as given.
 * - `GET /api/v1/packages/json/?waybill=a,b` (or `ref_ids=`): `{ShipmentData:
 *   [{Shipment:{AWB, ReferenceNo, Status{…}, Scans[{ScanDetail{…}}], …}}]}`,
 *   times in IST without an offset (`2026-01-02T10:20:30.123`), as Delhivery writes them;
 *   none known → 200 `{rmk, Success:false, Error:"No such waybill or Order Id found"}`.
 * - `POST /api/p/edit` `{waybill, cancellation:"true"}` → `{status, waybill, remark|error}`.
 * - `GET /api/p/packing_slip?wbns=<awb>&pdf=true` → `{packages_found, packages[{wbn, pdf_download_link}]}`
 *   (without `pdf=true`: `{wbn, pdf_encoding}`, the PDF in base64); the link (`/delhivery/files/<awb>.pdf`, no
 *   token, as Delhivery's pre-signed S3 links) answers the 4 × 6 PDF.
 * - `GET /waybill/api/bulk/json/?count=N` → the N waybills comma-separated, as a JSON string.
 * - `GET /c/api/pin-codes/json/?filter_codes=a,b` → `{delivery_codes:[{postal_code:{pin, …}}]}`
 *   (refused pincodes absent).
 * - `POST /fm/request/new/` `{pickup_location, pickup_date, pickup_time,
 *   expected_package_count}` → 201 `{pickup_id, …}`; unknown location → 400 `{error:{message}}`;
 *   the same location and day again → 400 `{pr_exist:true, error:{message}}`; a field that does
 *   not validate (a past date, a malformed time) → 400 field-keyed words, e.g. `{pickup_date: "…"}`.
 * - `POST /api/p/update` `{data:[{waybill, act, action_data?}]}` → 201 `{request_id}`
 *   (decided at once; `GET /api/cmu/get_bulk_upl/<id>` answers the outcome per waybill);
 *   a refusal answers `{success:false, error, request_id?}`.
 * - `GET /api/kinko/v1/invoice/charges/.json?md=E|S&cgm=&o_pin=&d_pin=&ss=&pt=&cod=` →
 *   `[{charge_DL, charge_COD, charge_FSC, gross_amount, total_amount, tax_data, zone, …}]`.
 * - `POST /api/backend/clientwarehouse/create/` and `/edit/`.
 * Authorization is checked by ./server.ts (`Token <SANDBOX_COURIER_TOKEN>`).
 */
import type { Sequelize } from "sequelize";
import type {
	WireCancelRequest,
	WireCreateRequest,
	WireCreateResponse,
	WireNdrRequest,
	WireNdrResponse,
	WireShipment,
	WireTrackResponse,
	WireTrackShipment,
	WireWarehouse,
} from "../couriers/sandbox/wire";
import { UNKNOWN_PICKUP_MARKER } from "../couriers/sandbox/wire";
import { select } from "../platform/db";
import { IST_OFFSET_MS, istDay } from "../shared/ist-date";
import { cancelPackage, create, HttpError, lookup, ndrUpdate, type Reply, registerWarehouse } from "./api";
import { REFUSED_PINCODES, type SimCourier, sortCode } from "./couriers";
import { packingSlipPdf } from "./label";
import { logCall, logCreateCalls, type PackageRow, packageBy, packagesBy, pickupLocation } from "./store";

/** Path prefix the Delhivery protocol is served under (`<simulator URL>/delhivery/api/cmu/create.json`). */
export const DELHIVERY_PREFIX = "/delhivery";

/** The courier the Delhivery protocol plays (its code in the simulator's tables). */
export const DELHIVERY_SIM: SimCourier = {
	code: "sbx-delhivery",
	name: "Delhivery (sandbox)",
	awbPrefix: "84",
	awbLength: 14,
	cod: true,
};

/** Client name Delhivery answers in `packages[].client`. */
const CLIENT = "SANDBOX";

/** One request, as ./server.ts hands it over (path without {@link DELHIVERY_PREFIX}). */
export interface DelhiveryRequest {
	method: string;
	path: string;
	query: URLSearchParams;
	/** reads the body (UTF-8) */
	body: () => Promise<string>;
}

/** Delhivery's words for a waybill or reference it does not know. */
const NO_SUCH_WAYBILL = "No such waybill or Order Id found";

/** `t` as Delhivery writes times: IST wall clock without offset, `YYYY-MM-DDTHH:mm:ss.sss`. */
export function istTime(t: Date | string): string {
	return new Date(new Date(t).getTime() + IST_OFFSET_MS).toISOString().slice(0, 23);
}

/** Parses a JSON body; 400 `{success:false, error}` otherwise. */
function json(text: string): unknown {
	try {
		return JSON.parse(text);
	} catch {
		throw new HttpError(400, { success: false, error: "Malformed JSON body" });
	}
}

/** Delhivery's payment words of a package (`Pre-paid`, `COD`, `Pickup`). */
function paymentWord(mode: unknown): string {
	return mode === "Prepaid" ? "Pre-paid" : String(mode ?? "");
}

/** Whether `w` is a waybill of this courier's format (prefix and length). */
function ownWaybill(w: string): boolean {
	return /^\d+$/.test(w) && w.length === DELHIVERY_SIM.awbLength && w.startsWith(DELHIVERY_SIM.awbPrefix);
}

/** The count fields of a create answer, all zero. */
function emptyCounts(): Record<string, number> {
	return {
		cash_pickups_count: 0,
		replacement_count: 0,
		pickups_count: 0,
		cash_pickups: 0,
		cod_count: 0,
		prepaid_count: 0,
		cod_amount: 0,
	};
}

/** `POST /api/cmu/create.json`: the form body, then ./api.ts `create` on {@link DELHIVERY_SIM}, answered in Delhivery's shape. */
async function createDl(db: Sequelize, form: URLSearchParams): Promise<Reply> {
	const refuse = (rmk: string): Reply => ({
		status: 200,
		body: { ...emptyCounts(), success: false, rmk, package_count: 0, upload_wbn: null, packages: [] },
	});
	if (form.get("format") !== "json") return refuse("format=json is required");
	const data = form.get("data");
	if (!data) return refuse("data is required");
	let parsed: WireCreateRequest;
	try {
		parsed = JSON.parse(data) as WireCreateRequest;
	} catch {
		return refuse("data is not valid JSON");
	}
	const shipments: WireShipment[] = Array.isArray(parsed?.shipments) ? parsed.shipments : [];
	const pickupName = String(parsed?.pickup_location?.name ?? "");
	if (!(await pickupLocation(db, DELHIVERY_SIM.code, pickupName))) {
		await logCreateCalls(
			db,
			DELHIVERY_SIM.code,
			shipments.map((x) => ({ refnum: String(x.order ?? ""), status: 200, outcome: "refused" })),
		);
		return {
			status: 200,
			body: {
				...emptyCounts(),
				package_count: 0,
				upload_wbn: null,
				rmk: `${UNKNOWN_PICKUP_MARKER}.`,
				packages: [],
				success: false,
			},
		};
	}
	// a pre-fetched waybill is used as given (the sandbox issues every AWB from one sequence)
	const courier = (s: WireShipment): SimCourier => {
		const w = String((s as WireShipment & { waybill?: unknown }).waybill ?? "");
		return ownWaybill(w) ? { ...DELHIVERY_SIM, awbPrefix: w, awbLength: w.length } : DELHIVERY_SIM;
	};
	const before = new Map<string, string>();
	for (const s of shipments) {
		const row = await packageBy(db, DELHIVERY_SIM.code, "refnum", String(s.order ?? ""));
		if (row) before.set(row.refnum, row.waybill);
	}
	// one create per shipment when a pool waybill is given (its own AWB), else all at once
	const replies: Reply[] = [];
	if (shipments.some((s) => courier(s) !== DELHIVERY_SIM)) {
		for (const s of shipments) replies.push(await create(db, courier(s), { ...parsed, shipments: [s] }));
	} else replies.push(await create(db, DELHIVERY_SIM, parsed));
	const failed = replies.find((r) => r.status !== 200);
	if (failed) return failed;
	const bodies = replies.map((r) => r.body as WireCreateResponse);
	const rmkOf = bodies.map((b) => b.rmk).filter(Boolean);
	const packages = bodies.flatMap((b) => b.packages);
	const out = packages.map((p, i) => {
		const s = shipments[i] ?? shipments[0];
		const duplicate = p.status === "Success" && before.has(p.refnum);
		return {
			status: p.status,
			client: CLIENT,
			sort_code: p.sort_code,
			remarks: duplicate ? ["Duplicate order id"] : p.remarks.length ? p.remarks : [""],
			waybill: p.waybill,
			cod_amount: Number(s?.cod_amount ?? 0),
			payment: paymentWord(s?.payment_mode),
			serviceable: !p.remarks.some((r) => r.startsWith("Non serviceable")),
			refnum: p.refnum,
		};
	});
	const ok = out.every((p) => p.status === "Success");
	const count = (mode: string) => shipments.filter((s) => s.payment_mode === mode).length;
	const body = {
		success: ok,
		package_count: out.length,
		upload_wbn: `UPL${Date.now()}`,
		packages: out,
		cod_amount: shipments.reduce((n, s) => n + (s.payment_mode === "COD" ? Number(s.cod_amount) || 0 : 0), 0),
		cod_count: count("COD"),
		prepaid_count: count("Prepaid"),
		pickups_count: count("Pickup"),
		replacement_count: 0,
		cash_pickups_count: 0,
		cash_pickups: 0,
		rmk: ok ? "" : rmkOf.join("; "),
	};
	return { status: 200, body, hangMs: Math.max(0, ...replies.map((r) => r.hangMs ?? 0)) };
}

/** A tracked shipment in Delhivery's shape (times IST without offset; Status and scans with StatusDateTime). */
function delhiveryShipment(s: WireTrackShipment, row?: PackageRow): Record<string, unknown> {
	const first = s.Scans[0]?.ScanDetail;
	return {
		AWB: s.AWB,
		ReferenceNo: s.ReferenceNo,
		OrderType: paymentWord(row?.shipment.payment_mode),
		CODAmount: Number(row?.shipment.cod_amount ?? 0),
		Origin: first?.ScannedLocation ?? "",
		Destination: String(row?.shipment.city ?? ""),
		PickUpDate: istTime(first?.ScanDateTime ?? s.Status.StatusDateTime),
		Status: { ...s.Status, StatusDateTime: istTime(s.Status.StatusDateTime) },
		Scans: s.Scans.map(({ ScanDetail: d }) => ({
			ScanDetail: {
				...d,
				ScanDateTime: istTime(d.ScanDateTime),
				StatusDateTime: istTime(d.ScanDateTime),
			},
		})),
	};
}

/** `GET /api/v1/packages/json/?waybill=a,b` or `?ref_ids=a,b`: ./api.ts `lookup`, answered in Delhivery's shape. */
async function trackDl(db: Sequelize, q: URLSearchParams): Promise<Reply> {
	const refs = q.get("ref_ids") ?? q.get("refnum");
	const waybills = q.get("waybill");
	let reply: Reply;
	try {
		reply = await lookup(db, DELHIVERY_SIM, waybills === null ? refs : null, waybills);
	} catch (err) {
		if (err instanceof HttpError)
			return { status: 200, body: { Error: "waybill or ref_ids is required", Success: false } };
		throw err;
	}
	const b = reply.body as WireTrackResponse;
	if (!b.ShipmentData.length)
		return {
			status: 200,
			body: {
				rmk: `Some error has occurred. Please contact client.support@delhivery.com with error message- ${b.Error ?? NO_SUCH_WAYBILL}`,
				Success: false,
				Error: b.Error ?? NO_SUCH_WAYBILL,
			},
		};
	const rows = await packagesBy(
		db,
		DELHIVERY_SIM.code,
		"waybill",
		b.ShipmentData.map((x) => x.Shipment.AWB),
	);
	const body = {
		ShipmentData: b.ShipmentData.map(({ Shipment: s }) => ({
			Shipment: delhiveryShipment(
				s,
				rows.find((r) => r.waybill === s.AWB),
			),
		})),
	};
	return { status: 200, body };
}

/** `GET /api/p/packing_slip?wbns=<awb>[&pdf=true]`: the slip's fields and the PDF link, or `packages_found: 0`. */
async function packingSlipDl(db: Sequelize, q: URLSearchParams, base: string): Promise<Reply> {
	const waybills = (q.get("wbns") ?? "")
		.split(",")
		.map((w) => w.trim())
		.filter(Boolean);
	const packages: Record<string, unknown>[] = [];
	for (const w of waybills) {
		const pkg = await packageBy(db, DELHIVERY_SIM.code, "waybill", w);
		await logCall(db, DELHIVERY_SIM.code, "label", w, 200);
		if (!pkg) continue;
		packages.push(
			q.get("pdf") === "true"
				? { wbn: pkg.waybill, pdf_download_link: `${base}/files/${pkg.waybill}.pdf` }
				: {
						wbn: pkg.waybill,
						pdf_encoding: (await packingSlipPdf(DELHIVERY_SIM, pkg, new Date(pkg.created_at))).toString(
							"base64",
						),
					},
		);
	}
	return { status: 200, body: { packages_found: packages.length, packages } };
}

/** `GET /files/<awb>.pdf` (no token: a pre-signed link): the 4 × 6 PDF, 404 for an unknown AWB. */
async function labelFile(db: Sequelize, awb: string): Promise<Reply> {
	const pkg = await packageBy(db, DELHIVERY_SIM.code, "waybill", awb);
	if (!pkg) return { status: 404, body: { error: "Not Found" } };
	const bytes = await packingSlipPdf(DELHIVERY_SIM, pkg, new Date(pkg.created_at));
	return { status: 200, body: null, file: { content_type: "application/pdf", bytes } };
}

/** Most waybills one pool call issues. */
const MAX_WAYBILLS = 1000;

/** `GET /waybill/api/bulk/json/?count=N`: N fresh waybills, comma-separated, as a JSON string. */
async function waybillsDl(db: Sequelize, q: URLSearchParams): Promise<Reply> {
	const n = Number(q.get("count") ?? "1");
	if (!Number.isInteger(n) || n < 1 || n > MAX_WAYBILLS)
		return { status: 400, body: { error: `count must be an integer from 1 to ${MAX_WAYBILLS}` } };
	const digits = DELHIVERY_SIM.awbLength - DELHIVERY_SIM.awbPrefix.length;
	const rows = await select<{ w: string }>(
		db,
		`SELECT $1 || lpad(nextval('simulator.awb_seq')::text, $2, '0') AS w FROM generate_series(1, $3)`,
		[DELHIVERY_SIM.awbPrefix, digits, n],
	);
	return { status: 200, body: rows.map((r) => r.w).join(",") };
}

/** `GET /c/api/pin-codes/json/?filter_codes=a,b`: the serviceable ones (6 digits, not refused). */
function pincodesDl(q: URLSearchParams): Reply {
	const pins = (q.get("filter_codes") ?? "")
		.split(",")
		.map((p) => p.trim())
		.filter((p) => /^\d{6}$/.test(p) && !REFUSED_PINCODES.includes(p));
	return {
		status: 200,
		body: {
			delivery_codes: pins.map((pin) => ({
				postal_code: {
					pin: Number(pin),
					district: sortCode(pin).split("/")[0],
					state_code: "",
					country_code: "IN",
					pre_paid: "Y",
					cash: "Y",
					cod: "Y",
					pickup: "Y",
					repl: "Y",
					is_oda: pin.endsWith("9") ? "Y" : "N",
					max_amount: 50000,
					max_weight: 30,
					sort_code: sortCode(pin),
				},
			})),
		},
	};
}

/** `POST /fm/request/new/`: a pickup at a registered location; 400 `{error}` otherwise. */
async function pickupDl(db: Sequelize, b: Record<string, unknown> | null): Promise<Reply> {
	const name = String(b?.pickup_location ?? "");
	const date = String(b?.pickup_date ?? "");
	const time = String(b?.pickup_time ?? "");
	const count = Number(b?.expected_package_count);
	const fail = (message: string): Reply => ({ status: 400, body: { error: { message } } });
	if (!(await pickupLocation(db, DELHIVERY_SIM.code, name)))
		return fail(`ClientWarehouse matching query does not exist: ${name}`);
	// a field that does not validate: Delhivery answers field-keyed words, e.g. {"pickup_date": "…"}
	const badField = (field: string, message: string): Reply => ({ status: 400, body: { [field]: message } });
	if (!/^\d{4}-\d{2}-\d{2}$/.test(date)) return badField("pickup_date", "pickup_date must be YYYY-MM-DD");
	if (date < istDay()) return badField("pickup_date", "Pickup date cannot be in past");
	if (!/^\d{2}:\d{2}(:\d{2})?$/.test(time)) return badField("pickup_time", "pickup_time must be HH:mm:ss");
	if (!Number.isInteger(count) || count < 1)
		return badField("expected_package_count", "expected_package_count must be a positive integer");
	const key = `${name}|${date}`;
	const [seen] = await select<{ n: string }>(
		db,
		`SELECT count(*) AS n FROM simulator.calls WHERE courier_code = $1 AND endpoint = 'pickup' AND refnum = $2 AND outcome = 'accepted'`,
		[DELHIVERY_SIM.code, key],
	);
	if (Number(seen?.n) > 0) {
		await logCall(db, DELHIVERY_SIM.code, "pickup", key, 400, "refused");
		return {
			status: 400,
			body: {
				pr_exist: true,
				error: { message: "Pickup request already exists for this location and date" },
			},
		};
	}
	await logCall(db, DELHIVERY_SIM.code, "pickup", key, 201, "accepted");
	const [{ id }] = await select<{ id: string }>(db, `SELECT nextval('simulator.awb_seq')::text AS id`);
	return {
		status: 201,
		body: {
			pickup_location_name: name,
			client_name: CLIENT,
			pickup_time: time.length === 5 ? `${time}:00` : time,
			pickup_id: Number(id),
			incoming_center_name: "Sandbox_Hub",
			expected_package_count: count,
			pickup_date: date,
		},
	};
}

/** `POST /api/p/update`: ./api.ts `ndrUpdate`; accepted → 201 `{request_id}` (as Delhivery answers), else `{success:false, error, request_id?}`. */
async function ndrDl(db: Sequelize, b: Partial<WireNdrRequest> | null): Promise<Reply> {
	const reply = await ndrUpdate(db, DELHIVERY_SIM, b);
	const r = reply.body as WireNdrResponse;
	if (reply.status !== 200) return reply;
	if (!r.success) return { status: 400, body: { success: false, error: r.error ?? "Request refused" } };
	return { status: 201, body: { request_id: r.request_id } };
}

/**
 * Marker in a package's consignee name: its NDR acts are recorded (accepted at `POST /api/p/update`,
 * with a request id) but the upload status answers them `Failure` / {@link NDR_REFUSE_REMARKS}
 * (Delhivery refusing an act after the fact).
 */
export const NDR_REFUSE_MARKER = "SIMULATE_NDR_REFUSE";
/** Remarks of an act refused after the fact ({@link NDR_REFUSE_MARKER}). */
export const NDR_REFUSE_REMARKS = "Consignee details not verified";

/**
 * `GET /api/cmu/get_bulk_upl/<id>`: the acts of an NDR upload and their outcome
 * `{request_id, status:"Success", results:[{waybill, act, status:"Success"|"Failure", remarks}]}`;
 * an act on a package whose consignee name holds {@link NDR_REFUSE_MARKER} is a `Failure`.
 * Unknown upload → 404 `{error}`.
 */
async function ndrStatusDl(db: Sequelize, id: string): Promise<Reply> {
	const rows = await select<{ waybill: string; act: string }>(
		db,
		`SELECT waybill, act FROM simulator.ndr_actions WHERE courier_code = $1 AND request_id = $2 ORDER BY id`,
		[DELHIVERY_SIM.code, id],
	);
	if (!rows.length) return { status: 404, body: { error: `No such upload ${id}` } };
	const results = [];
	for (const r of rows) {
		const pkg = await packageBy(db, DELHIVERY_SIM.code, "waybill", r.waybill);
		const refused = String(pkg?.shipment.name ?? "").includes(NDR_REFUSE_MARKER);
		results.push({
			waybill: r.waybill,
			act: r.act,
			status: refused ? "Failure" : "Success",
			remarks: refused ? NDR_REFUSE_REMARKS : "Request accepted",
		});
	}
	return { status: 200, body: { request_id: id, status: "Success", results } };
}

/** Zone of a lane by pincodes, A (same city) … E (far). */
function zoneOf(from: string, to: string): string {
	if (from.slice(0, 3) === to.slice(0, 3)) return "A";
	if (from.slice(0, 2) === to.slice(0, 2)) return "B";
	if (from[0] === to[0]) return "C";
	return Math.abs(Number(from[0]) - Number(to[0])) > 3 ? "E" : "D";
}

/** `GET /api/kinko/v1/invoice/charges/.json`: a price in rupees (GST 18 % on top), an array of one. */
function chargesDl(q: URLSearchParams): Reply {
	const md = q.get("md") ?? "";
	const cgm = Number(q.get("cgm"));
	const o = q.get("o_pin") ?? "";
	const d = q.get("d_pin") ?? "";
	const ss = q.get("ss") ?? "Delivered";
	if (!["E", "S"].includes(md) || !(cgm > 0) || !/^\d{6}$/.test(o) || !/^\d{6}$/.test(d))
		return { status: 400, body: { error: "md (E|S), cgm (grams), o_pin and d_pin are required" } };
	if (!["Delivered", "RTO", "DTO"].includes(ss))
		return { status: 400, body: { error: "ss must be Delivered, RTO or DTO" } };
	if (REFUSED_PINCODES.includes(d))
		return { status: 400, body: { error: `Invalid destination pincode ${d}` } };
	const zone = zoneOf(o, d);
	const slabs = Math.ceil(cgm / 500);
	const perSlab = (md === "E" ? 40 : 30) + "ABCDE".indexOf(zone) * 8;
	const dl = ss === "DTO" ? Math.round(slabs * perSlab * 120) / 100 : slabs * perSlab;
	const cod = q.get("pt") === "COD" ? Math.max(35, Number(q.get("cod") ?? 0) * 0.02) : 0;
	const fsc = Math.round(dl * 0.1 * 100) / 100;
	const gross = Math.round((dl + cod + fsc) * 100) / 100;
	const tax = Math.round(gross * 0.18 * 100) / 100;
	return {
		status: 200,
		body: [
			{
				charge_ROV: 0,
				charge_REATTEMPT: 0,
				charge_RTO: ss === "RTO" ? dl : 0,
				charge_MPS: 0,
				charge_pickup: 0,
				charge_CWH: 0,
				charge_DEMUR: 0,
				charge_AWB: 0,
				zone,
				wt_rule_id: null,
				charge_AIR: 0,
				charge_FSC: fsc,
				charge_LABEL: 0,
				charge_COD: cod,
				status: "SUCCESS",
				charge_POD: 0,
				adhoc_data: {},
				charge_CCOD: 0,
				gross_amount: gross,
				charge_DTO: ss === "DTO" ? dl : 0,
				charge_COVID: 0,
				total_amount: Math.round((gross + tax) * 100) / 100,
				charge_DL: ss === "Delivered" ? dl : 0,
				charge_FS: 0,
				charge_FOD: 0,
				tax_data: { swacch_bharat_tax: 0, IGST: tax, SGST: 0, CGST: 0 },
				charged_weight: slabs * 500,
			},
		],
	};
}

/** Warehouse create / edit: ./api.ts `registerWarehouse` (a missing `state` taken from `return_state`); edit of an unknown name refused. */
async function warehouseDl(db: Sequelize, b: Record<string, unknown> | null, edit: boolean): Promise<Reply> {
	const name = String(b?.name ?? "");
	const known = await pickupLocation(db, DELHIVERY_SIM.code, name);
	if (edit && !known)
		return {
			status: 400,
			body: { success: false, data: {}, error: ["ClientWarehouse matching query does not exist."] },
		};
	if (!edit && known)
		return {
			status: 400,
			body: { success: false, data: {}, error: ["Client-Warehouse with this name already exists"] },
		};
	const prev = known
		? (
				await select<{ payload: WireWarehouse }>(
					db,
					`SELECT payload FROM simulator.pickup_locations WHERE courier_code = $1 AND name = $2`,
					[DELHIVERY_SIM.code, name],
				)
			)[0]?.payload
		: undefined;
	const merged = { ...(prev ?? {}), ...(b ?? {}) } as Partial<WireWarehouse>;
	const w = { ...merged, state: merged.state ?? merged.return_state ?? "" } as WireWarehouse;
	const reply = await registerWarehouse(db, DELHIVERY_SIM, w);
	const r = reply.body as { success: boolean; error?: string[] };
	if (!r.success) return { status: 400, body: { success: false, data: {}, error: r.error ?? [] } };
	return edit
		? {
				status: 200,
				body: { success: true, data: { name: w.name, message: "Client warehouse updated." }, error: null },
			}
		: {
				status: 201,
				body: {
					success: true,
					data: { name: w.name, pincode: Number(w.pin), message: "A new client warehouse has been created." },
					error: null,
				},
			};
}

/**
 * Routes one Delhivery-protocol request (path without {@link DELHIVERY_PREFIX};
 * the token already checked, but `GET /sandbox/label/<awb>.pdf` needs none);
 * `base` is the prefix's public URL for links. Unknown paths → 404 `{error}`.
 */
export async function routeDelhivery(db: Sequelize, req: DelhiveryRequest, base: string): Promise<Reply> {
	const { method, path, query: q } = req;
	const m = /^\/files\/(\d+)\.pdf$/.exec(path);
	if (method === "GET" && m) return labelFile(db, m[1]);
	if (method === "POST" && path === "/api/cmu/create.json")
		return createDl(db, new URLSearchParams(await req.body()));
	if (method === "GET" && path === "/api/v1/packages/json/") return trackDl(db, q);
	if (method === "POST" && path === "/api/p/edit")
		return cancelPackage(db, DELHIVERY_SIM, json(await req.body()) as Partial<WireCancelRequest> | null);
	if (method === "GET" && path === "/api/p/packing_slip") return packingSlipDl(db, q, base);
	if (method === "GET" && path === "/waybill/api/bulk/json/") return waybillsDl(db, q);
	if (method === "GET" && path === "/c/api/pin-codes/json/") return pincodesDl(q);
	if (method === "POST" && path === "/fm/request/new/")
		return pickupDl(db, json(await req.body()) as Record<string, unknown> | null);
	if (method === "POST" && path === "/api/p/update")
		return ndrDl(db, json(await req.body()) as Partial<WireNdrRequest> | null);
	const upl = /^\/api\/cmu\/get_bulk_upl\/([^/]+)\/?$/.exec(path);
	if (method === "GET" && upl) return ndrStatusDl(db, decodeURIComponent(upl[1]));
	if (method === "GET" && path === "/api/kinko/v1/invoice/charges/.json") return chargesDl(q);
	if (method === "POST" && path === "/api/backend/clientwarehouse/create/")
		return warehouseDl(db, json(await req.body()) as Record<string, unknown> | null, false);
	if (method === "POST" && path === "/api/backend/clientwarehouse/edit/")
		return warehouseDl(db, json(await req.body()) as Record<string, unknown> | null, true);
	throw new HttpError(404, { error: "not found" });
}
