/**
 * A page of `GET /v1/orders` listed lately is read again as its rows' versions only (lib/intake/list.ts
 * `listedPage` / `keptListPage`, lib/intake/list-store.ts `orderVersionReader`,
 * docs/decisions/0132-kept-list-pages.md): the same answer while the same rows come back unchanged; any write of a
 * row, a new order, a row leaving the filter, a new environment or a new cursor key is seen at the next read; and a
 * long page's body is written as bytes with the right length, HEAD included. Against the real intake and
 * PostgreSQL (./list-helpers.ts).
 */
import assert from "node:assert/strict";
import { as, newSender } from "../../helpers/broker";
import { callAs } from "../../helpers/call";
import { setEnv } from "../../helpers/env";
import { http } from "../gateway/setup";
import { createOrder, createOrders, ids, moveTo, sql, useReadSide } from "./list-helpers";

describe("GET /v1/orders pages listed lately, read again as their rows' versions", () => {
	const sys = useReadSide();
	/** Restores what a test changed in the environment. */
	let restore = () => {};
	afterEach(() => restore());

	const page = (sender: number, query: Record<string, string> = {}) =>
		callAs(sys.broker, "intake.listOrders", query, as(sender));

	it("the same rows unchanged: the same answer; a changed row or a new order is seen at the next read", async () => {
		const s = newSender();
		const made = await createOrders(sys, s, 3);
		const first = await page(s);
		const again = await page(s);
		assert.equal(again, first, "the listed answer, given again");
		assert.ok(Object.isFrozen(first));

		await sql(`UPDATE intake.orders SET receiver_city = 'Mysuru' WHERE order_id = $1`, [made[1]]);
		const changed = await page(s);
		assert.notEqual(changed, first);
		assert.equal(changed.data.find((r) => r.order_id === made[1])?.receiver.city, "Mysuru");
		assert.equal(changed.data.find((r) => r.order_id === made[0])?.receiver.city, "Bengaluru");
		// the unchanged rows are the kept ones
		assert.equal(
			changed.data.find((r) => r.order_id === made[0]),
			first.data.find((r) => r.order_id === made[0]),
		);

		const newer = await createOrder(sys, s);
		const grown = await page(s);
		assert.deepEqual(ids(grown), [newer, ...made.slice().reverse()]);
	});

	it("a row that leaves the filter leaves the page; a page of another account is its own", async () => {
		const s = newSender();
		const [a, b] = await createOrders(sys, s, 2);
		await moveTo(sys, s, a, "in_transit");
		await moveTo(sys, s, b, "in_transit");
		const transit = await page(s, { bucket: "transit" });
		assert.deepEqual(ids(transit), [b, a]);
		assert.equal(await page(s, { bucket: "transit" }), transit);
		await sql(`UPDATE intake.orders SET status = 'delivered' WHERE order_id = $1`, [b]);
		assert.deepEqual(ids(await page(s, { bucket: "transit" })), [a]);

		const other = newSender();
		const theirs = await createOrders(sys, other, 1);
		assert.deepEqual(ids(await page(other, { bucket: "all" })), theirs);
		assert.deepEqual(ids(await page(other, { bucket: "all" })), theirs);
	});

	it("a new cursor key or tracking template is seen at the next read of an unchanged page", async () => {
		const s = newSender();
		await createOrders(sys, s, 3);
		const first = await page(s, { limit: "2" });
		assert.ok(first.pagination.nextCursor);
		assert.equal(await page(s, { limit: "2" }), first);

		restore = setEnv({ CURSOR_SECRET: "another-cursor-secret-for-this-spec" });
		const resigned = await page(s, { limit: "2" });
		assert.notEqual(resigned.pagination.nextCursor, first.pagination.nextCursor, "signed with the new key");
		assert.deepEqual(resigned.data, first.data);
		// the new cursor reads under the new key
		const next = await page(s, { limit: "2", cursor: resigned.pagination.nextCursor as string });
		assert.equal(next.data.length, 1);
		restore();

		const booked = await createOrder(sys, s);
		await moveTo(sys, s, booked, "in_transit", `AWBKP${booked}`);
		const before = await page(s, { limit: "1" });
		assert.equal(before.data[0].tracking_url, `https://track.example.com/?awb=AWBKP${booked}`);
		restore = setEnv({ TRACKING_URL_TEMPLATE: "https://t.example.in/{awb}" });
		const after = await page(s, { limit: "1" });
		assert.equal(after.data[0].tracking_url, `https://t.example.in/AWBKP${booked}`);
	});

	it("the next page's existence is read again: the row after the page hidden, the page says it is the last", async () => {
		const s = newSender();
		const [oldest] = await createOrders(sys, s, 3);
		const first = await page(s, { limit: "2" });
		assert.ok(first.pagination.nextCursor);
		assert.equal(await page(s, { limit: "2" }), first);
		await sql(`UPDATE intake.orders SET hidden_at = now() WHERE order_id = $1`, [oldest]);
		const last = await page(s, { limit: "2" });
		assert.deepEqual(last.data, first.data);
		assert.equal(last.pagination.nextCursor, null);
	});

	it("pages of several accounts read again at once: each its own answer, a change seen in its page only", async () => {
		const senders = [newSender(), newSender(), newSender()];
		const made = await Promise.all(senders.map((s) => createOrders(sys, s, 3)));
		const first = await Promise.all(senders.map((s) => page(s)));
		// read at once: the version reads of the three pages share statements (one per wave)
		const again = await Promise.all(senders.map((s) => page(s)));
		for (const [i, p] of again.entries()) assert.equal(p, first[i], `account ${i}: the listed answer`);
		assert.deepEqual(
			again.map((p) => ids(p)),
			made.map((m) => m.slice().reverse()),
		);

		await sql(`UPDATE intake.orders SET receiver_city = 'Mysuru' WHERE order_id = $1`, [made[1][2]]);
		const after = await Promise.all(senders.map((s) => page(s)));
		assert.equal(after[0], first[0]);
		assert.equal(after[2], first[2]);
		assert.notEqual(after[1], first[1]);
		assert.equal(after[1].data[0].receiver.city, "Mysuru");
		assert.equal(after[1].data[1], first[1].data[1], "its unchanged rows are the kept ones");
	});

	it("an empty page read again is the same answer until an order arrives", async () => {
		const s = newSender();
		const empty = await page(s);
		assert.deepEqual(empty.data, []);
		assert.equal(empty.pagination.nextCursor, null);
		assert.equal(await page(s), empty);
		const made = await createOrder(sys, s);
		assert.deepEqual(ids(await page(s)), [made]);
	});

	it("a long page's body is written as its JSON's bytes, with its length; HEAD gets the same length", async () => {
		const s = newSender();
		await createOrders(sys, s, 12);
		const token = await sys.idp.tokenFor(s);
		for (let i = 0; i < 2; i++) {
			const r = await http(sys.base, "GET", "/v1/orders", { token });
			assert.equal(r.status, 200);
			assert.equal(r.body.data.length, 12);
			const length = Number(r.headers.get("content-length"));
			assert.ok(length > 4096, `${length} bytes`);
			assert.equal(length, Buffer.byteLength(r.text));
			assert.equal(r.headers.get("content-type"), "application/json; charset=utf-8");
			const h = await http(sys.base, "HEAD", "/v1/orders", { token });
			assert.equal(h.status, 200);
			assert.equal(Number(h.headers.get("content-length")), length);
		}
	});
});
