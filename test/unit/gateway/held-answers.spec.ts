/**
 * The gateway's held answers (lib/gateway/held-answers.ts, docs/decisions/0133-held-answers.md): which requests
 * are offered, what is kept, and that only the tag offered for this request is ever served.
 */
import assert from "node:assert/strict";
import type { Context } from "moleculer";
import { heldAnswerBody, heldAnswersServed, offerHeldAnswer } from "../../../lib/gateway/held-answers";
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

/** A routed request as moleculer-web hands it over, made in call `ctx`. */
function requestOf(method: string, params: Record<string, unknown>, ctx: Context): GwRequest {
	return {
		method,
		$ctx: ctx,
		$action: { name: "intake.listOrders" },
		$params: params,
	} as unknown as GwRequest;
}

/** A call and its request: `offerHeldAnswer` as the gateway's `authorize` runs it, and what it named. */
function offered(
	sender: number | undefined,
	method: string,
	params: Record<string, unknown>,
	transit = true,
) {
	const ctx = callOf(sender, transit);
	const req = requestOf(method, params, ctx);
	offerHeldAnswer(ctx, req);
	return { req, named: (ctx.meta as Record<string, unknown>)[ANSWER_HELD_META] };
}

describe("unit: the gateway's held answers", () => {
	const bytes = Buffer.from(JSON.stringify({ data: [{ order_id: 1 }] }));

	it("keeps carried bytes per account and request, names their tag on the next identical read, serves them on `same`", () => {
		const params = { limit: "50" };
		const first = offered(7101, "GET", params);
		assert.equal(first.named, undefined);
		assert.equal(heldAnswerBody(first.req, { [ANSWER_BYTES_KEY]: bytes, [ANSWER_TAG_KEY]: "t1" }), undefined);

		const again = offered(7101, "GET", params);
		assert.equal(again.named, "t1");
		const served = heldAnswersServed();
		assert.equal(heldAnswerBody(again.req, { [ANSWER_SAME_KEY]: "t1" }), bytes);
		assert.equal(heldAnswersServed(), served + 1);

		// other parameters, another account: nothing named
		assert.equal(offered(7101, "GET", { limit: "10" }).named, undefined);
		assert.equal(offered(7102, "GET", params).named, undefined);
		// a HEAD is answered as its GET: offered the same bytes
		assert.equal(offered(7101, "HEAD", params).named, "t1");
	});

	it("offers nothing for writes, without an account, or in a process without a transporter", () => {
		const params = { limit: "20" };
		for (const [sender, method, transit] of [
			[7104, "POST", true],
			[undefined, "GET", true],
			[7104, "GET", false],
		] as const) {
			const { req } = offered(sender, method, params, transit);
			// keeps nothing from such a request
			assert.equal(heldAnswerBody(req, { [ANSWER_BYTES_KEY]: bytes, [ANSWER_TAG_KEY]: "t9" }), undefined);
		}
		for (const [sender, method, transit] of [
			[7104, "POST", true],
			[undefined, "GET", true],
			[7104, "GET", false],
		] as const)
			assert.equal(offered(sender, method, params, transit).named, undefined);
		// the same read of an account with a transporter was not kept either: nothing to name
		assert.equal(offered(7104, "GET", params).named, undefined);
	});

	it("refuses a `same` naming a tag it did not offer, and passes every other answer on", () => {
		const { req } = offered(7103, "GET", { limit: "10" });
		assert.throws(() => heldAnswerBody(req, { [ANSWER_SAME_KEY]: "t1" }), /tag not offered/);
		assert.equal(heldAnswerBody(req, { data: [] }), undefined);
		assert.equal(heldAnswerBody(req, null), undefined);
		assert.equal(heldAnswerBody(req, "text"), undefined);
	});
});
