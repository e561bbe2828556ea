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
import { client } from "../helpers/flow";
import { eventually } from "../helpers/poll";

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

		const upload = async () => {
			const form = new FormData();
			form.append("sender_address_id", String(wh.body.data.id));
			form.append("import_file", new Blob([csv], { type: "text/csv" }), "orders.csv");
			const res = await fetch(`${cluster.base}/v1/intake/bulk`, {
				method: "POST",
				headers: { authorization: `Bearer ${token}` },
				body: form,
			});
			const body = (await res.json()) as { job_id: number; status: string };
			assert.equal(res.status, 202, JSON.stringify(body));
			assert.equal(body.status, "queued");
			return eventually(
				async () => {
					const j = await api.get(`/v1/intake/jobs/${body.job_id}`);
					return j.body?.status === "completed" || j.body?.status === "failed" ? j.body : null;
				},
				{ what: `job ${body.job_id} finished`, ms: 60_000, every: 200 },
			);
		};

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
