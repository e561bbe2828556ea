/**
 * Integration: POST /v1/shipping/book/sync and the booking worker with the
 * services spread over brokers talking over real NATS, booking running on two
 * of them (two workers on one BullMQ queue), real PostgreSQL, Redis and the
 * sandbox courier. Sync booking end to end (read-your-writes included), its
 * errors, the hand-over to the worker, sync racing async on one order, two
 * workers racing on the same attempts.
 */
import { strict as assert } from "node:assert";
import type { ServiceBroker } from "moleculer";
import { getSequelize, select } from "../../lib/platform/db";
import type { DevIdp } from "../../lib/platform/devidp";
import { newSender } from "../helpers/broker";
import { callAs } from "../helpers/call";
import { useCluster } from "../helpers/cluster";
import { orderBody, warehouseBody } from "../helpers/fixtures";
import { client } from "../helpers/flow";
import { eventually } from "../helpers/poll";

/** The simulator's packages of a merchant order number. */
async function packagesOf(order_no: string): Promise<{ waybill: string; refnum: string }[]> {
	return select(getSequelize(), "SELECT waybill, refnum FROM simulator.packages WHERE client_order_no = $1", [
		order_no,
	]);
}

describe("integration: book/sync and booking workers over NATS", function () {
	this.timeout(90_000);
	// short retry timings for the booking nodes (read when their services are created)
	const TIMINGS = { SANDBOX_COURIER_DELAY_MS: "20", BOOKING_BACKOFF_MS: "100", BOOKING_RELAY_MS: "200" };
	const saved: Record<string, string | undefined> = {};
	before(() => {
		for (const [k, v] of Object.entries(TIMINGS)) {
			saved[k] = process.env[k];
			process.env[k] = v;
		}
	});
	after(() => {
		for (const k of Object.keys(TIMINGS)) {
			if (saved[k] === undefined) delete process.env[k];
			else process.env[k] = saved[k];
		}
	});
	describe("five brokers, booking on two", clusterTests);
});

/** The tests, on a cluster started inside the timings set above. */
function clusterTests() {
	const cluster = useCluster(
		"it-bksync",
		[
			["gateway"],
			["pincode", "rates", "warehouses"],
			["intake", "simulator", "documents"],
			["booking", "billing"],
			["booking"],
		],
		["pincode", "rates", "warehouses", "intake", "simulator", "booking", "billing"],
	);
	// the booking nodes, by node id (useCluster names them <prefix>-<group index>)
	const BOOKING_NODES = ["it-bksync-3", "it-bksync-4"];
	let base = "";
	let idp: DevIdp;
	let brokers: ServiceBroker[] = [];
	before(async () => {
		({ base, idp, brokers } = cluster);
		await eventually(
			() => brokers[0].registry.getServiceList({}).filter((s) => s.name === "booking").length === 2,
			{ what: "booking on both nodes" },
		);
	});

	/** A merchant with a warehouse: its API client and a function creating an order (receiver `name`). */
	async function merchant() {
		const api = client(base, await idp.tokenFor(newSender()));
		const wh = await api.post("/v1/warehouses", warehouseBody());
		assert.equal(wh.status, 201, JSON.stringify(wh.body));
		const order = async (name?: string) => {
			const body = orderBody(wh.body.data.id);
			if (name) (body.receiver as Record<string, unknown>).name = name;
			const r = await api.post("/v1/intake/order", body);
			assert.equal(r.status, 201, JSON.stringify(r.body));
			return { order_id: r.body.order_id as number, order_no: body.customer_order_no as string };
		};
		return { api, order };
	}

	it("books inline: 200 with the AWB, and the order status reads booked at once", async () => {
		const { api, order } = await merchant();
		const o = await order();
		const r = await api.post("/v1/shipping/book/sync", { order_id: o.order_id, logistic_id: 1 });
		assert.equal(r.status, 200, JSON.stringify(r.body));
		assert.deepEqual(Object.keys(r.body).sort(), [
			"awb",
			"courier_name",
			"forward_id",
			"label_url",
			"logistic_id",
			"order_id",
			"status",
		]);
		assert.equal(r.body.status, "booked");
		assert.match(r.body.awb, /^14\d{12}$/);
		assert.match(r.body.forward_id, /^bk_\d+$/);
		assert.deepEqual(
			[r.body.logistic_id, r.body.order_id, r.body.courier_name],
			[1, o.order_id, "Sandbox Express"],
		);
		// label_url is the AWB's signed link: it downloads the label with no Authorization header
		assert.match(r.body.label_url, new RegExp(`^/v1/documents/label/t/${r.body.awb}\\.[A-Za-z0-9_-]{43}$`));
		const label = await fetch(base + r.body.label_url);
		assert.equal(label.status, 200);
		assert.equal(label.headers.get("content-type"), "application/pdf");
		assert.equal(label.headers.get("content-disposition"), `attachment; filename="label-${r.body.awb}.pdf"`);
		assert.equal(
			Buffer.from(await label.arrayBuffer())
				.subarray(0, 5)
				.toString("latin1"),
			"%PDF-",
		);
		const st = await api.get(`/v1/orders/status?order_no=${encodeURIComponent(o.order_no)}`);
		assert.equal(st.status, 200);
		assert.equal(st.body.state, "booked");
		assert.equal(st.body.awb_number, r.body.awb);
		assert.deepEqual(await packagesOf(o.order_no), [
			{ waybill: r.body.awb, refnum: r.body.forward_id.slice(3) },
		]);
		const again = await api.post("/v1/shipping/book/sync", { order_id: o.order_id, logistic_id: 1 });
		assert.equal(again.status, 409);
		assert.equal(again.body.error, "already_booked");
	});

	it("async booking: status, detail and list rows carry the signed label_url, which downloads with no bearer; null once cancelled", async () => {
		const { api, order } = await merchant();
		const o = await order();
		const q = `/v1/orders/status?order_no=${encodeURIComponent(o.order_no)}`;
		const before = await api.get(q);
		assert.equal(before.status, 200);
		assert.equal(before.body.label_url, null, "not booked yet: no link");
		const r = await api.post("/v1/shipping/book", { order_id: o.order_id, logistic_id: 1 });
		assert.equal(r.status, 202, JSON.stringify(r.body));
		const st = await eventually(
			async () => {
				const s = await api.get(q);
				return s.body.state === "booked" ? s.body : undefined;
			},
			{ what: "the order to be booked", ms: 20_000, every: 100 },
		);
		const awb = st.awb_number as string;
		const link = new RegExp(`^/v1/documents/label/t/${awb}\\.[A-Za-z0-9_-]{43}$`);
		assert.match(st.label_url, link);
		// the same link in the detail and in the list row (intake signs each answer: same secret, same link)
		const d = await eventually(
			async () => {
				const x = await api.get(`/v1/orders/${o.order_id}`);
				return x.body?.state === "booked" ? x.body : undefined;
			},
			{ what: "the detail to read booked" },
		);
		assert.equal(d.label_url, st.label_url);
		const rows = await api.get(`/v1/orders?order_no=${encodeURIComponent(o.order_no)}`);
		assert.equal(rows.status, 200);
		assert.equal(rows.body.data.length, 1);
		assert.equal(rows.body.data[0].label_url, st.label_url);
		// it downloads the label with no Authorization header
		const label = await fetch(base + st.label_url);
		assert.equal(label.status, 200);
		assert.equal(label.headers.get("content-type"), "application/pdf");
		assert.equal(label.headers.get("content-disposition"), `attachment; filename="label-${awb}.pdf"`);
		assert.equal(
			Buffer.from(await label.arrayBuffer())
				.subarray(0, 5)
				.toString("latin1"),
			"%PDF-",
		);
		// cancelled: no link in any answer, and the old link no longer serves
		const c = await api.post("/v1/shipping/cancel", { order_id: o.order_id, logistic_id: 1 });
		assert.equal(c.status, 200, JSON.stringify(c.body));
		const after = await eventually(
			async () => {
				const s = await api.get(`/v1/orders/${o.order_id}`);
				return s.body.status === "cancelled" ? s.body : undefined;
			},
			{ what: "the order to read cancelled" },
		);
		assert.equal(after.label_url, null);
		assert.equal((await api.get(q)).body.label_url, null);
		assert.equal(
			(await api.get(`/v1/orders?order_no=${encodeURIComponent(o.order_no)}`)).body.data[0].label_url,
			null,
		);
		assert.equal((await fetch(base + st.label_url)).status, 404);
	});

	it("AUTO: every courier refuses → 422 booking_failed naming the chain; input errors are 400s", async () => {
		const { api, order } = await merchant();
		const o = await order("Asha SIMULATE_REFUSE");
		const r = await api.post("/v1/shipping/book/sync", { order_id: o.order_id });
		assert.equal(r.status, 422, JSON.stringify(r.body));
		const refuse = "Shipment rejected by the courier (SIMULATE_REFUSE)";
		assert.deepEqual(r.body, {
			error: "booking_failed",
			// the chain ends with Sandbox Delhivery: the real Delhivery adapter, refused on Delhivery's wire
			message: `Sandbox Express refused: ${refuse}; Sandbox Surface refused: ${refuse}; Sandbox Delhivery refused: ${refuse}`,
		});
		const st = await api.get(`/v1/orders/status?order_no=${encodeURIComponent(o.order_no)}`);
		assert.equal(st.body.state, "failed");
		assert.deepEqual(await packagesOf(o.order_no), []);

		const ids = "order_id and logistic_id must be positive integers";
		const bad = await api.post("/v1/shipping/book/sync", { order_id: "x1" });
		assert.equal(bad.status, 400);
		assert.deepEqual(bad.body, { error: ids, message: ids });
		const op = await api.post("/v1/shipping/book/sync", { order_id: o.order_id, operation: "reverse" });
		assert.equal(op.status, 400);
		assert.equal(op.body.error, "validation_failed");
		assert.ok(Array.isArray(op.body.details));
		const dir = await api.post("/v1/shipping/book/sync", {
			order_id: o.order_id,
			logistic_id: 3,
			operation: "reverse",
		});
		assert.equal(dir.status, 400);
		assert.equal(dir.body.error, "validation_failed");
		const other = client(base, await idp.tokenFor(newSender()));
		const foreign = await other.post("/v1/shipping/book/sync", { order_id: o.order_id, logistic_id: 1 });
		assert.equal(foreign.status, 403);
		assert.equal(foreign.body.error, "cannot create booking for another sender");
	});

	it("a transient courier failure → 202 with the async body; a worker books it", async () => {
		const { api, order } = await merchant();
		const o = await order("Dev SIMULATE_5XX");
		const r = await api.post("/v1/shipping/book/sync", { order_id: o.order_id });
		assert.equal(r.status, 202, JSON.stringify(r.body));
		assert.equal(r.body.status, "queued");
		assert.equal(r.body.mode, "auto");
		assert.match(r.body.idem_key, /^bk_\d+$/);
		const st = await eventually(
			async () => (await api.get(`/v1/orders/status?order_no=${encodeURIComponent(o.order_no)}`)).body,
			{ what: "booked by a worker", ok: (b) => b.state === "booked" },
		);
		assert.deepEqual(await packagesOf(o.order_no), [
			{ waybill: st.awb_number, refnum: r.body.idem_key.slice(3) },
		]);
	});

	it("sync and async racing on one order → one accepted, one 409, exactly one AWB", async () => {
		const { api, order } = await merchant();
		for (let i = 0; i < 3; i++) {
			const o = await order();
			const [a, b] = await Promise.all([
				api.post("/v1/shipping/book", { order_id: o.order_id, logistic_id: 2 }),
				api.post("/v1/shipping/book/sync", { order_id: o.order_id, logistic_id: 2 }),
			]);
			const won = [a, b].filter((r) => r.status !== 409);
			const lost = [a, b].filter((r) => r.status === 409);
			assert.equal(lost.length, 1, JSON.stringify([a.body, b.body]));
			assert.ok([200, 202].includes(won[0].status), JSON.stringify(won[0].body));
			assert.ok(["booking_in_progress", "already_booked"].includes(lost[0].body.error));
			await eventually(
				async () =>
					(await api.get(`/v1/orders/status?order_no=${encodeURIComponent(o.order_no)}`)).body.state,
				{ what: "booked", ok: (s) => s === "booked" },
			);
			assert.equal((await packagesOf(o.order_no)).length, 1);
		}
	});

	it("two workers (two booking nodes) racing on the same attempts → one AWB each", async () => {
		const { api, order } = await merchant();
		const made = await Promise.all([1, 2, 3, 4, 5, 6].map(() => order()));
		const keys: string[] = [];
		for (const o of made) {
			const r = await api.post("/v1/shipping/book", { order_id: o.order_id, logistic_id: 1 });
			assert.equal(r.status, 202, JSON.stringify(r.body));
			keys.push(r.body.idem_key);
		}
		// both nodes' workers run the same attempts at once, on top of their BullMQ jobs
		await Promise.allSettled(
			keys.flatMap((k) =>
				BOOKING_NODES.map((nodeID) =>
					callAs(brokers[2], "booking.processAttempt", { attempt_id: Number(k.slice(3)) }, { nodeID }),
				),
			),
		);
		for (const [i, o] of made.entries()) {
			const st = await eventually(
				async () => (await api.get(`/v1/orders/status?order_no=${encodeURIComponent(o.order_no)}`)).body,
				{ what: `order ${o.order_no} booked`, ok: (b) => b.state === "booked" },
			);
			assert.deepEqual(await packagesOf(o.order_no), [{ waybill: st.awb_number, refnum: keys[i].slice(3) }]);
			const booked = await select<{ n: string }>(
				getSequelize(),
				"SELECT count(*) AS n FROM simulator.calls WHERE refnum = $1 AND endpoint = 'create' AND outcome = 'booked'",
				[keys[i].slice(3)],
			);
			assert.equal(Number(booked[0].n), 1);
			const charges = await select<{ n: string }>(
				getSequelize(),
				"SELECT count(*) AS n FROM booking.ledger WHERE attempt_id = $1 AND kind = 'charge'",
				[Number(keys[i].slice(3))],
			);
			assert.equal(Number(charges[0].n), 1);
		}
	});
}
