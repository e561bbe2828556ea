/**
 * GET /v1/orders cursor pagination (spec §2.12, §4.8, §7; issue 7): keyset
 * walks, cursors bound to the account and the filters, tampering refused, and
 * a property-based test (fast-check) of walks interleaved with inserts. Over
 * real HTTP against the real gateway and intake (./list-helpers.ts).
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { filtersHash, type OrderListFilters } from "../../../lib/intake/list";
import { encodeCursor } from "../../../lib/platform/cursor";
import { newSender } from "../../helpers/broker";
import { createOrder, createOrders, get, ids, list, moveTo, useReadSide } from "./list-helpers";

const UNRECOGNISED = { error: "cursor: unrecognised shape", message: "cursor: unrecognised shape" };

describe("GET /v1/orders: cursors", () => {
	const sys = useReadSide();

	/** Every page of a walk with `query` and page size `limit`: ids per page. */
	async function walk(
		token: string,
		query: Record<string, string | number>,
		limit: number,
	): Promise<number[][]> {
		const pages: number[][] = [];
		let cursor: string | null = null;
		do {
			const page = await list(sys, token, { ...query, limit, ...(cursor ? { cursor } : {}) });
			assert.ok(page.data.length <= limit);
			assert.equal(page.pagination.limit, limit);
			pages.push(ids(page));
			cursor = page.pagination.nextCursor;
			if (cursor) assert.equal(page.data.length, limit, "only the last page may be short");
		} while (cursor);
		return pages;
	}

	it("walking nextCursor visits every order once, newest first; nextCursor null on the last page", async () => {
		const s = newSender();
		const token = await sys.idp.tokenFor(s);
		const all = (await createOrders(sys, s, 7)).reverse();
		assert.deepEqual(await walk(token, {}, 2), [
			all.slice(0, 2),
			all.slice(2, 4),
			all.slice(4, 6),
			all.slice(6),
		]);
		// an exact multiple: the last full page says there is no next page (limit + 1 rows read)
		assert.deepEqual(await walk(token, {}, 7), [all]);
		const one = await walk(token, {}, 1);
		assert.deepEqual(one.flat(), all);
	});

	it("limit may change between pages (the cursor holds the position, not the page size)", async () => {
		const s = newSender();
		const token = await sys.idp.tokenFor(s);
		const all = (await createOrders(sys, s, 6)).reverse();
		const p1 = await list(sys, token, { limit: 2 });
		const p2 = await list(sys, token, { limit: 3, cursor: p1.pagination.nextCursor! });
		assert.deepEqual(ids(p2), all.slice(2, 5));
		assert.equal(p2.pagination.limit, 3);
		const p3 = await list(sys, token, { limit: 1000, cursor: p2.pagination.nextCursor! });
		assert.deepEqual(ids(p3), all.slice(5));
		assert.equal(p3.pagination.nextCursor, null);
	});

	it("a filtered walk pages within its filters; orders created during the walk are never seen", async () => {
		const s = newSender();
		const token = await sys.idp.tokenFor(s);
		const pune = (await createOrders(sys, s, 5, { city: "Pune" })).reverse();
		await createOrders(sys, s, 3, { city: "Agra" });
		const p1 = await list(sys, token, { city: "pune", limit: 2 });
		assert.deepEqual(ids(p1), pune.slice(0, 2));
		const fresh = await createOrders(sys, s, 2, { city: "Pune" });
		const p2 = await list(sys, token, { city: "pune", limit: 2, cursor: p1.pagination.nextCursor! });
		assert.deepEqual(ids(p2), pune.slice(2, 4));
		const p3 = await list(sys, token, { city: "pune", limit: 2, cursor: p2.pagination.nextCursor! });
		assert.deepEqual(ids(p3), pune.slice(4));
		assert.equal(p3.pagination.nextCursor, null);
		// a new walk sees them first
		assert.deepEqual(ids(await list(sys, token, { city: "Pune", limit: 2 })), fresh.reverse());
	});

	it("concurrent requests (sharing statements) each answer exactly what they answer alone", async () => {
		// several accounts, shapes, page sizes and cursors in flight at once: lib/intake/list-store.ts
		// answers requests of one shape made meanwhile with one statement
		const accounts = await Promise.all(
			[0, 1, 2, 3].map(async (n) => {
				const s = newSender();
				const made = await createOrders(sys, s, 4 + n, { city: n % 2 ? "Agra" : "Pune" });
				await moveTo(sys, s, made[0], "delivered");
				const first = await list(sys, await sys.idp.tokenFor(s), { limit: 2 });
				return { s, token: await sys.idp.tokenFor(s), cursor: first.pagination.nextCursor! };
			}),
		);
		const queries = accounts.flatMap((a) => [
			[a.token, {}],
			[a.token, { limit: 1 }],
			[a.token, { limit: 2, cursor: a.cursor }],
			[a.token, { bucket: "delivered" }],
			[a.token, { city: "pune" }],
			[a.token, { city: "agra", limit: 3 }],
			[a.token, {}], // the same request twice: answered once, both get it
		]) as Array<[string, Record<string, string | number>]>;
		const alone: unknown[] = [];
		for (const [token, query] of queries) alone.push(await list(sys, token, query));
		for (let round = 0; round < 3; round++) {
			const together = await Promise.all(queries.map(([token, query]) => list(sys, token, query)));
			assert.deepEqual(together, alone);
		}
	});

	describe("refused cursors: 400 `cursor: unrecognised shape`", () => {
		let s: number;
		let token: string;
		let cursor: string;
		before(async () => {
			s = newSender();
			token = await sys.idp.tokenFor(s);
			const [a, b, c] = await createOrders(sys, s, 3, { city: "Surat" });
			await moveTo(sys, s, a, "delivered");
			await moveTo(sys, s, b, "delivered");
			await moveTo(sys, s, c, "delivered");
			const p = await list(sys, token, { bucket: "delivered", city: "Surat", limit: 1 });
			cursor = p.pagination.nextCursor!;
			assert.ok(cursor);
			// the genuine cursor works with the same filters (city compared case-insensitively)
			assert.equal(
				(await list(sys, token, { bucket: "delivered", city: "SURAT", limit: 1, cursor })).data.length,
				1,
			);
		});

		async function refused(tok: string, query: Record<string, string>): Promise<void> {
			const qs = new URLSearchParams(query).toString();
			const r = await get(sys, tok, `/v1/orders?${qs}`);
			assert.equal(r.status, 400, `${qs}: ${r.text}`);
			assert.deepEqual(r.body, UNRECOGNISED, qs);
		}

		it("tampered: any character of the payload or the signature changed, or garbage", async () => {
			const [payload, sig] = cursor.split(".");
			const flip = (x: string, i: number) => x.slice(0, i) + (x[i] === "A" ? "B" : "A") + x.slice(i + 1);
			const q = { bucket: "delivered", city: "Surat" };
			for (const i of [0, Math.floor(payload.length / 2), payload.length - 2]) {
				await refused(token, { ...q, cursor: `${flip(payload, i)}.${sig}` });
			}
			await refused(token, { ...q, cursor: `${payload}.${flip(sig, 3)}` });
			await refused(token, { ...q, cursor: payload });
			await refused(token, { ...q, cursor: `${cursor}.x` });
			await refused(token, { ...q, cursor: "not-a-cursor" });
			await refused(token, { ...q, cursor: "x".repeat(600) });
			// re-signed position of another list kind (a wallet cursor) is refused too
			await refused(token, { ...q, cursor: encodeCursor("wallet", { s, id: 5 }) });
		});

		it("another account's cursor", async () => {
			await refused(await sys.idp.tokenFor(s + 1), { bucket: "delivered", city: "Surat", cursor });
			await refused(await sys.idp.tokenFor(newSender()), { bucket: "delivered", city: "Surat", cursor });
		});

		it("a cursor reused with other filters (limit aside)", async () => {
			const base = { bucket: "delivered", city: "Surat" };
			await refused(token, { cursor }); // filters dropped
			await refused(token, { ...base, bucket: "all", cursor });
			await refused(token, { ...base, city: "Agra", cursor });
			await refused(token, { ...base, shipment_type: "0", cursor });
			await refused(token, { ...base, awb_number: "X1", cursor });
			await refused(token, { ...base, order_no: "X1", cursor });
			await refused(token, { ...base, date_from: "2025-01-01", cursor });
			await refused(token, { ...base, date_to: "2099-01-01", cursor });
		});

		it("a signed cursor is honoured only with the filters whose hash it carries", async () => {
			// what a forger would need: our signature over a position with this account's id and the filters' hash
			const f: OrderListFilters = {
				bucket: "all",
				awb_number: null,
				order_no: null,
				shipment_type: null,
				date_from: null,
				date_to: null,
				city: null,
				cod_status: null,
			};
			const forged = encodeCursor("orders", { s, id: Number.MAX_SAFE_INTEGER, f: filtersHash(f) });
			assert.equal((await list(sys, token, { cursor: forged })).data.length, 3);
			await refused(token, { bucket: "rts", cursor: forged });
			await refused(token, { cod_status: "pending", cursor: forged });
			const noHash = encodeCursor("orders", { s, id: Number.MAX_SAFE_INTEGER });
			await refused(token, { cursor: noHash });
		});
	});

	it("property: walks interleaved with inserts see every order that existed at their start exactly once", async function () {
		this.timeout(120_000);
		type Cmd = { kind: "insert"; reverse: boolean } | { kind: "page"; walk: number; limit: number };
		const cmd: fc.Arbitrary<Cmd> = fc.oneof(
			fc.record({ kind: fc.constant("insert" as const), reverse: fc.boolean() }),
			fc.record({
				kind: fc.constant("page" as const),
				walk: fc.integer({ min: 0, max: 2 }),
				limit: fc.integer({ min: 1, max: 4 }),
			}),
		);
		// each walk lists one slice: everything, forward orders, returns
		const FILTERS: Array<Record<string, string | number>> = [{}, { shipment_type: 0 }, { shipment_type: 1 }];
		await fc.assert(
			fc.asyncProperty(
				fc.array(fc.boolean(), { maxLength: 8 }),
				fc.array(cmd, { maxLength: 25 }),
				async (initial, cmds) => {
					const s = newSender();
					const token = await sys.idp.tokenFor(s);
					const reverseOf = new Map<number, boolean>();
					const insert = async (reverse: boolean) =>
						reverseOf.set(await createOrder(sys, s, { reverse }), reverse);
					for (const r of initial) await insert(r);
					const inSlice = (w: number, id: number) =>
						w === 0 || (w === 1 && !reverseOf.get(id)) || (w === 2 && reverseOf.get(id) === true);
					// each walk: the ids it must see (those existing when it starts), what it saw, its cursor
					const walks = [0, 1, 2].map((w) => ({
						expected: null as number[] | null,
						seen: [] as number[],
						cursor: null as string | null,
						done: false,
						w,
					}));
					const page = async (i: number, limit: number) => {
						const wk = walks[i];
						if (wk.done) return;
						if (wk.expected === null)
							wk.expected = [...reverseOf.keys()].filter((id) => inSlice(wk.w, id)).sort((a, b) => b - a);
						const p = await list(sys, token, {
							...FILTERS[wk.w],
							limit,
							...(wk.cursor ? { cursor: wk.cursor } : {}),
						});
						wk.seen.push(...ids(p));
						wk.cursor = p.pagination.nextCursor;
						wk.done = wk.cursor === null;
					};
					for (const c of cmds) {
						if (c.kind === "insert") await insert(c.reverse);
						else await page(c.walk, c.limit);
					}
					for (const wk of walks) {
						if (wk.expected === null) continue; // never started
						while (!wk.done) await page(wk.w, 3);
						assert.deepEqual(wk.seen, wk.expected, `walk ${wk.w}`);
					}
				},
			),
			{ numRuns: 40 },
		);
	});
});
