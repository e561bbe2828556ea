/**
 * Outbox drain benchmark (printed figures, not a test; issue 10's bulk import
 * and lib/platform/outbox.ts `undeliveredByIdMigration`): a backlog of BENCH_OUTBOX_ROWS
 * (default 85,000: one 25 MB CSV's `order.created`) undelivered rows in
 * `intake.event_outbox`, as an outage of NATS during an import leaves it, drained
 * by the real EventOutboxRelay (rounds of 200, one `merchant.events` message
 * each, JetStream on the machine's NATS) with
 *
 *   seconds          wall time of the drain
 *   PostgreSQL CPU   CPU seconds of the database's backends during the drain
 *                    (/proc/<pid>/stat of each backend; PostgreSQL on this host)
 *   rounds           relay rounds (messages published)
 *
 * once over the migrated schema (`(id) WHERE delivered_at IS NULL`) and once
 * with that index swapped for the old `(next_attempt_at, id)` one (the same
 * rows again), so the two figures are side by side. Its own database, Redis
 * prefix and JetStream streams (bench/lib.ts), removed afterwards.
 *
 * Usage: npm run bench:outbox   (env: BENCH_OUTBOX_ROWS=85000, BENCH_OUTBOX_OLD=0 to skip the old index)
 */
import { ServiceBroker } from "moleculer";
import { INTAKE_MIGRATIONS } from "../lib/intake/migrations";
import { loadConfig } from "../lib/platform/config";
import { exec, getSequelize, migrate, select } from "../lib/platform/db";
import { EventOutboxRelay } from "../lib/platform/merchant-events-outbox";
import brokerOptions from "../moleculer.config";
import { benchEnvironment, cpuSeconds, natsUrl } from "./lib";

const rows = Number(process.env.BENCH_OUTBOX_ROWS || 85_000);

/** CPU seconds of the backends connected to `db` now, by pid (PostgreSQL on this host). */
async function backendCpu(db: string): Promise<Map<number, number>> {
	const pids = await select<{ pid: number }>(
		getSequelize(),
		"SELECT pid FROM pg_stat_activity WHERE datname = $1",
		[db],
	);
	return new Map(pids.map(({ pid }) => [pid, cpuSeconds(pid)]));
}

/** Inserts `n` undelivered `order.created`-shaped events (one statement per 5,000). */
async function fill(n: number, from: number): Promise<void> {
	for (let lo = from; lo < from + n; lo += 5_000) {
		const hi = Math.min(from + n, lo + 5_000) - 1;
		await exec(
			getSequelize(),
			`INSERT INTO intake.event_outbox (event)
			 SELECT jsonb_build_object('event_id', 'order.created:' || g, 'type', 'order.created', 'sender_id', 900001,
			   'order_id', g, 'occurred_at', now(), 'data', jsonb_build_object('order_id', g, 'order_no', 'BENCH-' || g,
			   'direction', 'forward', 'payment_mode', 'cod', 'status', 'new', 'pickup_address_id', 1))
			 FROM generate_series($1::bigint, $2::bigint) g ORDER BY g`,
			[lo, hi],
		);
	}
	await exec(getSequelize(), "ANALYZE intake.event_outbox");
}

/** Drains the outbox with the relay; prints and answers the figures. */
async function drain(label: string, relay: EventOutboxRelay, db: string): Promise<void> {
	const before = await backendCpu(db);
	const t0 = process.hrtime.bigint();
	let delivered = 0;
	let rounds = 0;
	for (;;) {
		const n = await relay.pass();
		if (n === 0) break;
		delivered += n;
		rounds += Math.ceil(n / 200);
	}
	const s = Number(process.hrtime.bigint() - t0) / 1e9;
	const after = await backendCpu(db);
	let cpu = 0;
	for (const [pid, c] of after) cpu += c - (before.get(pid) ?? 0);
	console.log(
		`${label.padEnd(40)} ${delivered} rows in ${s.toFixed(2)} s, PostgreSQL CPU ${cpu.toFixed(2)} s, ~${rounds} rounds`,
	);
}

async function main(): Promise<void> {
	const env = await benchEnvironment({ TRANSPORTER: natsUrl });
	Object.assign(process.env, env.common);
	const db = new URL(env.databaseUrl).pathname.slice(1);
	const broker = new ServiceBroker(
		brokerOptions(loadConfig(), { logger: false, nodeID: `bench-outbox-${env.run}` }),
	);
	try {
		await migrate(getSequelize(), "intake", INTAKE_MIGRATIONS);
		await broker.start();
		const relay = new EventOutboxRelay(getSequelize(), "intake", broker, { warn: (m) => console.warn(m) });
		console.log(`outbox drain, ${rows} undelivered rows in intake.event_outbox, node ${process.version}`);
		await fill(rows, 1);
		await drain("index (id) WHERE delivered_at IS NULL", relay, db);
		if (process.env.BENCH_OUTBOX_OLD !== "0") {
			await exec(getSequelize(), "DROP INDEX intake.event_outbox_undelivered_id");
			await exec(
				getSequelize(),
				"CREATE INDEX event_outbox_due ON intake.event_outbox (next_attempt_at, id) WHERE delivered_at IS NULL",
			);
			await fill(rows, rows + 1);
			await drain("old index (next_attempt_at, id)", relay, db);
		}
	} finally {
		await broker.stop().catch(() => undefined);
		await getSequelize()
			.close()
			.catch(() => undefined);
		await env.cleanup();
	}
}

main().catch((err) => {
	console.error(err);
	process.exit(1);
});
