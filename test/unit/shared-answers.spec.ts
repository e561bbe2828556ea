/** Answers shared between requests and their JSON made once (lib/platform/shared-answers.ts, issue 32). */
import assert from "node:assert/strict";
import { answerBody, answerJson, deepFreeze, shareAnswer } from "../../lib/platform/shared-answers";

/** An answer whose `reads` counts how often its `total` was read (what encoding it costs). */
function counted(): {
	answer: { id: number; rows: { total: number }[]; readonly total: number };
	reads: () => number;
} {
	let n = 0;
	const answer = { id: 7, rows: [{ total: 12.5 }] } as {
		id: number;
		rows: { total: number }[];
		total: number;
	};
	Object.defineProperty(answer, "total", {
		enumerable: true,
		get: () => {
			n++;
			return 12.5;
		},
	});
	return { answer, reads: () => n };
}

describe("shared answers: frozen whole, JSON made once", () => {
	it("a shared answer's JSON is made once and is JSON.stringify's text", () => {
		const { answer, reads } = counted();
		const shared = shareAnswer(answer);
		assert.equal(shared, answer);
		const before = reads(); // freezing reads every value once
		const text = answerJson(shared);
		assert.equal(text, '{"id":7,"rows":[{"total":12.5}],"total":12.5}');
		assert.equal(answerJson(shared), text);
		assert.equal(answerJson(shared), text);
		assert.equal(reads() - before, 1);
	});

	it("an answer not shared is encoded each time, whatever it is", () => {
		const { answer, reads } = counted();
		answerJson(answer);
		answerJson(answer);
		assert.equal(reads(), 2);
		// a frozen answer that was not shared is not taken for one
		const frozen = Object.freeze({ a: [1] });
		assert.equal(answerJson(frozen), '{"a":[1]}');
		assert.equal(answerJson("x"), '"x"');
		assert.equal(answerJson(null), "null");
		assert.equal(answerJson(undefined), undefined);
	});

	it("sharing freezes the answer and everything it holds", () => {
		const a = shareAnswer({ data: [{ edd: "2026-12-01", range: { min_days: 2 } }] });
		assert.ok(Object.isFrozen(a) && Object.isFrozen(a.data) && Object.isFrozen(a.data[0].range));
		assert.throws(() => {
			(a.data[0].range as { min_days: number }).min_days = 3;
		}, TypeError);
		assert.throws(() => {
			a.data.push({ edd: "x", range: { min_days: 1 } });
		}, TypeError);
		// deepFreeze alone marks nothing: the answer is still encoded each time
		const b = deepFreeze({ n: 1 });
		assert.ok(Object.isFrozen(b));
		const { answer, reads } = counted();
		deepFreeze(answer);
		const before = reads();
		answerJson(answer);
		answerJson(answer);
		assert.equal(reads() - before, 2);
	});

	it("the body of a long shared answer is its JSON's UTF-8 bytes, made once; any other body is the JSON text", () => {
		const rows = Array.from({ length: 80 }, (_, i) => ({
			order_id: i,
			receiver: { city: "Bengaluru", note: "₹ paid" },
		}));
		const page = shareAnswer({ data: rows });
		const body = answerBody(page);
		assert.ok(Buffer.isBuffer(body));
		assert.equal(body.toString("utf8"), JSON.stringify(page));
		assert.equal(body.length, Buffer.byteLength(JSON.stringify(page)), "bytes, not characters");
		assert.equal(answerBody(page), body, "made once");
		const fresh = { data: rows.map((r) => ({ ...r })) };
		assert.equal(answerBody(fresh), JSON.stringify(fresh), "not shared: text, made each time");
		const small = shareAnswer({ ok: true });
		assert.equal(answerBody(small), '{"ok":true}', "short: text");
	});

	it("a lower length asked gives bytes for a shorter shared answer; the default still gives its text", () => {
		const detail = shareAnswer({ order_id: 1, note: "x".repeat(2000) });
		const text = JSON.stringify(detail);
		assert.equal(answerBody(detail), text, "under 4,096 characters: text");
		const bytes = answerBody(detail, 1024);
		assert.ok(Buffer.isBuffer(bytes));
		assert.equal(bytes.toString("utf8"), text);
		assert.equal(answerBody(detail, 1024), bytes, "made once");
		assert.equal(answerBody(detail), text, "the default length is unchanged by an earlier lower one");
		assert.equal(answerBody(shareAnswer({ ok: true }), 1024), '{"ok":true}');
	});
});
