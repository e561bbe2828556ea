/**
 * The gateway's calls to another node are answered with the answer's JSON text (lib/platform/answer-text.ts,
 * docs/decisions/0124-answer-text-over-nats.md): brokers over real NATS with the system's broker options (the
 * middleware included), a service named `gateway` as the caller, the mark set as the API route sets it.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { type Context, ServiceBroker } from "moleculer";
import { gatewayRoutes } from "../../lib/gateway/route-options";
import {
	ANSWER_BYTES,
	ANSWER_BYTES_KEY,
	ANSWER_HELD_META,
	ANSWER_SAME_KEY,
	ANSWER_TAG_KEY,
	ANSWER_TEXT_CALLER,
	ANSWER_TEXT_KEY,
	ANSWER_TEXT_META,
	answerTextFor,
	answerTextOf,
	HELD_ANSWER_MIN,
} from "../../lib/platform/answer-text";
import { answerBody, shareAnswer } from "../../lib/platform/shared-answers";
import { loadServiceSchema } from "../../lib/platform/system";
import { testBrokerOptions } from "../helpers/broker";

/** What the `orders` service answers (a page-like answer with the values JSON keeps and drops). */
const PAGE = {
	data: [{ order_id: 7, order_no: "A-1", cod_amount: null, value: 1234.5, name: "Ravi" }],
	n: 1,
};
/** A shared answer (its JSON kept: lib/platform/shared-answers.ts). */
const SHARED = shareAnswer({ quotes: [{ courier: "sandbox", total: 56.64 }] });
/** A long shared answer (a list page: its JSON 4,096 characters or more, kept as bytes). */
const LONG = shareAnswer({
	data: Array.from({ length: 120 }, (_, i) => ({ order_id: i, city: "Bengaluru", note: "₹ collected" })),
});

/** What `probe.held` saw of the held tag when `orders.longAfterProbe` called it. */
let heldSeenByNestedCall: unknown;

/** The `orders` service: answers of every kind, and a nested call to the caller's node. */
const orders = {
	name: "orders",
	actions: {
		page: () => PAGE,
		list: () => [1, "two", null],
		shared: () => SHARED,
		long: () => LONG,
		pdf(ctx: Context) {
			(ctx.meta as Record<string, unknown>).$responseType = "application/pdf";
			return Buffer.from("%PDF-1.7");
		},
		csv(ctx: Context) {
			(ctx.meta as Record<string, unknown>).$responseType = "text/csv";
			return { rows: 1 };
		},
		typed(ctx: Context) {
			(ctx.meta as Record<string, unknown>).$responseHeaders = { "Content-Type": "application/geo+json" };
			return { type: "Point" };
		},
		text: () => "plain",
		none: () => null,
		fail() {
			throw new Error("refused");
		},
		/** calls `probe.answer` on the caller's node and answers what it got, and the mark it saw */
		async outer(ctx: Context) {
			const inner = await ctx.call("probe.answer");
			return { inner };
		},
		/** a long shared answer, after calling `probe.held` on the caller's node (what it saw of the held tag) */
		async longAfterProbe(ctx: Context) {
			heldSeenByNestedCall = await ctx.call("probe.held");
			return LONG;
		},
	},
};

/** Calls `action` with a mark (the API route's unless `mark` is given), as service `name` (the gateway, or another caller). */
function callerService(name: string) {
	return {
		name,
		actions: {
			async call(ctx: Context<{ action: string; mark?: unknown; held?: string }>) {
				const mark = ctx.params.mark ?? ANSWER_BYTES;
				const meta: Record<string, unknown> = { [ANSWER_TEXT_META]: mark };
				if (ctx.params.held !== undefined) meta[ANSWER_HELD_META] = ctx.params.held;
				const result = await ctx.call(ctx.params.action, {}, { meta });
				return { result, markAfter: (ctx.meta as Record<string, unknown>)[ANSWER_TEXT_META] ?? null };
			},
		},
	};
}

describe("integration: a gateway's remote call answered as JSON text (AnswerText)", function () {
	this.timeout(30_000);
	let gatewayNode: ServiceBroker;
	let ordersNode: ServiceBroker;

	before(async () => {
		const namespace = `${process.env.NAMESPACE}-answertext`;
		ordersNode = new ServiceBroker(testBrokerOptions(true, { namespace, nodeID: "answer-orders" }));
		ordersNode.createService(orders);
		gatewayNode = new ServiceBroker(testBrokerOptions(true, { namespace, nodeID: "answer-gateway" }));
		gatewayNode.createService(callerService("gateway"));
		gatewayNode.createService(callerService("other"));
		gatewayNode.createService({
			name: "probe",
			actions: {
				answer: (ctx: Context) => ({ mark: (ctx.meta as Record<string, unknown>)[ANSWER_TEXT_META] ?? null }),
				held: (ctx: Context) => ({ held: (ctx.meta as Record<string, unknown>)[ANSWER_HELD_META] ?? null }),
			},
		});
		await Promise.all([ordersNode.start(), gatewayNode.start()]);
		await gatewayNode.waitForServices(["orders"], 10_000);
		await ordersNode.waitForServices(["probe"], 10_000);
	});
	after(async () => {
		await gatewayNode?.stop();
		await ordersNode?.stop();
	});

	/** `gateway.call(action)`'s answer. */
	const viaGateway = (action: string, as = "gateway", mark?: unknown, held?: string) =>
		gatewayNode.call(`${as}.call`, { action, mark, held }) as Promise<{
			result: unknown;
			markAfter: unknown;
		}>;

	it("answers an object or array with its JSON text, made where the answer was made; the mark comes back cleared", async () => {
		const page = await viaGateway("orders.page");
		assert.deepEqual(page.result, { [ANSWER_TEXT_KEY]: JSON.stringify(PAGE) });
		assert.equal(page.markAfter, false, "no later call of the request carries the mark");
		assert.equal(answerTextOf(page.result), JSON.stringify(PAGE));
		const list = await viaGateway("orders.list");
		assert.equal(answerTextOf(list.result), '[1,"two",null]');
		assert.equal(answerTextOf((await viaGateway("orders.shared")).result), JSON.stringify(SHARED));
	});

	it("a long shared answer crosses as its kept UTF-8 bytes to a gateway marking bytes, as text to one marking true", async () => {
		const bytes = (await viaGateway("orders.long")).result as Record<string, unknown>;
		const body = bytes[ANSWER_BYTES_KEY];
		assert.ok(Buffer.isBuffer(body), "bytes cross NATS as a Buffer");
		assert.equal(body.toString("utf8"), JSON.stringify(LONG));
		assert.equal(answerTextOf(bytes), body);
		// an earlier release's gateway marks true: text only
		const text = (await viaGateway("orders.long", "gateway", true)).result;
		assert.deepEqual(text, { [ANSWER_TEXT_KEY]: JSON.stringify(LONG) });
		// a short shared answer is text either way; an unknown mark is no mark
		assert.deepEqual((await viaGateway("orders.shared")).result, {
			[ANSWER_TEXT_KEY]: JSON.stringify(SHARED),
		});
		assert.deepEqual((await viaGateway("orders.page", "gateway", 3)).result, PAGE);
	});

	it("carried bytes come with their tag (SHA-256); a gateway naming that tag gets the tag alone, any other gets the bytes", async () => {
		const first = (await viaGateway("orders.long")).result as Record<string, unknown>;
		const tag = first[ANSWER_TAG_KEY] as string;
		assert.equal(tag, createHash("sha256").update(JSON.stringify(LONG)).digest("base64url"));
		assert.deepEqual((await viaGateway("orders.long", "gateway", undefined, tag)).result, {
			[ANSWER_SAME_KEY]: tag,
		});
		const other = (await viaGateway("orders.long", "gateway", undefined, `${tag.slice(1)}x`))
			.result as Record<string, unknown>;
		assert.equal((other[ANSWER_BYTES_KEY] as Buffer).toString("utf8"), JSON.stringify(LONG));
		assert.equal(other[ANSWER_TAG_KEY], tag);
		// text answers, an earlier release's mark and other callers ignore a held tag
		assert.deepEqual((await viaGateway("orders.shared", "gateway", undefined, tag)).result, {
			[ANSWER_TEXT_KEY]: JSON.stringify(SHARED),
		});
		assert.deepEqual((await viaGateway("orders.long", "gateway", true, tag)).result, {
			[ANSWER_TEXT_KEY]: JSON.stringify(LONG),
		});
		assert.deepEqual((await viaGateway("orders.long", "other", undefined, tag)).result, LONG);
		// the action's own calls do not carry the tag on
		const nested = (await viaGateway("orders.longAfterProbe", "gateway", undefined, tag)).result;
		assert.deepEqual(nested, { [ANSWER_SAME_KEY]: tag });
		assert.deepEqual(heldSeenByNestedCall, { held: null });
	});

	it("passes anything else as it is: a Buffer, an answer with its own type, a string, null, an error", async () => {
		const pdf = (await viaGateway("orders.pdf")).result;
		assert.ok(Buffer.isBuffer(pdf), "a Buffer stays a Buffer");
		assert.equal(pdf.toString(), "%PDF-1.7");
		assert.deepEqual((await viaGateway("orders.csv")).result, { rows: 1 });
		assert.deepEqual((await viaGateway("orders.typed")).result, { type: "Point" });
		assert.equal((await viaGateway("orders.text")).result, "plain");
		assert.equal((await viaGateway("orders.none")).result, null);
		await assert.rejects(viaGateway("orders.fail"), /refused/);
	});

	it("answers objects to any other caller, and to a nested call of the marked action", async () => {
		assert.deepEqual((await viaGateway("orders.page", "other")).result, PAGE);
		// orders.outer runs marked; its own call to probe (on the gateway's node) gets objects, the mark cleared
		assert.deepEqual((await viaGateway("orders.outer")).result, {
			[ANSWER_TEXT_KEY]: JSON.stringify({ inner: { mark: false } }),
		});
		// unmarked calls from the gateway: objects
		assert.deepEqual(await gatewayNode.call("orders.page"), PAGE);
	});

	it("answers objects to a call from the same node (one process)", async () => {
		const local = new ServiceBroker(
			testBrokerOptions(true, {
				namespace: `${process.env.NAMESPACE}-answertext-local`,
				nodeID: "answer-one",
			}),
		);
		local.createService(orders);
		local.createService(callerService("gateway"));
		await local.start();
		try {
			const r = (await local.call("gateway.call", { action: "orders.page" })) as { result: unknown };
			assert.deepEqual(r.result, PAGE);
			assert.equal(answerTextOf(r.result), undefined);
		} finally {
			await local.stop();
		}
	});

	it("the gateway marks the calls of its bearer /v1 route only (JSON answers), not uploads, links, pages or probes", () => {
		const routes = gatewayRoutes({ nodeID: "n1", devIdp: false, trustProxy: 0 });
		const marked = routes
			.filter((r) => r.callOptions?.meta?.[ANSWER_TEXT_META] === ANSWER_BYTES)
			.map((r) => r.name);
		assert.deepEqual(marked, ["api"]);
		// the middleware answers text to the caller of that name only
		assert.equal(loadServiceSchema("gateway").name, ANSWER_TEXT_CALLER);
	});

	it("a shared answer of HELD_ANSWER_MIN characters or more (an order's detail) crosses as bytes with its tag; a shorter one as text", () => {
		const sized = (n: number) => {
			const base = JSON.stringify({ order_id: 1, note: "" }).length;
			return shareAnswer({ order_id: 1, note: "x".repeat(n - base) });
		};
		const detail = sized(HELD_ANSWER_MIN);
		assert.equal(JSON.stringify(detail).length, HELD_ANSWER_MIN);
		const carried = answerTextFor({}, detail, true) as Record<string, unknown>;
		assert.ok(Buffer.isBuffer(carried[ANSWER_BYTES_KEY]), "bytes");
		assert.equal((carried[ANSWER_BYTES_KEY] as Buffer).toString("utf8"), JSON.stringify(detail));
		const tag = carried[ANSWER_TAG_KEY] as string;
		assert.equal(tag, createHash("sha256").update(JSON.stringify(detail)).digest("base64url"));
		assert.deepEqual(answerTextFor({}, detail, true, tag), { [ANSWER_SAME_KEY]: tag });
		const shorter = sized(HELD_ANSWER_MIN - 1);
		assert.deepEqual(answerTextFor({}, shorter, true), { [ANSWER_TEXT_KEY]: JSON.stringify(shorter) });
		// the gateway's own HTTP body of the same answer stays text below the body's 4,096 characters
		assert.equal(answerBody(detail), JSON.stringify(detail));
	});

	it("answerTextFor / answerTextOf: only plain objects and arrays are carried; only a carried text is read", () => {
		class Row {
			a = 1;
		}
		assert.deepEqual(answerTextFor({}, { a: 1 }), { [ANSWER_TEXT_KEY]: '{"a":1}' });
		assert.deepEqual(answerTextFor({}, Object.assign(Object.create(null), { a: 1 })), {
			[ANSWER_TEXT_KEY]: '{"a":1}',
		});
		const row = new Row();
		assert.equal(answerTextFor({}, row), row, "a class instance is passed as it is");
		const d = new Date(0);
		assert.equal(answerTextFor({}, d), d);
		assert.deepEqual(answerTextFor({ $responseType: "text/csv" }, { a: 1 }), { a: 1 });
		assert.equal(answerTextOf({ a: 1 }), undefined);
		assert.equal(answerTextOf([1]), undefined);
		assert.equal(answerTextOf({ [ANSWER_TEXT_KEY]: 5 }), undefined);
		assert.equal(answerTextOf(null), undefined);
		assert.equal(answerTextOf("x"), undefined);
		assert.equal(answerTextOf({ [ANSWER_BYTES_KEY]: "not bytes" }), undefined);
		const bytes = Buffer.from("{}");
		assert.equal(answerTextOf({ [ANSWER_BYTES_KEY]: bytes }), bytes);
	});
});
