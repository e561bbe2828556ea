/**
 * Webhook delivery benchmark (issue 11; printed figures, not a test): the
 * system over NATS as in production — the API and domain services in one
 * process, the webhooks service in its own — on a database, Redis prefix
 * and NATS namespace of its own (removed afterwards). A merchant with
 * BENCH_ENDPOINTS (3) endpoints on a local receiver subscribed to every
 * event; orders are created and booked (POST /v1/intake/order, POST
 * /v1/shipping/book) at BENCH_RATE (200) per second for BENCH_SECONDS (20),
 * each making `order.created` and `order.booked` per endpoint. Printed:
 *
 *   orders/s        orders created and booked per second (achieved)
 *   deliveries/s    deliveries received by the receiver per second while the
 *                   load runs, and overall until every event arrived
 *   latency         event time (the envelope's `timestamp`: the order's
 *                   creation, the booking's settlement) → receipt, p50 / p99
 *
 * Targets (issue 11, 2-core machine): ≥ 500 deliveries/s, p99 < 1 s.
 *
 * Usage: npm run bench:webhooks   (env: BENCH_RATE=200, BENCH_SECONDS=20,
 *   BENCH_ENDPOINTS=3, WEBHOOK_CONCURRENCY, WEBHOOK_ENDPOINT_INFLIGHT)
 */
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Client } from "pg";
import { freshRef, orderBody, warehouseBody } from "../test/helpers/fixtures";
import { client } from "../test/helpers/flow";
import { freePort } from "../test/helpers/net";
import { type StartedProcess, startProcess, waitReady } from "../test/helpers/processes";
import { benchEnvironment, natsUrl, pct } from "./lib";

const RATE = Number(process.env.BENCH_RATE || 200);
const SECONDS = Number(process.env.BENCH_SECONDS || 20);
const ENDPOINTS = Number(process.env.BENCH_ENDPOINTS || 3);

/** One delivery the receiver got. */
interface Got {
	id: string;
	type: string;
	at: number;
	latency: number;
}

async function main(): Promise<void> {
	const got: Got[] = [];
	const receiver = createServer((req, res) => {
		const chunks: Buffer[] = [];
		req.on("data", (c: Buffer) => chunks.push(c));
		req.on("end", () => {
			const at = Date.now();
			try {
				const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
				got.push({
					id: `${req.url}|${req.headers["webhook-id"]}`,
					type: body.type,
					at,
					latency: at - Date.parse(body.timestamp),
				});
			} catch {
				/* not ours */
			}
			res.writeHead(204).end();
		});
	});
	await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
	const rxBase = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

	const env = await benchEnvironment({
		SANDBOX_COURIER_DELAY_MS: process.env.SANDBOX_COURIER_DELAY_MS ?? "5",
		WEBHOOK_CONCURRENCY: process.env.WEBHOOK_CONCURRENCY,
		WEBHOOK_ENDPOINT_INFLIGHT: process.env.WEBHOOK_ENDPOINT_INFLIGHT,
		EVENT_OUTBOX_POLL_MS: "1000",
		TRANSPORTER: natsUrl,
	});
	const procs: StartedProcess[] = [
		startProcess({
			...env.common,
			SERVICES:
				"gateway,documents,pincode,rates,warehouses,intake,booking,billing,simulator,ndr,notifications",
		}),
		startProcess({ ...env.common, SERVICES: "webhooks", PORT: String(await freePort()) }),
	];
	try {
		await waitReady(env.base, procs, 120_000);
		const api = client(env.base, await env.idp.tokenFor(900_001));
		const wh = await api.post("/v1/warehouses", warehouseBody({ warehouse_name: "Bench warehouse" }));
		if (wh.status !== 201) throw new Error(`warehouse: ${JSON.stringify(wh.body)}`);
		for (let i = 0; i < ENDPOINTS; i++) {
			const ep = await api.post("/v1/webhooks", {
				url: `${rxBase}/ep${i}`,
				events: ["order.created", "order.booked", "order.booking_failed"],
			});
			if (ep.status !== 201) throw new Error(`endpoint: ${ep.status} ${JSON.stringify(ep.body)}`);
		}
		// warm-up: a few orders (JIT, pools, JetStream streams)
		for (let i = 0; i < 20; i++) await orderAndBook(api, wh.body.data.id);
		const warm = 20 * 2 * ENDPOINTS;
		const until = Date.now() + 60_000;
		while (got.length < warm && Date.now() < until) await sleep(100);
		got.length = 0;

		console.log(
			`webhooks bench: ${RATE} orders/s for ${SECONDS} s, ${ENDPOINTS} endpoint(s), 2 processes over NATS`,
		);
		const t0 = Date.now();
		let made = 0;
		let failed = 0;
		const inflight = new Set<Promise<void>>();
		const total = RATE * SECONDS;
		while (made < total) {
			const due = Math.floor(((Date.now() - t0) / 1000) * RATE);
			while (made < Math.min(due, total)) {
				made++;
				const p = orderAndBook(api, wh.body.data.id)
					.catch(() => {
						failed++;
					})
					.finally(() => inflight.delete(p));
				inflight.add(p);
			}
			await sleep(5);
		}
		await Promise.all(inflight);
		const t1 = Date.now();
		const loadSeconds = (t1 - t0) / 1000;
		const inLoad = got.filter((g) => g.at <= t1).length;
		const expected = (made - failed) * 2 * ENDPOINTS;
		const drainUntil = Date.now() + 120_000;
		while (new Set(got.map((g) => g.id)).size < expected && Date.now() < drainUntil) await sleep(100);
		const last = Math.max(...got.map((g) => g.at));
		const lat = got.map((g) => g.latency).sort((a, b) => a - b);
		const unique = new Set(got.map((g) => g.id)).size;
		console.log(
			`orders created+booked: ${made - failed} (${failed} failed) in ${loadSeconds.toFixed(1)} s = ${((made - failed) / loadSeconds).toFixed(0)}/s`,
		);
		console.log(
			`deliveries: ${unique} unique of ${expected} expected (${got.length - unique} duplicate receipts)`,
		);
		console.log(`deliveries/s during the load: ${(inLoad / loadSeconds).toFixed(0)}`);
		console.log(
			`deliveries/s overall (first order → last delivery): ${(got.length / ((last - t0) / 1000)).toFixed(0)}`,
		);
		console.log(
			`event → delivery latency: p50 ${pct(lat, 50)} ms, p99 ${pct(lat, 99)} ms, max ${lat[lat.length - 1]} ms`,
		);
		console.log(`targets: ≥ 500 deliveries/s, p99 < 1000 ms`);
		await stages(env.databaseUrl, t0);
	} finally {
		await Promise.all(procs.map((p) => p.stop()));
		receiver.close();
		await env.cleanup();
	}
}

/**
 * Where the time goes, from the webhooks schema: event time → fan-out (the
 * publisher's outbox relay and the channel), fan-out → delivered (the queue
 * and the attempt), p50 / p99 in ms, for the events of the measured load.
 */
async function stages(databaseUrl: string, t0: number): Promise<void> {
	const c = new Client({ connectionString: databaseUrl });
	await c.connect();
	try {
		const r = await c.query(
			`SELECT
			   percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM e.created_at - e.occurred_at) * 1000) AS in50,
			   percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM e.created_at - e.occurred_at) * 1000) AS in99,
			   percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM d.delivered_at - e.created_at) * 1000) AS out50,
			   percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM d.delivered_at - e.created_at) * 1000) AS out99
			 FROM webhooks.deliveries d JOIN webhooks.events e ON e.id = d.event_id
			 WHERE e.occurred_at >= to_timestamp($1 / 1000.0)`,
			[t0],
		);
		const x = r.rows[0];
		const f = (v: number) => Math.round(Number(v));
		console.log(
			`stages: event → fan-out p50 ${f(x.in50)} ms, p99 ${f(x.in99)} ms; fan-out → delivered p50 ${f(x.out50)} ms, p99 ${f(x.out99)} ms`,
		);
	} finally {
		await c.end();
	}
}

/** Creates an order and books it (async booking: 202). */
async function orderAndBook(api: ReturnType<typeof client>, warehouse: number): Promise<void> {
	const o = await api.post("/v1/intake/order", orderBody(warehouse, freshRef("WHB")));
	if (o.status !== 201) throw new Error(`order: ${o.status}`);
	const b = await api.post("/v1/shipping/book", { order_id: o.body.order_id, logistic_id: 1 });
	if (b.status >= 300) throw new Error(`book: ${b.status}`);
}

function sleep(ms: number): Promise<void> {
	return new Promise((r) => setTimeout(r, ms));
}

main().catch((err) => {
	console.error(err);
	process.exit(1);
});
