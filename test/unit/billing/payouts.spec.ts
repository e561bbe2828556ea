/**
 * COD payouts (issue 27; lib/billing/payouts.ts, docs/decisions/0104-cod-payouts.md)
 * through the real gateway and billing over PostgreSQL: the cycle's dates
 * (IST cycle days, the 7-day cut-off), a cycle run by ops (idempotent per
 * account and cycle), the merchant's payouts list, detail and summary (only
 * their own), and ops marking a payout paid with the UTR (shipments → `paid`;
 * the same UTR again unchanged, another 409).
 */
import assert from "node:assert/strict";
import { cutoffOf, isCycleDay, nextCycleDay } from "../../../lib/billing/payouts";
import { insertShipment } from "../../../lib/billing/store";
import type { CodShipment } from "../../../lib/contracts";
import { getSequelize, select } from "../../../lib/platform/db";
import { isCalendarDay, istDay } from "../../../lib/shared/ist-date";
import { newSender } from "../../helpers/broker";
import { freshId } from "../../helpers/fixtures";
import { http } from "../gateway/setup";
import { OPS_TOKEN, useBillingGateway } from "./setup";

describe("billing: COD payouts", function () {
	this.timeout(30_000);

	describe("cycle dates (IST)", () => {
		it("Tuesday and Friday are cycle days; the next one on or after a date; the cut-off is 6 days before midnight IST", () => {
			assert.equal(isCycleDay("2026-11-27"), true, "a Friday");
			assert.equal(isCycleDay("2026-12-01"), true, "a Tuesday");
			assert.equal(isCycleDay("2026-11-28"), false, "a Saturday");
			assert.equal(nextCycleDay("2026-11-28"), "2026-12-01");
			assert.equal(nextCycleDay("2026-12-01"), "2026-12-01");
			// delivered on 24 Nov (IST) or before: paid on 1 Dec
			assert.equal(cutoffOf("2026-12-01"), "2026-11-24T18:30:00.000Z");
			// a month 13 or a day 32 is no day (never a throw: a 500 on ops' and couriers' dates)
			for (const bad of ["2026-13-01", "2026-12-32", "2026-02-30", "2026-00-10"])
				assert.equal(isCalendarDay(bad), false, bad);
			assert.equal(isCalendarDay("2028-02-29"), true);
		});
	});

	describe("through the gateway", () => {
		const sys = useBillingGateway();
		const ops = (path: string, body: unknown) => http(sys.base, "POST", path, { body, token: OPS_TOKEN });

		/** A COD shipment of `sender` delivered at `at`, remitted by a courier file (the real reconciliation). */
		async function remitted(sender: number, at: string, paise: number, reference?: string): Promise<string> {
			const awb = `PY${freshId()}`;
			await insertShipment(getSequelize(), {
				awb_number: awb,
				seq: 6,
				target: "collected",
				at,
				sender_id: sender,
				order_id: freshId(),
				logistic_id: 1,
				payment_mode: "cod",
				cod_amount_paise: paise,
			});
			const r = await ops("/v1/ops/cod-remittances", {
				csv: `awb_number,amount,remittance_reference,remittance_date\n${awb},${(paise / 100).toFixed(2)},${reference ?? `REM-${awb}`},2026-11-20\n`,
			});
			assert.equal(r.body.matched, 1, r.text);
			return awb;
		}

		it("a cycle pays each account's remitted shipments delivered before its cut-off, once; the merchant reads it; ops mark it paid", async () => {
			const s = newSender();
			const other = newSender();
			const a = await remitted(s, "2026-11-20T10:00:00.000Z", 149_900);
			const b = await remitted(s, "2026-11-24T18:00:00.000Z", 50_050); // 24 Nov 23:30 IST: in
			const late = await remitted(s, "2026-11-24T19:00:00.000Z", 10_000); // 25 Nov 00:30 IST: next cycle
			await remitted(other, "2026-11-20T10:00:00.000Z", 20_000);

			const run = await ops("/v1/ops/payout-cycles", { cycle_date: "2026-12-01" });
			assert.equal(run.status, 200, run.text);
			assert.equal(run.body.cycle_date, "2026-12-01");
			assert.ok(run.body.payouts >= 2, run.text);
			const again = await ops("/v1/ops/payout-cycles", { cycle_date: "2026-12-01" });
			assert.deepEqual(again.body, { cycle_date: "2026-12-01", payouts: 0, shipments: 0, amount: 0 });

			const token = await sys.auth.tokenFor(s, "merchant_finance");
			const list = await http(sys.base, "GET", "/v1/remittances", { token });
			assert.equal(list.status, 200, list.text);
			assert.equal(list.body.data.length, 1);
			const p = list.body.data[0];
			assert.deepEqual(
				{ ...p, id: 0, created_at: "" },
				{
					id: 0,
					cycle_date: "2026-12-01",
					shipments: 2,
					gross_cod: 1999.5,
					deductions: 0,
					early_cod_fee: 0,
					settled_charges: 0,
					net: 1999.5,
					status: "scheduled",
					utr: null,
					paid_at: null,
					created_at: "",
				},
			);
			const detail = await http(sys.base, "GET", `/v1/remittances/${p.id}`, { token });
			assert.equal(detail.status, 200, detail.text);
			assert.deepEqual(
				detail.body.shipment_lines.map((l: { awb_number: string; cod_amount: number }) => [
					l.awb_number,
					l.cod_amount,
				]),
				[
					[a, 1499],
					[b, 500.5],
				],
			);
			const theirs = await http(sys.base, "GET", `/v1/remittances/${p.id}`, {
				token: await sys.auth.tokenFor(other),
			});
			assert.equal(theirs.status, 404);
			assert.deepEqual(theirs.body, { error: "remittance_not_found", message: "remittance not found" });

			const summary = await http(sys.base, "GET", "/v1/remittances/summary", { token });
			assert.equal(summary.status, 200, summary.text);
			assert.deepEqual(summary.body.remitted, { shipments: 1, amount: 100 }, "the late one waits");
			assert.deepEqual(summary.body.scheduled, { payouts: 1, amount: 1999.5 });
			assert.deepEqual(summary.body.collected, { shipments: 0, amount: 0 });
			// the next cycle day from today (IST), paying the late one only if it is past that cycle's cut-off
			const next = nextCycleDay(istDay());
			const lateIn = Date.parse("2026-11-24T19:00:00.000Z") < Date.parse(cutoffOf(next));
			assert.deepEqual(summary.body.next_payout, { date: next, amount: lateIn ? 100 : 0 });

			const paid = await ops(`/v1/ops/remittances/${p.id}/paid`, { utr: "UTR-12345" });
			assert.equal(paid.status, 200, paid.text);
			assert.equal(paid.body.status, "paid");
			assert.equal(paid.body.utr, "UTR-12345");
			const cod = (await sys.broker.call("billing.codStatus", {
				sender_id: s,
				awb_number: a,
			})) as CodShipment;
			assert.equal(cod.cod_status, "paid");
			const lateCod = (await sys.broker.call("billing.codStatus", {
				sender_id: s,
				awb_number: late,
			})) as CodShipment;
			assert.equal(lateCod.cod_status, "remitted");
			const same = await ops(`/v1/ops/remittances/${p.id}/paid`, { utr: "UTR-12345" });
			assert.deepEqual(same.body, paid.body);
			// webhook remittance.paid, once (the same UTR again adds none), about the account (no order)
			const events = await select<{ event: Record<string, any> }>(
				getSequelize(),
				"SELECT event FROM billing.event_outbox WHERE event->>'event_id' = $1",
				[`remittance.paid:${p.id}`],
			);
			assert.equal(events.length, 1);
			assert.equal(events[0].event.order_id, null);
			assert.equal(events[0].event.sender_id, s);
			assert.deepEqual(
				{ ...events[0].event.data, paid_at: "" },
				{
					remittance_id: p.id,
					cycle_date: "2026-12-01",
					shipments: 2,
					gross_cod: 1999.5,
					deductions: 0,
					net: 1999.5,
					utr: "UTR-12345",
					paid_at: "",
				},
			);
			const conflict = await ops(`/v1/ops/remittances/${p.id}/paid`, { utr: "UTR-99999" });
			assert.equal(conflict.status, 409);
			assert.equal(conflict.body.error, "payout_already_paid");
			const onlyPaid = await http(sys.base, "GET", "/v1/remittances?status=scheduled", { token });
			assert.deepEqual(onlyPaid.body.data, []);
			const paidList = await http(sys.base, "GET", "/v1/remittances?status=paid", { token });
			assert.deepEqual(
				paidList.body.data.map((x: { id: number }) => x.id),
				[p.id],
			);
			for (const [path, body] of [
				[`/v1/ops/remittances/${p.id}/paid`, { utr: "bad utr!" }],
				[`/v1/ops/remittances/${p.id}/paid`, {}],
				["/v1/ops/remittances/abc/paid", { utr: "UTR-1" }],
			] as const) {
				const r = await ops(path, body);
				assert.equal(r.status, 400, `${path} ${JSON.stringify(body)}: ${r.text}`);
				assert.equal(r.body.error, "validation_failed");
			}
			const missing = await ops("/v1/ops/remittances/999999999/paid", { utr: "UTR-1" });
			assert.equal(missing.status, 404);
			assert.equal(missing.body.error, "remittance_not_found");
		});

		it("per-account settings: own cycle days and delay; early COD pays after 2 days for its fee; owed charges settled from COD", async () => {
			const put = async (sender: number, body: unknown, role?: "merchant_finance") =>
				http(sys.base, "PUT", "/v1/remittances/settings", {
					body,
					token: await sys.auth.tokenFor(sender, role),
				});
			// defaults, then validation, then a read-only role refused
			const fresh = newSender();
			const dflt = await http(sys.base, "GET", "/v1/remittances/settings", {
				token: await sys.auth.tokenFor(fresh, "merchant_finance"),
			});
			assert.equal(dflt.status, 200, dflt.text);
			assert.deepEqual(
				{ ...dflt.body, next_payout_date: "" },
				{
					cycle_days: ["tuesday", "friday"],
					delay_days: 7,
					early_cod: false,
					early_cod_delay_days: 2,
					early_cod_fee_bp: 150,
					settle_charges_from_cod: false,
					next_payout_date: "",
				},
			);
			const bad = await put(fresh, { cycle_days: ["funday"], delay_days: 3 });
			assert.equal(bad.status, 400, bad.text);
			assert.equal(bad.body.error, "validation_failed");
			assert.equal((await put(fresh, { early_cod: true }, "merchant_finance")).status, 403);

			// a Wednesday account (delay 10): paid on a Wednesday, not on the default Tuesday
			const wed = newSender();
			const w = await put(wed, { cycle_days: ["wednesday"], delay_days: 10 });
			assert.equal(w.status, 200, w.text);
			assert.deepEqual(w.body.cycle_days, ["wednesday"]);
			assert.equal(new Date(`${w.body.next_payout_date}T00:00:00Z`).getUTCDay(), 3);
			await remitted(wed, "2026-11-22T10:00:00.000Z", 30_000); // 22 Nov IST: ≥ 10 days before 2 Dec
			await remitted(wed, "2026-11-24T10:00:00.000Z", 40_000); // 24 Nov: < 10 days before 2 Dec
			await ops("/v1/ops/payout-cycles", { cycle_date: "2026-12-08" }); // a Tuesday
			const token = await sys.auth.tokenFor(wed);
			assert.deepEqual((await http(sys.base, "GET", "/v1/remittances", { token })).body.data, []);
			await ops("/v1/ops/payout-cycles", { cycle_date: "2026-12-02" });
			const [wp] = (await http(sys.base, "GET", "/v1/remittances", { token })).body.data;
			assert.deepEqual([wp.cycle_date, wp.shipments, wp.gross_cod], ["2026-12-02", 1, 300]);

			// early COD with settlement: delivered 29 Nov (IST), paid on Tuesday 1 Dec; fee 1.5 %; the ₹40 owed settled
			const early = newSender();
			assert.equal((await put(early, { early_cod: true, settle_charges_from_cod: true })).status, 200);
			await sys.broker.call("billing.recordEntries", {
				entries: [
					{
						sender_id: early,
						attempt_id: freshId(),
						order_id: freshId(),
						kind: "charge",
						amount_paise: 4000,
						awb_number: null,
						note: null,
						occurred_at: new Date().toISOString(),
					},
				],
			});
			await remitted(early, "2026-11-29T10:00:00.000Z", 100_000);
			await remitted(early, "2026-11-30T10:00:00.000Z", 50_000); // 30 Nov: under 2 days before 1 Dec
			await ops("/v1/ops/payout-cycles", { cycle_date: "2026-12-01" });
			const et = await sys.auth.tokenFor(early);
			const [ep] = (await http(sys.base, "GET", "/v1/remittances", { token: et })).body.data;
			assert.deepEqual(
				[ep.shipments, ep.gross_cod, ep.early_cod_fee, ep.settled_charges, ep.deductions, ep.net],
				[1, 1000, 15, 40, 55, 945],
			);
			const wallet = await http(sys.base, "GET", "/v1/wallet", { token: et });
			assert.equal(wallet.body.balance, 0, "the charges owed were settled");
			assert.deepEqual(
				wallet.body.data.map((m: { kind: string; amount: number; order_id: number | null }) => [
					m.kind,
					m.amount,
					m.order_id,
				])[0],
				["cod_settlement", 40, null],
			);
			// the database holds the parts together: deductions = fee + settled, net = gross − deductions
			await assert.rejects(
				getSequelize().query(
					`INSERT INTO billing.payouts (sender_id, cycle_date, shipments, gross_paise, deductions_paise,
						early_cod_fee_paise, settled_charges_paise, net_paise) VALUES ($1, '2030-01-01', 1, 100, 10, 0, 0, 90)`,
					{ bind: [early] },
				),
				/payouts_amounts_add_up/,
			);
			// a second run settles nothing twice
			await ops("/v1/ops/payout-cycles", { cycle_date: "2026-12-01" });
			assert.equal((await http(sys.base, "GET", "/v1/wallet", { token: et })).body.balance, 0);
		});

		it("pages payouts with a signed cursor and validates the query; the ops routes refuse a merchant's token", async () => {
			const s = newSender();
			// delivered so that each cycle (cut-offs 28 Oct, 31 Oct, 4 Nov IST) pays exactly one
			for (const [i, at] of [
				"2026-10-26T10:00:00.000Z",
				"2026-10-29T10:00:00.000Z",
				"2026-11-02T10:00:00.000Z",
			].entries())
				await remitted(s, at, 1_000 + i);
			for (const day of ["2026-11-03", "2026-11-06", "2026-11-10"]) {
				const r = await ops("/v1/ops/payout-cycles", { cycle_date: day });
				assert.ok(r.body.payouts >= 1, `${day}: ${r.text}`);
			}
			const token = await sys.auth.tokenFor(s);
			const p1 = await http(sys.base, "GET", "/v1/remittances?limit=1", { token });
			assert.equal(p1.status, 200, p1.text);
			assert.equal(p1.body.data.length, 1);
			const next = p1.body.pagination.nextCursor as string;
			assert.ok(next);
			const p2 = await http(sys.base, "GET", `/v1/remittances?limit=1&cursor=${next}`, { token });
			assert.equal(p2.status, 200);
			assert.equal(p2.body.data.length, 1);
			assert.ok(p2.body.data[0].id < p1.body.data[0].id, "newest first");
			const all = await http(sys.base, "GET", "/v1/remittances", { token });
			assert.deepEqual(
				all.body.data.map((x: { cycle_date: string }) => x.cycle_date),
				["2026-11-10", "2026-11-06", "2026-11-03"],
			);
			for (const q of ["limit=0", "limit=1001", "status=due"]) {
				const r = await http(sys.base, "GET", `/v1/remittances?${q}`, { token });
				assert.equal(r.status, 400, q);
				assert.equal(r.body.error, "validation_failed", q);
			}
			const foreign = await http(sys.base, "GET", `/v1/remittances?cursor=${next}`, {
				token: await sys.auth.tokenFor(newSender()),
			});
			assert.equal(foreign.status, 400);
			const asMerchant = await http(sys.base, "POST", "/v1/ops/payout-cycles", { body: {}, token });
			assert.equal(asMerchant.status, 401);
			const today = await ops("/v1/ops/payout-cycles", {});
			assert.equal(today.status, 200, today.text);
			assert.equal(today.body.cycle_date, istDay(), "no cycle_date: today's, in IST");
			const badDate = await ops("/v1/ops/payout-cycles", { cycle_date: "2026-02-30" });
			assert.equal(badDate.status, 400);
			assert.equal(badDate.body.error, "validation_failed");
		});

		it("exports a payout's shipments as a spreadsheet-safe CSV attachment; another account's is 404", async () => {
			const s = newSender();
			const awb = await remitted(s, "2026-11-12T10:00:00.000Z", 123_400, "=1+2");
			const run = await ops("/v1/ops/payout-cycles", { cycle_date: "2026-11-24" });
			assert.ok(run.body.payouts >= 1, run.text);
			const token = await sys.auth.tokenFor(s);
			const [p] = (await http(sys.base, "GET", "/v1/remittances", { token })).body.data;
			const r = await fetch(`${sys.base}/v1/remittances/${p.id}/export.csv`, {
				headers: { authorization: `Bearer ${token}` },
			});
			assert.equal(r.status, 200);
			assert.match(String(r.headers.get("content-type")), /^text\/csv/);
			assert.equal(
				r.headers.get("content-disposition"),
				`attachment; filename="payout-${p.id}-2026-11-24.csv"`,
			);
			const bytes = Buffer.from(await r.arrayBuffer());
			assert.deepEqual([...bytes.subarray(0, 3)], [0xef, 0xbb, 0xbf], "UTF-8 byte-order mark");
			const lines = bytes.subarray(3).toString("utf8").split("\r\n");
			assert.equal(
				lines[0],
				"payout_id,cycle_date,awb_number,order_id,cod_amount,collected_at,remittance_reference,remitted_on,payout_status,utr",
			);
			const cells = lines[1].split(",");
			assert.deepEqual(
				[cells[0], cells[1], cells[2], cells[4], cells[5], cells[6], cells[7], cells[8], cells[9]],
				[
					String(p.id),
					"2026-11-24",
					awb,
					"1234.00",
					"2026-11-12T10:00:00.000Z",
					"'=1+2",
					"2026-11-20",
					"scheduled",
					"",
				],
			);
			assert.equal(lines.length, 3, "one shipment line, then the final CRLF");
			const theirs = await http(sys.base, "GET", `/v1/remittances/${p.id}/export.csv`, {
				token: await sys.auth.tokenFor(newSender()),
			});
			assert.equal(theirs.status, 404);
		});
	});
});
