/**
 * Answers the gateway holds (issue 32, docs/decisions/0133-held-answers.md): split over NATS, a long shared answer
 * (a list page of 50 orders, about 30 KB) arrives as its kept bytes with their tag (lib/platform/answer-text.ts
 * `ANSWER_TAG_KEY`). The gateway keeps the bytes of the last such answer per request (the account, the action and
 * its parameters) and names their tag in the next identical request's call (`ANSWER_HELD_META`); while the action's
 * answer for that call is unchanged, only the tag comes back (`ANSWER_SAME_KEY`) and the gateway writes the bytes it
 * holds. The page then crosses NATS once per change instead of once per request.
 *
 * No answer is served on the gateway's word: the action makes the answer for this very call (its caller's account,
 * its parameters, the rows as they are now) and says "same" only when that answer's bytes have the tag named, and a
 * tag is the SHA-256 of the bytes (lib/platform/shared-answers.ts `answerTag`). So the bytes written are the answer's
 * bytes, whatever the key under which the gateway found them.
 *
 * Only reads (GET, HEAD) of an authenticated account are offered, and only in a process with a transporter (one
 * process calls its actions locally and never gets carried bytes).
 */
import { LRUCache } from "lru-cache";
import type { Context } from "moleculer";
import { ANSWER_BYTES_KEY, ANSWER_HELD_META, ANSWER_SAME_KEY, ANSWER_TAG_KEY } from "../platform/answer-text";
import type { GwRequest } from "./web-types";

/** Bytes of held answers at most (their UTF-8 bytes and keys), per gateway process. */
export const HELD_ANSWER_BYTES = 8 * 1024 * 1024;

/** Bytes of an answer the gateway holds, and their tag. */
interface HeldAnswer {
	tag: string;
	body: Uint8Array;
}

/** The request's key and the answer held for it, on the request (never sent): set by {@link offerHeldAnswer}. */
type HeldRequest = GwRequest & { $heldKey?: string; $held?: HeldAnswer };

/** Held answers by request key (account, action, parameters), least recently used dropped first. */
const held = new LRUCache<string, HeldAnswer>({
	maxSize: HELD_ANSWER_BYTES,
	sizeCalculation: (v, k) => v.body.length + 2 * k.length + 64,
});

/** Answers written from held bytes since the process started. */
let servedFromHeld = 0;

/** Actions that answered with tagged bytes: only their reads are offered (others cost no key). */
const taggedActions = new Set<string>();

/**
 * The key of a read (GET, HEAD) of an authenticated account in a process with a transporter: account, action and
 * parameters; `undefined` for any other request.
 */
function readKey(ctx: Context | undefined, req: GwRequest): string | undefined {
	if (!ctx?.broker.transit || (req.method !== "GET" && req.method !== "HEAD")) return undefined;
	const sender = (ctx.meta as { user?: { sender_id?: number } }).user?.sender_id;
	const action = req.$action?.name;
	if (sender === undefined || action === undefined) return undefined;
	return `${sender}\n${action}\n${JSON.stringify(req.$params ?? {})}`;
}

/**
 * `authorize` part of the API route (services/gateway.service.ts, after the account's limit and access rule): for a
 * read of an action that has answered with tagged bytes, when bytes are held for the request's key ({@link readKey}),
 * names their tag in the call's meta ({@link ANSWER_HELD_META}) and keeps them on `req` for {@link heldAnswerBody}.
 */
export function offerHeldAnswer(ctx: Context, req: GwRequest): void {
	const action = req.$action?.name;
	if (action === undefined || !taggedActions.has(action)) return;
	const key = readKey(ctx, req);
	if (key === undefined) return;
	const r = req as HeldRequest;
	r.$heldKey = key;
	const h = held.get(key);
	if (h === undefined) return;
	r.$held = h;
	(ctx.meta as Record<string, unknown>)[ANSWER_HELD_META] = h.tag;
}

/**
 * The body to write for `data` as far as held answers go: the held bytes when the action answered
 * `{ [ANSWER_SAME_KEY]: tag }` for the tag offered; `undefined` for any other answer, after keeping carried bytes with
 * their tag for a read's key ({@link readKey}; its action's reads are offered from then on).
 * @throws Error when the action names a tag other than the one offered (never: it answers only what was named)
 */
export function heldAnswerBody(req: GwRequest, data: unknown): Uint8Array | undefined {
	if (data === null || typeof data !== "object") return undefined;
	const r = req as HeldRequest;
	const same = (data as Record<string, unknown>)[ANSWER_SAME_KEY];
	if (same !== undefined) {
		if (r.$held === undefined || r.$held.tag !== same)
			throw new Error("held answer: the action named a tag not offered");
		servedFromHeld++;
		return r.$held.body;
	}
	const body = (data as Record<string, unknown>)[ANSWER_BYTES_KEY];
	const tag = (data as Record<string, unknown>)[ANSWER_TAG_KEY];
	if (!(body instanceof Uint8Array) || typeof tag !== "string") return undefined;
	const key = r.$heldKey ?? readKey(r.$ctx as Context | undefined, r);
	if (key === undefined) return undefined;
	held.set(key, { tag, body });
	if (r.$action?.name) taggedActions.add(r.$action.name);
	return undefined;
}

/** How many answers this process wrote from held bytes since it started (what the tests observe). */
export function heldAnswersServed(): number {
	return servedFromHeld;
}
