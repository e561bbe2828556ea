/**
 * Test plumbing against the sandbox courier simulator (services/simulator.service.ts,
 * `SANDBOX=1`) over its HTTP API: a broker running it on a free port, and a
 * client that registers a pickup location, books one shipment and cancels one
 * through the Delhivery-like wire format, with the sandbox token. A courier is
 * named by its path prefix under the simulator's root: `/delhivery` (Delhivery's
 * own protocol, courier `sbx-delhivery`) or `/couriers/<code>` (e.g.
 * `/couriers/sbx-express`); `""` when the client's root already names one.
 */
import assert from "node:assert/strict";
import type { ServiceBroker } from "moleculer";
import { startBroker } from "./broker";
import { freePort } from "./net";

/** Declared dimensions of a create payload, in centimetres, as the adapters send them. */
export type SandboxDims = { shipment_length: number; shipment_width: number; shipment_height: number };

/** One shipment for {@link SandboxCourierClient.book}; the consignee, return address and item are fixed. */
export interface SandboxShipment {
	/** pickup location name, registered first with {@link SandboxCourierClient.registerWarehouse} */
	warehouse: string;
	/** the courier's order reference (`order`), unique across runs */
	order: string;
	/** the merchant's order number (`client_order_no`) */
	client_order_no: string;
	payment_mode: "COD" | "Prepaid";
	/** amount to collect on delivery, in rupees (0 when prepaid) */
	cod_amount: number;
	/** declared weight, in grams */
	weight: number;
	/** declared dimensions (cm); none sent when absent */
	dims?: SandboxDims;
}

/** Client of the simulator's HTTP API at one root; see {@link sandboxCourierClient}. */
export interface SandboxCourierClient {
	/**
	 * POSTs `body` (JSON or a form, per the content `type`) to `path` under the
	 * root with `Authorization: Token sandbox-token`; asserts a status below 300
	 * and answers the parsed JSON body.
	 */
	post(path: string, body: string, type: string): Promise<unknown>;
	/**
	 * Registers pickup location `name` at the courier under `prefix`
	 * (`POST <prefix>/api/backend/clientwarehouse/create/`): Acme Traders
	 * Peenya, Bengaluru 560058, returns to the same park.
	 */
	registerWarehouse(prefix: string, name: string): Promise<void>;
	/**
	 * Books `shipment` at the courier under `prefix` (`POST <prefix>/api/cmu/create.json`,
	 * form `format=json&data=…`): consignee Meera Iyer, Mumbai 400050, one cotton kurta
	 * worth ₹1499 (`total_amount`, rupees), weight in grams. Asserts `success` and
	 * answers the package's waybill.
	 */
	book(prefix: string, shipment: SandboxShipment): Promise<string>;
	/**
	 * Cancels `waybill` at the courier under `prefix` (`POST <prefix>/api/p/edit`,
	 * `cancellation: "true"`); answers the courier's answer (its `status` unchecked).
	 */
	cancel(prefix: string, waybill: string): Promise<{ status: boolean }>;
}

/**
 * A client of the sandbox courier simulator listening at `root`
 * (e.g. `http://127.0.0.1:<port>`, or that with `/delhivery` to name the
 * courier once and pass `""` as every prefix).
 */
export function sandboxCourierClient(root: string): SandboxCourierClient {
	async function post(path: string, body: string, type: string): Promise<unknown> {
		const res = await fetch(`${root}${path}`, {
			method: "POST",
			headers: { authorization: "Token sandbox-token", "content-type": type, accept: "application/json" },
			body,
		});
		const text = await res.text();
		assert.ok(res.status < 300, `${path} answered ${res.status}: ${text.slice(0, 300)}`);
		return JSON.parse(text);
	}

	async function registerWarehouse(prefix: string, name: string): Promise<void> {
		await post(
			`${prefix}/api/backend/clientwarehouse/create/`,
			JSON.stringify({
				name,
				registered_name: "Acme Traders Peenya",
				phone: "9000000001",
				address: "Plot 7, Peenya Industrial Area",
				city: "Bengaluru",
				state: "Karnataka",
				pin: "560058",
				country: "India",
				return_address: "Plot 9, Peenya Industrial Area",
				return_city: "Bengaluru",
				return_state: "Karnataka",
				return_pin: "560058",
				return_country: "India",
			}),
			"application/json",
		);
	}

	async function book(prefix: string, s: SandboxShipment): Promise<string> {
		const data = {
			shipments: [
				{
					name: "Meera Iyer",
					add: "Flat 4B, Sea View, Bandra West, Opp. Bus Depot",
					city: "Mumbai",
					state: "Maharashtra",
					pin: "400050",
					country: "India",
					phone: "9123456789",
					order: s.order,
					client_order_no: s.client_order_no,
					payment_mode: s.payment_mode,
					cod_amount: s.cod_amount,
					total_amount: 1499,
					weight: s.weight,
					...s.dims,
					products_desc: "Cotton kurta",
					seller_name: "Ravi Kumar",
					return_name: "Ravi Kumar",
					return_add: "Plot 9, Peenya Industrial Area",
					return_city: "Bengaluru",
					return_state: "Karnataka",
					return_pin: "560058",
					return_phone: "9000000002",
					return_country: "India",
				},
			],
			pickup_location: { name: s.warehouse },
		};
		const form = new URLSearchParams({ format: "json", data: JSON.stringify(data) }).toString();
		const out = (await post(`${prefix}/api/cmu/create.json`, form, "application/x-www-form-urlencoded")) as {
			success: boolean;
			packages: { waybill: string }[];
		};
		assert.equal(out.success, true, JSON.stringify(out));
		return out.packages[0].waybill;
	}

	async function cancel(prefix: string, waybill: string): Promise<{ status: boolean }> {
		return (await post(
			`${prefix}/api/p/edit`,
			JSON.stringify({ waybill, cancellation: "true" }),
			"application/json",
		)) as { status: boolean };
	}

	return { post, registerWarehouse, book, cancel };
}

/**
 * Starts a broker running the simulator with `SANDBOX=1` on a free port
 * (`SANDBOX_COURIER_URL` unset, AWBs issued after 5 ms); answers the broker and
 * the simulator's root URL (`http://127.0.0.1:<port>`). Stop it with
 * {@link stopSandboxSimulator}.
 */
export async function startSandboxSimulator(): Promise<{ broker: ServiceBroker; root: string }> {
	process.env.SANDBOX = "1";
	const port = await freePort();
	process.env.SANDBOX_COURIER_PORT = String(port);
	delete process.env.SANDBOX_COURIER_URL;
	process.env.SANDBOX_COURIER_DELAY_MS = "5";
	const broker = await startBroker(["simulator"]);
	return { broker, root: `http://127.0.0.1:${port}` };
}

/** Stops `broker` (when it started) and unsets the delay {@link startSandboxSimulator} set. */
export async function stopSandboxSimulator(broker: ServiceBroker | undefined): Promise<void> {
	await broker?.stop();
	delete process.env.SANDBOX_COURIER_DELAY_MS;
}
