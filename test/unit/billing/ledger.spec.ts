/**
 * The billing service's ledger (issue 27; lib/billing/store.ts,
 * docs/decisions/0101-billing-service.md): movements recorded once whatever
 * the redeliveries, balances kept in the same statement and equal to the sum
 * of the entries, an append-only table, the credit limit mirrored by version,
 * malformed movements refused. Real billing service over PostgreSQL.
 */
import assert from "node:assert/strict";
import type { ServiceBroker } from "moleculer";
import { recomputedBalances, walletAccount } from "../../../lib/billing/store";
import type { LedgerEntryEvent } from "../../../lib/contracts";
import { exec, getSequelize, select } from "../../../lib/platform/db";
import { newSender, startBroker } from "../../helpers/broker";
import { freshId } from "../../helpers/fixtures";

describe("billing: the wallet ledger", function () {
	this.timeout(30_000);
	let broker: ServiceBroker;
	before(async () => {
		broker = await startBroker(["billing"]);
	});
	after(() => broker?.stop());

	const db = () => getSequelize();
	const balancePaise = async (sender: number) => (await walletAccount(db(), sender)).balance_paise;
	const record = (entries: LedgerEntryEvent[]) =>
		broker.call("billing.recordEntries", { entries }) as Promise<{ recorded: number }>;
	const entry = (
		sender_id: number,
		kind: "charge" | "refund",
		amount_paise: number,
		attempt_id = freshId(),
	) => ({
		sender_id,
		attempt_id,
		order_id: freshId(),
		kind,
		amount_paise,
		awb_number: `AWB${attempt_id}`,
		note: null,
		occurred_at: new Date().toISOString(),
	});

	it("records each movement once: a redelivery and 8 racing deliveries of the same movement add nothing", async () => {
		const s = newSender();
		const charge = entry(s, "charge", 11_900);
		assert.deepEqual(await record([charge]), { recorded: 1 });
		assert.deepEqual(await record([charge]), { recorded: 0 });
		const refund = { ...charge, kind: "refund" as const };
		const results = await Promise.all(Array.from({ length: 8 }, () => record([refund])));
		assert.equal(
			results.reduce((n, r) => n + r.recorded, 0),
			1,
		);
		const rows = await select<{ kind: string; amount_paise: string }>(
			db(),
			"SELECT kind, amount_paise FROM billing.ledger WHERE sender_id = $1 ORDER BY id",
			[s],
		);
		assert.deepEqual(rows, [
			{ kind: "charge", amount_paise: "11900" },
			{ kind: "refund", amount_paise: "11900" },
		]);
		assert.equal(await balancePaise(s), 0);
	});

	it("keeps every balance equal to the sum of its entries under concurrent batches of several accounts", async () => {
		const senders = [newSender(), newSender(), newSender()];
		const batches = Array.from({ length: 20 }, (_, i) =>
			Array.from({ length: 10 }, (_, j) =>
				entry(senders[(i + j) % 3], (i * j) % 4 === 0 ? "refund" : "charge", 100 * (j + 1) + i),
			),
		);
		// every batch twice, concurrently (as two relays might deliver it)
		await Promise.all([...batches, ...batches].map((b) => record(b)));
		for (const s of senders) {
			const expected = batches
				.flat()
				.filter((e) => e.sender_id === s)
				.reduce((n, e) => n + (e.kind === "refund" ? e.amount_paise : -e.amount_paise), 0);
			assert.equal(await balancePaise(s), expected, `balance of ${s}`);
		}
		assert.deepEqual(
			await recomputedBalances(db()),
			[],
			"no account's stored balance differs from its entries",
		);
	});

	it("is append-only: PostgreSQL refuses an UPDATE or a DELETE of a ledger row", async () => {
		const s = newSender();
		await record([entry(s, "charge", 500)]);
		await assert.rejects(
			exec(db(), "UPDATE billing.ledger SET amount_paise = 1 WHERE sender_id = $1", [s]),
			/append-only: UPDATE refused/,
		);
		await assert.rejects(
			exec(db(), "DELETE FROM billing.ledger WHERE sender_id = $1", [s]),
			/append-only: DELETE refused/,
		);
		assert.equal(await balancePaise(s), -500);
	});

	it("refuses a movement that is not integer paise or of an unknown kind, recording nothing of its batch", async () => {
		const s = newSender();
		for (const bad of [
			{ ...entry(s, "charge", 100), amount_paise: 1.5 },
			{ ...entry(s, "charge", 100), amount_paise: -1 },
			{ ...entry(s, "charge", 100), kind: "bonus" },
		]) {
			await assert.rejects(record([entry(s, "charge", 100), bad as LedgerEntryEvent]));
		}
		assert.equal((await select(db(), "SELECT 1 FROM billing.ledger WHERE sender_id = $1", [s])).length, 0);
	});

	it("mirrors the credit limit by version: an older or repeated version never overwrites a newer one", async () => {
		const s = newSender();
		const apply = (credit_limit_paise: number | null, version: number) =>
			broker.call("billing.applyCreditLimit", { sender_id: s, credit_limit_paise, version }) as Promise<{
				applied: boolean;
			}>;
		const limit = async () =>
			(
				await select<{ credit_limit_paise: string | null }>(
					db(),
					"SELECT credit_limit_paise FROM billing.accounts WHERE sender_id = $1",
					[s],
				)
			)[0]?.credit_limit_paise;
		assert.deepEqual(await apply(50_000, 2), { applied: true });
		assert.deepEqual(await apply(10_000, 1), { applied: false });
		assert.deepEqual(await apply(10_000, 2), { applied: false });
		assert.equal(await limit(), "50000");
		assert.deepEqual(await apply(null, 3), { applied: true });
		assert.equal(await limit(), null);
	});
});
