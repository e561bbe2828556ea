/**
 * One LISTEN connection per process and database (lib/platform/pg-listen.ts,
 * docs/decisions/0121-one-listen-connection.md, issue 32): every subscriber
 * of a process is served by one backend, each notification reaches the
 * subscribers of its channel only, the connection ends with its last
 * subscriber, and a lost connection is reported and replaced at the next
 * subscription with every remaining channel listened to again. Real PostgreSQL.
 */
import assert from "node:assert/strict";
import { Client } from "pg";
import { listen } from "../../lib/platform/pg-listen";
import { eventually } from "../helpers/poll";

describe("pg LISTEN: one connection per process and database", function () {
	this.timeout(30_000);
	// a URL (and application_name) of this spec's own: its own shared connection, counted apart from any other
	const app = `listen-spec-${process.pid}-${Date.now()}`;
	let url = "";
	let admin: Client;

	before(async () => {
		// set by test/helpers/global.ts's root hook: read here, not when the file loads
		const base = process.env.DATABASE_URL as string;
		url = `${base}${base.includes("?") ? "&" : "?"}application_name=${app}`;
		admin = new Client({ connectionString: base });
		await admin.connect();
	});
	after(() => admin?.end());

	/** The pids of this spec's listening backends. */
	async function backends(): Promise<number[]> {
		const r = await admin.query<{ pid: number }>(
			"SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()",
			[app],
		);
		return r.rows.map((x) => x.pid);
	}

	/** A subscriber that records what it receives. */
	function recorder(): {
		got: string[];
		errors: string[];
		onNotify(p: string): void;
		onError(e: Error): void;
	} {
		const got: string[] = [];
		const errors: string[] = [];
		return { got, errors, onNotify: (p) => got.push(p), onError: (e) => errors.push(e.message) };
	}

	const notify = (channel: string, payload: string) =>
		admin.query("SELECT pg_notify($1, $2)", [channel, payload]);

	it("serves every channel of the process over one backend; each notification reaches its channel's subscribers only", async () => {
		const a1 = recorder();
		const a2 = recorder();
		const b = recorder();
		const offA1 = await listen(url, "msa_spec_a", a1);
		const offA2 = await listen(url, "msa_spec_a", a2);
		const offB = await listen(url, "msa_spec_b", b);
		assert.equal((await backends()).length, 1, "one backend for three subscriptions on two channels");

		await notify("msa_spec_a", "17");
		await notify("msa_spec_b", "");
		await notify("msa_spec_other", "9");
		await eventually(() => [a1.got, a2.got, b.got], {
			what: "both channels delivered",
			ok: () => a1.got.length === 1 && a2.got.length === 1 && b.got.length === 1,
		});
		assert.deepEqual(a1.got, ["17"]);
		assert.deepEqual(a2.got, ["17"]);
		assert.deepEqual(b.got, [""]);

		// a channel left by its last subscriber is no longer heard; the others are
		await offB();
		await offA1();
		await notify("msa_spec_b", "lost");
		await notify("msa_spec_a", "18");
		await eventually(() => a2.got, { what: "a's second", ok: (g) => g.length === 2 });
		assert.deepEqual(a2.got, ["17", "18"]);
		assert.deepEqual(a1.got, ["17"]);
		assert.deepEqual(b.got, [""]);
		assert.equal((await backends()).length, 1);

		// the last subscriber leaving ends the connection
		await offA2();
		await eventually(backends, { what: "the backend gone", ok: (p) => p.length === 0 });
	});

	it("reports a lost connection to its subscribers; the next subscription listens again on every channel left", async () => {
		const a = recorder();
		const offA = await listen(url, "msa_spec_c", a);
		const [pid] = await backends();
		await admin.query("SELECT pg_terminate_backend($1)", [pid]);
		await eventually(() => a.errors, { what: "the loss reported", ok: (e) => e.length > 0 });

		const b = recorder();
		const offB = await listen(url, "msa_spec_d", b);
		const now = await backends();
		assert.equal(now.length, 1);
		assert.notEqual(now[0], pid);
		await notify("msa_spec_c", "again");
		await notify("msa_spec_d", "new");
		await eventually(() => [a.got, b.got], {
			what: "both channels on the new connection",
			ok: () => a.got.length === 1 && b.got.length === 1,
		});
		assert.deepEqual(a.got, ["again"]);
		assert.deepEqual(b.got, ["new"]);

		// lost again; this time the next subscription is to a channel that still has subscribers
		const [pid2] = await backends();
		await admin.query("SELECT pg_terminate_backend($1)", [pid2]);
		await eventually(() => b.errors, { what: "the second loss reported", ok: (e) => e.length > 0 });
		const c = recorder();
		const offC = await listen(url, "msa_spec_c", c);
		await notify("msa_spec_c", "third");
		await notify("msa_spec_d", "fourth");
		await eventually(() => [a.got, b.got, c.got], {
			what: "every channel on the third connection",
			ok: () => a.got.length === 2 && b.got.length === 2 && c.got.length === 1,
		});
		assert.deepEqual(a.got, ["again", "third"]);
		assert.deepEqual(c.got, ["third"]);
		assert.deepEqual(b.got, ["new", "fourth"]);
		assert.equal((await backends()).length, 1);
		await offC();
		await offA();
		await offB();
		await eventually(backends, { what: "the backend gone", ok: (p) => p.length === 0 });
	});

	it("refuses a channel name LISTEN would not take as it is", async () => {
		await assert.rejects(listen(url, "Msa; DROP TABLE x", recorder()), /not a channel name/);
		assert.equal((await backends()).length, 0);
	});
});
