/**
 * A remote action called by the gateway for an HTTP answer sends the answer's JSON text, not the answer (issue 32,
 * docs/decisions/0124-answer-text-over-nats.md).
 *
 * Split over NATS, a JSON answer used to be encoded three times: CBOR by the action's process, decoded from CBOR into
 * objects by the gateway, then `JSON.stringify`'d by the gateway for the HTTP body. The gateway never reads the
 * answer's fields: it only writes its JSON. So the gateway's API route marks its calls ({@link ANSWER_TEXT_META} in
 * the call's meta, lib/gateway/route-options.ts), and this middleware, in the process that runs the action, answers
 * such a call from another node with `{ [ANSWER_TEXT_KEY]: json }`: the JSON made once where the answer was made (a
 * shared answer's kept JSON: lib/platform/shared-answers.ts), carried as one CBOR string, written by the gateway as
 * it arrives ({@link answerTextOf}).
 *
 * A gateway that also writes bytes marks its calls {@link ANSWER_BYTES}: a long shared answer ({@link HELD_ANSWER_MIN}
 * characters or more: a list page, an order's detail) is then carried as its kept UTF-8 bytes under
 * {@link ANSWER_BYTES_KEY} (lib/platform/shared-answers.ts `answerBody`), neither encoded to UTF-8 by the action's
 * process nor decoded by the gateway for each request (docs/decisions/0132-kept-list-pages.md). A gateway that marks
 * `true` (an earlier release) gets text only.
 *
 * Bytes held by the gateway (docs/decisions/0133-held-answers.md): such bytes travel with their tag
 * ({@link ANSWER_TAG_KEY}, lib/platform/shared-answers.ts `answerTag`); a gateway that kept the bytes of an earlier
 * answer to the same request names their tag in the call's meta ({@link ANSWER_HELD_META}), and when the answer made
 * for this call has that tag, only the tag comes back ({@link ANSWER_SAME_KEY}): the gateway writes the bytes it
 * holds (lib/gateway/held-answers.ts), and a list page no longer crosses NATS while it is unchanged.
 *
 * Nothing else changes: a call from the same node (one process) gets the answer itself; a call without the mark (any
 * internal caller, a nested call of the action) gets the answer itself; an answer that is not a plain object or array
 * (a Buffer, a stream, a string, null) or that sets its own `$responseType` is passed as it is; errors are thrown as
 * they were.
 */
import type { Context, Middleware, ServiceBroker } from "moleculer";
import { isObjectLiteral } from "../shared/fields";
import { answerBody, answerJson, answerTag } from "./shared-answers";

/**
 * The call meta key the gateway's API route sets on its action calls: `true` (JSON text) or {@link ANSWER_BYTES}
 * (JSON text, or bytes for a long shared answer).
 */
export const ANSWER_TEXT_META = "$answerText";

/** The mark of a gateway that writes carried bytes as well as carried text. */
export const ANSWER_BYTES = 2;

/** The one key of the object that carries an answer's JSON text back to the gateway. */
export const ANSWER_TEXT_KEY = "$answerJsonText";

/**
 * Shortest JSON (characters) of a shared answer carried to the gateway as its kept bytes with their tag, so that the
 * gateway can hold them (docs/decisions/0133-held-answers.md, 0153): shorter than the HTTP body's 4,096
 * (lib/platform/shared-answers.ts), so an order's detail (about 1.5 KB) is held too.
 */
export const HELD_ANSWER_MIN = 1024;

/** The one key of the object that carries an answer's JSON as UTF-8 bytes back to a gateway marking {@link ANSWER_BYTES}. */
export const ANSWER_BYTES_KEY = "$answerJsonBytes";

/** The tag of carried bytes ({@link ANSWER_BYTES_KEY}), beside them: what the gateway may name in {@link ANSWER_HELD_META} later. */
export const ANSWER_TAG_KEY = "$answerJsonTag";

/**
 * The call meta key naming the tag of the bytes the gateway holds for this request (an earlier answer's
 * {@link ANSWER_TAG_KEY}); only read with the {@link ANSWER_BYTES} mark.
 */
export const ANSWER_HELD_META = "$answerHeld";

/** The one key of the answer that tells the gateway its held bytes are the answer: their tag. */
export const ANSWER_SAME_KEY = "$answerSame";

/** The gateway's service name (services/gateway.service.ts): only its calls are answered as JSON text. */
export const ANSWER_TEXT_CALLER = "gateway";

/** The meta fields this middleware reads on the action's side. */
interface AnswerMeta {
	$answerText?: boolean | typeof ANSWER_BYTES;
	/** {@link ANSWER_HELD_META} */
	$answerHeld?: unknown;
	$responseType?: string;
	$responseHeaders?: Record<string, unknown>;
}

/**
 * The answer a marked gateway call gets: `{ [ANSWER_TEXT_KEY]: JSON text }` when `result` is a plain object or
 * array and the action set no `$responseType` nor a `Content-Type` of its own, else `result` unchanged. With `bytes`
 * (the gateway marked {@link ANSWER_BYTES}) a long shared answer is `{ [ANSWER_BYTES_KEY]: its kept UTF-8 bytes,
 * [ANSWER_TAG_KEY]: their tag }`, or `{ [ANSWER_SAME_KEY]: tag }` when `held` (what the gateway named in
 * {@link ANSWER_HELD_META}) is that tag.
 */
export function answerTextFor(meta: AnswerMeta, result: unknown, bytes = false, held?: unknown): unknown {
	if (
		!(Array.isArray(result) || isObjectLiteral(result)) ||
		meta.$responseType ||
		meta.$responseHeaders?.["Content-Type"]
	)
		return result;
	if (!bytes) return { [ANSWER_TEXT_KEY]: answerJson(result) };
	const body = answerBody(result, HELD_ANSWER_MIN);
	if (typeof body === "string") return { [ANSWER_TEXT_KEY]: body };
	const tag = answerTag(result as object);
	return held === tag ? { [ANSWER_SAME_KEY]: tag } : { [ANSWER_BYTES_KEY]: body, [ANSWER_TAG_KEY]: tag };
}

/**
 * The JSON of an answer the gateway received: the carried text or UTF-8 bytes of an answer made by
 * {@link answerTextFor}, `undefined` for any other answer.
 */
export function answerTextOf(data: unknown): string | Uint8Array | undefined {
	if (data === null || typeof data !== "object") return undefined;
	const text = (data as Record<string, unknown>)[ANSWER_TEXT_KEY];
	if (typeof text === "string") return text;
	const bytes = (data as Record<string, unknown>)[ANSWER_BYTES_KEY];
	return bytes instanceof Uint8Array ? bytes : undefined;
}

/**
 * Moleculer middleware (its `localAction` hook; moleculer.config.ts registers it with a transporter): answers a call
 * marked {@link ANSWER_TEXT_META} by the gateway from another node with {@link answerTextFor} (the tag the gateway
 * holds, {@link ANSWER_HELD_META}, read with it), and clears the mark and the tag in the call's meta (it goes back to
 * the gateway with the answer's meta), so no later call of the same request carries them. Any other call runs as
 * before.
 */
export function AnswerText(): Middleware {
	let nodeID = "";
	return {
		name: "AnswerText",
		created(broker: ServiceBroker) {
			nodeID = broker.nodeID;
		},
		localAction(next: (ctx: Context) => Promise<unknown>) {
			return function answerText(ctx: Context): Promise<unknown> {
				const meta = ctx.meta as AnswerMeta;
				const mark = meta.$answerText;
				if (
					(mark !== true && mark !== ANSWER_BYTES) ||
					ctx.caller !== ANSWER_TEXT_CALLER ||
					ctx.nodeID === nodeID
				)
					return next(ctx);
				meta.$answerText = false;
				const held = meta.$answerHeld;
				if (held !== undefined) meta.$answerHeld = undefined;
				return next(ctx).then((result) => answerTextFor(meta, result, mark === ANSWER_BYTES, held));
			};
		},
	} satisfies Middleware;
}
