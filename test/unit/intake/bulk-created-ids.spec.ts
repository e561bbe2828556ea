/**
 * A bulk job's `created_order_ids` (lib/intake/bulk/jobs-store.ts
 * createdOrderIds; GET /v1/intake/jobs/{id}, issue 10): the orders of its
 * `created` and `approved` rows merged in row order, at most `limit`;
 * deduped, failed, review and rejected rows never appear.
 */
import assert from "node:assert/strict";
import { createdOrderIds, insertBulkJob } from "../../../lib/intake/bulk/jobs-store";
import { exec, getSequelize } from "../../../lib/platform/db";
import { newSender } from "../../helpers/broker";
import { useIntake, warehouseOf } from "./setup";

describe("intake: a bulk job's created order ids", () => {
	useIntake();

	it("merges created and approved rows in row order, stops at the limit, leaves the other outcomes out", async () => {
		const db = getSequelize();
		const sender = newSender();
		const job_id = await insertBulkJob(db, {
			sender_id: sender,
			file_name: "orders.csv",
			content_type: "text/csv",
			format: "csv",
			bytes: Buffer.from("customer_order_no\n"),
			sender_address_id: warehouseOf(sender),
		});
		// row → outcome, order id (ids made up: bulk_rows keeps the number only)
		const rows: Array<[number, string, number | null]> = [
			[1, "created", 9001],
			[2, "approved", 9002],
			[3, "deduped", 9003],
			[4, "created", 9004],
			[5, "failed", null],
			[6, "approved", 9006],
			[7, "rejected", null],
			[8, "review", null],
			[9, "created", 9009],
		];
		for (const [row_no, outcome, order_id] of rows)
			await exec(
				db,
				"INSERT INTO intake.bulk_rows (job_id, row_no, outcome, order_id) VALUES ($1, $2, $3, $4)",
				[job_id, row_no, outcome, order_id],
			);
		assert.deepEqual(await createdOrderIds(db, job_id, 1000), [9001, 9002, 9004, 9006, 9009]);
		assert.deepEqual(await createdOrderIds(db, job_id, 3), [9001, 9002, 9004]);
		assert.deepEqual(await createdOrderIds(db, job_id + 1_000_000, 10), [], "another job: nothing");
	});
});
