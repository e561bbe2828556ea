/**
 * The gateway's held answers (lib/gateway/held-answers.ts, docs/decisions/0133-held-answers.md): which requests
 * are offered, what is kept, and that only the tag offered for this request is ever served.
 */
import assert from "node:assert/strict";
import type { Context } from "moleculer";
import { heldAnswerBody, heldAnswerCounts, offerHeldAnswer } from "../../../lib/gateway/held-answers";
import type { GwRequest } from "../../../lib/gateway/web-types";
import {
	ANSWER_BYTES_KEY,
	ANSWER_HELD_META,
	ANSWER_SAME_KEY,
	ANSWER_TAG_KEY,
} from "../../../lib/platform/answer-text";

/** The parts of a moleculer-web call the offer reads: a broker (with or without a transporter) and the account. */
function callOf(sender: number | undefined, transit: boolean): Context {
	return {
		broker: { transit: transit ? {} : undefined },
		meta: sender === undefined ? {} : { user: { sender_id: sender } },
	} as unknown as Context;
}

/** A routed request as moleculer-web hands it over. */
function requestOf(method: string, params: Record<string, unknown>): GwRequest {
	return { method, $action: { name: "intake.listOrders" }, $params: params } as unknown as GwRequest;
}

describe("unit: the gateway's held answers", () => {
	const bytes = Buffer.from(JSON.stringify({ data: [{ order_id: 1 }] }));

	it("keeps carried bytes per account and request, names their tag on the next identical read, serves them on `same`", () => {
		const first = requestOf("GET", { limit: "50", sender_marker: 7101 });
		offerHeldAnswer(callOf(7101, true), first);
		assert.equal(heldAnswerBody(first, { [ANSWER_BYTES_KEY]: bytes, [ANSWER_TAG_KEY]: "t1" }), undefined);

		const again = requestOf("GET", { limit: "50", sender_marker: 7101 });
		const ctx = callOf(7101, true);
		offerHeldAnswer(ctx, again);
		assert.equal((ctx.meta as Record<string, unknown>)[ANSWER_HELD_META], "t1");
		const served = heldAnswerCounts().served;
		assert.equal(heldAnswerBody(again, { [ANSWER_SAME_KEY]: "t1" }), bytes);
		assert.equal(heldAnswerCounts().served, served + 1);

		// another account, the same request: nothing named
		const other = callOf(7102, true);
		offerHeldAnswer(other, requestOf("GET", { limit: "50", sender_marker: 7101 }));
		assert.equal((other.meta as Record<string, unknown>)[ANSWER_HELD_META], undefined);
		// a HEAD is answered as its GET: offered the same bytes
		const head = callOf(7101, true);
		offerHeldAnswer(head, requestOf("HEAD", { limit: "50", sender_marker: 7101 }));
		assert.equal((head.meta as Record<string, unknown>)[ANSWER_HELD_META], "t1");
	});

	it("offers nothing for writes, without an account, or in a process without a transporter", () => {
		for (const [ctx, method] of [
			[callOf(7101, true), "POST"],
			[callOf(undefined, true), "GET"],
			[callOf(7101, false), "GET"],
		] as const) {
			const req = requestOf(method, { limit: "50", sender_marker: 7101 });
			offerHeldAnswer(ctx, req);
			assert.equal((ctx.meta as Record<string, unknown>)[ANSWER_HELD_META], undefined);
			// and keeps nothing from such a request
			assert.equal(heldAnswerBody(req, { [ANSWER_BYTES_KEY]: bytes, [ANSWER_TAG_KEY]: "t9" }), undefined);
		}
	});

	it("refuses a `same` naming a tag it did not offer, and passes every other answer on", () => {
		const req = requestOf("GET", { limit: "10", sender_marker: 7103 });
		offerHeldAnswer(callOf(7103, true), req);
		assert.throws(() => heldAnswerBody(req, { [ANSWER_SAME_KEY]: "t1" }), /tag not offered/);
		assert.equal(heldAnswerBody(req, { data: [] }), undefined);
		assert.equal(heldAnswerBody(req, null), undefined);
		assert.equal(heldAnswerBody(req, "text"), undefined);
	});
});
