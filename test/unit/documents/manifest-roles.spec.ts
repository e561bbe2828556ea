/**
 * `POST /v1/documents/manifest` is a write (spec §4.4, §5 rule 1): it stores
 * manifests and moves shipments to Ready-for-pickup, and nothing undoes it.
 * Read-only roles (merchant_finance, merchant_support, merchant_staff) get 403
 * `Read-only role` through the real gateway over HTTP, and nothing is stored
 * or sent to booking; a writing role manifests the same orders afterwards.
 * Bulk labels (`POST /v1/documents/label`) stay a read any role may do.
 */
import assert from "node:assert/strict";
import { READ_ONLY_ROLES } from "../../../lib/platform/auth";
import { getSequelize, select } from "../../../lib/platform/db";
import { as, newSender, rejects } from "../../helpers/broker";
import { callAs } from "../../helpers/call";
import { http } from "../gateway/setup";
import { bookedOrder, broker, markManifestedCalls, shipmentOf, useDocumentsOverHttp } from "./setup";

/** The caller's stored manifests, parcels and manifest outbox rows. */
async function storedFor(sender: number) {
	const [row] = await select<{ manifests: string; parcels: string; outbox: string }>(
		getSequelize(),
		`SELECT (SELECT count(*) FROM documents.manifests WHERE sender_id = $1) AS manifests,
			(SELECT count(*) FROM documents.manifest_parcels p JOIN documents.manifests m ON m.id = p.manifest_id
			  WHERE m.sender_id = $1) AS parcels,
			(SELECT count(*) FROM documents.outbox WHERE (payload->>'sender_id')::bigint = $1) AS outbox`,
		[sender],
	);
	return { manifests: Number(row.manifests), parcels: Number(row.parcels), outbox: Number(row.outbox) };
}

describe("POST /v1/documents/manifest: read-only roles (gateway + documents over HTTP)", function () {
	this.timeout(30_000);
	const sys = useDocumentsOverHttp();

	it("answers 403 Read-only role to each read-only role, storing nothing and leaving the shipments as they were", async () => {
		const sender = newSender();
		const a = bookedOrder(sender);
		const b = bookedOrder(sender);
		const order_ids = [a.order.order_id, b.order.order_id];
		const awbs = [a.shipment.awb_number, b.shipment.awb_number];
		assert.deepEqual(READ_ONLY_ROLES, ["merchant_finance", "merchant_support", "merchant_staff"]);
		for (const role of READ_ONLY_ROLES) {
			const token = await sys.idp.tokenFor(sender, role);
			const r = await http(sys.base, "POST", "/v1/documents/manifest", { token, body: { order_ids } });
			assert.equal(r.status, 403, `${role}: ${r.status} ${r.text}`);
			assert.equal(r.body?.error, "Read-only role", role);
			assert.equal(r.headers.get("x-manifest-no"), null, role);
			// the service refuses an internal caller with that role too (PermissionsMiddleware)
			const err = await rejects(() =>
				callAs(broker(), "documents.manifest", { order_ids }, as(sender, role)),
			);
			assert.equal(err?.code, 403, role);
			assert.equal(err?.data?.body?.error, "Read-only role", role);
		}
		assert.deepEqual(await storedFor(sender), { manifests: 0, parcels: 0, outbox: 0 });
		assert.deepEqual(
			markManifestedCalls.filter((c) => c.awb_numbers.some((x) => awbs.includes(x))),
			[],
			"booking was told nothing",
		);
		for (const o of [a, b]) assert.equal(shipmentOf(sender, o.order.order_id)?.state, "booked");

		// a bulk label download stays a read: every read-only role may print
		for (const role of READ_ONLY_ROLES) {
			const token = await sys.idp.tokenFor(sender, role);
			const r = await http(sys.base, "POST", "/v1/documents/label", { token, body: { order_ids } });
			assert.equal(r.status, 200, `${role}: ${r.status} ${r.text}`);
			assert.equal(r.headers.get("content-type"), "application/pdf");
		}

		// a writing role manifests the same orders: the refusals left them ready
		const ops = await sys.idp.tokenFor(sender, "merchant_ops");
		const ok = await http(sys.base, "POST", "/v1/documents/manifest", { token: ops, body: { order_ids } });
		assert.equal(ok.status, 200, ok.text);
		assert.equal(ok.headers.get("x-manifest-count"), "2");
		// each order comes from its own warehouse: two sections, two manifests, one outbox row each
		assert.deepEqual(await storedFor(sender), { manifests: 2, parcels: 2, outbox: 2 });
	});
});
