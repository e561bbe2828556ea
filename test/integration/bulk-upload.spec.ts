/**
 * Integration: the bulk order upload end to end over real NATS (issue 10; spec
 * §2.3, §4.1): the gateway on one broker, intake (with its BullMQ worker) on
 * another, the rest on a third. A CSV is streamed through the gateway to
 * intake over NATS, stored, parsed by the worker and polled to `completed`;
 * the orders exist exactly once, and the same file uploaded again creates
 * nothing new.
 */
import { strict as assert } from "node:assert";
import { parse as parseCsv } from "csv-parse/sync";
import { stringify } from "csv-stringify/sync";
import { TEMPLATE_COLUMNS } from "../../lib/intake/bulk/columns";
import { useCluster } from "../helpers/cluster";
import { bulkCsv, freshRef } from "../helpers/fixtures";
import { merchantWithWarehouse, uploadBulkCsv } from "../helpers/flow";

describe("integration: bulk upload streamed to intake over NATS, processed by its worker", function () {
	this.timeout(120_000);
	const cluster = useCluster(
		"it-bulk",
		[["gateway"], ["intake"], ["pincode", "rates", "warehouses"]],
		["intake", "pincode", "warehouses"],
	);

	it("uploads a CSV, polls the job to completed, creates each order once; the same file again creates nothing", async () => {
		const { token, api, warehouse_id } = await merchantWithWarehouse(cluster);
		const ref = freshRef("BULK");
		const N = 120;
		const csv = bulkCsv(ref, N);

		const upload = () => uploadBulkCsv(cluster.base, token, warehouse_id, csv);

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

	it("rows.csv streams a job's failed and review rows over NATS; corrected and uploaded again as it is, the fixed rows are created", async () => {
		const { token, api, warehouse_id } = await merchantWithWarehouse(cluster);
		const ref = freshRef("FIX");
		// 2,500 rows with a bad pincode (three export pages), one with a formula-looking name and a bad weight,
		// one COD above its order value (review), two good rows
		const BAD = 2500;
		const lines = bulkCsv(ref, BAD + 4)
			.trimEnd()
			.split("\n");
		const at = (i: number) => lines[i + 1].split(",");
		const cols = TEMPLATE_COLUMNS as readonly string[];
		// receiver_address_1 is one quoted cell holding a comma: the split gives it two pieces
		const col = (name: string) =>
			cols.indexOf(name) + (cols.indexOf(name) > cols.indexOf("receiver_address_1") ? 1 : 0);
		const rows = lines.slice(1).map((_, i) => {
			const r = at(i);
			if (i < BAD) r[col("receiver_pincode")] = "12";
			if (i === BAD) {
				r[col("receiver_name")] = "=2+3";
				r[col("physical_weight")] = "heavy";
			}
			if (i === BAD + 1) {
				r[col("order_type")] = "1";
				r[col("cod_amount")] = "900";
			}
			return r.join(",");
		});
		const first = await uploadBulkCsv(cluster.base, token, warehouse_id, [lines[0], ...rows].join("\n"));
		assert.equal(first.status, "completed", JSON.stringify(first));
		assert.deepEqual(
			[first.counts.created, first.counts.failed, first.counts.in_review],
			[2, BAD + 1, 1],
			JSON.stringify(first.counts),
		);

		const res = await fetch(`${cluster.base}/v1/intake/jobs/${first.job_id}/rows.csv`, {
			headers: { authorization: `Bearer ${token}` },
		});
		assert.equal(res.status, 200);
		assert.equal(res.headers.get("content-type"), "text/csv; charset=utf-8");
		const records = parseCsv(Buffer.from(await res.arrayBuffer()), { bom: true }) as string[][];
		const head = records[0];
		const get = (rec: string[], name: string) => rec[head.indexOf(name)];
		assert.equal(records.length, 1 + BAD + 2, "every failed and review row, once");
		assert.deepEqual(
			records.slice(1).map((x) => Number(get(x, "row_no"))),
			Array.from({ length: BAD + 2 }, (_, i) => i + 1),
		);
		const formula = records[BAD + 1];
		assert.equal(get(formula, "receiver_name"), "'=2+3", "neutralised");
		assert.match(get(formula, "errors"), /^physical_weight: /);
		assert.equal(get(records[BAD + 2], "outcome"), "review");
		assert.equal(get(records[1], "receiver_address_1"), "45 MG Road, Ashok Nagar");

		// the merchant corrects the failed rows in the file and uploads it as it is (report columns, quotes and all)
		const fixed = records.map((rec, i) => {
			if (i === 0 || get(rec, "outcome") !== "failed") return rec;
			const out = [...rec];
			out[head.indexOf("receiver_pincode")] = "560001";
			if (i === BAD + 1) out[head.indexOf("physical_weight")] = "0.5";
			return out;
		});
		const again = await uploadBulkCsv(
			cluster.base,
			token,
			warehouse_id,
			stringify(fixed, { record_delimiter: "windows" }),
		);
		assert.equal(again.status, "completed", JSON.stringify(again));
		assert.deepEqual(
			[again.counts.created, again.counts.failed, again.counts.in_review],
			[BAD + 1, 0, 1],
			JSON.stringify({ counts: again.counts, rows: again.rows?.data?.slice(0, 3) }),
		);
		const named = await api.get(`/v1/orders?order_no=${ref}-${BAD}`);
		assert.equal(named.body.data.length, 1);
		const detail = await api.get(`/v1/orders/${named.body.data[0].order_id}`);
		assert.equal(detail.status, 200, JSON.stringify(detail.body));
		assert.equal(
			JSON.stringify(detail.body).includes('"=2+3"'),
			true,
			"the name is stored as uploaded, as text",
		);
	});
});
