/**
 * The simulator's HTTP server (node:http on 127.0.0.1): routes
 * `/couriers/<code>/…` to the courier endpoints of ./api.ts with the
 * courier's token check, `/delhivery/…` to Delhivery's own protocol
 * (./delhivery.ts, the real Delhivery adapter's sandbox), plus `GET /health`, `GET /state`,
 * `GET /references?reference=a,b` and `POST /couriers/<code>/sandbox/scan`
 * (the scan is also pushed when `SANDBOX_SCAN_PUSH_URL` is set, ./push.ts). Answers are JSON (but the
 * packing slip `GET /couriers/<code>/api/p/packing_slip`, a PDF); a `SIMULATE_TIMEOUT`
 * answer is held (and released on {@link SimulatorServer.close}).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Logger } from "moleculer";
import type { Sequelize } from "sequelize";
import { sandboxToken } from "../couriers/sandbox/settings";
import type {
	WireCancelRequest,
	WireCreateRequest,
	WireNdrRequest,
	WirePickupRequest,
	WireWarehouse,
} from "../couriers/sandbox/wire";
import {
	addScan,
	cancelPackage,
	create,
	HttpError,
	lookup,
	ndrUpdate,
	packingSlip,
	type Reply,
	referencesView,
	registerWarehouse,
	stateView,
} from "./api";
import { isEmittable, SIM_COURIERS, type SimCourier } from "./couriers";
import { DELHIVERY_PREFIX, routeDelhivery } from "./delhivery";
import { cancelPickup, editPickup, requestPickup } from "./pickups";

/** Reads a request body (UTF-8); 413 beyond `limit` bytes. */
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

/** Parses a JSON body; 400 `{success:false, error:["Malformed JSON body"]}` when it is not JSON. */
function parseJson(text: string): unknown {
	try {
		return JSON.parse(text);
	} catch {
		throw new HttpError(400, { success: false, error: ["Malformed JSON body"] });
	}
}

/** The sandbox couriers' HTTP server over the simulator's database. */
export class SimulatorServer {
	private server?: Server;
	private readonly hangs = new Set<NodeJS.Timeout>();

	constructor(
		private readonly db: Sequelize,
		private readonly logger: Logger,
	) {}

	/**
	 * Listens on `host`:`port` (127.0.0.1 unless the caller passes `HOST`, e.g.
	 * 0.0.0.0 in a Kubernetes pod that other pods call); rejects when the port
	 * cannot be bound.
	 */
	async listen(port: number, host = "127.0.0.1"): Promise<void> {
		const server = createServer((req, res) => {
			void this.handle(req, res);
		});
		server.keepAliveTimeout = 5_000;
		await new Promise<void>((resolve, reject) => {
			server.once("error", reject);
			server.listen(port, host, () => {
				server.off("error", reject);
				resolve();
			});
		});
		this.server = server;
	}

	/** Drops held answers, closes every connection and the server. */
	async close(): Promise<void> {
		for (const t of this.hangs) clearTimeout(t);
		this.hangs.clear();
		const server = this.server;
		this.server = undefined;
		if (server) {
			server.closeAllConnections();
			await new Promise<void>((r) => server.close(() => r()));
		}
	}

	/** Routes one HTTP request; never throws (an unexpected error answers 500 `{error:"internal error"}`). */
	private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
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
			if (reply.file) {
				res.writeHead(reply.status, {
					"Content-Type": reply.file.content_type,
					"Content-Length": reply.file.bytes.length,
				});
				res.end(reply.file.bytes);
				return;
			}
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
	}

	/**
	 * Dispatches to the endpoints: 404 for an unknown path or courier code, 401
	 * without `Authorization: Token <SANDBOX_COURIER_TOKEN>` (the ops endpoints
	 * `/health`, `/state` and `/references` need no token).
	 */
	private async route(req: IncomingMessage): Promise<Reply> {
		const url = new URL(req.url ?? "/", "http://simulator");
		if (url.pathname === "/health") return { status: 200, body: { ok: true } };
		if (url.pathname === "/state" && req.method === "GET")
			return { status: 200, body: await stateView(this.db) };
		if (url.pathname === "/references" && req.method === "GET") {
			const refs = (url.searchParams.get("reference") ?? "").split(",");
			return { status: 200, body: { references: await referencesView(this.db, refs) } };
		}
		if (url.pathname.startsWith(`${DELHIVERY_PREFIX}/`)) {
			const path = url.pathname.slice(DELHIVERY_PREFIX.length);
			// the packing slip's PDF link is pre-signed (as Delhivery's S3 links): no token
			if (!path.startsWith("/files/") && req.headers.authorization !== `Token ${sandboxToken()}`) {
				throw new HttpError(401, { detail: "Authentication credentials were not provided." });
			}
			const base = `http://${req.headers.host ?? "127.0.0.1"}${DELHIVERY_PREFIX}`;
			return routeDelhivery(
				this.db,
				{ method: req.method ?? "GET", path, query: url.searchParams, body: () => readBody(req) },
				base,
			);
		}
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
			return create(this.db, courier, parsed);
		}
		if (method === "GET" && path === "/api/v1/packages/json/") {
			return lookup(this.db, courier, url.searchParams.get("refnum"), url.searchParams.get("waybill"));
		}
		if (method === "GET" && path === "/api/p/packing_slip") {
			return packingSlip(this.db, courier, url.searchParams.get("wbns"));
		}
		if (method === "POST" && path === "/api/p/edit") {
			return cancelPackage(
				this.db,
				courier,
				parseJson(await readBody(req)) as Partial<WireCancelRequest> | null,
			);
		}
		if (method === "POST" && path === "/api/p/update") {
			return ndrUpdate(this.db, courier, parseJson(await readBody(req)) as Partial<WireNdrRequest> | null);
		}
		if (
			method === "POST" &&
			(path === "/api/backend/clientwarehouse/create/" || path === "/api/backend/clientwarehouse/edit/")
		) {
			return registerWarehouse(this.db, courier, parseJson(await readBody(req)) as WireWarehouse | null);
		}
		if (method === "POST" && path === "/fm/request/new/") {
			return requestPickup(
				this.db,
				courier,
				parseJson(await readBody(req)) as Partial<WirePickupRequest> | null,
			);
		}
		const pickup = /^\/fm\/request\/([^/]+)\/(edit|cancel)\/$/.exec(path);
		if (method === "POST" && pickup) {
			const id = decodeURIComponent(pickup[1]);
			return pickup[2] === "cancel"
				? cancelPickup(this.db, courier, id)
				: editPickup(
						this.db,
						courier,
						id,
						parseJson(await readBody(req)) as Partial<WirePickupRequest> | null,
					);
		}
		if (method === "POST" && path === "/sandbox/scan") {
			const b = parseJson(await readBody(req)) as { waybill?: string; event?: string; reason?: string };
			if (!b.waybill || !isEmittable(b.event)) {
				throw new HttpError(400, { error: "waybill and a valid event are required" });
			}
			const added = await addScan(this.db, b.waybill, b.event, {
				reason: b.reason,
				courierCode: courier.code,
				logger: this.logger,
			});
			if (!added) throw new HttpError(404, { error: `No such waybill ${b.waybill}` });
			return { status: 200, body: added.scan };
		}
		throw new HttpError(404, { error: "not found" });
	}
}
