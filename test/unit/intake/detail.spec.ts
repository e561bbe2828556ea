/**
 * GET /v1/orders/{id} (intake.orderDetail; spec §2.5, §4.3, §7): the full
 * shipment object, charges from booking, the label download from documents,
 * 404 `order not found`, 400 for a bad id; and the alias order of the
 * gateway (literal /v1/orders/<word> paths before /v1/orders/:id). Over real
 * HTTP against the real gateway and intake (./list-helpers.ts).
 */
import assert from "node:assert/strict";
import { API_ALIASES } from "../../../lib/gateway/routes";
import { DEFAULT_TRACKING_URL_TEMPLATE } from "../../../lib/intake/list";
import { labelLinkUrl, signTrackingToken } from "../../../lib/shared/label-link";
import { newSender } from "../../helpers/broker";
import { callAs } from "../../helpers/call";
import { createOrder, get, moveTo, sql, useReadSide } from "./list-helpers";

describe("GET /v1/orders/{id}", () => {
	// TRACKING_URL_TEMPLATE unset: the default template
	const sys = useReadSide({ TRACKING_URL_TEMPLATE: undefined });

	async function account(): Promise<{ s: number; token: string }> {
		const s = newSender();
		return { s, token: await sys.idp.tokenFor(s) };
	}

	async function detail(token: string, id: number | string): Promise<Record<string, any>> {
		const r = await get(sys, token, `/v1/orders/${id}`);
		assert.equal(r.status, 200, r.text);
		return r.body;
	}

	it("an order not booked yet: every field, no shipment, booking and documents not asked", async () => {
		const { s, token } = await account();
		const id = await createOrder(sys, s, { ref: `DET-${s}`, declared: 1299.5, channel: "shopify" });
		const callsBefore = sys.calls.length;
		const d = await detail(token, id);
		const row = (await sql(`SELECT created_at, updated_at FROM intake.orders WHERE order_id = $1`, [id]))[0];
		assert.deepEqual(d, {
			order_id: id,
			order_no: `DET-${s}`,
			shipment_type: 0,
			order_type: 1,
			channel: "shopify",
			order_value: 1299.5,
			cod_amount: 1299.5,
			cod_status: null,
			cod_remittance: null,
			receiver: {
				name: "Asha Verma",
				address_1: "14, 2nd Cross, Indiranagar",
				address_2: "Near metro",
				landmark: null,
				city: "Bengaluru",
				state: "Karnataka",
				pincode: "560038",
				mobile_no: "9876543210",
			},
			product: {
				product_name: "Cotton kurta",
				product_sku: "KRT-M-BLU",
				physical_weight: 0.45,
				declared_order_total: 1299.5,
				cod_amount: 1299.5,
				length: 30,
				width: 20,
				height: 4,
			},
			pickup_address_id: 1,
			rto_address_id: null,
			reverse: null,
			order_date: "2025-01-14T18:30:00.000Z", // 15 January, IST midnight (create reads dates as IST days)
			order_from_source: "web",
			state: "not_shipped",
			status: "new",
			status_name: "New",
			order_status_id: 1,
			bucket: null,
			awb_number: null,
			courier: null,
			logistic_id: null,
			tracking_url: null,
			tracking_page_url: null,
			label_url: null,
			charges: null,
			failure_reason: null,
			failure_code: null,
			created_at: row.created_at.toISOString(),
			updated_at: row.updated_at.toISOString(),
			booked_at: null,
			status_at: row.created_at.toISOString(),
			manifested_at: null,
			picked_up_at: null,
			delivered_at: null,
			rto_at: null,
			closed_at: null,
			released_at: null,
			hidden_at: null,
			edited_at: null,
			label_downloaded_at: null,
		});
		assert.equal(sys.calls.length, callsBefore, "no AWB: nobody else asked");
	});

	it("a delivered order: charges from booking, label download from documents, lifecycle timestamps", async () => {
		const { s, token } = await account();
		const id = await createOrder(sys, s);
		const awb = `DLV${id}`;
		await moveTo(sys, s, id, "booked", awb);
		// the attempt moveTo used: read it back
		const [{ booking_attempt_id }] = await sql(
			`SELECT booking_attempt_id FROM intake.orders WHERE order_id = $1`,
			[id],
		);
		const apply = (seq: number, status: string, status_at: string) =>
			callAs(sys.broker, "intake.applyBookingUpdate", {
				order_id: id,
				sender_id: s,
				attempt_id: Number(booking_attempt_id),
				seq,
				state: "booked",
				status,
				status_at,
			});
		await apply(3, "manifested", "2025-05-01T06:00:00Z");
		await apply(4, "picked_up", "2025-05-01T10:00:00Z");
		await apply(5, "in_transit", "2025-05-02T10:00:00Z");
		await apply(6, "delivered", "2025-05-03T10:00:00Z");
		sys.shipments.set(id, {
			order_id: id,
			attempt_id: Number(booking_attempt_id),
			logistic_id: 1,
			courier_name: "Sandbox Express",
			awb_number: awb,
			state: "booked",
			routing_code: null,
			charges: { freight_charge: 60, cod_charge: 30, shipping_charge_tax: 16.2, total: 106.2 },
			booked_at: "2025-05-01T05:00:00.000Z",
		});
		sys.labels.set(id, {
			order_id: id,
			sender_id: s,
			awb_number: awb,
			logistic_id: 1,
			source: "generated",
			has_courier_file: false,
			label_downloaded_at: "2025-05-01T05:30:00.000Z",
			first_downloaded_at: "2025-05-01T05:10:00.000Z",
			download_count: 2,
			created_at: "2025-05-01T05:10:00.000Z",
		});
		sys.cods.set(awb, {
			awb_number: awb,
			cod_status: "remitted",
			cod_amount: 1499,
			collected_at: "2025-05-03T10:00:00.000Z",
			remittance: { reference: "REM-42", remitted_on: "2025-05-10", amount: 1499 },
		});
		const callsBefore = sys.calls.length;
		const d = await detail(token, id);
		assert.deepEqual(sys.calls.slice(callsBefore).sort(), [
			`billing.codStatus ${s} ${awb}`,
			`booking.getShipment ${s} ${id}`,
			`documents.labelInfo ${s} ${id}`,
		]);
		assert.equal(d.cod_status, "remitted");
		assert.deepEqual(d.cod_remittance, { reference: "REM-42", remitted_on: "2025-05-10", amount: 1499 });
		assert.equal(d.state, "booked");
		assert.equal(d.status, "delivered");
		assert.equal(d.status_name, "Delivered");
		assert.equal(d.order_status_id, 10);
		assert.equal(d.bucket, "delivered");
		assert.equal(d.awb_number, awb);
		assert.equal(d.courier, "Sandbox Express");
		assert.equal(d.logistic_id, 1);
		assert.equal(d.tracking_url, DEFAULT_TRACKING_URL_TEMPLATE.replace("{awb}", awb));
		// still booked once delivered: the signed label link of its AWB
		assert.equal(d.label_url, labelLinkUrl(awb));
		// and the buyer's tracking page, signed with its own key (issue 29)
		assert.equal(d.tracking_page_url, `/track/${signTrackingToken(awb)}`);
		assert.deepEqual(d.charges, {
			freight_charge: 60,
			cod_charge: 30,
			shipping_charge_tax: 16.2,
			total: 106.2,
		});
		assert.equal(d.label_downloaded_at, "2025-05-01T05:30:00.000Z");
		assert.equal(d.status_at, "2025-05-03T10:00:00.000Z");
		assert.equal(d.manifested_at, "2025-05-01T06:00:00.000Z");
		assert.equal(d.picked_up_at, "2025-05-01T10:00:00.000Z");
		assert.equal(d.delivered_at, "2025-05-03T10:00:00.000Z");
		assert.equal(d.closed_at, "2025-05-03T10:00:00.000Z");
		assert.equal(d.rto_at, null);
		assert.ok(d.booked_at);
	});

	it("charges and the label download of another AWB (an earlier booking) are not this shipment's", async () => {
		const { s, token } = await account();
		const id = await createOrder(sys, s);
		await moveTo(sys, s, id, "booked", `NEW${id}`);
		sys.shipments.set(id, {
			order_id: id,
			attempt_id: 1,
			logistic_id: 1,
			courier_name: "Sandbox Express",
			awb_number: `OLD${id}`,
			state: "booked",
			routing_code: null,
			charges: { freight_charge: 1, cod_charge: 1, shipping_charge_tax: 1, total: 3 },
			booked_at: "2025-05-01T05:00:00.000Z",
		});
		sys.labels.set(id, {
			order_id: id,
			sender_id: s,
			awb_number: `OLD${id}`,
			logistic_id: 1,
			source: "generated",
			has_courier_file: false,
			label_downloaded_at: "2025-05-01T05:30:00.000Z",
			first_downloaded_at: "2025-05-01T05:30:00.000Z",
			download_count: 1,
			created_at: "2025-05-01T05:10:00.000Z",
		});
		const d = await detail(token, id);
		assert.equal(d.awb_number, `NEW${id}`);
		assert.equal(d.charges, null);
		assert.equal(d.label_downloaded_at, null);
	});

	it("a return: shipment_type 1, its reverse block, prepaid", async () => {
		const { s, token } = await account();
		const id = await createOrder(sys, s, { ref: `RD-${s}`, reverse: true });
		const d = await detail(token, id);
		assert.equal(d.order_no, `RD-${s}-R`);
		assert.equal(d.shipment_type, 1);
		assert.equal(d.order_type, 0);
		assert.equal(d.product.cod_amount, null);
		assert.deepEqual(d.reverse, {
			forward_source: "tekipost",
			old_fwd_awb_no: "1490841234567",
			reverse_pickup_address_id: null,
			return_address: { name: "Main WH", city: "Pune", pincode: "411001" },
		});
	});

	it("a failed booking shows its reason and code; a hidden order is still readable, with hidden_at", async () => {
		const { s, token } = await account();
		const id = await createOrder(sys, s);
		await moveTo(sys, s, id, "booking_failed");
		await sql(`UPDATE intake.orders SET hidden_at = '2025-06-01T00:00:00Z' WHERE order_id = $1`, [id]);
		const d = await detail(token, id);
		assert.equal(d.state, "failed");
		assert.equal(d.status_name, "Booking failed");
		assert.equal(d.order_status_id, 17);
		assert.equal(d.failure_reason, "Courier refused");
		assert.equal(d.failure_code, "courier_refused");
		assert.equal(d.hidden_at, "2025-06-01T00:00:00.000Z");
	});

	it("404 `order not found` for another account's order and for a missing one", async () => {
		const { s } = await account();
		const id = await createOrder(sys, s);
		const other = await sys.idp.tokenFor(newSender());
		for (const path of [`/v1/orders/${id}`, "/v1/orders/987654321012"]) {
			const r = await get(sys, other, path);
			assert.equal(r.status, 404, path);
			assert.deepEqual(r.body, { error: "order not found", message: "order not found" });
		}
	});

	it("400 validation_failed (field id) when id is not a positive integer", async () => {
		const { token } = await account();
		for (const id of ["0", "-3", "1.5", "abc", "007", "1e3", "99999999999999999999", "%201"]) {
			const r = await get(sys, token, `/v1/orders/${id}`);
			assert.equal(r.status, 400, id);
			assert.deepEqual(r.body, {
				error: "validation_failed",
				message: "id: must be a positive integer",
				field: "id",
				details: ["id: must be a positive integer"],
			});
		}
	});

	it("COD money: pending while billing has not heard of the AWB, null before an AWB and for prepaid (billing not asked)", async () => {
		const { s, token } = await account();
		const cod = await createOrder(sys, s);
		const before = await detail(token, cod);
		assert.equal(before.cod_status, null, "no AWB, no shipment");
		assert.equal(before.cod_remittance, null);
		await moveTo(sys, s, cod, "booked", `PEND${cod}`);
		const booked = await detail(token, cod);
		assert.equal(booked.cod_status, "pending");
		assert.equal(booked.cod_remittance, null);
		const prepaid = await createOrder(sys, s, { cod: false });
		await moveTo(sys, s, prepaid, "booked", `PRE${prepaid}`);
		const callsBefore = sys.calls.length;
		const p = await detail(token, prepaid);
		assert.equal(p.cod_status, null);
		assert.equal(p.cod_remittance, null);
		assert.ok(
			!sys.calls.slice(callsBefore).some((c) => c.startsWith("billing.")),
			"billing not asked for prepaid",
		);
	});

	it("503 service_unavailable when booking, documents or (COD) billing cannot be asked", async () => {
		const { s, token } = await account();
		const id = await createOrder(sys, s);
		await moveTo(sys, s, id, "booked");
		for (const svc of ["booking", "documents", "billing"] as const) {
			sys.down[svc] = true;
			try {
				const r = await get(sys, token, `/v1/orders/${id}`);
				assert.equal(r.status, 503, svc);
				assert.equal(r.body.error, "service_unavailable");
			} finally {
				sys.down[svc] = false;
			}
		}
		assert.equal((await get(sys, token, `/v1/orders/${id}`)).status, 200);
	});

	describe("alias order: literal /v1/orders/<word> paths win over /v1/orders/:id", () => {
		it("the gateway lists every literal GET /v1/orders/<word> alias before GET /v1/orders/:id", () => {
			const keys = Object.keys(API_ALIASES);
			const detailAt = keys.indexOf("GET /v1/orders/:id");
			assert.ok(detailAt >= 0);
			const literal = keys.filter((k) => /^GET \/v1\/orders\/[^:/][^/]*$/.test(k));
			assert.ok(literal.includes("GET /v1/orders/status"));
			assert.ok(literal.includes("GET /v1/orders/unshipped"), "GET /v1/orders/unshipped is aliased");
			for (const k of literal) assert.ok(keys.indexOf(k) < detailAt, `${k} comes before GET /v1/orders/:id`);
		});

		it("GET /v1/orders/status reaches intake.status, not the detail", async () => {
			const { s, token } = await account();
			await createOrder(sys, s, { ref: `ST-${s}` });
			const r = await get(sys, token, `/v1/orders/status?order_no=ST-${s}`);
			assert.equal(r.status, 200, r.text);
			assert.equal(r.body.order_no, `ST-${s}`);
			assert.equal(r.body.state, "not_shipped");
			const missing = await get(sys, token, "/v1/orders/status");
			assert.equal(missing.body.error, "order_no is required");
		});

		it("GET /v1/orders/unshipped reaches the unshipped queue, not the detail", async () => {
			const { s, token } = await account();
			const id = await createOrder(sys, s);
			const r = await get(sys, token, "/v1/orders/unshipped");
			assert.equal(r.status, 200, r.text);
			assert.ok(Array.isArray(r.body.data));
			assert.ok(r.body.data.some((row: { order_id: number }) => row.order_id === id));
			assert.equal(r.body.pagination.mode, "cursor");
		});
	});
});
