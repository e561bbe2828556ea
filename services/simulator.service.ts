/**
 * Sandbox courier simulator (ARCHITECTURE §4): plays four sandbox couriers
 * behind their own HTTP server (node:http on 127.0.0.1:`SANDBOX_COURIER_PORT`),
 * speaking the Delhivery-like wire format of lib/couriers/sandbox/wire.ts.
 * Runs only when `SANDBOX=1` (lib/config.ts `sandbox`).
 *
 * Couriers (`/couriers/<code>/…`; an unknown code answers 404):
 * - `sbx-express` AWB 14 digits, `sbx-surface` 15, `sbx-reverse` 12, `sbx-lite` 13 (no COD).
 *
 * Behaviour of a real courier:
 * - AWB issued within a configurable delay (`SANDBOX_COURIER_DELAY_MS`; default
 *   random 100–300 ms), from a PostgreSQL sequence (unique across couriers).
 * - Idempotent on our client reference (`order` of the shipment): the same
 *   reference always answers the same AWB, also after a restart, because state
 *   lives in PostgreSQL schema `simulator`.
 * - Refusals with the courier's words: unregistered pickup location, consignee
 *   pincode not 6 digits or on the refuse list ({@link REFUSED_PINCODES}),
 *   weight over 30 kg or not positive, phone not 10 digits, COD on `sbx-lite`,
 *   COD without an amount. Warehouse registration is refused for a name under 3
 *   characters, an address line 1 under 10 characters, a phone not 10 digits,
 *   or a pincode malformed / on the refuse list.
 * - Requires `Authorization: Token <SANDBOX_COURIER_TOKEN>` (default `sandbox-token`), else 401.
 *
 * Fault injection (create only), triggered when the consignee `name` contains
 * the marker, so a merchant can rehearse failures through the public API:
 * - `SIMULATE_TIMEOUT`: books (or finds the reference's existing AWB), then
 *   holds the answer for `SANDBOX_COURIER_HANG_MS` (default the adapter's
 *   timeout + 3 s): the caller times out although the AWB exists, which the
 *   booking worker must reconcile by looking the reference up. A refused
 *   shipment answers at once.
 * - `SIMULATE_5XX`: the first create of each reference answers 503 before
 *   anything is booked (remembered in `simulator.faults`, also across
 *   restarts); later creates of that reference work.
 * - `SIMULATE_REFUSE`: refused with "Shipment rejected by the courier (SIMULATE_REFUSE)".
 *
 * Every courier call is recorded in `simulator.calls` (courier, endpoint,
 * reference / waybill / location name, HTTP status, create outcome
 * `booked` | `duplicate` | `refused` | `503`) for ops and tests.
 *
 * Ops/testing endpoints: `GET /health`, `GET /state` (counts per courier),
 * `POST /couriers/<code>/sandbox/scan` `{waybill, event, reason?}` (same as
 * the `simulator.emitScan` action, events {@link EMITTABLE_EVENTS}; 404 for an
 * AWB not of that courier).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { type Context, Errors, type ServiceSchema } from "moleculer";
import type { Sequelize } from "sequelize";
import { loadConfig } from "../lib/config";
import { sandboxSettings, sandboxToken } from "../lib/couriers/sandbox/settings";
import {
	SCAN_KINDS,
	UNKNOWN_PICKUP_MARKER,
	type WireCancelRequest,
	type WireCreateRequest,
	type WireCreateResponse,
	type WirePackage,
	type WireShipment,
	type WireTrackResponse,
	type WireTrackShipment,
	type WireWarehouse,
} from "../lib/couriers/sandbox/wire";
import { exec, type Migration, select } from "../lib/db";
import { DbMixin } from "../mixins/db.mixin";

/** Static description of one simulated courier. */
interface SimCourier {
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

/** Pincodes every sandbox courier refuses (delivery and pickup). */
export const REFUSED_PINCODES = ["000000", "999999", "111111"];

/**
 * Tracking events that can be emitted on demand (`simulator.emitScan`,
 * `POST /couriers/<code>/sandbox/scan`); `manifested` and `cancelled` are the
 * simulator's own (on create and cancel).
 */
export const EMITTABLE_EVENTS = Object.keys(SCAN_KINDS).filter(
	(k) => k !== "manifested" && k !== "cancelled",
);

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

/** Sort / routing code printed on the label, e.g. `BOM/400`. */
function sortCode(pin: string): string {
	return `${HUBS[pin.slice(0, 2)] ?? `H${pin.slice(0, 2)}`}/${pin.slice(0, 3)}`;
}

const migrations: Migration[] = [
	{
		name: "001-simulator",
		async up({ sequelize, transaction }) {
			const q = (sql: string) => sequelize.query(sql, { transaction });
			await q(`CREATE SEQUENCE IF NOT EXISTS simulator.awb_seq`);
			await q(`CREATE TABLE IF NOT EXISTS simulator.packages (
				courier_code text NOT NULL,
				refnum text NOT NULL,
				waybill text NOT NULL UNIQUE,
				sort_code text,
				client_order_no text,
				pickup_location text NOT NULL,
				payment_mode text NOT NULL,
				shipment jsonb NOT NULL,
				cancelled_at timestamptz,
				created_at timestamptz NOT NULL DEFAULT now(),
				PRIMARY KEY (courier_code, refnum)
			)`);
			await q(`CREATE TABLE IF NOT EXISTS simulator.scans (
				id bigserial PRIMARY KEY,
				waybill text NOT NULL,
				code text NOT NULL,
				location text NOT NULL,
				instructions text NOT NULL DEFAULT '',
				at timestamptz NOT NULL DEFAULT clock_timestamp()
			)`);
			await q(`CREATE INDEX IF NOT EXISTS scans_waybill ON simulator.scans (waybill, id)`);
			await q(`CREATE TABLE IF NOT EXISTS simulator.pickup_locations (
				courier_code text NOT NULL,
				name text NOT NULL,
				pincode text NOT NULL,
				city text NOT NULL,
				payload jsonb NOT NULL,
				created_at timestamptz NOT NULL DEFAULT now(),
				updated_at timestamptz NOT NULL DEFAULT now(),
				PRIMARY KEY (courier_code, name)
			)`);
			await q(`CREATE TABLE IF NOT EXISTS simulator.faults (
				courier_code text NOT NULL,
				refnum text NOT NULL,
				fault text NOT NULL,
				at timestamptz NOT NULL DEFAULT now(),
				PRIMARY KEY (courier_code, refnum, fault)
			)`);
			await q(`CREATE TABLE IF NOT EXISTS simulator.calls (
				id bigserial PRIMARY KEY,
				courier_code text NOT NULL,
				endpoint text NOT NULL,
				refnum text,
				status int NOT NULL,
				outcome text,
				at timestamptz NOT NULL DEFAULT now()
			)`);
			await q(`CREATE INDEX IF NOT EXISTS calls_ref ON simulator.calls (courier_code, refnum)`);
		},
	},
];

/** Answer of an HTTP route. */
interface Reply {
	status: number;
	body: unknown;
	/** delay the answer (ms) after the work is done */
	hangMs?: number;
}

class HttpError extends Error {
	constructor(
		readonly status: number,
		readonly body: unknown,
	) {
		super(`HTTP ${status}`);
	}
}

interface PackageRow {
	courier_code: string;
	refnum: string;
	waybill: string;
	sort_code: string | null;
	pickup_location: string;
	shipment: WireShipment;
	cancelled_at: string | null;
}

interface ScanRow {
	waybill: string;
	code: string;
	location: string;
	instructions: string;
	at: string | Date;
}

function readBody(req: IncomingMessage, limit = 1_000_000): Promise<string> {
	return new Promise((resolve, reject) => {
		let size = 0;
		const chunks: Buffer[] = [];
		req.on("data", (c: Buffer) => {
			size += c.length;
			if (size > limit) {
				reject(new HttpError(413, { error: "payload too large" }));
				req.destroy();
				return;
			}
			chunks.push(c);
		});
		req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
		req.on("error", reject);
	});
}

function parseJson(text: string): any {
	try {
		return JSON.parse(text);
	} catch {
		throw new HttpError(400, { success: false, error: ["Malformed JSON body"] });
	}
}

function configuredDelay(): number {
	const raw = process.env.SANDBOX_COURIER_DELAY_MS;
	const n = raw === undefined || raw === "" ? Number.NaN : Number(raw);
	if (Number.isFinite(n) && n >= 0) return n;
	return 100 + Math.floor(Math.random() * 200);
}

function configuredHang(): number {
	const n = Number(process.env.SANDBOX_COURIER_HANG_MS);
	if (Number.isFinite(n) && n > 0) return n;
	return sandboxSettings("sbx-express").timeoutMs + 3000;
}

/** Reasons the courier refuses a shipment (empty when acceptable). */
function refusalsOf(
	courier: SimCourier,
	s: WireShipment,
	pickupKnown: boolean,
	pickupName: string,
): string[] {
	const out: string[] = [];
	if (!pickupKnown) {
		out.push(`${UNKNOWN_PICKUP_MARKER}: pickup location "${pickupName}" is not registered`);
	}
	if (String(s.name ?? "").includes("SIMULATE_REFUSE"))
		out.push("Shipment rejected by the courier (SIMULATE_REFUSE)");
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

/** Reasons the courier refuses a pickup location (empty when acceptable). */
function warehouseRefusals(w: WireWarehouse): string[] {
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

interface SimVars {
	db: Sequelize;
	server?: Server;
	hangs: Set<NodeJS.Timeout>;
}

const SimulatorService = {
	name: "simulator",
	mixins: [DbMixin("simulator", migrations)],
	settings: {},
	actions: {
		/**
		 * Emits a tracking scan for a booked AWB, as the courier would
		 * (ARCHITECTURE §4 sandbox events). Params: `awb_number`, `event` (one of
		 * picked_up, in_transit, out_for_delivery, delivered, undelivered,
		 * rto_initiated, rto_delivered), `reason?` (NDR reason / remark).
		 * Returns `{courier_code, awb_number, code, at}`; throws a 404 MoleculerError
		 * for an unknown AWB.
		 */
		emitScan: {
			params: {
				awb_number: { type: "string", min: 1 },
				event: { type: "enum", values: EMITTABLE_EVENTS },
				reason: { type: "string", optional: true, max: 255 },
			},
			async handler(this: any, ctx: Context<{ awb_number: string; event: string; reason?: string }>) {
				const { awb_number, event, reason } = ctx.params;
				const scan = await this.addScan(awb_number, event, reason);
				if (!scan) throw new Errors.MoleculerClientError(`No such waybill ${awb_number}`, 404, "not_found");
				return scan;
			},
		},
		/** Ops view: packages, cancellations, pickup locations and calls per courier code. */
		state: {
			async handler(this: any) {
				return this.stateView();
			},
		},
	},
	methods: {
		/** Opens the HTTP server on 127.0.0.1:`simulatorPort`. */
		async listen(this: any): Promise<void> {
			const port = loadConfig().simulatorPort;
			const server = createServer((req, res) => {
				void this.handle(req, res);
			});
			server.keepAliveTimeout = 5_000;
			await new Promise<void>((resolve, reject) => {
				server.once("error", reject);
				server.listen(port, "127.0.0.1", () => {
					server.off("error", reject);
					resolve();
				});
			});
			this.server = server;
			this.logger.info(`sandbox courier simulator listening on 127.0.0.1:${port}`);
		},

		/** Routes one HTTP request; never throws. */
		async handle(this: any, req: IncomingMessage, res: ServerResponse): Promise<void> {
			let reply: Reply;
			try {
				reply = await this.route(req);
			} catch (err) {
				if (err instanceof HttpError) reply = { status: err.status, body: err.body };
				else {
					this.logger.error(`simulator: ${(err as Error).message}`);
					reply = { status: 500, body: { error: "internal error" } };
				}
			}
			const send = () => {
				if (res.destroyed || res.writableEnded) return;
				const text = JSON.stringify(reply.body);
				res.writeHead(reply.status, {
					"Content-Type": "application/json",
					"Content-Length": Buffer.byteLength(text),
				});
				res.end(text);
			};
			if (reply.hangMs && reply.hangMs > 0) {
				const t = setTimeout(() => {
					this.hangs.delete(t);
					send();
				}, reply.hangMs);
				this.hangs.add(t);
			} else send();
		},

		/** Dispatches to the endpoint handlers. */
		async route(this: any, req: IncomingMessage): Promise<Reply> {
			const url = new URL(req.url ?? "/", "http://simulator");
			if (url.pathname === "/health") return { status: 200, body: { ok: true } };
			if (url.pathname === "/state" && req.method === "GET")
				return { status: 200, body: await this.stateView() };
			const m = /^\/couriers\/([^/]+)(\/.*)$/.exec(url.pathname);
			if (!m) throw new HttpError(404, { error: "not found" });
			const courier: SimCourier | undefined = SIM_COURIERS[decodeURIComponent(m[1])];
			if (!courier) throw new HttpError(404, { error: `unknown courier ${m[1]}` });
			if (req.headers.authorization !== `Token ${sandboxToken()}`) {
				throw new HttpError(401, { detail: "Authentication credentials were not provided or are invalid." });
			}
			const path = m[2];
			const method = req.method ?? "GET";
			if (method === "POST" && path === "/api/cmu/create.json") {
				const form = new URLSearchParams(await readBody(req));
				const data = form.get("data");
				if (!data) throw new HttpError(400, { success: false, rmk: "data is required", packages: [] });
				let parsed: WireCreateRequest;
				try {
					parsed = JSON.parse(data);
				} catch {
					throw new HttpError(400, { success: false, rmk: "data is not valid JSON", packages: [] });
				}
				return this.create(courier, parsed);
			}
			if (method === "GET" && path === "/api/v1/packages/json/") {
				const refnum = url.searchParams.get("refnum");
				const waybill = url.searchParams.get("waybill");
				return this.lookup(courier, refnum, waybill);
			}
			if (method === "POST" && path === "/api/p/edit") {
				return this.cancelPackage(courier, parseJson(await readBody(req)) as WireCancelRequest);
			}
			if (
				method === "POST" &&
				(path === "/api/backend/clientwarehouse/create/" || path === "/api/backend/clientwarehouse/edit/")
			) {
				return this.registerWarehouse(courier, parseJson(await readBody(req)) as WireWarehouse);
			}
			if (method === "POST" && path === "/sandbox/scan") {
				const b = parseJson(await readBody(req)) as { waybill?: string; event?: string; reason?: string };
				if (!b.waybill || !b.event || !EMITTABLE_EVENTS.includes(b.event)) {
					throw new HttpError(400, { error: "waybill and a valid event are required" });
				}
				const scan = await this.addScan(b.waybill, b.event, b.reason, courier.code);
				if (!scan) throw new HttpError(404, { error: `No such waybill ${b.waybill}` });
				return { status: 200, body: scan };
			}
			throw new HttpError(404, { error: "not found" });
		},

		/** `POST /api/cmu/create.json`: books each shipment (idempotent on `order`). */
		async create(this: any, courier: SimCourier, data: WireCreateRequest): Promise<Reply> {
			const db: Sequelize = this.db;
			const shipments = Array.isArray(data?.shipments) ? data.shipments : [];
			if (!shipments.length)
				return { status: 200, body: { success: false, rmk: "shipments are required", packages: [] } };
			const pickupName = String(data.pickup_location?.name ?? "");
			await new Promise((r) => setTimeout(r, configuredDelay()));
			// 503 once per reference, before anything is booked.
			for (const s of shipments) {
				if (!String(s.name ?? "").includes("SIMULATE_5XX")) continue;
				const { count } = await exec(
					db,
					`INSERT INTO simulator.faults (courier_code, refnum, fault) VALUES ($1, $2, '5xx') ON CONFLICT DO NOTHING`,
					[courier.code, String(s.order ?? "")],
				);
				if (count > 0) {
					await this.logCreates(courier, shipments, ["503"]);
					return { status: 503, body: { error: "Service temporarily unavailable" } };
				}
			}
			const [pickup] = await select<{ city: string }>(
				db,
				`SELECT city FROM simulator.pickup_locations WHERE courier_code = $1 AND name = $2`,
				[courier.code, pickupName],
			);
			const packages: WirePackage[] = [];
			const outcomes: string[] = [];
			let hang = false;
			for (const s of shipments) {
				const ref = String(s.order ?? "");
				if (String(s.name ?? "").includes("SIMULATE_TIMEOUT")) hang = true;
				const existing = ref ? await this.packageByRef(courier.code, ref) : undefined;
				if (existing) {
					packages.push(this.packageOf(existing));
					outcomes.push("duplicate");
					continue;
				}
				const remarks = refusalsOf(courier, s, pickup !== undefined, pickupName);
				if (remarks.length) {
					packages.push({ waybill: "", refnum: ref, status: "Fail", sort_code: null, remarks });
					outcomes.push("refused");
					continue;
				}
				const digits = courier.awbLength - courier.awbPrefix.length;
				const { rows } = await exec<PackageRow>(
					db,
					`INSERT INTO simulator.packages (courier_code, refnum, waybill, sort_code, client_order_no, pickup_location, payment_mode, shipment)
					 VALUES ($1, $2, $3 || lpad(nextval('simulator.awb_seq')::text, $4, '0'), $5, $6, $7, $8, $9::jsonb)
					 ON CONFLICT (courier_code, refnum) DO NOTHING
					 RETURNING *`,
					[
						courier.code,
						ref,
						courier.awbPrefix,
						digits,
						sortCode(String(s.pin)),
						s.client_order_no ?? null,
						pickupName,
						s.payment_mode,
						JSON.stringify(s),
					],
				);
				const row: PackageRow = rows[0] ?? (await this.packageByRef(courier.code, ref));
				if (rows[0]) {
					await this.insertScan(row.waybill, "manifested", pickup.city, "Manifest uploaded by client");
				}
				packages.push(this.packageOf(row));
				outcomes.push(rows[0] ? "booked" : "duplicate");
			}
			await this.logCreates(courier, shipments, outcomes);
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
		},

		/** Logs one call in `simulator.calls` (ops and tests). `refnum` is the reference, waybill or name asked for. */
		async logCall(
			this: any,
			courier: SimCourier,
			endpoint: "create" | "lookup" | "cancel" | "warehouse",
			refnum: string,
			status: number,
			outcome: string | null = null,
		): Promise<void> {
			await exec(
				this.db,
				`INSERT INTO simulator.calls (courier_code, endpoint, refnum, status, outcome) VALUES ($1, $2, $3, $4, $5)`,
				[courier.code, endpoint, refnum, status, outcome],
			);
		},

		/** Logs create calls: one row per shipment with its outcome (`503` for all when the call failed). */
		async logCreates(
			this: any,
			courier: SimCourier,
			shipments: WireShipment[],
			outcomes: string[],
		): Promise<void> {
			for (const [i, s] of shipments.entries()) {
				const outcome = outcomes[i] ?? outcomes[0] ?? "";
				await this.logCall(courier, "create", String(s.order ?? ""), outcome === "503" ? 503 : 200, outcome);
			}
		},

		packageOf(row: PackageRow): WirePackage {
			return {
				waybill: row.waybill,
				refnum: row.refnum,
				status: "Success",
				sort_code: row.sort_code,
				remarks: row.cancelled_at ? ["Shipment cancelled"] : [],
			};
		},

		async packageByRef(this: any, code: string, ref: string): Promise<PackageRow | undefined> {
			const rows = await select<PackageRow>(
				this.db,
				`SELECT * FROM simulator.packages WHERE courier_code = $1 AND refnum = $2`,
				[code, ref],
			);
			return rows[0];
		},

		async packageByWaybill(this: any, code: string, waybill: string): Promise<PackageRow | undefined> {
			const rows = await select<PackageRow>(
				this.db,
				`SELECT * FROM simulator.packages WHERE courier_code = $1 AND waybill = $2`,
				[code, waybill],
			);
			return rows[0];
		},

		/** `GET /api/v1/packages/json/?refnum=a,b` or `?waybill=a,b`: Delhivery-like track answer. */
		async lookup(
			this: any,
			courier: SimCourier,
			refnum: string | null,
			waybill: string | null,
		): Promise<Reply> {
			await this.logCall(courier, "lookup", refnum ?? waybill ?? "", 200);
			const list = (refnum ?? waybill ?? "")
				.split(",")
				.map((s) => s.trim())
				.filter(Boolean)
				.slice(0, 50);
			if (!list.length)
				throw new HttpError(400, { ShipmentData: [], Error: "refnum or waybill is required" });
			const col = refnum !== null ? "refnum" : "waybill";
			const rows = await select<PackageRow>(
				this.db,
				`SELECT * FROM simulator.packages WHERE courier_code = $1 AND ${col} = ANY($2::text[]) ORDER BY created_at`,
				[courier.code, list],
			);
			const scans = rows.length
				? await select<ScanRow>(
						this.db,
						`SELECT * FROM simulator.scans WHERE waybill = ANY($1::text[]) ORDER BY id`,
						[rows.map((r) => r.waybill)],
					)
				: [];
			const body: WireTrackResponse = {
				ShipmentData: rows.map((r) => ({
					Shipment: this.trackOf(
						r,
						scans.filter((s) => s.waybill === r.waybill),
					),
				})),
			};
			if (!rows.length) body.Error = "No such waybill or Order Id found";
			return { status: 200, body };
		},

		trackOf(row: PackageRow, scans: ScanRow[]): WireTrackShipment {
			const wire = scans.map((s) => {
				const k = SCAN_KINDS[s.code] ?? SCAN_KINDS.in_transit;
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
		},

		/** `POST /api/p/edit` with `cancellation: "true"`. Cancelling twice answers success. */
		async cancelPackage(this: any, courier: SimCourier, body: WireCancelRequest): Promise<Reply> {
			const waybill = String(body?.waybill ?? "");
			await this.logCall(courier, "cancel", waybill, 200);
			if (String(body?.cancellation) !== "true") {
				return { status: 200, body: { status: false, waybill, error: "Only cancellation is supported" } };
			}
			const pkg: PackageRow | undefined = await this.packageByWaybill(courier.code, waybill);
			if (!pkg) return { status: 200, body: { status: false, waybill, error: `No such waybill ${waybill}` } };
			if (pkg.cancelled_at)
				return { status: 200, body: { status: true, waybill, remark: "Shipment has been cancelled." } };
			const last = await select<{ code: string }>(
				this.db,
				`SELECT code FROM simulator.scans WHERE waybill = $1 ORDER BY id DESC LIMIT 1`,
				[waybill],
			);
			const lastCode = last[0]?.code ?? "manifested";
			if (lastCode !== "manifested") {
				return {
					status: 200,
					body: {
						status: false,
						waybill,
						error: `Shipment is ${SCAN_KINDS[lastCode]?.Scan ?? lastCode}; it can no longer be cancelled`,
					},
				};
			}
			const { count } = await exec(
				this.db,
				`UPDATE simulator.packages SET cancelled_at = now() WHERE courier_code = $1 AND waybill = $2 AND cancelled_at IS NULL`,
				[courier.code, waybill],
			);
			if (count > 0) await this.insertScan(waybill, "cancelled", "Origin", "Cancelled by client");
			return { status: 200, body: { status: true, waybill, remark: "Shipment has been cancelled." } };
		},

		/** `POST /api/backend/clientwarehouse/create/` (and `/edit/`): upsert by `name`. */
		async registerWarehouse(this: any, courier: SimCourier, w: WireWarehouse): Promise<Reply> {
			const errors = warehouseRefusals(w ?? ({} as WireWarehouse));
			await this.logCall(courier, "warehouse", String(w?.name ?? ""), errors.length ? 400 : 200);
			if (errors.length) return { status: 400, body: { success: false, error: errors } };
			await exec(
				this.db,
				`INSERT INTO simulator.pickup_locations (courier_code, name, pincode, city, payload)
				 VALUES ($1, $2, $3, $4, $5::jsonb)
				 ON CONFLICT (courier_code, name) DO UPDATE SET pincode = EXCLUDED.pincode, city = EXCLUDED.city,
				   payload = EXCLUDED.payload, updated_at = now()`,
				[courier.code, w.name, w.pin, w.city, JSON.stringify(w)],
			);
			return {
				status: 200,
				body: {
					success: true,
					data: { name: w.name, pincode: w.pin, message: `Warehouse ${w.name} registered` },
				},
			};
		},

		async insertScan(
			this: any,
			waybill: string,
			code: string,
			location: string,
			instructions = "",
		): Promise<ScanRow> {
			const { rows } = await exec<ScanRow>(
				this.db,
				`INSERT INTO simulator.scans (waybill, code, location, instructions) VALUES ($1, $2, $3, $4) RETURNING *`,
				[waybill, code, location, instructions],
			);
			return rows[0];
		},

		/**
		 * Adds a tracking scan to a booked AWB (of `courierCode`, or of any courier).
		 * Returns `{courier_code, awb_number, code, at}`, or null for an unknown AWB.
		 */
		async addScan(this: any, awb: string, event: string, reason?: string, courierCode?: string) {
			const [pkg] = await select<{ courier_code: string; city: string | null }>(
				this.db,
				`SELECT courier_code, shipment->>'city' AS city FROM simulator.packages
				 WHERE waybill = $1 AND ($2::text IS NULL OR courier_code = $2)`,
				[awb, courierCode ?? null],
			);
			if (!pkg) return null;
			const location = event === "rto_delivered" ? "Origin" : (pkg.city ?? "Hub");
			const scan = await this.insertScan(awb, event, location, reason ?? "");
			return {
				courier_code: pkg.courier_code,
				awb_number: awb,
				code: event,
				at: new Date(scan.at).toISOString(),
			};
		},

		/** Counts per courier (ops). */
		async stateView(this: any) {
			const pk = await select<{ courier_code: string; packages: string; cancelled: string }>(
				this.db,
				`SELECT courier_code, count(*) AS packages, count(cancelled_at) AS cancelled FROM simulator.packages GROUP BY 1`,
			);
			const wh = await select<{ courier_code: string; n: string }>(
				this.db,
				`SELECT courier_code, count(*) AS n FROM simulator.pickup_locations GROUP BY 1`,
			);
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
		},
	},
	created(this: any) {
		this.hangs = new Set<NodeJS.Timeout>();
	},
	async started(this: any) {
		if (!loadConfig().sandbox) {
			this.logger.warn("simulator: SANDBOX is off; the sandbox courier simulator is not started");
			return;
		}
		await this.listen();
	},
	async stopped(this: any) {
		for (const t of this.hangs as Set<NodeJS.Timeout>) clearTimeout(t);
		this.hangs.clear();
		const server: Server | undefined = this.server;
		this.server = undefined;
		if (server) {
			server.closeAllConnections();
			await new Promise<void>((r) => server.close(() => r()));
		}
	},
} satisfies ServiceSchema<Record<string, never>, any, SimVars>;

export default SimulatorService;
