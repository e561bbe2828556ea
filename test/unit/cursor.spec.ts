/**
 * lib/platform/cursor.ts: opaque signed page cursors (spec §2.12, §4.8;
 * docs/ARCHITECTURE.md §6). A cursor round-trips its kind and position;
 * anything not signed by us for that kind (garbage, another list's cursor, a
 * modified payload or signature, another secret) is refused with 400
 * `cursor: unrecognised shape`.
 */
import { strict as assert } from "node:assert";
import {
	type CursorPosition,
	cursorSecretConfigured,
	decodeCursor,
	encodeCursor,
	keptSignatureCount,
} from "../../lib/platform/cursor";
import { errorBodyOf } from "../../lib/platform/errors";

/** Asserts that decoding `cursor` as `kind` is refused with the §7 answer. */
function refused(kind: string, cursor: unknown, accept?: (p: CursorPosition) => p is CursorPosition): void {
	let err: unknown;
	try {
		decodeCursor(kind, cursor, accept);
	} catch (e) {
		err = e;
	}
	assert.ok(err, `cursor ${JSON.stringify(cursor)} was accepted`);
	assert.deepEqual(errorBodyOf(err), {
		status: 400,
		body: { error: "cursor: unrecognised shape", message: "cursor: unrecognised shape" },
	});
}

/** `s` with its character at `i` replaced by another base64url character. */
function flip(s: string, i: number): string {
	const c = s[i] === "A" ? "B" : "A";
	return s.slice(0, i) + c + s.slice(i + 1);
}

describe("cursors (lib/platform/cursor.ts)", () => {
	let saved: Record<string, string | undefined> = {};
	before(() => {
		saved = { CURSOR_SECRET: process.env.CURSOR_SECRET, LABEL_LINK_SECRET: process.env.LABEL_LINK_SECRET };
	});
	afterEach(() => {
		for (const [k, v] of Object.entries(saved)) {
			if (v === undefined) delete process.env[k];
			else process.env[k] = v;
		}
	});

	it("round-trips kind and position as an opaque URL-safe string", () => {
		const c = encodeCursor("wallet", { s: 42, id: 1234, at: "2024-01-01T00:00:00.000Z", x: null });
		assert.match(c, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
		assert.ok(!c.includes("1234"), "the position is not readable as plain text");
		assert.deepEqual(decodeCursor("wallet", c), { s: 42, id: 1234, at: "2024-01-01T00:00:00.000Z", x: null });
		assert.equal(encodeURIComponent(c), c);
	});

	it("refuses garbage, non-strings and oversized values", () => {
		for (const bad of ["", "abc", "a.b.c", ".", "abc.", ".abc", "a b.c", "!!!.???", "x".repeat(600)]) {
			refused("wallet", bad);
		}
		for (const bad of [undefined, null, 12, ["a", "b"], { k: "wallet" }]) refused("wallet", bad);
	});

	it("refuses a cursor of another kind", () => {
		refused("orders", encodeCursor("wallet", { id: 1 }));
	});

	it("refuses a modified payload or signature (every position of both)", () => {
		const c = encodeCursor("wallet", { s: 7, id: 99 });
		const [payload, sig] = c.split(".");
		for (let i = 0; i < payload.length; i++) refused("wallet", `${flip(payload, i)}.${sig}`);
		for (let i = 0; i < sig.length; i++) refused("wallet", `${payload}.${flip(sig, i)}`);
		// a payload re-encoded by the client with another position keeps no valid signature
		const forged = Buffer.from(JSON.stringify({ k: "wallet", p: { s: 7, id: 1 } })).toString("base64url");
		refused("wallet", `${forged}.${sig}`);
	});

	it("refuses a position the list does not accept", () => {
		const c = encodeCursor("wallet", { s: 7, id: 99 });
		const mine = (p: CursorPosition): p is CursorPosition => p.s === 8;
		refused("wallet", c, mine);
		assert.deepEqual(
			decodeCursor("wallet", c, (p): p is CursorPosition => p.s === 7),
			{ s: 7, id: 99 },
		);
	});

	it("signs with CURSOR_SECRET, falling back to LABEL_LINK_SECRET; another secret's cursor is refused", () => {
		delete process.env.CURSOR_SECRET;
		process.env.LABEL_LINK_SECRET = "one";
		const byLabel = encodeCursor("wallet", { id: 5 });
		assert.deepEqual(decodeCursor("wallet", byLabel), { id: 5 });
		process.env.CURSOR_SECRET = "two";
		refused("wallet", byLabel);
		const byCursor = encodeCursor("wallet", { id: 5 });
		assert.notEqual(byCursor, byLabel);
		assert.deepEqual(decodeCursor("wallet", byCursor), { id: 5 });
		process.env.LABEL_LINK_SECRET = "three";
		assert.deepEqual(decodeCursor("wallet", byCursor), { id: 5 }, "CURSOR_SECRET wins");
	});

	it("kept signatures are only a cache: a cursor made 1,500 cursors ago still reads; a secret change forgets them", () => {
		process.env.CURSOR_SECRET = "kept-one";
		const first = encodeCursor("orders", { id: 1 });
		for (let i = 2; i <= 1_500; i++)
			assert.deepEqual(decodeCursor("orders", encodeCursor("orders", { id: i })), { id: i });
		assert.equal(encodeCursor("orders", { id: 1 }), first, "signed again, the same cursor");
		assert.deepEqual(decodeCursor("orders", first), { id: 1 });
		process.env.CURSOR_SECRET = "kept-two";
		refused("orders", first);
		const second = encodeCursor("orders", { id: 1 });
		assert.notEqual(second, first);
		process.env.CURSOR_SECRET = "kept-one";
		refused("orders", second);
		assert.deepEqual(decodeCursor("orders", first), { id: 1 });
	});

	it("made-up cursors are refused and their signatures not kept (they cannot push the real ones out)", () => {
		process.env.CURSOR_SECRET = "kept-fresh"; // a new key: nothing kept yet
		for (let i = 1; i <= 10; i++) encodeCursor("orders", { id: i });
		assert.equal(keptSignatureCount(), 10);
		for (let i = 0; i < 50; i++) {
			const payload = Buffer.from(JSON.stringify({ k: "orders", p: { id: 1_000 + i } })).toString(
				"base64url",
			);
			refused("orders", `${payload}.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA`);
		}
		assert.equal(keptSignatureCount(), 10, "a refused cursor's signature was kept");
		assert.deepEqual(decodeCursor("orders", encodeCursor("orders", { id: 3 })), { id: 3 });
		assert.equal(keptSignatureCount(), 10, "a cursor made again is found, not kept twice");
	});

	it("needs a secret: without one it is a configuration error, not a client error", () => {
		delete process.env.CURSOR_SECRET;
		delete process.env.LABEL_LINK_SECRET;
		assert.equal(cursorSecretConfigured(), false);
		assert.throws(() => encodeCursor("wallet", { id: 1 }), /CURSOR_SECRET/);
	});
});
