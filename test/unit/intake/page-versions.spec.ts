/**
 * A page read as its rows' versions (lib/intake/list-store.ts `PageVersions`) is split into its rows only when they
 * are newest first: the version read joins them in the page query's order without a sort of its own, and a page
 * assembled from kept rows (lib/intake/list.ts `keptListPage`) takes that order as the page's.
 */
import assert from "node:assert/strict";
import { pageVersionsOf, rowVersions } from "../../../lib/intake/list-store";

describe("GET /v1/orders: a page's versions split into rows", () => {
	it("newest first: the rows with their versions, as pageVersionsOf joins them", () => {
		const rows = [
			{ order_id: "1000", row_version: "77" },
			{ order_id: "999", row_version: "5" },
			{ order_id: "98", row_version: "123456" },
		];
		assert.equal(pageVersionsOf(rows), "1000:77,999:5,98:123456");
		assert.deepEqual(rowVersions(pageVersionsOf(rows)), rows);
		assert.deepEqual(rowVersions(""), []);
		assert.deepEqual(rowVersions("5:1"), [{ order_id: "5", row_version: "1" }]);
	});

	it("out of order (by value, not by text) or repeated: null, so the page is read whole", () => {
		assert.equal(rowVersions("98:1,999:2"), null, "a longer id is the newer one");
		assert.equal(rowVersions("999:1,1000:2"), null);
		assert.equal(rowVersions("21:1,30:2"), null);
		assert.equal(rowVersions("30:1,30:2"), null);
		assert.equal(rowVersions("30:1,21:2,25:3"), null);
	});
});
