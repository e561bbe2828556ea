/**
 * Integration (issue 27; docs/decisions/0105-weight-discrepancies.md): a
 * weight discrepancy end to end over real NATS (gateway + documents;
 * catalog, intake + simulator; booking; billing; webhooks, each on its own
 * broker), real PostgreSQL, Redis and the durable channels: an order booked
 * in the sandbox, its courier told to weigh it heavier
 * (`simulator.overweigh`), the courier's weight file (`simulator.weightFile`)
 * reconciled through the ops route — priced by the real rates service — the
 * hold in the wallet, `weight_discrepancy.opened` delivered to the merchant's
 * endpoint, the dispute's images streamed through the gateway to billing on
 * another process, and ops' `won` refunding the hold.
 */
import { strict as assert } from "node:assert";
import sharp from "sharp";
import { Webhook } from "standardwebhooks";
import type { WeightFile } from "../../lib/contracts";
import { newSender } from "../helpers/broker";
import { useCluster } from "../helpers/cluster";
import { useEnv } from "../helpers/env";
import { orderBody, warehouseBody } from "../helpers/fixtures";
import { client } from "../helpers/flow";
import { eventually } from "../helpers/poll";
import { Receiver } from "../unit/webhooks/setup";

const OPS = "ops-token-for-weight-integration-0123456789";

describe("integration: a weight discrepancy over NATS", function () {
	this.timeout(120_000);
	useEnv({ OPS_API_TOKEN: OPS, EVENT_OUTBOX_POLL_MS: "200", WEBHOOK_BACKOFF_MS: "200" });
	const cluster = useCluster(
		"weights",
		[
			["gateway", "documents"],
			["pincode", "rates", "warehouses", "intake", "simulator"],
			["booking"],
			["billing"],
			["webhooks"],
		],
		["pincode", "rates", "warehouses", "intake", "booking", "billing", "simulator", "documents", "webhooks"],
	);
	const rx = new Receiver();
	before(() => rx.start());
	after(() => rx.stop());

	it("overweighed in the sandbox → opened with its hold and webhook → disputed with an image → won: the hold refunded", async () => {
		const sender = newSender();
		const token = await cluster.idp.tokenFor(sender);
		const api = client(cluster.base, token);
		const ops = client(cluster.base, OPS);
		const wh = await api.post("/v1/warehouses", warehouseBody());
		assert.equal(wh.status, 201, JSON.stringify(wh.body));
		const ep = await api.post("/v1/webhooks", {
			url: `${rx.base}/weights`,
			events: ["weight_discrepancy.opened"],
		});
		assert.equal(ep.status, 201, JSON.stringify(ep.body));
		const created = await api.post("/v1/intake/order", orderBody(wh.body.data.id));
		assert.equal(created.status, 201, JSON.stringify(created.body));
		const order_id = created.body.order_id as number;
		const booked = await api.post("/v1/shipping/book/sync", { order_id, logistic_id: 1 });
		assert.equal(booked.status, 200, JSON.stringify(booked.body));
		const awb = booked.body.awb as string;
		// the booking's charge reaches the wallet (booking's outbox → billing)
		const charged = await eventually(
			async () => {
				const w = await api.get("/v1/wallet");
				return w.body.data.length ? (w.body.balance as number) : undefined;
			},
			{ what: "the booking's charge in the wallet", ms: 30_000 },
		);
		assert.ok(charged < 0, String(charged));
		// no scan yet: billing has not heard of the shipment on the status channel; booking's AWB answers for it
		// the courier weighs 0.8 kg declared (30×25×5 cm) as 2.4 kg: beyond tolerance, more slabs
		await cluster.brokers[1].call("simulator.overweigh", { waybill: awb, charged_weight_kg: 2.4 });
		const file = (await cluster.brokers[1].call("simulator.weightFile", {
			awb_numbers: [awb],
		})) as WeightFile;
		assert.equal(file.lines, 1, file.csv);
		assert.match(file.csv, new RegExp(`${awb},2\\.400,30,25,5,`));
		const rep = await ops.post("/v1/ops/weight-reports", { csv: file.csv, logistic_id: 1 });
		assert.equal(rep.status, 200, JSON.stringify(rep.body));
		const report = rep.body;
		assert.equal(report.opened, 1, JSON.stringify(report));
		const extra = report.opened_amount as number;
		assert.ok(extra > 0, JSON.stringify(report));

		const list = await api.get(`/v1/weight-discrepancies?awb_number=${awb}`);
		assert.equal(list.status, 200, JSON.stringify(list.body));
		const d = list.body.data[0];
		assert.equal(d.status, "open");
		assert.equal(d.order_id, order_id);
		assert.equal(d.declared.weight, 0.8);
		assert.equal(d.charged.weight, 2.4);
		assert.equal(d.extra_charge, extra);
		assert.ok(d.charged.chargeable_weight > d.declared.chargeable_weight);
		const held = await api.get("/v1/wallet");
		assert.equal(
			Math.round((held.body.balance as number) * 100),
			Math.round((charged - extra) * 100),
			"held",
		);

		// the merchant's endpoint gets weight_discrepancy.opened, signed
		const got = await eventually(() => rx.on("/weights"), {
			what: "weight_discrepancy.opened",
			ms: 30_000,
			ok: (g) => g.length >= 1,
		});
		const msg = new Webhook(ep.body.secret).verify(got[0].body, {
			"webhook-id": String(got[0].headers["webhook-id"]),
			"webhook-timestamp": String(got[0].headers["webhook-timestamp"]),
			"webhook-signature": String(got[0].headers["webhook-signature"]),
		}) as { type: string; data: Record<string, unknown> };
		assert.equal(msg.type, "weight_discrepancy.opened");
		assert.equal(msg.data.awb_number, awb);
		assert.equal(msg.data.discrepancy_id, d.id);
		assert.equal(msg.data.extra_charge, extra);
		assert.equal(msg.data.order_id, order_id);

		// the dispute: the multipart body streams through the gateway to billing on another broker
		const png = await sharp({ create: { width: 120, height: 90, channels: 3, background: "#2a7" } })
			.png()
			.withExif({ IFD0: { Copyright: "LAT-LONG-SECRET" } })
			.toBuffer();
		const form = new FormData();
		form.append("reason", "Our scale shows 0.8 kg; photo attached.");
		form.append("images", new Blob([png], { type: "image/png" }), "scale.png");
		const r = await fetch(`${cluster.base}/v1/weight-discrepancies/${d.id}/dispute`, {
			method: "POST",
			headers: { authorization: `Bearer ${token}` },
			body: form,
		});
		const disputed = (await r.json()) as Record<string, any>;
		assert.equal(r.status, 200, JSON.stringify(disputed));
		assert.equal(disputed.status, "disputed");
		assert.equal(disputed.images[0].width, 120);
		const img = await fetch(`${cluster.base}${disputed.images[0].url}`, {
			headers: { authorization: `Bearer ${token}` },
		});
		const bytes = Buffer.from(await img.arrayBuffer());
		assert.equal(img.status, 200);
		assert.equal(bytes.includes("LAT-LONG-SECRET"), false, "stored without EXIF");

		const won = await ops.post(`/v1/ops/weight-discrepancies/${d.id}/resolve`, { outcome: "won" });
		assert.equal(won.status, 200, JSON.stringify(won.body));
		assert.equal(won.body.status, "won");
		const after = await api.get("/v1/wallet");
		assert.equal(
			Math.round((after.body.balance as number) * 100),
			Math.round(charged * 100),
			"the hold refunded",
		);
		assert.deepEqual(
			after.body.data.slice(0, 2).map((m: { kind: string; amount: number }) => [m.kind, m.amount]),
			[
				["weight_discrepancy_refund", extra],
				["weight_discrepancy", extra],
			],
		);
	});
});
