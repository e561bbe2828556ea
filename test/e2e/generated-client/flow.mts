/**
 * A merchant's client written against types GENERATED from the served
 * `GET /v1/openapi.json` (openapi-typescript → `./schema.d.ts`) and called
 * through openapi-fetch: the spec's §1 typical flow, warehouse → quote →
 * order → book (202, asynchronous) → status (polled until booked) → label
 * (PDF). Not compiled with the project: test/e2e/generated-client.spec.ts
 * copies it next to the generated `schema.d.ts` in a temporary folder,
 * type-checks it with `tsc --noEmit` (strict; a route, parameter or field the
 * document does not have fails the build) and runs it with tsx.
 *
 * Input (environment): `MSA_BASE_URL` (e.g. `http://127.0.0.1:3000`),
 * `MSA_TOKEN` (a bearer token of a writing merchant role). Output: one JSON
 * line on stdout, {@link FlowReport}; exits non-zero (message on stderr) when
 * a step answers anything but its documented success.
 */
import createClient from "openapi-fetch";
import type { paths } from "./schema.js";

/** What the program prints once the flow completed. */
export interface FlowReport {
	warehouse_id: number;
	quotes: number;
	cheapest_total: number;
	order_id: number;
	deduped_order_id: number;
	booking_status: "queued";
	state: "booked";
	awb_number: string;
	courier: string;
	polls: number;
	label_bytes: number;
	label_magic: string;
}

const base = process.env.MSA_BASE_URL;
const token = process.env.MSA_TOKEN;
if (!base || !token) throw new Error("MSA_BASE_URL and MSA_TOKEN are required");

const client = createClient<paths>({ baseUrl: base, headers: { authorization: `Bearer ${token}` } });

/** Fails the run with the step's name, HTTP status and answer. */
function fail(step: string, res: Response, error: unknown): never {
	throw new Error(`${step}: HTTP ${res.status} ${JSON.stringify(error)}`);
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
const stamp = `${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}`;

// 1. a pickup warehouse (spec §2.9), its return leg the same address
const wh = await client.POST("/v1/warehouses", {
	body: {
		warehouse_name: `Generated client ${stamp}`,
		contact_person_name: "Asha Verma",
		contact_no: "9876543210",
		address_line_1: "12 Connaught Place, Block A",
		city: "New Delhi",
		state: "Delhi",
		pincode: "110001",
		is_return_same: true,
	},
});
if (wh.response.status !== 201 || !wh.data) fail("POST /v1/warehouses", wh.response, wh.error);
const warehouse_id: number = wh.data.data.id;

// 2. a quote for the lane (spec §2.7, §4.2)
const quote = await client.GET("/v1/shipping/serviceable", {
	params: {
		query: {
			from_pin: "110001",
			to_pin: "560001",
			physical_weight: 0.8,
			order_type: 1,
			collectable_amount: 1499,
		},
	},
});
if (!quote.data) fail("GET /v1/shipping/serviceable", quote.response, quote.error);
if (quote.data.data.length === 0) throw new Error(`no courier quoted: ${JSON.stringify(quote.data)}`);
const cheapest_total: number = Math.min(...quote.data.data.map((q) => q.total));

// 3. the order (spec §2.1, §3): created once, the same reference again is deduplicated
const customer_order_no = `GEN-${stamp}`;
const order = {
	customer_order_no,
	channel: "api",
	receiver: {
		name: "Ravi Kumar",
		address_1: "45 MG Road, Ashok Nagar",
		city: "Bengaluru",
		state: "Karnataka",
		pincode: "560001",
		mobile_no: "9123456780",
	},
	product: {
		product_name: "Cotton kurta",
		physical_weight: 0.8,
		declared_order_total: 1499,
		cod_amount: 1499,
		length: 30,
		width: 25,
		height: 5,
	},
	order: { pickup_address_id: warehouse_id, order_type: 1 },
} satisfies paths["/v1/intake/order"]["post"]["requestBody"]["content"]["application/json"];
const created = await client.POST("/v1/intake/order", { body: order });
if (created.response.status !== 201 || !created.data)
	fail("POST /v1/intake/order", created.response, created.error);
const order_id: number = created.data.order_id;
const again = await client.POST("/v1/intake/order", { body: order });
if (again.response.status !== 200 || !again.data)
	fail("POST /v1/intake/order (again)", again.response, again.error);
const deduped_order_id: number = again.data.order_id;

// 4. the booking, asynchronous: 202 queued, never the AWB (spec §4.2)
const book = await client.POST("/v1/shipping/book", { body: { order_id } });
if (book.response.status !== 202 || !book.data) fail("POST /v1/shipping/book", book.response, book.error);
const booking_status: "queued" = book.data.status;

// 5. the status, polled until booked (spec §2.4)
let polls = 0;
let booked: { awb_number: string; courier: string } | undefined;
for (const deadline = Date.now() + 20_000; !booked && Date.now() < deadline; await sleep(150)) {
	polls += 1;
	const s = await client.GET("/v1/orders/status", { params: { query: { order_no: customer_order_no } } });
	if (!s.data) fail("GET /v1/orders/status", s.response, s.error);
	if (s.data.state === "failed") throw new Error(`booking failed: ${s.data.failure_reason}`);
	if (s.data.state === "booked" && s.data.awb_number !== null && s.data.courier !== null)
		booked = { awb_number: s.data.awb_number, courier: s.data.courier };
}
if (!booked) throw new Error(`order ${customer_order_no} not booked within 20 s`);

// 6. the label, a PDF (spec §4.3); a courier-issued label may still be being captured: 409 with Retry-After
let label: ArrayBuffer | undefined;
for (const deadline = Date.now() + 15_000; !label && Date.now() < deadline; await sleep(100)) {
	const l = await client.GET("/v1/documents/label/{orderId}", {
		params: { path: { orderId: order_id } },
		parseAs: "arrayBuffer",
	});
	if (l.data) label = l.data;
	else if (!(l.response.status === 409 && l.response.headers.get("retry-after")))
		fail("GET /v1/documents/label/{orderId}", l.response, l.error);
}
if (!label) throw new Error(`no label for order ${order_id} within 15 s`);
const bytes = new Uint8Array(label);

const report: FlowReport = {
	warehouse_id,
	quotes: quote.data.data.length,
	cheapest_total,
	order_id,
	deduped_order_id,
	booking_status,
	state: "booked",
	awb_number: booked.awb_number,
	courier: booked.courier,
	polls,
	label_bytes: bytes.length,
	label_magic: new TextDecoder().decode(bytes.subarray(0, 5)),
};
process.stdout.write(`${JSON.stringify(report)}\n`);
