/**
 * Integration (issue 27; docs/decisions/0102-cod-remittance.md): a COD
 * order's cash followed end to end over real NATS (gateway + documents,
 * catalog, intake + simulator, booking and billing each on its own broker), real PostgreSQL,
 * Redis and the durable status channel: booked → `pending`, delivered in the
 * sandbox → `collected`, the sandbox courier's remittance file
 * (`simulator.remittanceFile`) reconciled by billing → `remitted` with the
 * courier's reference, all read on `GET /v1/orders/{id}`; the same file again
 * changes nothing, and a prepaid order carries no COD status.
 */
import { strict as assert } from "node:assert";
import type { RemittanceFile, RemittanceReport } from "../../lib/contracts";
import { newSender } from "../helpers/broker";
import { useCluster } from "../helpers/cluster";
import { orderBody, warehouseBody } from "../helpers/fixtures";
import { client } from "../helpers/flow";
import { eventually } from "../helpers/poll";

describe("integration: COD money over NATS", function () {
	this.timeout(90_000);
	const cluster = useCluster(
		"cod",
		[
			["gateway", "documents"],
			["pincode", "rates", "warehouses"],
			["intake", "simulator"],
			["booking"],
			["billing"],
		],
		["pincode", "rates", "warehouses", "intake", "booking", "billing", "simulator", "documents"],
	);

	it("booked → pending, delivered → collected, the courier's remittance → remitted, on the order", async () => {
		const api = client(cluster.base, await cluster.idp.tokenFor(newSender()));
		const wh = await api.post("/v1/warehouses", warehouseBody());
		assert.equal(wh.status, 201, JSON.stringify(wh.body));
		const body = orderBody(wh.body.data.id);
		const created = await api.post("/v1/intake/order", body);
		assert.equal(created.status, 201, JSON.stringify(created.body));
		const id = created.body.order_id as number;
		assert.equal((await api.get(`/v1/orders/${id}`)).body.cod_status, null, "no AWB yet");
		const booked = await api.post("/v1/shipping/book", { order_id: id });
		assert.equal(booked.status, 202, JSON.stringify(booked.body));
		const detail = (ok: (d: Record<string, any>) => boolean, what: string) =>
			eventually(
				async () => {
					const r = await api.get(`/v1/orders/${id}`);
					assert.equal(r.status, 200, JSON.stringify(r.body));
					return r.body;
				},
				{ what, ok, ms: 30_000, every: 100 },
			);
		const b = await detail((d) => d.state === "booked" && d.cod_status === "pending", "booked, COD pending");
		const awb = b.awb_number as string;

		const ev = await api.post(`/v1/sandbox/orders/${id}/events`, { event: "delivered" });
		assert.equal(ev.status, 200, JSON.stringify(ev.body));
		await detail((d) => d.cod_status === "collected", "delivered, COD collected");

		const file = (await cluster.brokers[0].call("simulator.remittanceFile", {
			awb_numbers: [awb],
			remittance_date: "2026-11-20",
		})) as RemittanceFile;
		assert.equal(file.lines, 1, file.csv);
		const report = (await cluster.brokers[0].call("billing.reconcileRemittance", {
			csv: file.csv,
		})) as RemittanceReport;
		assert.equal(report.matched, 1, JSON.stringify(report));
		assert.equal(report.exceptions, 0, JSON.stringify(report));
		assert.equal(report.matched_amount, 1499, "the fixture's COD amount");
		const d = await detail((x) => x.cod_status === "remitted", "remitted");
		assert.deepEqual(d.cod_remittance, {
			reference: file.csv.split("\n")[1].split(",")[2],
			remitted_on: "2026-11-20",
			amount: 1499,
		});
		// the orders list's filter: billing's outbox delivered the status to intake
		await eventually(async () => (await api.get("/v1/orders?cod_status=remitted")).body, {
			what: "the order listed under cod_status=remitted",
			ms: 30_000,
			ok: (page) => page.data?.some((r: { order_id: number }) => r.order_id === id),
		});
		const collectedList = await api.get("/v1/orders?cod_status=collected");
		assert.ok(
			!collectedList.body.data.some((r: { order_id: number }) => r.order_id === id),
			"no longer collected",
		);
		const again = (await cluster.brokers[0].call("billing.reconcileRemittance", {
			csv: file.csv,
		})) as RemittanceReport;
		assert.deepEqual(again, { ...report, duplicate_file: true });
	});

	it("a prepaid order carries no COD status, before and after delivery", async () => {
		const api = client(cluster.base, await cluster.idp.tokenFor(newSender()));
		const wh = await api.post("/v1/warehouses", warehouseBody());
		const body = orderBody(wh.body.data.id) as Record<string, any>;
		body.order.order_type = 0;
		body.product.cod_amount = undefined;
		const created = await api.post("/v1/intake/order", body);
		assert.equal(created.status, 201, JSON.stringify(created.body));
		const id = created.body.order_id as number;
		assert.equal((await api.post("/v1/shipping/book", { order_id: id })).status, 202);
		await eventually(
			async () => ((await api.get(`/v1/orders/${id}`)).body.state === "booked" ? true : undefined),
			{
				what: "booked",
				ms: 30_000,
			},
		);
		assert.equal((await api.post(`/v1/sandbox/orders/${id}/events`, { event: "delivered" })).status, 200);
		const d = await eventually(
			async () => {
				const r = await api.get(`/v1/orders/${id}`);
				return r.body.status === "delivered" ? r.body : undefined;
			},
			{ what: "delivered", ms: 30_000 },
		);
		assert.equal(d.cod_status, null);
		assert.equal(d.cod_remittance, null);
	});
});
