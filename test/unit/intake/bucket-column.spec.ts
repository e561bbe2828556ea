/**
 * The stored `bucket` column of intake.orders (migration 0003, a generated
 * column) agrees with lib/shared/shipment-status.ts `bucketOf` for every lifecycle
 * status (spec §3 buckets): one real row per status, its `bucket` read back.
 */
import assert from "node:assert/strict";
import { getSequelize, select } from "../../../lib/platform/db";
import {
	BUCKETS,
	bucketOf,
	isLifecycleStatus,
	type LifecycleStatus,
	SHIPMENT_STATUSES,
	statusesIn,
} from "../../../lib/shared/shipment-status";
import { newSender } from "../../helpers/broker";
import { useIntake } from "./setup";

/** Every lifecycle status: the intake-only ones and every shipment status. */
const ALL_STATUSES: LifecycleStatus[] = ["new", "booking_queued", "booking_failed", ...SHIPMENT_STATUSES];

describe("intake.orders.bucket (generated column)", () => {
	useIntake(); // the real intake service: its migrations made the table

	it("equals bucketOf(status) for every lifecycle status; an unknown status has no bucket", async () => {
		const s = newSender();
		const statuses = [...ALL_STATUSES, "some_future_status"];
		const rows = await select<{ status: string; bucket: string | null }>(
			getSequelize(),
			`INSERT INTO intake.orders (sender_id, customer_order_no, receiver_name, receiver_address_1,
				receiver_pincode, receiver_mobile_no, product_name, physical_weight, declared_order_total_paise, status)
			SELECT $1, 'BKT-' || st, 'Asha', '1 MG Road', '560001', '9876543210', 'Kurta', 0.5, 10000, st
			FROM unnest($2::text[]) AS st
			RETURNING status, bucket`,
			[s, statuses],
		);
		assert.equal(rows.length, statuses.length);
		for (const r of rows) {
			const want = isLifecycleStatus(r.status) ? bucketOf(r.status) : null;
			assert.equal(r.bucket, want, `status ${r.status}`);
		}
		// and an update of the status moves the bucket with it
		const [moved] = await select<{ bucket: string }>(
			getSequelize(),
			`UPDATE intake.orders SET status = 'rto_initiated' WHERE sender_id = $1 AND status = 'in_transit' RETURNING bucket`,
			[s],
		);
		assert.equal(moved.bucket, "rto");
	});

	it("every bucket but all holds at least one status, and each status at most one bucket", () => {
		for (const b of BUCKETS) {
			if (b === "all") continue;
			assert.ok(statusesIn(b).length > 0, `bucket ${b} is empty`);
		}
		const listed = BUCKETS.filter((b) => b !== "all").flatMap((b) => statusesIn(b));
		assert.equal(new Set(listed).size, listed.length);
		assert.deepEqual(
			ALL_STATUSES.filter((st) => bucketOf(st) === null),
			["new", "booking_queued", "booking_failed"],
		);
	});
});
