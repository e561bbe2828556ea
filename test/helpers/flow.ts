/**
 * The spec's §1 "Typical flow" over real HTTP, shared by the integration,
 * end-to-end and zero-setup smoke tests: warehouse → quote → order → book →
 * status → label. Every step asserts the real response. Request bodies come
 * from ./fixtures.ts, polling from ./poll.ts.
 */
import { strict as assert } from "node:assert";
import { newSender } from "./broker";
import { freshRef, orderBody, warehouseBody } from "./fixtures";
import { eventually } from "./poll";

export interface HttpResult<T = any> {
	status: number;
	headers: Headers;
	body: T;
	bytes?: Buffer;
}

/** Minimal JSON/PDF HTTP client bound to a base URL and bearer token. */
export function client(base: string, token?: string) {
	async function req<T = any>(
		method: string,
		path: string,
		body?: unknown,
		extra: Record<string, string> = {},
	): Promise<HttpResult<T>> {
		const headers: Record<string, string> = { ...extra };
		if (token) headers.authorization = `Bearer ${token}`;
		if (body !== undefined) headers["content-type"] = "application/json";
		const res = await fetch(base + path, {
			method,
			headers,
			body: body === undefined ? undefined : JSON.stringify(body),
		});
		const ct = res.headers.get("content-type") ?? "";
		if (ct.includes("application/pdf")) {
			const bytes = Buffer.from(await res.arrayBuffer());
			return { status: res.status, headers: res.headers, body: undefined as T, bytes };
		}
		const text = await res.text();
		let parsed: unknown = text;
		try {
			parsed = text ? JSON.parse(text) : undefined;
		} catch {
			/* plain text */
		}
		return { status: res.status, headers: res.headers, body: parsed as T };
	}
	return {
		get: <T = any>(p: string) => req<T>("GET", p),
		post: <T = any>(p: string, b?: unknown) => req<T>("POST", p, b ?? {}),
		patch: <T = any>(p: string, b?: unknown) => req<T>("PATCH", p, b ?? {}),
		del: <T = any>(p: string) => req<T>("DELETE", p),
		req,
	};
}

export interface FlowResult {
	warehouse_id: number;
	order_id: number;
	customer_order_no: string;
	awb_number: string;
	courier: string;
	label: Buffer;
	bookedAfterMs: number;
}

/**
 * Runs the whole typical flow as the merchant holding `token`; with
 * `logistic_id`, the quote must offer that courier and the booking names it
 * (else AUTO).
 */
export async function typicalFlow(
	base: string,
	token: string,
	opts: { logistic_id?: number } = {},
): Promise<FlowResult> {
	const api = client(base, token);

	const wh = await api.post("/v1/warehouses", warehouseBody());
	assert.equal(wh.status, 201, JSON.stringify(wh.body));
	const warehouse_id = wh.body.data.id as number;
	assert.ok(Number.isInteger(warehouse_id));

	const quote = await api.get(
		"/v1/shipping/serviceable?from_pin=110001&to_pin=560001&physical_weight=0.8&order_type=1&collectable_amount=1499",
	);
	assert.equal(quote.status, 200, JSON.stringify(quote.body));
	assert.ok(quote.body.data.length >= 1);
	for (const q of quote.body.data) {
		assert.equal(q.zone, "C");
		assert.ok(q.total > 0 && q.cod_charge > 0);
	}
	if (opts.logistic_id !== undefined)
		assert.ok(
			quote.body.data.some((q: { logistic_id: number }) => q.logistic_id === opts.logistic_id),
			`courier ${opts.logistic_id} quoted: ${JSON.stringify(quote.body)}`,
		);

	const customer_order_no = freshRef();
	const ob = orderBody(warehouse_id, customer_order_no);
	const created = await api.post("/v1/intake/order", ob);
	assert.equal(created.status, 201, JSON.stringify(created.body));
	const order_id = created.body.order_id as number;
	const again = await api.post("/v1/intake/order", ob);
	assert.equal(again.status, 200);
	assert.deepEqual(again.body, { order_id, deduped: true });

	const t0 = Date.now();
	const book = await api.post(
		"/v1/shipping/book",
		opts.logistic_id === undefined ? { order_id } : { order_id, logistic_id: opts.logistic_id },
	);
	assert.equal(book.status, 202, JSON.stringify(book.body));
	assert.equal(book.body.status, "queued");
	assert.ok(!JSON.stringify(book.body).toLowerCase().includes("awb"));

	const status = await eventually(
		async () => {
			const s = await api.get(`/v1/orders/status?order_no=${encodeURIComponent(customer_order_no)}`);
			assert.equal(s.status, 200, JSON.stringify(s.body));
			assert.notEqual(s.body.state, "failed", JSON.stringify(s.body));
			return s.body.state === "booked" ? s.body : undefined;
		},
		{ what: "the order to be booked", ms: 20_000, every: 150 },
	);
	const bookedAfterMs = Date.now() - t0;
	assert.equal(status.order_no, customer_order_no);
	assert.match(status.awb_number, /^[A-Z0-9]{8,20}$/);
	assert.ok(status.courier);

	// a courier that issues its own label (Sandbox Delhivery, Sandbox Lite): after an async booking the
	// booking outbox delivers "booked" to intake and the label capture to documents as separate rows, so
	// the download answers 409 carrier_label_missing with Retry-After until the capture lands
	// (docs/decisions/0034-courier-issued-labels.md); any other answer, that 409 without
	// Retry-After (recorded missing) included, ends the wait
	const label = await eventually(() => api.get(`/v1/documents/label/${order_id}`), {
		what: "the label",
		ms: 15_000,
		every: 100,
		ok: (r) =>
			!(r.status === 409 && r.body?.code === "carrier_label_missing" && r.headers.get("retry-after") === "1"),
	});
	assert.equal(label.status, 200, JSON.stringify(label.body));
	assert.ok(label.bytes && label.bytes.subarray(0, 5).toString() === "%PDF-");

	return {
		warehouse_id,
		order_id,
		customer_order_no,
		awb_number: status.awb_number,
		courier: status.courier,
		label: label.bytes!,
		bookedAfterMs,
	};
}

/**
 * A new merchant of `cluster` (role `merchant_ops`) with its client and a fresh warehouse (201 asserted):
 * the start of every bulk flow.
 */
export async function merchantWithWarehouse(cluster: {
	base: string;
	idp: { tokenFor(sender: number, role?: "merchant_ops"): Promise<string> };
}): Promise<{ sender: number; token: string; api: ReturnType<typeof client>; warehouse_id: number }> {
	const sender = newSender();
	const token = await cluster.idp.tokenFor(sender, "merchant_ops");
	const api = client(cluster.base, token);
	const wh = await api.post("/v1/warehouses", warehouseBody());
	assert.equal(wh.status, 201, JSON.stringify(wh.body));
	return { sender, token, api, warehouse_id: wh.body.data.id };
}

/**
 * Uploads `csv` as a bulk order file (POST /v1/intake/bulk, multipart, issue
 * 10) for warehouse `sender_address_id`, asserts 202 `{job_id, status:"queued"}`
 * and polls GET /v1/intake/jobs/{id} until the job is completed or failed;
 * answers the job object.
 */
export async function uploadBulkCsv(
	base: string,
	token: string,
	sender_address_id: number,
	csv: string,
): Promise<any> {
	const form = new FormData();
	form.append("sender_address_id", String(sender_address_id));
	form.append("import_file", new Blob([csv], { type: "text/csv" }), "orders.csv");
	const res = await fetch(`${base}/v1/intake/bulk`, {
		method: "POST",
		headers: { authorization: `Bearer ${token}` },
		body: form,
	});
	const body = (await res.json()) as { job_id: number; status: string };
	assert.equal(res.status, 202, JSON.stringify(body));
	assert.equal(body.status, "queued");
	const api = client(base, token);
	return eventually(
		async () => {
			const j = await api.get(`/v1/intake/jobs/${body.job_id}`);
			return j.body?.status === "completed" || j.body?.status === "failed" ? j.body : null;
		},
		{ what: `job ${body.job_id} finished`, ms: 60_000, every: 200 },
	);
}
