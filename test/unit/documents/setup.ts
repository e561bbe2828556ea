/**
 * Shared setup of the documents specs (spec §4.4 `GET /v1/documents/label/{orderId}`,
 * §7 documents exceptions): the real documents service on real PostgreSQL,
 * with intake, booking and warehouses as small fakes answering the contract
 * shapes (OrderRecord, ShipmentRecord, Warehouse; test/helpers/fixtures.ts).
 *
 * The barcode and text checks render the PDF with poppler (`pdftoppm`,
 * `pdftotext`: Debian poppler-utils) and decode it with `zbarimg` (Debian
 * zbar-tools). CI must install them; when they are missing these tests FAIL,
 * unless MSA_SKIP_BARCODE_SCAN=1 (then they are skipped).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ServiceBroker } from "moleculer";
import type { OrderRecord, ShipmentRecord, Warehouse, WarehouseLeg } from "../../../lib/contracts";
import { getSequelize, select } from "../../../lib/platform/db";
import type { DevIdp } from "../../../lib/platform/devidp";
import { errorBodyOf } from "../../../lib/platform/errors";
import { as, rejects, startBroker, startWithGateway } from "../../helpers/broker";
import { callAs, fakeService } from "../../helpers/call";
import { useDevIdp } from "../../helpers/devidp";
import { address, freshId, leg, order, warehouse } from "../../helpers/fixtures";

// ---------------------------------------------------------------- fakes ----

const orders = new Map<string, OrderRecord>();
const shipments = new Map<string, ShipmentRecord>();
const warehouses = new Map<string, Warehouse>();
/** Every call the fake `warehouses.get` received. */
export const warehouseCalls: Array<Record<string, unknown>> = [];
/** Every call the fake `booking.markManifested` received (documents' manifest outbox), failed ones included. */
export const markManifestedCalls: Array<{
	sender_id: number;
	manifest_no: string;
	at: string;
	awb_numbers: string[];
}> = [];
/** How many of the next fake `booking.markManifested` calls fail (a redelivery test sets it). */
export const markManifestedFaults = { next: 0 };
const k = (sender: number, id: number) => `${sender}:${id}`;

/** Overrides of {@link warehouseRow}: warehouse fields plus partial legs. */
export type WarehouseOver = Partial<Omit<Warehouse, "pickup" | "return_to">> & {
	pickup?: Partial<WarehouseLeg>;
	/** the return leg as warehouses answers it (rule applied); default: the pickup leg */
	return_to?: Partial<WarehouseLeg>;
};

/** A warehouse of `sender` in Pune (411026) known to the fake `warehouses.get`. */
export function warehouseRow(sender: number, over: WarehouseOver = {}): Warehouse {
	const id = freshId();
	const { pickup: pickupOver, return_to: returnOver, ...rest } = over;
	const pickup = leg({
		warehouse_name: `Acme Pune ${id}`,
		name: "Sita Rao",
		phone: "9123456780",
		email: null,
		address_1: "Plot 7, MIDC Industrial Area",
		address_2: "Bhosari",
		landmark: null,
		city: "Pune",
		state: "Maharashtra",
		pincode: "411026",
		...pickupOver,
	});
	const w = warehouse(sender, {
		id,
		gstin: "27AAPFU0939F1ZV",
		pickup,
		...(returnOver ? { return_to: leg({ ...pickup, address_2: null, ...returnOver }) } : {}),
		...rest,
	});
	warehouses.set(k(sender, id), w);
	return w;
}

/** An unbooked forward prepaid order of `sender` to Bengaluru (560001), known to the fake `intake.getOrder`. */
export function orderRecord(
	sender: number,
	over: Partial<OrderRecord> = {},
	product: Partial<OrderRecord["product"]> = {},
): OrderRecord {
	const base = order(sender, over.pickup_address_id ?? 0);
	const o: OrderRecord = {
		...base,
		customer_order_no: `ORD-${base.order_id}`,
		pickup_address_id: null,
		consignee: address({
			name: "Ram Kumar",
			phone: "9876543210",
			address_1: "Flat 12B, Shanti Apartments, 4th Cross Road",
			address_2: "Near City Hospital",
			landmark: null,
			city: "Bengaluru",
			state: "Karnataka",
			pincode: "560001",
		}),
		product: {
			product_name: "Cotton kurta",
			product_sku: "KRT-BL-M",
			physical_weight: 0.75,
			declared_order_total: 1499,
			cod_amount: null,
			length: 30,
			width: 20,
			height: 10,
			...product,
		},
		created_at: "2026-11-21T06:30:00.000Z",
		...over,
	};
	orders.set(k(sender, o.order_id), o);
	return o;
}

/** Books `o` at the fake `booking.getShipment` (a live shipment with an AWB). */
export function book(o: OrderRecord, over: Partial<ShipmentRecord> = {}): ShipmentRecord {
	const s: ShipmentRecord = {
		order_id: o.order_id,
		attempt_id: o.order_id * 10,
		logistic_id: 101,
		courier_name: "Sandbox Express",
		awb_number: `7${String(o.order_id).padStart(12, "0")}`,
		state: "booked",
		routing_code: "BLR/KOR",
		charges: null,
		booked_at: "2026-11-21T07:00:00.000Z",
		...over,
	};
	shipments.set(k(o.sender_id, o.order_id), s);
	o.state = s.state;
	o.awb_number = s.awb_number;
	return s;
}

/** A booked order from a fresh warehouse of `sender`. */
export function bookedOrder(
	sender: number,
	over: Partial<OrderRecord> = {},
	product: Partial<OrderRecord["product"]> = {},
) {
	const w = warehouseRow(sender);
	const o = orderRecord(sender, { pickup_address_id: w.id, ...over }, product);
	const shipment = book(o);
	return { order: o, shipment, warehouse: w };
}

/** The fakes of intake, booking and warehouses (over the maps above). */
export const fakeServices = [
	fakeService("intake", {
		getOrder(ctx) {
			return orders.get(k(ctx.params.sender_id, ctx.params.order_id)) ?? null;
		},
	}),
	fakeService("booking", {
		getShipment(ctx) {
			return shipments.get(k(ctx.params.sender_id, ctx.params.order_id)) ?? null;
		},
		markManifested(ctx) {
			markManifestedCalls.push({ ...ctx.params });
			if (markManifestedFaults.next > 0) {
				markManifestedFaults.next--;
				throw new Error("booking.markManifested failed (fake)");
			}
			return { moved: ctx.params.awb_numbers.length };
		},
	}),
	fakeService("warehouses", {
		get(ctx) {
			warehouseCalls.push({ ...ctx.params });
			const w = warehouses.get(k(ctx.params.sender_id, ctx.params.id));
			if (!w || (w.retired && !ctx.params.include_retired)) return null;
			return w;
		},
	}),
];

// -------------------------------------------------------------- broker ----

let current: ServiceBroker | undefined;
let workDir: string;

/** The broker of the running spec file. */
export function broker(): ServiceBroker {
	if (!current) throw new Error("useDocuments() was not called in this spec file");
	return current;
}

/**
 * Registers mocha hooks of a spec file: one broker with the real documents
 * service and the fakes, and a scratch directory for rendered pages.
 */
export function useDocuments(): void {
	before(async () => {
		workDir = mkdtempSync(join(tmpdir(), "msa-documents-"));
		current = await startBroker(["documents"]);
		for (const s of fakeServices) current.createService(s);
		await current.waitForServices(["intake", "booking", "warehouses"], 10_000, 10);
	});
	after(async () => {
		await current?.stop();
		current = undefined;
		rmSync(workDir, { recursive: true, force: true });
	});
}

/** The documents service behind the real gateway over HTTP (see {@link useDocumentsOverHttp}). */
export interface DocumentsOverHttp {
	/** the gateway's base URL, `http://127.0.0.1:<port>` */
	base: string;
	/** mints bearer tokens the gateway accepts (any role) */
	idp: DevIdp;
}

/**
 * Registers mocha hooks of a spec file: one broker with the real gateway (a
 * development IdP's JWKS served over HTTP), the real documents service and
 * the fakes; {@link broker} answers it too. Fills the answer in `before`.
 */
export function useDocumentsOverHttp(): DocumentsOverHttp {
	const out: DocumentsOverHttp = { base: "", idp: undefined as unknown as DevIdp };
	const auth = useDevIdp();
	before(async () => {
		workDir = mkdtempSync(join(tmpdir(), "msa-documents-"));
		out.idp = auth.idp;
		const started = await startWithGateway(["documents", ...fakeServices]);
		current = started.broker;
		out.base = started.base;
	});
	after(async () => {
		await current?.stop();
		current = undefined;
		rmSync(workDir, { recursive: true, force: true });
	});
	return out;
}

/** The fake booking's shipment of an order (to show a refused write changed nothing). */
export function shipmentOf(sender: number, order_id: number): ShipmentRecord | undefined {
	return shipments.get(k(sender, order_id));
}

// ------------------------------------------------------------- helpers ----

export interface Download {
	pdf: Buffer;
	meta: Record<string, any>;
}

/** `documents.label` as `sender`: the bytes and the response meta. */
export async function download(sender: number, orderId: string | number): Promise<Download> {
	const opts = as(sender);
	const pdf = (await callAs(broker(), "documents.label", { orderId: String(orderId) }, opts)) as Buffer;
	return { pdf, meta: opts.meta as Record<string, any> };
}

/** `documents.label` as `sender`, expected to fail with a contract body. */
export async function failure(
	sender: number,
	orderId: string,
): Promise<{ status: number; body: Record<string, unknown>; retry_after?: unknown }> {
	const err = await rejects(() => callAs(broker(), "documents.label", { orderId }, as(sender)));
	const out = errorBodyOf(err);
	assert.ok(out, `expected an ApiError, got ${err}`);
	// the gateway's Retry-After (services/gateway.service.ts), when the error carries one
	return { ...out, retry_after: (err as { data?: { retry_after?: unknown } }).data?.retry_after };
}

/** The `documents.labels` rows of an order. */
export async function labelRows(orderId: number) {
	return select<{
		order_id: string;
		sender_id: string;
		awb_number: string;
		logistic_id: number;
		source: string;
		label_downloaded_at: Date;
		first_downloaded_at: Date;
		download_count: number;
	}>(getSequelize(), "SELECT * FROM documents.labels WHERE order_id = $1", [orderId]);
}

function have(bin: string): boolean {
	const r = spawnSync(bin, ["-v"], { encoding: "utf8" });
	return !(r.error && (r.error as NodeJS.ErrnoException).code === "ENOENT");
}

/** Fails (or, with MSA_SKIP_BARCODE_SCAN=1, skips) when poppler-utils / zbar-tools are missing. */
export function requireTools(test: Mocha.Context, bins: string[]): void {
	const missing = bins.filter((b) => !have(b));
	if (!missing.length) return;
	if (process.env.MSA_SKIP_BARCODE_SCAN === "1") test.skip();
	throw new Error(
		`missing ${missing.join(", ")}: apt-get install -y poppler-utils zbar-tools (or set MSA_SKIP_BARCODE_SCAN=1 to skip)`,
	);
}

/** Renders page 1 at 300 dpi and returns every Code128 value zbarimg decodes. */
export function scanBarcodes(pdf: Buffer, name: string): string[] {
	const file = join(workDir, `${name}.pdf`);
	writeFileSync(file, pdf);
	const png = join(workDir, name);
	const r = spawnSync("pdftoppm", ["-r", "300", "-png", "-singlefile", file, png], { encoding: "utf8" });
	assert.equal(r.status, 0, `pdftoppm failed: ${r.stderr}`);
	const z = spawnSync("zbarimg", ["--raw", "-q", "-Sdisable", "-Scode128.enable", `${png}.png`], {
		encoding: "utf8",
	});
	assert.equal(z.status, 0, `zbarimg found no barcode (status ${z.status}): ${z.stderr}`);
	return z.stdout.split("\n").filter(Boolean);
}

/** Text of page 1 as poppler extracts it. */
export function pdfText(pdf: Buffer, name: string): string {
	const file = join(workDir, `${name}.pdf`);
	writeFileSync(file, pdf);
	const r = spawnSync("pdftotext", ["-layout", file, "-"], { encoding: "utf8" });
	assert.equal(r.status, 0, `pdftotext failed: ${r.stderr}`);
	return r.stdout;
}
