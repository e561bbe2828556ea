/**
 * Issue 14: the typical flow through the REAL Delhivery adapter. The seeded
 * sandbox courier "Sandbox Delhivery" (lib/rates/seed.ts) is the Delhivery
 * adapter pointed at the simulator's Delhivery protocol
 * (lib/simulator/delhivery.ts), so warehouse → quote → order → book →
 * status → label runs through the gateway, services split over NATS, and
 * Delhivery's wire: the pickup location registered with
 * `clientwarehouse/create`, the shipment created with `cmu/create.json`
 * (form body `format=json&data=`), the label Delhivery's own packing slip,
 * the scans read with `api/v1/packages/json`.
 */
import { strict as assert } from "node:assert";
import { getSequelize, select } from "../../lib/platform/db";
import { SANDBOX_DELHIVERY } from "../../lib/rates/seed";
import { DELHIVERY_SIM } from "../../lib/simulator/delhivery";
import { newSender } from "../helpers/broker";
import { useCluster } from "../helpers/cluster";
import { client, typicalFlow } from "../helpers/flow";
import { eventually } from "../helpers/poll";

describe("integration: the typical flow through the Delhivery adapter (sandbox Delhivery)", function () {
	this.timeout(90_000);
	const c = useCluster(
		"dlflow",
		[
			["gateway"],
			["pincode", "rates", "warehouses"],
			["intake", "booking", "billing", "simulator"],
			["documents"],
		],
		["pincode", "rates", "warehouses", "intake", "booking", "billing", "documents"],
	);

	it("books with Sandbox Delhivery over Delhivery's protocol: AWB, status, its own packing slip, scans", async () => {
		const token = await c.idp.tokenFor(newSender());
		const r = await typicalFlow(c.base, token, { logistic_id: SANDBOX_DELHIVERY.logistic_id });
		assert.equal(r.courier, SANDBOX_DELHIVERY.logistic_name);
		// Delhivery's waybill series (the simulator's: 14 digits)
		assert.match(r.awb_number, new RegExp(`^${DELHIVERY_SIM.awbPrefix}\\d{${DELHIVERY_SIM.awbLength - 2}}$`));
		const calls = await select<{ endpoint: string; refnum: string; status: number }>(
			getSequelize(),
			"SELECT endpoint, refnum, status FROM simulator.calls WHERE courier_code = $1 ORDER BY id",
			[DELHIVERY_SIM.code],
		);
		const create = calls.filter((x) => x.endpoint === "create" && x.status === 200);
		assert.ok(create.length >= 1, `a cmu/create call: ${JSON.stringify(calls.slice(-10))}`);
		assert.ok(
			calls.some((x) => x.endpoint === "label" && x.refnum === r.awb_number),
			"the label is Delhivery's packing slip, fetched by waybill",
		);
		const api = client(c.base, token);
		const shipment = await eventually(
			async () => {
				const s = await api.get(`/v1/orders/status?order_no=${encodeURIComponent(r.customer_order_no)}`);
				assert.equal(s.status, 200, JSON.stringify(s.body));
				return s.body;
			},
			{ what: "the status", ms: 5_000 },
		);
		assert.equal(shipment.awb_number, r.awb_number);
		assert.equal(shipment.courier, SANDBOX_DELHIVERY.logistic_name);
	});
});
