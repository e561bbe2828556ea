/**
 * The wallet: booking's append-only ledger (lib/booking/store/ledger.ts),
 * carried to the billing service by booking's outbox, and `GET /v1/wallet`
 * (`billing.wallet`: balance, credit limit, movements newest first, signed
 * cursors; docs/decisions/0101-billing-service.md), the ops action
 * `booking.setCreditLimit` (mirrored to billing) and the credit check of a
 * new booking (409 `credit_limit_exceeded`).
 * Real booking, billing and simulator services, PostgreSQL and Redis; fakes
 * of intake, warehouses and rates in ./setup.ts (quoted total = 118 +
 * logistic_id rupees).
 */
import assert from "node:assert/strict";
import type { Transaction } from "sequelize";
import { BOOKING_MIGRATIONS } from "../../../lib/booking/migrations";
import { assertCredit, chargedPaise, recordLedger } from "../../../lib/booking/store/ledger";
import { encodeCursor } from "../../../lib/platform/cursor";
import { exec, getSequelize, select } from "../../../lib/platform/db";
import { errorBodyOf } from "../../../lib/platform/errors";
import { as, newSender, rejects } from "../../helpers/broker";
import { callAs } from "../../helpers/call";
import { freshId } from "../../helpers/fixtures";
import { eventually } from "../../helpers/poll";
import { addOrder, attemptsOf, book, useBookingBroker } from "./setup";

const db = () => getSequelize();

/** Inserts an attempt row directly (quoted total in paise, or no charges). */
async function attemptRow(sender_id: number, total_paise: number | null, state = "booked"): Promise<number> {
	const charges =
		total_paise === null
			? null
			: JSON.stringify({
					freight_charge: total_paise,
					cod_charge: 0,
					shipping_charge_tax: 0,
					total: total_paise,
					rto_charge: 0,
					zone: "D",
					weight: 0.5,
				});
	const { rows } = await exec<{ attempt_id: string }>(
		db(),
		`INSERT INTO booking.attempts (order_id, sender_id, logistic_id, courier_name, mode, state, charges)
		 VALUES ($1, $2, 1, 'Sandbox Express', 'forced', $3, $4::jsonb) RETURNING attempt_id`,
		[freshId(), sender_id, state, charges],
	);
	return Number(rows[0].attempt_id);
}

/** Records a movement of an attempt in its own transaction; true when inserted. */
async function record(attempt_id: number, kind: "charge" | "refund", amount_paise: number): Promise<boolean> {
	const [a] = await select<{ sender_id: string; order_id: string }>(
		db(),
		"SELECT sender_id, order_id FROM booking.attempts WHERE attempt_id = $1",
		[attempt_id],
	);
	return db().transaction((t) =>
		recordLedger(db(), t, {
			sender_id: Number(a.sender_id),
			attempt_id,
			order_id: Number(a.order_id),
			kind,
			amount_paise,
			awb_number: kind === "charge" ? `AWB${attempt_id}` : null,
			note: `${kind} of ${attempt_id}`,
		}),
	);
}

async function ledgerRows(attempt_id: number): Promise<{ kind: string; amount_paise: string }[]> {
	return select(db(), "SELECT kind, amount_paise FROM booking.ledger WHERE attempt_id = $1 ORDER BY id", [
		attempt_id,
	]);
}

describe("booking: wallet", function () {
	this.timeout(40_000);
	const broker = useBookingBroker();
	const wallet = (sender: number, q: Record<string, unknown> = {}, role?: Parameters<typeof as>[1]) =>
		callAs(broker(), "billing.wallet", q, as(sender, role)) as Promise<any>;
	/** The wallet once billing holds `n` movements of the account (booking's outbox delivers them). */
	const settled = (sender: number, n: number) =>
		eventually(
			async () => {
				const w = await wallet(sender, { limit: 1000 });
				return w.data.length === n ? w : undefined;
			},
			{ what: `${n} wallet movements of ${sender}` },
		);
	const setLimit = (sender_id: number, credit_limit: number | null) =>
		callAs(broker(), "booking.setCreditLimit", { sender_id, credit_limit }) as Promise<any>;
	/** The §2.11 answer of a refused wallet read. */
	const refusedWallet = async (sender: number, q: Record<string, unknown>) =>
		errorBodyOf(await rejects(() => wallet(sender, q)));

	describe("ledger (lib/booking/store/ledger.ts)", () => {
		it("recordLedger is idempotent per (attempt, kind): one charge, one refund, never twice", async () => {
			const a = await attemptRow(newSender(), 11_900);
			assert.equal(await chargedPaise(db(), a), null);
			assert.equal(await record(a, "charge", 11_900), true);
			assert.equal(await record(a, "charge", 11_900), false);
			assert.equal(await record(a, "charge", 99_999), false, "a retry with another amount changes nothing");
			assert.equal(await chargedPaise(db(), a), 11_900);
			assert.equal(await record(a, "refund", 11_900), true);
			assert.equal(await record(a, "refund", 11_900), false);
			assert.deepEqual(await ledgerRows(a), [
				{ kind: "charge", amount_paise: "11900" },
				{ kind: "refund", amount_paise: "11900" },
			]);
		});

		it("recordLedger under concurrency: of 8 racing transactions exactly one inserts", async () => {
			const a = await attemptRow(newSender(), 12_000);
			const results = await Promise.all(Array.from({ length: 8 }, () => record(a, "charge", 12_000)));
			assert.equal(results.filter(Boolean).length, 1);
			assert.deepEqual(await ledgerRows(a), [{ kind: "charge", amount_paise: "12000" }]);
		});

		it("recordLedger rolls back with its transaction and refuses a non-integer amount", async () => {
			const a = await attemptRow(newSender(), 100);
			await assert.rejects(
				db().transaction(async (t) => {
					await recordLedger(db(), t, {
						sender_id: 1,
						attempt_id: a,
						order_id: 1,
						kind: "charge",
						amount_paise: 100,
					});
					throw new Error("the booking transaction failed");
				}),
				/the booking transaction failed/,
			);
			assert.deepEqual(await ledgerRows(a), []);
			await assert.rejects(record(a, "charge", 1.5), /integer of paise/);
			await assert.rejects(record(a, "charge", -1), /integer of paise/);
		});
	});

	describe("the move to billing (booking migration 011-ledger-to-billing)", () => {
		it("carries a movement recorded before the migration to billing, once, even when the migration's copy is repeated", async () => {
			const s = newSender();
			const a = await attemptRow(s, 7_700);
			// a row written before migration 011 existed: no trigger, so no outbox row
			await db().transaction(async (t: Transaction) => {
				await exec(db(), "ALTER TABLE booking.ledger DISABLE TRIGGER ledger_to_billing", [], t);
				await exec(
					db(),
					`INSERT INTO booking.ledger (sender_id, attempt_id, order_id, kind, amount_paise, awb_number, note,
						created_at)
					 SELECT sender_id, attempt_id, order_id, 'charge', 7700, 'AWB-OLD', 'before the move',
						'2026-01-02T03:04:05.678901Z' FROM booking.attempts WHERE attempt_id = $1`,
					[a],
					t,
				);
				await exec(db(), "ALTER TABLE booking.ledger ENABLE TRIGGER ledger_to_billing", [], t);
			});
			const m = BOOKING_MIGRATIONS.find((x) => x.name === "011-ledger-to-billing");
			assert.ok(m);
			// the migration's history copy, twice (billing records each movement once)
			for (let i = 0; i < 2; i++)
				await db().transaction((transaction: Transaction) =>
					m.up({ sequelize: db(), schema: "booking", transaction }),
				);
			const w = await settled(s, 1);
			assert.deepEqual(
				w.data.map((x: any) => [x.kind, x.attempt_id, x.amount, x.awb_number, x.note, x.created_at]),
				[["charge", a, 77, "AWB-OLD", "before the move", "2026-01-02T03:04:05.678Z"]],
			);
			assert.equal(w.balance, -77);
			// still one row once the relay has delivered every copy
			await eventually(
				async () =>
					(
						await select<{ n: string }>(
							db(),
							`SELECT count(*) AS n FROM booking.outbox
							 WHERE kind = 'ledger_entry' AND delivered_at IS NULL AND (payload->>'attempt_id')::bigint = $1`,
							[a],
						)
					)[0].n === "0" || undefined,
				{ what: "the copies delivered" },
			);
			assert.equal((await settled(s, 1)).balance, -77);
		});
	});

	describe("GET /v1/wallet (billing.wallet)", () => {
		it("answers balance = refunds − charges and the movements newest first, in rupees", async () => {
			const s = newSender();
			const a1 = await attemptRow(s, 11_950);
			const a2 = await attemptRow(s, 12_000);
			await record(a1, "charge", 11_950);
			await record(a2, "charge", 12_000);
			await record(a1, "refund", 11_950);
			await settled(s, 3);
			const w = await wallet(s);
			assert.equal(w.balance, -120);
			assert.equal(w.credit_limit, null);
			assert.deepEqual(
				w.data.map((m: any) => [m.kind, m.attempt_id, m.amount]),
				[
					["refund", a1, 119.5],
					["charge", a2, 120],
					["charge", a1, 119.5],
				],
			);
			const charge = w.data[2];
			assert.deepEqual(Object.keys(charge).sort(), [
				"amount",
				"attempt_id",
				"awb_number",
				"created_at",
				"id",
				"kind",
				"note",
				"order_id",
			]);
			assert.equal(charge.awb_number, `AWB${a1}`);
			assert.equal(charge.note, `charge of ${a1}`);
			assert.match(charge.created_at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
			assert.deepEqual(w.pagination, { mode: "cursor", limit: 20, nextCursor: null });
		});

		it("pages with nextCursor across pages until null; every movement exactly once", async () => {
			const s = newSender();
			for (let i = 1; i <= 5; i++) await record(await attemptRow(s, i * 100), "charge", i * 100);
			await settled(s, 5);
			const seen: number[] = [];
			const attempts: number[] = [];
			const sizes: number[] = [];
			let cursor: string | undefined;
			for (let page = 0; page < 10; page++) {
				const w = await wallet(s, { limit: "2", ...(cursor ? { cursor } : {}) });
				assert.equal(w.balance, -15, "the balance covers the whole ledger on every page");
				assert.equal(w.pagination.limit, 2);
				sizes.push(w.data.length);
				seen.push(...w.data.map((m: any) => m.id));
				attempts.push(...w.data.map((m: any) => m.attempt_id));
				cursor = w.pagination.nextCursor ?? undefined;
				if (!cursor) break;
				assert.match(cursor, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
			}
			assert.deepEqual(sizes, [2, 2, 1]);
			// newest first: in the order booking recorded them (attempt by attempt here), whatever order
			// billing received them in
			assert.deepEqual(
				attempts,
				[...attempts].sort((x, y) => y - x),
				"newest first",
			);
			assert.equal(new Set(seen).size, 5);
			// a page that ends exactly at the last movement says so
			const exact = await wallet(s, { limit: 5 });
			assert.equal(exact.data.length, 5);
			assert.equal(exact.pagination.nextCursor, null);
		});

		it("refuses a tampered, foreign, other-list or made-up cursor with 400 cursor: unrecognised shape", async () => {
			const s = newSender();
			const other = newSender();
			for (let i = 0; i < 3; i++) await record(await attemptRow(s, 100), "charge", 100);
			await settled(s, 3);
			const next = (await wallet(s, { limit: 1 })).pagination.nextCursor as string;
			assert.ok(next);
			const [payload, sig] = next.split(".");
			const forged = Buffer.from(JSON.stringify({ k: "wallet", p: { s: other, id: 1 } })).toString(
				"base64url",
			);
			const bad = [
				`${payload}.${sig.startsWith("A") ? "B" : "A"}${sig.slice(1)}`,
				`${forged}.${sig}`,
				encodeCursor("orders", { s, id: 1 }),
				encodeCursor("wallet", { s, id: -1 }),
				"eyJrIjoid2FsbGV0In0",
				"garbage",
				["a", "b"],
			];
			const envelope = {
				status: 400,
				body: { error: "cursor: unrecognised shape", message: "cursor: unrecognised shape" },
			};
			for (const cursor of bad)
				assert.deepEqual(await refusedWallet(s, { cursor }), envelope, String(cursor));
			// another account's (genuine) cursor is not this account's
			assert.deepEqual(await refusedWallet(other, { cursor: next }), envelope);
			// the genuine one works for its account
			assert.equal((await wallet(s, { limit: 1, cursor: next })).data.length, 1);
		});

		it("validates limit: integers 1–1000, default 20", async () => {
			const s = newSender();
			for (const limit of ["0", "1001", "-1", "1.5", "abc", "1e2", 0, 2.5, true]) {
				assert.deepEqual(await refusedWallet(s, { limit }), {
					status: 400,
					body: {
						error: "validation_failed",
						message: "limit: must be an integer from 1 to 1000",
						details: ["limit: must be an integer from 1 to 1000"],
					},
				});
			}
			assert.equal((await wallet(s, { limit: "1000" })).pagination.limit, 1000);
			assert.equal((await wallet(s, { limit: 1 })).pagination.limit, 1);
			assert.equal((await wallet(s, { limit: "" })).pagination.limit, 20);
		});

		it("shows only the caller's account; read-only roles may read; no user is 401", async () => {
			const s = newSender();
			const other = newSender();
			await record(await attemptRow(s, 5_000), "charge", 5_000);
			await settled(s, 1);
			const mine = await wallet(s, {}, "merchant_finance");
			assert.equal(mine.balance, -50);
			assert.equal(mine.data.length, 1);
			const theirs = await wallet(other, {}, "merchant_staff");
			assert.deepEqual(theirs, {
				balance: 0,
				credit_limit: null,
				data: [],
				pagination: { mode: "cursor", limit: 20, nextCursor: null },
			});
			const anon = errorBodyOf(await rejects(() => callAs(broker(), "billing.wallet", {})));
			assert.equal(anon?.status, 401);
		});
	});

	describe("credit limit", () => {
		it("booking.setCreditLimit sets (rupees), shows in the wallet, and null removes it", async () => {
			const s = newSender();
			const limitShown = (v: number | null) =>
				eventually(async () => ((await wallet(s)).credit_limit === v ? true : undefined), {
					what: `credit limit ${v} in the wallet`,
				});
			assert.deepEqual(await setLimit(s, 2500.5), { sender_id: s, credit_limit: 2500.5 });
			await limitShown(2500.5);
			assert.deepEqual(await setLimit(s, 0), { sender_id: s, credit_limit: 0 });
			await limitShown(0);
			assert.deepEqual(await setLimit(s, null), { sender_id: s, credit_limit: null });
			await limitShown(null);
			const [acc] = await select<{ version: string }>(
				db(),
				"SELECT version FROM booking.accounts WHERE sender_id = $1",
				[s],
			);
			assert.equal(Number(acc.version), 3, "each change a new version");
			await assert.rejects(setLimit(s, -1));
		});

		it("assertCredit: no limit → anything goes; else charges − refunds + live unbooked quotes + needed ≤ limit", async () => {
			const s = newSender();
			const check = (needed: number) =>
				db().transaction((t: Transaction) => assertCredit(db(), t, s, needed));
			await check(10_000_000_00);
			const booked = await attemptRow(s, 11_900);
			await record(booked, "charge", 11_900);
			const refunded = await attemptRow(s, 5_000);
			await record(refunded, "charge", 5_000);
			await record(refunded, "refund", 5_000);
			await attemptRow(s, 12_000, "queued");
			await attemptRow(s, 1_000, "claimed");
			await attemptRow(s, 99_999, "failed"); // settled without a charge: not outstanding
			await setLimit(s, 300);
			// outstanding 119 + 120 + 10 = 249 rupees
			await check(5_100); // exactly 300
			const err = await rejects(() => check(5_101));
			assert.deepEqual(errorBodyOf(err), {
				status: 409,
				body: {
					error: "credit_limit_exceeded",
					message:
						"this booking (₹51.01) would take the account's outstanding ₹249 beyond its credit limit of ₹300",
					credit_limit: 300,
					outstanding: 249,
					needed: 51.01,
				},
			});
			// another account's limit and ledger are not this one's
			const other = newSender();
			await db().transaction((t: Transaction) => assertCredit(db(), t, other, 10_000_000_00));
		});

		it("assertCredit serialises one account's concurrent bookings: only what fits is created", async () => {
			const s = newSender();
			await setLimit(s, 250);
			// each "booking" checks 100 rupees and then inserts its queued attempt, in one transaction
			const one = () =>
				db().transaction(async (t: Transaction) => {
					await assertCredit(db(), t, s, 10_000);
					await exec(
						db(),
						`INSERT INTO booking.attempts (order_id, sender_id, logistic_id, courier_name, mode, state, charges)
						 VALUES ($1, $2, 1, 'Sandbox Express', 'forced', 'queued', '{"total": 10000}'::jsonb)`,
						[freshId(), s],
						t,
					);
				});
			const results = await Promise.allSettled(Array.from({ length: 5 }, one));
			assert.equal(results.filter((r) => r.status === "fulfilled").length, 2);
			for (const r of results.filter((x) => x.status === "rejected")) {
				assert.equal(errorBodyOf((r as PromiseRejectedResult).reason)?.body.error, "credit_limit_exceeded");
			}
			const [n] = await select<{ n: string }>(
				db(),
				"SELECT count(*) AS n FROM booking.attempts WHERE sender_id = $1",
				[s],
			);
			assert.equal(Number(n.n), 2);
		});

		it("booking.book beyond the limit → 409 credit_limit_exceeded; the booking within it is charged once booked", async () => {
			const s = newSender();
			await setLimit(s, 150);
			const first = addOrder(s);
			const second = addOrder(s);
			const ok = await book(broker(), s, { order_id: first.order_id, logistic_id: 1 });
			assert.equal(ok.status, 202);
			const err = await rejects(() => book(broker(), s, { order_id: second.order_id, logistic_id: 1 }));
			assert.deepEqual(errorBodyOf(err)?.body, {
				error: "credit_limit_exceeded",
				message:
					"this booking (₹119) would take the account's outstanding ₹119 beyond its credit limit of ₹150",
				credit_limit: 150,
				outstanding: 119,
				needed: 119,
			});
			assert.equal(errorBodyOf(err)?.status, 409);
			assert.deepEqual(await attemptsOf(second.order_id), [], "nothing committed for the refused booking");
			const charged = await eventually(
				async () => {
					const w = await wallet(s);
					return w.data.length && w.credit_limit === 150 ? w : undefined;
				},
				{ what: "the charge of the first booking and the limit in the wallet" },
			);
			const [attempt] = await attemptsOf(first.order_id);
			assert.equal(attempt.state, "booked");
			assert.deepEqual(
				charged.data.map((m: any) => [m.kind, m.order_id, m.attempt_id, m.amount, m.awb_number]),
				[["charge", first.order_id, Number(attempt.attempt_id), 119, attempt.awb_number]],
			);
			assert.equal(charged.balance, -119);
			assert.equal(charged.credit_limit, 150);
		});
	});
});
