/**
 * ndr service, the merchant's side (issue 9; spec §2.10, §4.2, §4.6, §5, §7):
 * `ndr.list` (tabs, `bad_tab`, `bad_date`, limit, cursor bound to account and
 * filters, awb_number, date_from; the row with order_value and
 * notification), `ndr.counts` (equal to the list totals per tab),
 * `ndr.comment` (codes, roles, 404) and `ndr.act` (roles, 404, 409
 * no_open_ndr, a RE-ATTEMPT at the sandbox courier, the courier's refusal).
 */
import assert from "node:assert/strict";
import { type ActionName, NDR_TABS, type ParamsOf } from "../../../lib/contracts";
import { ROLES, type Role } from "../../../lib/platform/auth";
import { getSequelize, select } from "../../../lib/platform/db";
import { newSender, rejects } from "../../helpers/broker";
import { eventually } from "../../helpers/poll";
import {
	addOrder,
	bodyOf,
	bookedOrder,
	callAs,
	caseWhen,
	publish,
	scan,
	statusEvent,
	useNdrBroker,
} from "./setup";

const READ_ONLY: Role[] = ["merchant_finance", "merchant_support", "merchant_staff"];

/** Rejection of `action` as sender/role: its status and body. */
async function refused<A extends ActionName>(
	action: A,
	params: ParamsOf<A>,
	sender: number,
	role: Role = "merchant",
) {
	return bodyOf(await rejects(() => callAs(action, params, sender, role)));
}

/** Every row of a tab, through every page of `limit`. */
async function allPages(sender: number, tab: string, limit: number, extra: Record<string, unknown> = {}) {
	const rows: any[] = [];
	let cursor: string | undefined;
	for (let i = 0; i < 100; i++) {
		const { res } = await callAs("ndr.list", { tab, limit, ...extra, ...(cursor ? { cursor } : {}) }, sender);
		assert.ok(res.data.length <= limit);
		rows.push(...res.data);
		if (!res.pagination.nextCursor) return rows;
		cursor = res.pagination.nextCursor;
	}
	throw new Error("too many pages");
}

describe("ndr service: list, counts, comments, actions", function () {
	this.timeout(60_000);
	useNdrBroker();

	/** An account with cases in every tab: 4 action_required, 2 delivered, 1 rto (synthetic events), 1 closed. */
	const s = newSender();
	const opened: number[] = [];
	before(async () => {
		const t0 = Date.now() - 10 * 86_400_000;
		for (let i = 0; i < 8; i++) {
			const o = addOrder(s);
			opened.push(o.order_id);
			await publish(statusEvent(o, { status_at: new Date(t0 + i * 86_400_000).toISOString() }));
		}
		for (const id of opened) await caseWhen(id, () => true, `case of ${id}`);
		const close = async (i: number, status: "delivered" | "rto_delivered" | "damaged", name: string) => {
			const o = { order_id: opened[i], sender_id: s } as any;
			await publish(statusEvent(o, { event_id: `c-${opened[i]}`, status, status_name: name, seq: 9 }));
		};
		await close(4, "delivered", "Delivered");
		await close(5, "delivered", "Delivered");
		await close(6, "rto_delivered", "RTO delivered");
		await close(7, "damaged", "Damaged");
		await caseWhen(opened[7], (c) => c.status === "closed", "the last close");
		for (const i of [4, 5]) await caseWhen(opened[i], (c) => c.status === "delivered", "delivered");
		await caseWhen(opened[6], (c) => c.status === "rto", "rto");
	});

	describe("GET /v1/ndr", () => {
		it("tab is required, no default; an unaccepted tab → 400 bad_tab listing the tabs", async () => {
			for (const params of [{}, { tab: "" }, { tab: "all" }, { tab: "ACTION_REQUIRED" }]) {
				const { status, body } = await refused("ndr.list", params, s);
				assert.equal(status, 400);
				assert.equal(body.error, "bad_tab");
				for (const t of NDR_TABS) assert.ok(body.message.includes(t), body.message);
			}
		});

		it("date_from must be a real YYYY-MM-DD → 400 bad_date", async () => {
			for (const d of ["2026-02-30", "2026-2-3", "03-02-2026", "2026-13-01", "x"]) {
				const { status, body } = await refused("ndr.list", { tab: "action_required", date_from: d }, s);
				assert.equal(status, 400, d);
				assert.equal(body.error, "bad_date", d);
			}
			const ok = await callAs("ndr.list", { tab: "action_required", date_from: "2024-02-29" }, s);
			assert.equal(ok.res.data.length, 4);
		});

		it("limit 1–1000; other values 400 validation_failed", async () => {
			for (const limit of ["0", "1001", "-1", "2.5", "x"]) {
				const { status, body } = await refused("ndr.list", { tab: "action_required", limit }, s);
				assert.equal(status, 400);
				assert.equal(body.error, "validation_failed");
				assert.equal(body.field, "limit");
			}
			const { res } = await callAs("ndr.list", { tab: "action_required" }, s);
			assert.equal(res.pagination.limit, 50);
			assert.equal(res.pagination.mode, "cursor");
		});

		it("rows: the case plus order_value and notification, newest first; pages by cursor", async () => {
			const rows = await allPages(s, "action_required", 1);
			// newest case first (the consumer may open cases of events published together in any order)
			assert.deepEqual(rows.map((r) => r.order_id).sort(), opened.slice(0, 4).sort());
			for (let i = 1; i < rows.length; i++)
				assert.ok(rows[i - 1].id > rows[i].id, "newest (highest id) first");
			const r = rows[0];
			assert.equal(r.tab, "action_required");
			assert.equal(r.order_value, 1499);
			assert.equal(r.reason, "consignee_unavailable");
			assert.equal(r.courier_reason, "Consignee not available");
			assert.equal(r.attempts, 1);
			assert.equal(r.max_attempts, 3);
			assert.ok(r.action_deadline_at);
			// events days old tell the buyer nothing now (notifications skips them): no message on the row
			assert.equal(r.notification, null);
			assert.equal(r.payment_mode, "prepaid");
			assert.equal(r.consignee.city, "Mumbai");
			assert.match(r.forward_id, /^bk_\d+$/);
		});

		it("a fresh failed attempt: the row's notification is the notifications service's buyer message", async () => {
			const s2 = newSender();
			const o = addOrder(s2);
			await publish(statusEvent(o));
			const r = await eventually(
				async () => {
					const { res } = await callAs("ndr.list", { tab: "action_required" }, s2);
					return res.data.find((x) => x.order_id === o.order_id && x.notification?.status === "simulated");
				},
				{ what: "the row with its buyer message settled" },
			);
			// the sandbox provider sends nothing: simulated, no send or delivery time
			assert.equal(r.notification?.provider, "sandbox");
			assert.equal(r.notification?.channel, "sms");
			assert.equal(r.notification?.template, "failed_delivery");
			assert.equal(r.notification?.sent_at, null);
			assert.equal(r.notification?.delivered_at, null);
			assert.equal(r.notification?.recipient, "******6780");
			// ndr records none of its own any more
			const own = await select(
				getSequelize(),
				"SELECT 1 FROM ndr.notifications n JOIN ndr.cases c ON c.id = n.case_id WHERE c.sender_id = $1",
				[s2],
			);
			assert.equal(own.length, 0);
		});

		it("a cursor is bound to the account and the filters", async () => {
			const { res } = await callAs("ndr.list", { tab: "action_required", limit: 1 }, s);
			const cursor = res.pagination.nextCursor;
			assert.ok(cursor);
			for (const [params, who] of [
				[{ tab: "delivered", cursor }, s],
				[{ tab: "action_required", cursor, awb_number: "X1" }, s],
				[{ tab: "action_required", cursor }, newSender()],
				[{ tab: "action_required", cursor: `${cursor}x` }, s],
			] as const) {
				const { status, body } = await refused("ndr.list", params, who);
				assert.equal(status, 400);
				assert.equal(body.error, "cursor: unrecognised shape");
			}
		});

		it("awb_number exact and date_from (IST day, inclusive) filter", async () => {
			const awb = `SYN${opened[2]}`;
			const { res } = await callAs("ndr.list", { tab: "action_required", awb_number: awb }, s);
			assert.deepEqual(
				res.data.map((r: any) => r.awb_number),
				[awb],
			);
			const none = await callAs("ndr.list", { tab: "action_required", awb_number: awb.slice(0, -1) }, s);
			assert.equal(none.res.data.length, 0);
			const c = (
				await select<any>(getSequelize(), "SELECT first_pending_at FROM ndr.cases WHERE order_id = $1", [
					opened[2],
				])
			)[0];
			const istDay = new Date(new Date(c.first_pending_at).getTime() + 330 * 60_000)
				.toISOString()
				.slice(0, 10);
			const from = await callAs("ndr.list", { tab: "action_required", date_from: istDay }, s);
			assert.deepEqual(
				from.res.data.map((r: any) => r.order_id).sort(),
				[opened[2], opened[3]].sort(),
				"from that IST day on, inclusive",
			);
		});

		it("another account sees none of these cases", async () => {
			const other = newSender();
			for (const tab of NDR_TABS) assert.equal((await callAs("ndr.list", { tab }, other)).res.data.length, 0);
		});
	});

	describe("GET /v1/ndr/counts", () => {
		it("one number per tab, keys = the accepted tabs, each equal to the list's total", async () => {
			const { res } = await callAs("ndr.counts", {}, s);
			assert.deepEqual(Object.keys(res).sort(), [...NDR_TABS].sort());
			assert.deepEqual(res, { action_required: 4, action_requested: 0, delivered: 2, rto: 1 });
			for (const tab of NDR_TABS) assert.equal((await allPages(s, tab, 3)).length, res[tab], tab);
			assert.deepEqual((await callAs("ndr.counts", {}, newSender())).res, {
				action_required: 0,
				action_requested: 0,
				delivered: 0,
				rto: 0,
			});
		});
	});

	describe("POST /v1/ndr/{id}/comment", () => {
		it("201 the created comment row, trimmed", async () => {
			const id = opened[0];
			const { res, status } = await callAs(
				"ndr.comment",
				{ id: String(id), comment: "  call buyer after 6pm  " },
				s,
			);
			assert.equal(status, 201);
			assert.equal(res.comment, "call buyer after 6pm");
			assert.equal(res.order_id, id);
			assert.equal(res.awb_number, `SYN${id}`);
			assert.equal(res.created_by, `sender-${s}`);
			assert.equal(res.created_by_role, "merchant");
			assert.ok(res.id > 0 && res.ndr_id > 0);
			assert.ok(!Number.isNaN(Date.parse(res.created_at)));
			const rows = await allPages(s, "action_required", 50);
			assert.equal(rows.find((r) => r.order_id === id).comments, 1);
		});

		it("255 characters after trimming are accepted (code points); 256 → comment_too_long; blank → empty_comment", async () => {
			const id = String(opened[1]);
			assert.equal((await callAs("ndr.comment", { id, comment: ` ${"a".repeat(255)} ` }, s)).status, 201);
			assert.equal((await callAs("ndr.comment", { id, comment: "😀".repeat(255) }, s)).status, 201);
			const long = await refused("ndr.comment", { id, comment: "a".repeat(256) }, s);
			assert.equal(long.status, 400);
			assert.equal(long.body.error, "comment_too_long");
			for (const comment of ["", "   ", "\n\t", undefined, null]) {
				const r = await refused("ndr.comment", { id, comment }, s);
				assert.equal(r.status, 400, String(comment));
				assert.equal(r.body.error, "empty_comment");
			}
			const bad = await refused("ndr.comment", { id, comment: 12 }, s);
			assert.equal(bad.body.error, "validation_failed");
			const badId = await refused("ndr.comment", { id: "x", comment: "hi" }, s);
			assert.equal(badId.body.error, "validation_failed");
		});

		it("merchant_finance, merchant_support (holds ndr.act) and merchant_staff → 403; the others may comment", async () => {
			const id = String(opened[0]);
			for (const role of READ_ONLY) {
				const r = await refused("ndr.comment", { id, comment: "hi" }, s, role);
				assert.equal(r.status, 403, role);
				assert.equal(r.body.error, "Read-only role");
			}
			for (const role of ROLES.filter((x) => !READ_ONLY.includes(x)))
				assert.equal((await callAs("ndr.comment", { id, comment: `by ${role}` }, s, role)).status, 201);
		});

		it("another account's order, or an order with no NDR case → 404", async () => {
			for (const [id, who] of [
				[opened[0], newSender()],
				[addOrder(s).order_id, s],
				[999_999_999, s],
			] as const) {
				const r = await refused("ndr.comment", { id: String(id), comment: "hi" }, who);
				assert.equal(r.status, 404);
				assert.equal(r.body.error, "order not found");
			}
		});
	});

	describe("POST /v1/shipping/ndr", () => {
		it("read-only roles → 403 Read-only role", async () => {
			for (const role of READ_ONLY) {
				const r = await refused("ndr.act", { order_id: opened[0], logistic_id: 1 }, s, role);
				assert.equal(r.status, 403);
				assert.equal(r.body.error, "Read-only role");
			}
		});

		it("400 invalid_ndr_act; 404 another account's order; 409 no_open_ndr; logistic_id must be the shipment's", async () => {
			const bad = await refused("ndr.act", { order_id: opened[0], logistic_id: 1, ndr_act: "RTO" }, s);
			assert.equal(bad.body.error, "invalid_ndr_act");
			const foreign = await refused("ndr.act", { order_id: opened[0], logistic_id: 1 }, newSender());
			assert.equal(foreign.status, 404);
			const closed = await refused("ndr.act", { order_id: opened[4], logistic_id: 1 }, s);
			assert.equal(closed.status, 409);
			assert.equal(closed.body.error, "no_open_ndr");
			const none = await refused("ndr.act", { order_id: addOrder(s).order_id, logistic_id: 1 }, s);
			assert.equal(none.body.error, "no_open_ndr");
			const courier = await refused("ndr.act", { order_id: opened[0], logistic_id: 2 }, s);
			assert.equal(courier.status, 400);
			assert.equal(courier.body.error, "validation_failed");
		});

		it("RE-ATTEMPT on a real sandbox shipment: 200, recorded, tab action_requested; a refusal is 422 reattempt_failed and recorded", async () => {
			const m = newSender();
			const { order, awb, forward_id } = await bookedOrder(m);
			await scan(m, order.order_id, "picked_up");
			await scan(m, order.order_id, "undelivered", "Address incomplete");
			const c = await caseWhen(order.order_id, () => true, "the case");
			assert.equal(c.reason, "address_issue");
			const { res, status } = await callAs(
				"ndr.act",
				{ order_id: order.order_id, logistic_id: 1 },
				m,
				"merchant_ops",
			);
			assert.equal(status, 200);
			assert.equal(res.status, "requested");
			assert.equal(res.awb, awb);
			assert.equal(res.forward_id, forward_id);
			assert.equal(res.order_id, order.order_id);
			assert.equal(res.ndr_act, "RE-ATTEMPT");
			assert.match(res.request_id, /^UPL/);
			const counts = (await callAs("ndr.counts", {}, m)).res;
			assert.equal(counts.action_requested, 1);
			const row = (await callAs("ndr.list", { tab: "action_requested" }, m)).res.data[0];
			assert.equal(row.last_action?.by, "merchant");
			assert.equal(row.last_action?.act, "RE-ATTEMPT");
			// the courier moves on (out for delivery): it refuses an act that is no longer pending
			await scan(m, order.order_id, "out_for_delivery");
			const r = await refused(
				"ndr.act",
				{ order_id: order.order_id, logistic_id: 1, ndr_act: "EDIT_DETAILS", phone: "9988776655" },
				m,
			);
			assert.equal(r.status, 422);
			assert.equal(r.body.error, "reattempt_failed");
			const acts = await select<any>(
				getSequelize(),
				"SELECT * FROM ndr.actions WHERE case_id = $1 ORDER BY id",
				[c.id],
			);
			assert.deepEqual(
				acts.map((a) => [a.act, a.status, a.by]),
				[
					["RE-ATTEMPT", "sent", "merchant"],
					["EDIT_DETAILS", "failed", "merchant"],
				],
			);
			assert.equal(acts[1].error_code, "reattempt_failed");
		});
	});
});
