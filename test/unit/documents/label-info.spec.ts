/**
 * documents.label (spec §4.4 `GET /v1/documents/label/{orderId}`): every download stamps documents.labels; documents.labelInfo answers the row.
 * Fakes and tools: ./setup.ts.
 */
import assert from "node:assert/strict";
import { newSender } from "../../helpers/broker";
import { callAs } from "../../helpers/call";
import { book, bookedOrder, broker, download, labelRows, useDocuments } from "./setup";

describe("documents.label (GET /v1/documents/label/{orderId})", () => {
	useDocuments();

	describe("stamps label_downloaded_at", () => {
		it("upserts documents.labels on the first download and updates the stamp on the second", async () => {
			const sender = newSender();
			const { order, shipment } = bookedOrder(sender);
			assert.equal((await labelRows(order.order_id)).length, 0);
			assert.equal(
				await callAs(broker(), "documents.labelInfo", { sender_id: sender, order_id: order.order_id }),
				null,
			);

			await download(sender, order.order_id);
			const [first, ...more] = await labelRows(order.order_id);
			assert.equal(more.length, 0);
			assert.equal(Number(first.sender_id), sender);
			assert.equal(first.awb_number, shipment.awb_number);
			assert.equal(first.logistic_id, shipment.logistic_id);
			assert.equal(first.source, "generated");
			assert.equal(first.download_count, 1);
			assert.ok(first.label_downloaded_at instanceof Date);
			assert.equal(first.first_downloaded_at.getTime(), first.label_downloaded_at.getTime());

			await download(sender, String(order.order_id));
			const rows = await labelRows(order.order_id);
			assert.equal(rows.length, 1);
			const second = rows[0];
			assert.equal(second.download_count, 2);
			assert.ok(
				second.label_downloaded_at.getTime() > first.label_downloaded_at.getTime(),
				"stamp not updated",
			);
			assert.equal(second.first_downloaded_at.getTime(), first.first_downloaded_at.getTime());

			const info = (await callAs(broker(), "documents.labelInfo", {
				sender_id: sender,
				order_id: order.order_id,
			})) as any;
			assert.equal(info.label_downloaded_at, second.label_downloaded_at.toISOString());
			assert.equal(info.first_downloaded_at, first.label_downloaded_at.toISOString());
			assert.equal(info.download_count, 2);
			assert.equal(info.awb_number, shipment.awb_number);
			assert.equal(info.source, "generated");
			// another account sees nothing
			assert.equal(
				await callAs(broker(), "documents.labelInfo", { sender_id: newSender(), order_id: order.order_id }),
				null,
			);
		});

		it("keeps one row per AWB: a re-booked order gets a row for its new AWB", async () => {
			const sender = newSender();
			const { order } = bookedOrder(sender);
			await download(sender, order.order_id);
			const newer = book(order, { awb_number: "REBOOK000000001", attempt_id: order.order_id * 10 + 1 });
			await download(sender, order.order_id);
			const rows = await labelRows(order.order_id);
			assert.equal(rows.length, 2);
			assert.ok(rows.some((r) => r.awb_number === newer.awb_number && r.download_count === 1));
		});
	});
});
