/**
 * Shared setup of the bad-input specs (issue 12): the real gateway and the
 * real services over real NATS (gateway alone on one broker, the rest on
 * another, so bodies cross the wire as they do in production), a merchant
 * with a token, a warehouse and an unshipped order, and the write routes of
 * lib/gateway/routes.ts with a plausible body each.
 */
import { strict as assert } from "node:assert";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ServiceName } from "../../../lib/platform/config";
import { newSender } from "../../helpers/broker";
import { type Cluster, useCluster } from "../../helpers/cluster";
import { orderBody, warehouseBody } from "../../helpers/fixtures";

/** What the specs get once the cluster is up. */
export interface World {
	cluster: Cluster;
	base: string;
	token: string;
	sender: number;
	warehouse_id: number;
	order_id: number;
}

/** One HTTP answer: status, headers, the text and its JSON reading (undefined when not JSON). */
export interface Answer {
	status: number;
	headers: Headers;
	text: string;
	body: any;
}

/** Sends `body` (a string is sent as is, anything else as JSON) with the bearer token. */
export async function send(
	w: World,
	method: string,
	path: string,
	body?: unknown,
	headers: Record<string, string> = {},
): Promise<Answer> {
	const h: Record<string, string> = { authorization: `Bearer ${w.token}`, ...headers };
	let payload: string | undefined;
	if (body !== undefined) {
		payload = typeof body === "string" ? body : JSON.stringify(body);
		h["content-type"] ??= "application/json";
	}
	const r = await fetch(w.base + path, { method, headers: h, body: payload });
	const text = await r.text();
	let parsed: unknown;
	try {
		parsed = text ? JSON.parse(text) : undefined;
	} catch {
		parsed = undefined;
	}
	return { status: r.status, headers: r.headers, text, body: parsed };
}

/**
 * Asserts an error answer in the spec's envelope: §2.11 `{error, message}`
 * (string `error`), or under /v1/documents/ the §7 `{message}` / `{code, message}`.
 */
export function assertEnvelope(a: Answer, path: string): void {
	assert.ok(a.status < 500, `${path}: ${a.status} ${a.text.slice(0, 300)}`);
	if (a.status < 400) return;
	assert.ok(a.body && typeof a.body === "object", `${path}: ${a.status} not JSON: ${a.text.slice(0, 200)}`);
	assert.equal(typeof a.body.message, "string", `${path}: ${a.text.slice(0, 300)}`);
	if (!path.startsWith("/v1/documents/")) assert.equal(typeof a.body.error, "string", a.text.slice(0, 300));
}

/** A write route (method, path with ids filled in) and a plausible body for it. */
export interface WriteRoute {
	key: string;
	method: string;
	path: (w: World) => string;
	body: (w: World) => Record<string, unknown>;
}

/**
 * Every route of lib/gateway/routes.ts that takes a JSON body (POST / PATCH),
 * keyed by its alias; the multipart upload and the raw-body courier webhook
 * are not JSON routes. A test checks this list covers the table.
 */
export const WRITE_ROUTES: WriteRoute[] = [
	{
		key: "POST /v1/intake/order",
		method: "POST",
		path: () => "/v1/intake/order",
		body: (w) => orderBody(w.warehouse_id),
	},
	{
		key: "POST /v1/intake/reverse",
		method: "POST",
		path: () => "/v1/intake/reverse",
		body: (w) => {
			const b = orderBody(w.warehouse_id);
			return {
				...b,
				product: { ...(b.product as object), cod_amount: 0 },
				order: {
					reverse_pickup_address_id: w.warehouse_id,
					forward_source: "external",
					old_fwd_awb_no: "AWB123",
					return_address: { city: "Pune" },
				},
			};
		},
	},
	{ key: "POST /v1/warehouses", method: "POST", path: () => "/v1/warehouses", body: () => warehouseBody() },
	{
		key: "PATCH /v1/warehouses/:id",
		method: "PATCH",
		path: (w) => `/v1/warehouses/${w.warehouse_id}`,
		body: () => ({ city: "New Delhi", contact_no: "9876500000", is_return_same: true }),
	},
	{
		key: "POST /v1/shipping/book",
		method: "POST",
		path: () => "/v1/shipping/book",
		body: () => ({ order_id: 987_654_321, logistic_id: 1 }),
	},
	{
		key: "POST /v1/shipping/book/sync",
		method: "POST",
		path: () => "/v1/shipping/book/sync",
		body: () => ({ order_id: 987_654_321, logistic_id: 1, operation: "book" }),
	},
	{
		key: "POST /v1/shipping/cancel",
		method: "POST",
		path: () => "/v1/shipping/cancel",
		body: (w) => ({ order_id: w.order_id, logistic_id: 1 }),
	},
	{
		key: "POST /v1/shipping/ndr",
		method: "POST",
		path: () => "/v1/shipping/ndr",
		body: (w) => ({ order_id: w.order_id, logistic_id: 1, ndr_act: "RE_ATTEMPT", phone: "9876543210" }),
	},
	{
		key: "PATCH /v1/shipping/couriers/priority",
		method: "PATCH",
		path: () => "/v1/shipping/couriers/priority",
		body: () => ({
			shipment_type: 0,
			order: [
				{ logistic_id: 1, priority: 1 },
				{ logistic_id: 2, priority: 2 },
			],
		}),
	},
	{
		key: "POST /v1/ndr/:id/comment",
		method: "POST",
		path: () => "/v1/ndr/987654321/comment",
		body: () => ({ comment: "Buyer asked for an evening delivery" }),
	},
	{
		key: "PATCH /v1/orders/unshipped/:id",
		method: "PATCH",
		path: (w) => `/v1/orders/unshipped/${w.order_id}`,
		body: () => ({ name: "Ravi K", city: "Bengaluru", mobile_no: "9123456780" }),
	},
	{
		key: "POST /v1/orders/:id/hide",
		method: "POST",
		path: () => "/v1/orders/987654321/hide",
		body: () => ({ hidden: true }),
	},
	{
		key: "POST /v1/weight-discrepancies/:id/accept",
		method: "POST",
		path: () => "/v1/weight-discrepancies/987654321/accept",
		body: () => ({}),
	},
	{
		key: "POST /v1/intake/jobs/:id/review/:row/:decision",
		method: "POST",
		path: () => "/v1/intake/jobs/987654321/review/1/approve",
		body: () => ({}),
	},
	{
		key: "POST /v1/sandbox/orders/:order_id/events",
		method: "POST",
		path: () => "/v1/sandbox/orders/987654321/events",
		body: () => ({ event: "undelivered", reason: "Door locked" }),
	},
	{
		key: "POST /v1/webhooks",
		method: "POST",
		path: () => "/v1/webhooks",
		body: () => ({ url: "https://example.com/hooks", events: ["order.created"], description: "ops" }),
	},
	{
		key: "PATCH /v1/webhooks/:id",
		method: "PATCH",
		path: () => "/v1/webhooks/987654321",
		body: () => ({ events: ["order.booked"], enabled: false }),
	},
	{
		key: "POST /v1/webhooks/:id/rotate-secret",
		method: "POST",
		path: () => "/v1/webhooks/987654321/rotate-secret",
		body: () => ({}),
	},
	{
		key: "POST /v1/webhooks/:id/deliveries/:delivery_id/redeliver",
		method: "POST",
		path: () => "/v1/webhooks/987654321/deliveries/1/redeliver",
		body: () => ({}),
	},
	{
		key: "POST /v1/webhooks/:id/test",
		method: "POST",
		path: () => "/v1/webhooks/987654321/test",
		body: () => ({ event: "order.created" }),
	},
	{
		key: "POST /v1/pickups",
		method: "POST",
		path: () => "/v1/pickups",
		body: (w) => ({
			warehouse_id: w.warehouse_id,
			logistic_id: 2,
			expected_package_count: 3,
			slot: "16:00-19:00",
		}),
	},
	{
		key: "PATCH /v1/pickups/:id",
		method: "PATCH",
		path: () => "/v1/pickups/987654321",
		body: () => ({ expected_package_count: 4, slot: "13:00-16:00" }),
	},
	{
		key: "POST /v1/pickups/:id/cancel",
		method: "POST",
		path: () => "/v1/pickups/987654321/cancel",
		body: () => ({}),
	},
	{
		key: "PATCH /v1/settings/branding",
		method: "PATCH",
		path: () => "/v1/settings/branding",
		body: () => ({ brand_name: "Asha Handlooms", colour: "#FFCC00", support_phone: "9876500000" }),
	},
	{
		key: "PATCH /v1/settings/notifications",
		method: "PATCH",
		path: () => "/v1/settings/notifications",
		body: () => ({
			channels: { whatsapp: true },
			quiet_hours: { start: "21:00", end: "08:00" },
			language: "hi",
		}),
	},
	{
		key: "POST /v1/settings/notifications/test",
		method: "POST",
		path: () => "/v1/settings/notifications/test",
		body: () => ({ channel: "sms", to: "9876543210" }),
	},
	{
		key: "POST /v1/documents/label",
		method: "POST",
		path: () => "/v1/documents/label",
		body: (w) => ({ order_ids: [w.order_id] }),
	},
	{
		key: "POST /v1/documents/manifest",
		method: "POST",
		path: () => "/v1/documents/manifest",
		body: (w) => ({ order_ids: [w.order_id] }),
	},
];

/**
 * Starts the cluster (per-account rate limit off: the fuzz sends hundreds of
 * requests as one merchant) and creates the merchant's warehouse and order.
 * With `devIdp`, the gateway's node also runs the development identity
 * provider and mounts its routes (`MSA_DEV_IDP=1`; its key in a temporary
 * `MSA_DATA_DIR`): its tokens are not the ones the gateway verifies here.
 */
export function useWorld(prefix: string, opts: { devIdp?: boolean } = {}): World {
	const w = {} as World;
	const saved = process.env.RATE_LIMIT_ACCOUNT_PER_MIN;
	const savedDataDir = process.env.MSA_DATA_DIR;
	let dataDir: string | undefined;
	before(() => {
		process.env.RATE_LIMIT_ACCOUNT_PER_MIN = "0";
		if (opts.devIdp) {
			dataDir = mkdtempSync(join(tmpdir(), "msa-world-"));
			process.env.MSA_DATA_DIR = dataDir;
		}
	});
	const gateway: ServiceName[] = opts.devIdp ? ["gateway", "devauth"] : ["gateway"];
	const cluster = useCluster(
		prefix,
		[
			opts.devIdp ? { services: gateway, env: { MSA_DEV_IDP: "1" } } : gateway,
			[
				"pincode",
				"rates",
				"warehouses",
				"intake",
				"booking",
				"billing",
				"simulator",
				"ndr",
				"documents",
				"webhooks",
				"notifications",
			],
		],
		[
			...gateway,
			"pincode",
			"rates",
			"warehouses",
			"intake",
			"booking",
			"billing",
			"ndr",
			"documents",
			"webhooks",
			"notifications",
		],
	);
	before(async () => {
		w.cluster = cluster;
		w.base = cluster.base;
		w.sender = newSender();
		w.token = await cluster.idp.tokenFor(w.sender);
		const wh = await send(w, "POST", "/v1/warehouses", warehouseBody());
		assert.equal(wh.status, 201, wh.text);
		w.warehouse_id = wh.body.data.id;
		const o = await send(w, "POST", "/v1/intake/order", orderBody(w.warehouse_id));
		assert.equal(o.status, 201, o.text);
		w.order_id = o.body.order_id;
	});
	after(() => {
		if (saved === undefined) delete process.env.RATE_LIMIT_ACCOUNT_PER_MIN;
		else process.env.RATE_LIMIT_ACCOUNT_PER_MIN = saved;
		if (dataDir) {
			if (savedDataDir === undefined) delete process.env.MSA_DATA_DIR;
			else process.env.MSA_DATA_DIR = savedDataDir;
			rmSync(dataDir, { recursive: true, force: true });
		}
	});
	return w;
}

/** `depth` arrays nested around `leaf` (built iteratively: no recursion). */
export function nestedArray(depth: number, leaf: unknown = 1): unknown {
	let v: unknown = leaf;
	for (let i = 0; i < depth; i++) v = [v];
	return v;
}

/** JSON text of `depth` nested objects `{"a":{"a":…}}` (built as text: JSON.stringify would recurse). */
export function deepObjectText(depth: number): string {
	return `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
}
