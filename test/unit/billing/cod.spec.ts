/**
 * COD money per shipment (issue 27; lib/billing/cod.ts, lib/billing/remittance.ts,
 * docs/decisions/0102-cod-remittance.md): the `cod_status` billing keeps
 * from the `shipment.status_changed` channel (pending → collected, or
 * not_collected; only forward, only newer events), and the reconciliation of
 * a courier's remittance file line by line (remitted, or an exception of
 * each kind; a file once; two files never both paying one AWB).
 * Real billing service, durable channel and PostgreSQL; a fake intake answers
 * the orders.
 */
import assert from "node:assert/strict";
import type { ServiceBroker } from "moleculer";
import { insertShipment, type NewShipment } from "../../../lib/billing/store";
import {
	type CodShipment,
	type CodStatusUpdate,
	type OrderRecord,
	type RemittanceReport,
	SHIPMENT_STATUS_CHANNEL,
	type ShipmentStatusChanged,
} from "../../../lib/contracts";
import { publishToChannel } from "../../../lib/platform/channels";
import { getSequelize, select } from "../../../lib/platform/db";
import { newSender, startBroker } from "../../helpers/broker";
import { fakeService } from "../../helpers/call";
import { freshId } from "../../helpers/fixtures";
import { eventually } from "../../helpers/poll";

describe("billing: COD status and courier remittances", function () {
	this.timeout(60_000);
	let broker: ServiceBroker;
	/** order id → payment of the fake intake's order (absent: unknown order) */
	const orders = new Map<number, { cod: boolean; cod_amount: number }>();
	const asked: number[] = [];
	/** what billing's outbox delivered to intake, in delivery order */
	const delivered: CodStatusUpdate[] = [];
	before(async () => {
		broker = await startBroker(["billing"]);
		broker.createService(
			fakeService("intake", {
				applyCodStatuses(ctx) {
					delivered.push(...ctx.params.items);
					return { applied: ctx.params.items.length };
				},
				getOrder(ctx) {
					asked.push(ctx.params.order_id);
					const o = orders.get(ctx.params.order_id);
					if (!o) return null;
					return {
						order_id: ctx.params.order_id,
						sender_id: ctx.params.sender_id,
						payment_mode: o.cod ? "cod" : "prepaid",
						product: { cod_amount: o.cod ? o.cod_amount : null },
					} as unknown as OrderRecord;
				},
			}),
		);
		await broker.waitForServices(["intake"], 10_000, 10);
	});
	after(() => broker?.stop());

	const db = () => getSequelize();
	const codStatus = (sender_id: number, awb_number: string) =>
		broker.call("billing.codStatus", { sender_id, awb_number }) as Promise<CodShipment | null>;
	const reconcile = (csv: string, logistic_id?: number) =>
		broker.call("billing.reconcileRemittance", {
			csv,
			...(logistic_id ? { logistic_id } : {}),
		}) as Promise<RemittanceReport>;

	/** Publishes a status change of `awb` (as booking's relay does). */
	async function status(
		o: { sender: number; order_id: number; awb: string },
		seq: number,
		s: ShipmentStatusChanged["status"],
		at = new Date().toISOString(),
	) {
		const e: ShipmentStatusChanged = {
			event_id: `${o.order_id}-${seq}`,
			order_id: o.order_id,
			sender_id: o.sender,
			awb_number: o.awb,
			logistic_id: 1,
			status: s,
			status_name: s,
			status_at: at,
			seq,
		};
		await publishToChannel(broker, SHIPMENT_STATUS_CHANNEL, e, { msgId: e.event_id });
	}

	/** billing's row of `awb`, once `ok` holds. */
	const rowWhen = (awb: string, ok: (r: Record<string, any>) => boolean, what: string) =>
		eventually(
			async () =>
				(
					await select<Record<string, any>>(db(), "SELECT * FROM billing.shipments WHERE awb_number = $1", [
						awb,
					])
				)[0],
			{ what, ok: (r) => !!r && ok(r) },
		);

	/** A new COD (or prepaid) order of the fake intake. */
	function order(cod: boolean, cod_amount = 1499) {
		const order_id = freshId();
		orders.set(order_id, { cod, cod_amount });
		return { sender: newSender(), order_id, awb: `COD${order_id}` };
	}

	describe("cod_status from shipment status changes", () => {
		it("pending when shipped, collected on delivery; an older change arriving late moves nothing back", async () => {
			const o = order(true, 1499.5);
			await status(o, 2, "booked");
			await rowWhen(o.awb, (r) => r.cod_status === "pending", "pending");
			assert.deepEqual(await codStatus(o.sender, o.awb), {
				awb_number: o.awb,
				cod_status: "pending",
				cod_amount: 1499.5,
				collected_at: null,
				remittance: null,
			});
			await status(o, 6, "delivered", "2026-05-03T10:00:00.000Z");
			await rowWhen(o.awb, (r) => r.cod_status === "collected", "collected");
			await status(o, 5, "out_for_delivery");
			await status(o, 7, "rto_initiated"); // a newer change after delivery: the cash is collected
			const r = await rowWhen(o.awb, (x) => x.status_seq === 7, "seq 7 applied");
			assert.equal(r.cod_status, "collected");
			const c = await codStatus(o.sender, o.awb);
			assert.equal(c?.collected_at, "2026-05-03T10:00:00.000Z");
			assert.equal(asked.filter((id) => id === o.order_id).length, 1, "intake asked once per shipment");
			assert.equal(await codStatus(newSender(), o.awb), null, "another sender's shipment is not theirs");
		});

		it("every COD status a shipment takes reaches intake through billing's outbox, its version growing", async () => {
			const o = order(true);
			await status(o, 2, "picked_up");
			await rowWhen(o.awb, (r) => r.cod_status === "pending", "pending");
			await status(o, 6, "delivered");
			await rowWhen(o.awb, (r) => r.cod_status === "collected", "collected");
			const mine = await eventually(async () => delivered.filter((d) => d.awb_number === o.awb), {
				what: "both statuses delivered to intake",
				ms: 15_000,
				ok: (x) => x.length >= 2,
			});
			assert.deepEqual(
				mine.map((d) => [d.cod_status, d.version, d.sender_id, d.order_id]),
				[
					["pending", 1, o.sender, o.order_id],
					["collected", 2, o.sender, o.order_id],
				],
			);
			// the relay marks a row delivered after intake acknowledged it: soon after, not before, intake saw it
			const left = await eventually(
				async () =>
					Number(
						(
							await select<{ n: string }>(
								db(),
								"SELECT count(*) AS n FROM billing.outbox WHERE delivered_at IS NULL AND payload->>'awb_number' = $1",
								[o.awb],
							)
						)[0].n,
					),
				{ what: "the acknowledged rows marked delivered", ms: 10_000, ok: (n) => n === 0 },
			);
			assert.equal(left, 0, "acknowledged rows are marked delivered");
		});

		it("not_collected on RTO, lost, damaged or cancelled; a delivery after an RTO start still collects", async () => {
			for (const s of ["rto_initiated", "lost", "damaged", "cancelled"] as const) {
				const o = order(true);
				await status(o, 2, "booked");
				await status(o, 4, s);
				await rowWhen(
					o.awb,
					(r) => r.cod_status === "not_collected" && r.not_collected_at,
					`${s}: not collected`,
				);
			}
			const o = order(true);
			await status(o, 3, "rto_initiated");
			await rowWhen(o.awb, (r) => r.cod_status === "not_collected", "rto");
			await status(o, 4, "delivered");
			await rowWhen(o.awb, (r) => r.cod_status === "collected", "delivered after all");
		});

		it("prepaid shipments carry no cod_status; an order intake does not know is skipped", async () => {
			const p = order(false);
			await status(p, 2, "booked");
			const r = await rowWhen(p.awb, (x) => x.payment_mode === "prepaid", "prepaid recorded");
			assert.equal(r.cod_status, null);
			assert.equal(await codStatus(p.sender, p.awb), null);
			const unknown = { sender: newSender(), order_id: freshId(), awb: `UNK${freshId()}` };
			await status(unknown, 2, "booked");
			await eventually(() => asked.includes(unknown.order_id) || undefined, { what: "intake asked" });
			await new Promise((r) => setTimeout(r, 200));
			assert.equal(
				(await select(db(), "SELECT 1 FROM billing.shipments WHERE awb_number = $1", [unknown.awb])).length,
				0,
			);
		});
	});

	describe("courier remittance files", () => {
		/** A shipment as billing holds it, `cod_status` reached through the real rules. */
		async function shipment(
			cod_status: "pending" | "collected" | "not_collected" | "prepaid",
			cod_amount_paise = 149_900,
			logistic_id = 1,
		): Promise<{ awb: string; sender: number }> {
			const order_id = freshId();
			const n: NewShipment = {
				awb_number: `RM${order_id}`,
				seq: 5,
				target: cod_status === "prepaid" ? "pending" : cod_status,
				at: new Date().toISOString(),
				sender_id: newSender(),
				order_id,
				logistic_id,
				payment_mode: cod_status === "prepaid" ? "prepaid" : "cod",
				cod_amount_paise,
			};
			await insertShipment(db(), n);
			return { awb: n.awb_number, sender: n.sender_id };
		}
		const csvOf = (lines: string[]) =>
			["awb_number,amount,remittance_reference,remittance_date", ...lines].join("\n");

		it("matches exact lines and records every other line as an exception of its kind", async () => {
			const a = await shipment("collected", 149_900);
			const b = await shipment("collected", 25_050);
			const c = await shipment("pending");
			const d = await shipment("not_collected");
			const e = await shipment("prepaid");
			const f = await shipment("collected", 10_000, 7);
			const ref = `REM-${freshId()}`;
			const report = await reconcile(
				csvOf([
					`${a.awb},1499.00,${ref},2026-11-20`,
					`${b.awb},250,${ref},2026-11-20`,
					`${c.awb},1499,${ref},2026-11-20`,
					`${d.awb},1499,${ref},2026-11-20`,
					`${e.awb},1499,${ref},2026-11-20`,
					`NOPE${freshId()},10,${ref},2026-11-20`,
					`${a.awb},1499.00,${ref},2026-11-20`,
					`${f.awb},100,${ref},2026-11-20`,
					`${b.awb}X,12.345,${ref},2026-11-20`,
					`${b.awb}Y,12,${ref},2026-02-30`,
				]),
				1,
			);
			assert.equal(report.duplicate_file, false);
			assert.equal(report.lines, 10);
			assert.equal(report.matched, 1);
			assert.equal(report.matched_amount, 1499);
			assert.equal(report.exceptions, 9);
			assert.deepEqual(
				report.exception_lines.map((x) => [x.line_no, x.kind]),
				[
					[2, "amount_mismatch"],
					[3, "not_delivered"],
					[4, "not_delivered"],
					[5, "unknown_awb"],
					[6, "unknown_awb"],
					[7, "duplicate"],
					[8, "unknown_awb"],
					[9, "invalid_line"],
					[10, "invalid_line"],
				],
			);
			assert.equal(report.exception_lines[0].detail, "amount 250.00 differs from the COD amount 250.50");
			assert.deepEqual(await codStatus(a.sender, a.awb), {
				awb_number: a.awb,
				cod_status: "remitted",
				cod_amount: 1499,
				collected_at: (await codStatus(a.sender, a.awb))?.collected_at ?? null,
				remittance: { reference: ref, remitted_on: "2026-11-20", amount: 1499 },
			});
			assert.equal((await codStatus(b.sender, b.awb))?.cod_status, "collected", "a mismatch pays nothing");
			const stored = await select<{ n: string }>(
				db(),
				"SELECT count(*) AS n FROM billing.cod_exceptions WHERE remittance_id = $1",
				[report.remittance_id],
			);
			assert.equal(Number(stored[0].n), 9);
			// the merchants' side (webhook cod.exception): only the lines naming one of their COD shipments with a
			// wrong amount or before delivery; unknown, prepaid, other-courier and unreadable lines are ops' alone
			const events = await select<{
				event: { type: string; sender_id: number; data: Record<string, unknown> };
			}>(
				db(),
				`SELECT event FROM billing.event_outbox WHERE event->>'type' = 'cod.exception'
				 AND event->'data'->>'awb_number' = ANY($1::text[]) ORDER BY id`,
				[[a.awb, b.awb, c.awb, d.awb, e.awb, f.awb]],
			);
			assert.deepEqual(
				events.map((x) => [x.event.data.awb_number, x.event.data.kind, x.event.sender_id]),
				[
					[b.awb, "amount_mismatch", b.sender],
					[c.awb, "not_delivered", c.sender],
					[d.awb, "not_delivered", d.sender],
				],
			);
			assert.equal(events[0].event.data.expected_amount, 250.5);
			assert.equal(events[0].event.data.amount, 250);
			assert.equal(events[0].event.data.remitted_on, "2026-11-20");

			// the same file again: its stored outcome, nothing changed; a later file paying `a` again: duplicate
			const again = await reconcile(
				csvOf([
					`${a.awb},1499.00,${ref},2026-11-20`,
					`${b.awb},250,${ref},2026-11-20`,
					`${c.awb},1499,${ref},2026-11-20`,
					`${d.awb},1499,${ref},2026-11-20`,
					`${e.awb},1499,${ref},2026-11-20`,
				]),
			);
			assert.equal(again.duplicate_file, false, "another file (other bytes)");
			assert.deepEqual(
				again.exception_lines.map((x) => [x.line_no, x.kind]),
				[
					[1, "duplicate"],
					[2, "amount_mismatch"],
					[3, "not_delivered"],
					[4, "not_delivered"],
					[5, "unknown_awb"],
				],
			);
		});

		it("records one file once: the same bytes again answer the stored outcome", async () => {
			const a = await shipment("collected", 50_000);
			const csv = csvOf([`${a.awb},500,REM-${freshId()},2026-11-21`]);
			const first = await reconcile(csv);
			const second = await reconcile(csv);
			assert.equal(first.matched, 1);
			assert.deepEqual(second, { ...first, duplicate_file: true });
		});

		it("two files paying the same AWB at the same time: exactly one matches it", async () => {
			const a = await shipment("collected", 70_000);
			const [x, y] = await Promise.all([
				reconcile(csvOf([`${a.awb},700,REM-X-${freshId()},2026-11-22`])),
				reconcile(csvOf([`${a.awb},700,REM-Y-${freshId()},2026-11-22`])),
			]);
			assert.equal(x.matched + y.matched, 1);
			assert.deepEqual(
				[...x.exception_lines, ...y.exception_lines].map((l) => l.kind),
				["duplicate"],
			);
		});

		it("refuses a file whose header lacks a column", async () => {
			await assert.rejects(
				reconcile("awb_number,amount\nX,1"),
				/the header lacks remittance_reference, remittance_date/,
			);
		});
	});
});
