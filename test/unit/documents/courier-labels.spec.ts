/**
 * documents.label (spec §4.4 `GET /v1/documents/label/{orderId}`): courier-issued labels: served as captured, 409 carrier_label_missing when not.
 * Fakes and tools: ./setup.ts.
 */
import assert from "node:assert/strict";
import { recordCourierLabel } from "../../../lib/documents/store";
import { getSequelize } from "../../../lib/platform/db";
import { newSender } from "../../helpers/broker";
import { bookedOrder, download, failure, labelRows, useDocuments } from "./setup";

describe("documents.label (GET /v1/documents/label/{orderId})", () => {
	useDocuments();

	describe("courier-issued labels", () => {
		it("409 {code:'carrier_label_missing', message} when the courier issues its own label and it was not captured", async () => {
			const sender = newSender();
			const { order, shipment } = bookedOrder(sender);
			await recordCourierLabel(getSequelize(), {
				order_id: order.order_id,
				sender_id: sender,
				awb_number: shipment.awb_number,
				logistic_id: shipment.logistic_id,
				file: null,
			});
			const { status, body } = await failure(sender, String(order.order_id));
			assert.equal(status, 409);
			assert.deepEqual(Object.keys(body).sort(), ["code", "message"]);
			assert.equal(body.code, "carrier_label_missing");
			assert.equal(typeof body.message, "string");
			const [row] = await labelRows(order.order_id);
			assert.equal(row.label_downloaded_at, null);
		});

		it("serves the courier's captured file as is (and stamps it)", async () => {
			const sender = newSender();
			const { order, shipment } = bookedOrder(sender);
			const courierPdf = Buffer.from("%PDF-1.4\n% courier label bytes\n%%EOF\n", "latin1");
			await recordCourierLabel(getSequelize(), {
				order_id: order.order_id,
				sender_id: sender,
				awb_number: shipment.awb_number,
				logistic_id: shipment.logistic_id,
				file: courierPdf,
			});
			const { pdf, meta } = await download(sender, order.order_id);
			assert.ok(Buffer.from(pdf).equals(courierPdf));
			assert.equal(meta.$responseType, "application/pdf");
			const [row] = await labelRows(order.order_id);
			assert.equal(row.source, "courier");
			assert.equal(row.download_count, 1);
			assert.ok(row.label_downloaded_at instanceof Date);
		});
	});
});
