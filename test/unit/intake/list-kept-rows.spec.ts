/**
 * A list page's rows are kept under their row version (lib/intake/list.ts `listPage`, docs/decisions/0126-kept-list
 * rows): the page's JSON is exactly `JSON.stringify` of the page, a row read again unchanged is the same kept
 * answer, a new row version or a new environment (tracking template, label link secret) makes it again, and the
 * process keeps at most KEPT_LIST_ROWS. The rows over HTTP against PostgreSQL: ./list.spec.ts.
 */
import assert from "node:assert/strict";
import {
	KEPT_LIST_ROWS,
	keptListRowCount,
	type ListRowDb,
	listPage,
	type OrderListQuery,
	parseOrderListQuery,
} from "../../../lib/intake/list";
import { answerJson } from "../../../lib/platform/shared-answers";
import { setEnv } from "../../helpers/env";

/** A first-page query of `limit` rows, no filters. */
const query = (limit = 50): OrderListQuery => parseOrderListQuery({ limit: String(limit) }, 7);

/** A list row as PostgreSQL answers it: order `id`, booked under an AWB, in `status`, written by transaction `version`. */
function dbRow(id: number, version: string, status = "in_transit"): ListRowDb {
	return {
		order_id: String(id),
		row_version: version,
		customer_order_no: `KEPT-${id}`,
		shipment_type: 0,
		order_type: 1,
		channel: "api",
		declared_order_total_paise: "149950",
		cod_amount_paise: "149950",
		receiver_name: "Asha Verma",
		receiver_city: "Bengaluru",
		receiver_pincode: "560001",
		pickup_address_id: "12",
		state: "booked",
		status,
		bucket: "in_transit",
		awb_number: `1400000${String(id).padStart(7, "0")}`,
		courier: "Sandbox Express",
		logistic_id: 3,
		created_at: "2026-11-30T03:56:46.123Z",
		booked_at: "2026-11-30T03:57:46.123Z",
		status_at: "2026-11-30T03:58:46.123Z",
	};
}

/** Order ids of this spec, away from other specs' rows in the same process. */
let next = 9_000_000 + Math.floor(Math.random() * 1_000_000);

describe("GET /v1/orders rows kept under their row version", () => {
	/** Restores what the environment test changed (test/helpers/env.ts `setEnv`). */
	let restore = () => {};
	afterEach(() => restore());

	it("writes a page as JSON.stringify would, made or kept, and a row read again unchanged is the kept one", () => {
		const ids = Array.from({ length: 3 }, () => next++);
		const first = listPage(
			7,
			query(2),
			ids.map((id) => dbRow(id, "100")),
		);
		assert.equal(answerJson(first), JSON.stringify(first));
		assert.equal(first.data.length, 2);
		assert.ok(first.pagination.nextCursor, "a third row read: a next page");
		const again = listPage(
			7,
			query(2),
			ids.map((id) => dbRow(id, "100")),
		);
		assert.equal(answerJson(again), JSON.stringify(again));
		assert.equal(answerJson(again), answerJson(first));
		assert.equal(again.data[0], first.data[0], "the kept row, not made again");
		assert.ok(
			Object.isFrozen(again) && Object.isFrozen(again.data[1]) && Object.isFrozen(again.data[1].receiver),
		);
		assert.equal(again.data[1].order_value, 1499.5);
		assert.match(String(again.data[1].label_url), /^\/v1\/documents\/label\/t\/1400000\d{7}\./);
	});

	it("makes a row again when its version changes, with the new values in the object and the JSON", () => {
		const id = next++;
		const before = listPage(7, query(), [dbRow(id, "200", "in_transit")]);
		const after = listPage(7, query(), [dbRow(id, "201", "delivered")]);
		assert.equal(before.data[0].status, "in_transit");
		assert.equal(after.data[0].status, "delivered");
		assert.equal(after.data[0].status_name, "Delivered");
		assert.equal(answerJson(after), JSON.stringify(after));
		assert.match(answerJson(after), /"status":"delivered"/);
	});

	it("makes a row again when the tracking template or the label link secret changes", () => {
		const id = next++;
		restore = setEnv({
			TRACKING_URL_TEMPLATE: "https://one.test/{awb}",
			LABEL_LINK_SECRET: process.env.LABEL_LINK_SECRET,
		});
		const one = listPage(7, query(), [dbRow(id, "300")]);
		process.env.TRACKING_URL_TEMPLATE = "https://two.test/{awb}";
		const two = listPage(7, query(), [dbRow(id, "300")]);
		assert.match(String(one.data[0].tracking_url), /^https:\/\/one\.test\//);
		assert.match(String(two.data[0].tracking_url), /^https:\/\/two\.test\//);
		assert.match(answerJson(two), /https:\/\/two\.test\//);
		process.env.LABEL_LINK_SECRET = "another-label-link-secret";
		const three = listPage(7, query(), [dbRow(id, "300")]);
		assert.notEqual(three.data[0].label_url, two.data[0].label_url);
		assert.equal(answerJson(three), JSON.stringify(three));
	});

	it("keeps at most KEPT_LIST_ROWS rows, the least recently read going first", () => {
		const start = next++;
		const first = listPage(7, query(), [dbRow(start, "400")]).data[0];
		assert.equal(listPage(7, query(), [dbRow(start, "400")]).data[0], first, "kept while young");
		for (let i = 0; i < KEPT_LIST_ROWS + 60; i += 50) {
			listPage(
				7,
				query(),
				Array.from({ length: 50 }, () => dbRow(next++, "400")),
			);
		}
		assert.ok(keptListRowCount() <= KEPT_LIST_ROWS, `${keptListRowCount()} kept`);
		// the newest are kept (the same object again); the first of this test was let go (made again)
		const newest = listPage(7, query(), [dbRow(next - 1, "400")]).data[0];
		assert.equal(listPage(7, query(), [dbRow(next - 1, "400")]).data[0], newest);
		const again = listPage(7, query(), [dbRow(start, "400")]).data[0];
		assert.notEqual(again, first, "let go, so made again");
		assert.deepEqual(again, first);
	});
});
