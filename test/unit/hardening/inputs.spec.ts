/**
 * Bad input answers the spec's 4xx envelope, never 500 (issue 12, bullets 2
 * and 6): nesting capped at the gateway's body parser and harmless inside
 * the validators (internal callers bypass the gateway), control characters
 * refused on every text field, strict integers, no array read as a string,
 * query and body never merged silently, exact paths, bodies of GET ignored.
 * Real gateway and services over real NATS.
 */
import { strict as assert } from "node:assert";
import type { ServiceBroker } from "moleculer";
import { jsonTooDeep, MAX_JSON_DEPTH } from "../../../lib/gateway/json-limits";
import { as, startBroker } from "../../helpers/broker";
import { callAs } from "../../helpers/call";
import { orderBody, warehouseBody } from "../../helpers/fixtures";
import { assertEnvelope, deepObjectText, nestedArray, send, useWorld } from "./setup";

/** The JSON text of `body` with `"__DEEP__"` replaced by `deep` (text: the deep part is never a JS value). */
function withDeep(body: Record<string, unknown>, deep: string): string {
	return JSON.stringify(body).replace('"__DEEP__"', deep);
}

const DEEP_ARRAY = `${"[".repeat(10_000)}1${"]".repeat(10_000)}`;

describe("hardening: the body parser's nesting cap (unit)", () => {
	it("counts brackets outside strings only, and stops at the first level over the cap", () => {
		assert.equal(jsonTooDeep(deepObjectText(MAX_JSON_DEPTH)), false);
		assert.equal(jsonTooDeep(deepObjectText(MAX_JSON_DEPTH + 1)), true);
		assert.equal(jsonTooDeep(`{"a":"${"[".repeat(100)}"}`), false);
		assert.equal(jsonTooDeep(`{"a":"\\"${"{".repeat(100)}"}`), false);
		assert.equal(jsonTooDeep(Buffer.from(DEEP_ARRAY)), true);
		assert.equal(jsonTooDeep(`[${"[]".repeat(10_000)}]`), false);
	});
});

describe("hardening: bad input through the gateway and the services", function () {
	this.timeout(60_000);
	const w = useWorld("hardening-inputs");

	/** The warehouse `id` as GET /v1/warehouses lists it. */
	async function stored(id: number): Promise<Record<string, unknown>> {
		const list = await send(w, "GET", "/v1/warehouses");
		assert.equal(list.status, 200, list.text);
		const found = (list.body.data as Array<Record<string, unknown>>).find((x) => x.id === id);
		assert.ok(found, `warehouse ${id} not listed`);
		return found;
	}

	describe("deep nesting (10,000 levels) is 400 body_too_deep, never 500", () => {
		const cases: Array<[string, string, () => Record<string, unknown>]> = [
			["POST", "/v1/intake/order", () => ({ ...orderBody(w.warehouse_id), ignored: "__DEEP__" })],
			[
				"POST",
				"/v1/intake/reverse",
				() => ({ ...orderBody(w.warehouse_id), receiver: { name: "__DEEP__" } }),
			],
			["POST", "/v1/warehouses", () => warehouseBody({ city: "__DEEP__" })],
			["PATCH", "/v1/warehouses/:id", () => ({ ignored: "__DEEP__" })],
			["POST", "/v1/shipping/book", () => ({ order_id: "__DEEP__" })],
		];
		for (const [method, path, body] of cases) {
			it(`${method} ${path}`, async () => {
				const p = path.replace(":id", String(w.warehouse_id));
				for (const deep of [DEEP_ARRAY, deepObjectText(10_000)]) {
					const a = await send(w, method, p, withDeep(body(), deep));
					assert.equal(a.status, 400, a.text);
					assert.equal(a.body.error, "body_too_deep");
					assertEnvelope(a, p);
				}
			});
		}

		it("under /v1/documents/ in the §7 {message} shape", async () => {
			const a = await send(w, "POST", "/v1/documents/label", withDeep({ order_ids: "__DEEP__" }, DEEP_ARRAY));
			assert.equal(a.status, 400, a.text);
			assert.deepEqual(Object.keys(a.body), ["message"]);
		});

		it("a body at the cap still reaches the validator (400 validation_failed, not body_too_deep)", async () => {
			const a = await send(
				w,
				"POST",
				"/v1/warehouses",
				withDeep(warehouseBody({ city: "__DEEP__" }), JSON.stringify(nestedArray(MAX_JSON_DEPTH - 1))),
			);
			assert.equal(a.status, 400, a.text);
			assert.equal(a.body.error, "validation_failed");
			assert.deepEqual(a.body.details, ["city: must be a string"]);
		});
	});

	describe("the validators are safe on their own (internal callers bypass the gateway)", () => {
		// in-process brokers (no transporter): nothing serialises the params, which would recurse first
		let local: ServiceBroker | undefined;
		before(async () => {
			local = await startBroker(["intake", "warehouses", "pincode"]);
		});
		after(async () => {
			await local?.stop();
		});

		it("intake.createOrder with a 10,000-level value in an ignored key and in a text field", async () => {
			const body: Record<string, unknown> = { ...orderBody(w.warehouse_id), ignored: nestedArray(10_000) };
			(body.receiver as Record<string, unknown>).name = nestedArray(10_000);
			const err = await callAs(local!, "intake.createOrder", body, as(w.sender)).then(
				() => assert.fail("accepted"),
				(e) => e,
			);
			assert.equal(err.code, 400, err.message);
			assert.deepEqual(err.data.body.details, ["receiver.name: must be a string"]);
		});

		it("warehouses.create with a 10,000-level array in a code field", async () => {
			const err = await callAs(
				local!,
				"warehouses.create",
				warehouseBody({ pincode: nestedArray(10_000) }),
				as(w.sender),
			).then(
				() => assert.fail("accepted"),
				(e) => e,
			);
			assert.equal(err.code, 400, err.message);
			assert.deepEqual(err.data.body.details, ["pincode: must be a string"]);
		});
	});

	describe("control characters are refused on every warehouse text field, as on orders", () => {
		for (const [field, value] of [
			["warehouse_name", "Main\u0000Warehouse"],
			["contact_person_name", "Asha\u0007Verma"],
			["address_line_1", "12 Connaught\u001bPlace, Block A"],
			["address_line_2", "Near\u007fGate 2"],
			["city", "New\u0085Delhi"],
			["state", "Del\nhi"],
			["contact_email", "ops\u0000@example.com"],
		] as const) {
			it(`${field} (${JSON.stringify(value)})`, async () => {
				const created = await send(w, "POST", "/v1/warehouses", warehouseBody({ [field]: value }));
				assert.equal(created.status, 400, created.text);
				assert.deepEqual(created.body.details, [`${field}: must not contain control characters`]);
				const patched = await send(w, "PATCH", `/v1/warehouses/${w.warehouse_id}`, { [field]: value });
				assert.equal(patched.status, 400, patched.text);
				assert.deepEqual(patched.body.details, [`${field}: must not contain control characters`]);
			});
		}

		it("return-leg fields too, and an order's receiver keeps refusing them", async () => {
			const a = await send(
				w,
				"POST",
				"/v1/warehouses",
				warehouseBody({
					is_return_same: false,
					return_warehouse_name: "Delhi Returns",
					return_contact_person_name: "Ravi\u0001Kumar",
					return_contact_no: "9876543210",
					return_address_line_1: "45 MG Road, Ashok Nagar",
					return_city: "Bengaluru",
					return_state: "Karnataka",
					return_pincode: "560001",
				}),
			);
			assert.equal(a.status, 400, a.text);
			assert.deepEqual(a.body.details, ["return_contact_person_name: must not contain control characters"]);
			const body = orderBody(w.warehouse_id);
			(body.receiver as Record<string, unknown>).city = "Benga\u0000luru";
			const o = await send(w, "POST", "/v1/intake/order", body);
			assert.equal(o.status, 400, o.text);
			assert.deepEqual(o.body.details, ["receiver.city: must not contain control characters"]);
		});

		it("surrounding whitespace is still trimmed, not refused", async () => {
			const a = await send(w, "POST", "/v1/warehouses", warehouseBody({ city: "\tNew Delhi \n" }));
			assert.equal(a.status, 201, a.text);
			assert.equal((await stored(a.body.data.id)).city, "New Delhi");
		});
	});

	describe("strict integers and no array read as a string", () => {
		for (const weight of ["0x10", "1e1", "+1", "1_0", " 0x10 ", "Infinity"]) {
			it(`GET /v1/shipping/serviceable physical_weight=${JSON.stringify(weight)} is 400`, async () => {
				const q = `from_pin=110001&to_pin=560001&physical_weight=${encodeURIComponent(weight)}`;
				const a = await send(w, "GET", `/v1/shipping/serviceable?${q}`);
				assert.equal(a.status, 400, a.text);
				assert.deepEqual(a.body.details, ["physical_weight: must be a number."]);
			});
		}

		it("a plain decimal weight is still read (16 kg means 16)", async () => {
			const a = await send(
				w,
				"GET",
				"/v1/shipping/serviceable?from_pin=110001&to_pin=560001&physical_weight=1.5",
			);
			assert.equal(a.status, 200, a.text);
		});

		for (const order_id of ["0x10", "1e3", "+16", "16.0", [16], true]) {
			it(`POST /v1/shipping/book order_id ${JSON.stringify(order_id)} is 400`, async () => {
				const a = await send(w, "POST", "/v1/shipping/book", { order_id });
				assert.equal(a.status, 400, a.text);
				assertEnvelope(a, "/v1/shipping/book");
			});
		}

		for (const [field, value] of [
			["order.pickup_address_id", "0x10"],
			["order.pickup_address_id", "1e3"],
			["product.physical_weight", "0x10"],
			["product.physical_weight", "1e1"],
			["product.physical_weight", "+1"],
			["receiver.pincode", [560001]],
			["receiver.mobile_no", ["9123456780"]],
		] as const) {
			it(`POST /v1/intake/order ${field} ${JSON.stringify(value)} is 400`, async () => {
				const body = orderBody(w.warehouse_id);
				const [block, key] = field.split(".");
				(body[block] as Record<string, unknown>)[key] = value;
				const a = await send(w, "POST", "/v1/intake/order", body);
				assert.equal(a.status, 400, a.text);
				assert.equal(a.body.details.length, 1, a.text);
				assert.ok(a.body.details[0].startsWith(`${field}: `), a.text);
			});
		}

		for (const [field, value] of [
			["pincode", [110001]],
			["contact_no", ["9876543210"]],
			["city", ["New Delhi"]],
			["is_default", [true]],
		] as const) {
			it(`POST /v1/warehouses ${field} ${JSON.stringify(value)} is 400 (not coerced)`, async () => {
				const a = await send(w, "POST", "/v1/warehouses", warehouseBody({ [field]: value }));
				assert.equal(a.status, 400, a.text);
				assert.equal(a.body.details.length, 1, a.text);
				assert.ok(a.body.details[0].startsWith(`${field}: must be a `), a.text);
			});
		}

		it("a JSON number is still read as a warehouse's digits", async () => {
			const a = await send(
				w,
				"POST",
				"/v1/warehouses",
				warehouseBody({ pincode: 110001, contact_no: 9876543210 }),
			);
			assert.equal(a.status, 201, a.text);
			const wh = await stored(a.body.data.id);
			assert.equal(wh.pincode, "110001");
			assert.equal(wh.contact_no, "9876543210");
		});
	});

	describe("query and body are never merged silently", () => {
		it("a key in both is 400 ambiguous_parameter (the query no longer wins)", async () => {
			const a = await send(w, "POST", `/v1/shipping/book?order_id=${w.order_id}`, { order_id: 987_654_321 });
			assert.equal(a.status, 400, a.text);
			assert.equal(a.body.error, "ambiguous_parameter");
			assert.match(a.body.message, /order_id/);
		});

		it("on a warehouse patch and an order create too; distinct keys still pass", async () => {
			const p = await send(w, "PATCH", `/v1/warehouses/${w.warehouse_id}?city=Pune`, { city: "Mumbai" });
			assert.equal(p.status, 400, p.text);
			assert.equal(p.body.error, "ambiguous_parameter");
			const body = orderBody(w.warehouse_id);
			const c = await send(w, "POST", `/v1/intake/order?customer_order_no=X1`, body);
			assert.equal(c.body.error, "ambiguous_parameter", c.text);
			const ok = await send(w, "PATCH", `/v1/warehouses/${w.warehouse_id}?unrelated=1`, {
				city: "New Delhi",
			});
			assert.equal(ok.status, 200, ok.text);
		});

		it("the body of a GET is never read", async () => {
			// fetch refuses a GET body: sent with node:http
			const raw = await rawRequest(
				w,
				"GET",
				"/v1/shipping/serviceable?from_pin=110001&to_pin=560001",
				JSON.stringify({ physical_weight: "1" }),
			);
			assert.equal(raw.status, 400, raw.body);
			assert.equal(JSON.parse(raw.body).error, "from_pin, to_pin and physical_weight are required");
		});
	});

	describe("paths match exactly", () => {
		for (const path of ["/V1/orders", "/v1/Orders", "/v1/orders/", "/v1/warehouses/", "/v1/orders/status/"]) {
			it(`GET ${path} is 404 not_found`, async () => {
				const a = await send(w, "GET", path);
				assert.equal(a.status, 404, a.text);
				assert.deepEqual(a.body, { error: "not_found", message: "Route not found" });
			});
		}

		it("POST with a trailing slash is 404 too, and documents paths answer {message}", async () => {
			const a = await send(w, "POST", "/v1/shipping/book/", { order_id: w.order_id });
			assert.equal(a.status, 404, a.text);
			assert.equal(a.body.error, "not_found");
			const d = await send(w, "GET", `/v1/documents/label/${w.order_id}/`);
			assert.equal(d.status, 404, d.text);
			assert.deepEqual(d.body, { message: "Route not found" });
		});

		it("the exact paths still answer", async () => {
			assert.equal((await send(w, "GET", "/v1/orders")).status, 200);
			assert.equal((await send(w, "GET", "/health")).status, 200);
		});
	});
});

/** One HTTP/1.1 request with node:http (fetch refuses a GET body). */
async function rawRequest(
	w: { base: string; token: string },
	method: string,
	path: string,
	body: string,
): Promise<{ status: number; body: string }> {
	const { request } = await import("node:http");
	return new Promise((resolve, reject) => {
		const req = request(
			w.base + path,
			{
				method,
				headers: {
					authorization: `Bearer ${w.token}`,
					"content-type": "application/json",
					"content-length": Buffer.byteLength(body),
				},
			},
			(res) => {
				const chunks: Buffer[] = [];
				res.on("data", (c: Buffer) => chunks.push(c));
				res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
			},
		);
		req.on("error", reject);
		req.end(body);
	});
}
