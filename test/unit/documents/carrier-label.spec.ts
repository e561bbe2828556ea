/**
 * Courier-issued labels, documents side (spec §4.4 "or the courier's own file", §7
 * `carrier_label_missing`): `documents.captureCourierLabel` fetches the sandbox courier's packing
 * slip (the real simulator over HTTP, `sbx-lite` issues its own labels) and stores it;
 * `documents.label` serves it as is with its own content type, without asking the courier again;
 * a courier failure throws and a retry captures; never captured → 409; bulk seam `courierLabelsOf`.
 * Fakes and tools: ./setup.ts (intake, booking, warehouses); here also a fake `rates.getCourier`.
 */
import assert from "node:assert/strict";
import type { CourierInfo, ShipmentRecord } from "../../../lib/contracts";
import { SandboxAdapter } from "../../../lib/couriers";
import { courierLabelsOf } from "../../../lib/documents/store";
import { getSequelize, select } from "../../../lib/platform/db";
import { errorBodyOf } from "../../../lib/platform/errors";
import { loadServiceSchema } from "../../../lib/platform/system";
import { newSender, rejects } from "../../helpers/broker";
import { callAs } from "../../helpers/call";
import { address, courier, freshRef } from "../../helpers/fixtures";
import { freePort } from "../../helpers/net";
import { eventually } from "../../helpers/poll";
import { book, bookedOrder, broker, download, failure, labelRows, pdfText, useDocuments } from "./setup";

/** The rate catalog the fake `rates.getCourier` answers: sbx-lite (4) issues its own label, sbx-express (1) does not. */
const CATALOG: CourierInfo[] = [
	courier(1, "Sandbox Express", "sbx-express", { cod: true }),
	courier(4, "Sandbox Lite", "sbx-lite"),
];

const ENV_KEYS = [
	"SANDBOX",
	"SANDBOX_COURIER_PORT",
	"SANDBOX_COURIER_DELAY_MS",
	"SANDBOX_OWN_LABEL_COURIERS",
];

/** Books a real package at the simulator as `code` (warehouse registered first); answers its AWB. */
async function courierAwb(code: string, consigneeName = "Meera Iyer"): Promise<string> {
	const adapter = new SandboxAdapter(code);
	const place = address({ name: "Sita Rao", address_1: "Plot 7, MIDC Industrial Area", city: "Pune" });
	const warehouse_code = `WH-${freshRef("CL")}`;
	await adapter.registerWarehouse({
		warehouse_code,
		warehouse_name: "Acme Pune",
		address: { ...place, state: "Maharashtra", pincode: "411026" },
		return_address: { ...place, state: "Maharashtra", pincode: "411026" },
	});
	const r = await adapter.book({
		reference: freshRef("REF"),
		order_no: freshRef("ORD"),
		direction: "forward",
		payment: "prepaid",
		cod_amount: 0,
		declared_value: 1499,
		weight_kg: 0.75,
		product_description: "Cotton kurta",
		pickup_location_code: warehouse_code,
		pickup: { ...place, state: "Maharashtra", pincode: "411026" },
		consignee: address({ name: consigneeName }),
		return_address: { ...place, state: "Maharashtra", pincode: "411026" },
	});
	return r.awb_number;
}

/** A booked order of `sender` whose shipment is the sandbox courier `logistic_id` with `awb`. */
function courierOrder(sender: number, awb: string, over: Partial<ShipmentRecord> = {}) {
	const { order } = bookedOrder(sender);
	const c = CATALOG.find((x) => x.logistic_id === (over.logistic_id ?? 4))!;
	const shipment = book(order, {
		awb_number: awb,
		logistic_id: c.logistic_id,
		courier_name: c.logistic_name,
		courier_label: true,
		...over,
	});
	return { order, shipment };
}

/** How many packing slips of `awb` the simulator was asked for. */
async function slipCalls(awb: string): Promise<number> {
	const [r] = await select<{ n: string }>(
		getSequelize(),
		"SELECT count(*) AS n FROM simulator.calls WHERE endpoint = 'label' AND refnum = $1",
		[awb],
	);
	return Number(r.n);
}

/** The captured columns of the order's label rows. */
async function capturedRows(order_id: number) {
	return select<{
		source: string;
		courier_file: Buffer | null;
		courier_content_type: string | null;
		courier_captured_at: Date | null;
		courier_missing_reason: string | null;
	}>(
		getSequelize(),
		`SELECT source, courier_file, courier_content_type, courier_captured_at, courier_missing_reason
		FROM documents.labels WHERE order_id = $1`,
		[order_id],
	);
}

function capture(p: { sender_id: number; order_id: number; awb_number: string; logistic_id: number }) {
	return callAs(broker(), "documents.captureCourierLabel", p) as Promise<any>;
}

describe("courier-issued labels (documents.captureCourierLabel, documents.label)", () => {
	useDocuments();
	let port = 0;
	const saved: Record<string, string | undefined> = {};

	before(async () => {
		for (const k of ENV_KEYS) saved[k] = process.env[k];
		port = await freePort();
		Object.assign(process.env, {
			SANDBOX: "1",
			SANDBOX_COURIER_PORT: String(port),
			SANDBOX_COURIER_DELAY_MS: "0",
		});
		delete process.env.SANDBOX_OWN_LABEL_COURIERS; // the default: sbx-lite
		delete process.env.SANDBOX_COURIER_URL;
		broker().createService(loadServiceSchema("simulator"));
		broker().createService({
			name: "rates",
			actions: {
				getCourier: (ctx: any) =>
					CATALOG.find((c) => c.logistic_id === Number(ctx.params.logistic_id)) ?? null,
			},
		});
		await broker().waitForServices(["simulator", "rates"], 10_000, 10);
		await eventually(async () => (await fetch(`http://127.0.0.1:${port}/health`).catch(() => null))?.ok, {
			what: "the simulator listening",
		});
	});
	after(() => {
		for (const k of ENV_KEYS) {
			if (saved[k] === undefined) delete process.env[k];
			else process.env[k] = saved[k];
		}
	});

	it("captures the courier's file once; downloads serve those exact bytes with the courier's content type and never ask the courier again", async () => {
		const sender = newSender();
		const awb = await courierAwb("sbx-lite");
		const { order } = courierOrder(sender, awb);
		const key = { sender_id: sender, order_id: order.order_id, awb_number: awb, logistic_id: 4 };

		const res = await capture(key);
		assert.equal(res.status, "captured");
		assert.equal(res.content_type, "application/pdf");
		assert.ok(res.bytes > 500, `a real PDF, got ${res.bytes} bytes`);
		const [row] = await capturedRows(order.order_id);
		assert.equal(row.source, "courier");
		assert.equal(row.courier_content_type, "application/pdf");
		assert.ok(row.courier_captured_at instanceof Date);
		assert.equal(row.courier_missing_reason, null);
		assert.equal(row.courier_file?.length, res.bytes);
		assert.equal(await slipCalls(awb), 1);

		// a redelivery of the outbox row: acknowledged without asking the courier
		const again = await capture(key);
		assert.deepEqual(again, {
			awb_number: awb,
			status: "already_captured",
			content_type: "application/pdf",
			bytes: res.bytes,
		});

		const first = await download(sender, order.order_id);
		const second = await download(sender, String(order.order_id));
		assert.equal(first.meta.$responseType, "application/pdf");
		assert.equal(first.meta.$responseHeaders["Content-Disposition"], `inline; filename="label-${awb}.pdf"`);
		assert.ok(Buffer.from(first.pdf).equals(row.courier_file!), "served bytes differ from the captured file");
		assert.ok(Buffer.from(second.pdf).equals(row.courier_file!));
		assert.equal(await slipCalls(awb), 1, "the courier was asked again on a download");
		const [stamped] = await labelRows(order.order_id);
		assert.equal(stamped.download_count, 2);

		// the bytes are the courier's own file, as the courier serves it (asked once more here, by the test)
		const direct = await new SandboxAdapter("sbx-lite").fetchLabel(awb);
		assert.equal(direct.content_type, "application/pdf");
		assert.ok(direct.bytes.equals(Buffer.from(first.pdf)), "served bytes differ from the courier's file");
		const text = pdfText(direct.bytes, `slip-${awb}`);
		assert.match(text, /SBX Lite/, "not the courier's packing slip");
		assert.match(text, new RegExp(`AWB ${awb}`));
	});

	it("a courier failure rejects (503 courier_unavailable, nothing served meanwhile); the retry captures", async () => {
		const sender = newSender();
		const awb = await courierAwb("sbx-lite", "Kavya SIMULATE_LABEL_5XX");
		const { order } = courierOrder(sender, awb);
		const key = { sender_id: sender, order_id: order.order_id, awb_number: awb, logistic_id: 4 };

		const err = await rejects(() => capture(key));
		const body = errorBodyOf(err);
		assert.equal(body?.status, 503);
		assert.equal(body?.body.error, "courier_unavailable");
		assert.match(
			String(body?.body.message),
			/Sandbox Lite: the label of \d+ could not be fetched: .*HTTP 503/,
		);
		assert.deepEqual(await capturedRows(order.order_id), []);
		const missing = await failure(sender, String(order.order_id));
		assert.equal(missing.status, 409);
		assert.equal(missing.body.code, "carrier_label_missing");

		const retried = await capture(key);
		assert.equal(retried.status, "captured");
		assert.equal(await slipCalls(awb), 2);
		const { pdf, meta } = await download(sender, order.order_id);
		assert.equal(meta.$responseType, "application/pdf");
		assert.ok(Buffer.from(pdf).subarray(0, 5).toString("latin1") === "%PDF-");
	});

	it("not captured yet: 409 {code:'carrier_label_missing', message} with retry_after 1, no download stamped; the courier is not asked by a download", async () => {
		const sender = newSender();
		const awb = await courierAwb("sbx-lite");
		const { order } = courierOrder(sender, awb);
		for (let i = 0; i < 2; i++) {
			const { status, body, retry_after } = await failure(sender, String(order.order_id));
			assert.equal(status, 409);
			assert.deepEqual(Object.keys(body).sort(), ["code", "message"]);
			assert.equal(body.code, "carrier_label_missing");
			assert.equal(
				body.message,
				"the courier issues its own label for this shipment and it has not been captured yet; retry shortly",
			);
			assert.equal(retry_after, 1);
		}
		assert.deepEqual(await labelRows(order.order_id), []);
		assert.equal(await slipCalls(awb), 0);
	});

	it("a definitive 'no label' (the courier does not know the AWB) is recorded as missing: acknowledged, 409 on download", async () => {
		const sender = newSender();
		const awb = `13${String(Date.now()).slice(-11)}`;
		const { order } = courierOrder(sender, awb);
		const res = await capture({
			sender_id: sender,
			order_id: order.order_id,
			awb_number: awb,
			logistic_id: 4,
		});
		assert.deepEqual(res, { awb_number: awb, status: "missing", content_type: null, bytes: 0 });
		const [row] = await capturedRows(order.order_id);
		assert.equal(row.source, "courier");
		assert.equal(row.courier_file, null);
		assert.match(String(row.courier_missing_reason), /Sandbox Lite: .*has no label for this AWB/);
		const { status, body, retry_after } = await failure(sender, String(order.order_id));
		assert.equal(status, 409);
		assert.equal(body.code, "carrier_label_missing");
		assert.equal(body.message, "the courier issues its own label for this shipment and it was not captured");
		assert.equal(retry_after, undefined, "a recorded 'no label' is not worth a retry");
	});

	it("courierLabelsOf (bulk labels): captured → the file, courier-issued with no capture yet → pending, ours → absent", async () => {
		const sender = newSender();
		const captured = courierOrder(sender, await courierAwb("sbx-lite"));
		await capture({
			sender_id: sender,
			order_id: captured.order.order_id,
			awb_number: captured.shipment.awb_number,
			logistic_id: 4,
		});
		const pending = courierOrder(sender, await courierAwb("sbx-lite"));
		const ours = bookedOrder(sender);
		const map = await courierLabelsOf(getSequelize(), sender, [
			ours.shipment,
			captured.shipment,
			pending.shipment,
		]);
		assert.deepEqual([...map.keys()].sort(), [captured.order.order_id, pending.order.order_id].sort());
		assert.equal(map.get(pending.order.order_id), "pending");
		const got = map.get(captured.order.order_id);
		const file = got === "pending" ? undefined : got;
		assert.equal(file?.content_type, "application/pdf");
		assert.equal(file?.ext, "pdf");
		const { pdf } = await download(sender, captured.order.order_id);
		assert.ok(file?.bytes.equals(Buffer.from(pdf)));
		// another account's rows are not read
		const other = await courierLabelsOf(getSequelize(), sender + 1, [captured.shipment]);
		assert.equal(other.get(captured.order.order_id), "pending");
	});
});
