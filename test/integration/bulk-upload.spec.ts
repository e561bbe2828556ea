/**
 * Integration: the bulk order upload end to end over real NATS (issue 10; spec
 * §2.3, §4.1): the gateway on one broker, intake (with its BullMQ worker) on
 * another, the rest on a third. A CSV is streamed through the gateway to
 * intake over NATS, stored, parsed by the worker and polled to `completed`;
 * the orders exist exactly once, and the same file uploaded again creates
 * nothing new.
 */
import { strict as assert } from "node:assert";
import { newSender } from "../helpers/broker";
import { useCluster } from "../helpers/cluster";
import { bulkCsv, freshRef, warehouseBody } from "../helpers/fixtures";
import { client, uploadBulkCsv } from "../helpers/flow";

describe("integration: bulk upload streamed to intake over NATS, processed by its worker", function () {
	this.timeout(120_000);
	const cluster = useCluster(
		"it-bulk",
		[["gateway"], ["intake"], ["pincode", "rates", "warehouses"]],
		["intake", "pincode", "warehouses"],
	);

	it("uploads a CSV, polls the job to completed, creates each order once; the same file again creates nothing", async () => {
		const sender = newSender();
		const token = await cluster.idp.tokenFor(sender, "merchant_ops");
		const api = client(cluster.base, token);
		const wh = await api.post("/v1/warehouses", warehouseBody());
		assert.equal(wh.status, 201, JSON.stringify(wh.body));
		const ref = freshRef("BULK");
		const N = 120;
		const csv = bulkCsv(ref, N);

		const upload = () => uploadBulkCsv(cluster.base, token, wh.body.data.id, csv);

		const first = await upload();
		assert.equal(first.status, "completed", JSON.stringify(first));
		assert.equal(first.counts.total, N);
		assert.equal(
			first.counts.created,
			N,
			JSON.stringify({ counts: first.counts, rows: first.rows?.data?.slice(0, 2) }),
		);
		assert.equal(first.counts.failed, 0);
		assert.equal(first.progress, 100);
		const found = await api.get(`/v1/orders?order_no=${ref}-7`);
		assert.equal(found.body.data.length, 1);

		const again = await upload();
		assert.equal(again.status, "completed");
		assert.equal(again.counts.created, 0, "a file uploaded twice creates nothing new");
		assert.equal(again.counts.deduped, N);
	});
});
