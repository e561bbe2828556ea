/**
 * Answers made once and given to many requests (issue 32, docs/decisions/0117-shared-answer-json.md).
 *
 * An action that keeps an answer and returns the same object again (the kept quotes of
 * `GET /v1/shipping/serviceable` and `rates.quote`, the EDD answers: lib/rates/operations.ts) marks it with
 * {@link shareAnswer}, which freezes it whole, since every caller holds the same object. The gateway encodes
 * every answer with {@link answerJson} (moleculer-web's `encodeResponse` hook, services/gateway.service.ts): the
 * JSON of a marked answer is made once and kept while the object lives (a WeakMap, so it goes with the answer);
 * any other answer is encoded each time. {@link keepAnswerJson} gives an answer the JSON its maker assembled (a
 * list page from its kept rows, lib/intake/list.ts). In one process the gateway receives the action's own object;
 * over NATS the action's process makes the JSON with {@link answerJson} and sends the text
 * (lib/platform/answer-text.ts, docs/decisions/0124-answer-text-over-nats.md), so a marked answer's kept JSON serves
 * remote gateways too. A long shared answer's bytes carry a tag ({@link answerTag}), so a gateway that holds them is
 * answered with the tag alone (lib/platform/answer-text.ts, docs/decisions/0133-held-answers.md).
 */
import { createHash } from "node:crypto";

/** Answers marked by {@link shareAnswer}. */
const shared = new WeakSet<object>();
/** The JSON of each shared answer already encoded. */
const texts = new WeakMap<object, string>();

/** `x` and everything it holds, frozen (an object already frozen is taken as frozen whole). */
export function deepFreeze<T>(x: T): T {
	if (x && typeof x === "object" && !Object.isFrozen(x)) {
		Object.freeze(x);
		for (const v of Object.values(x)) deepFreeze(v);
	}
	return x;
}

/**
 * Marks `answer` (an object or array) as given to many requests: freezes it and everything it holds
 * ({@link deepFreeze}), so its JSON cannot change, and returns it.
 */
export function shareAnswer<T extends object>(answer: T): T {
	deepFreeze(answer);
	shared.add(answer);
	return answer;
}

/**
 * Marks `answer` (an object or array) as one whose JSON text is `json`, which the caller made to be exactly
 * `JSON.stringify(answer)` (e.g. from kept parts: lib/intake/list.ts `listPage`): a {@link shareAnswer} whose text
 * is given, not made, so {@link answerJson} writes it without encoding the answer again. Returns `answer`.
 */
export function keepAnswerJson<T extends object>(answer: T, json: string): T {
	texts.set(shareAnswer(answer), json);
	return answer;
}

/**
 * The JSON text of an HTTP answer (`JSON.stringify`; what moleculer-web's own `encodeResponse` does): made once
 * for an answer marked by {@link shareAnswer}, each time for any other value.
 */
export function answerJson(data: unknown): string {
	if (data !== null && typeof data === "object" && shared.has(data)) {
		let text = texts.get(data);
		if (text === undefined) {
			text = JSON.stringify(data);
			texts.set(data, text);
		}
		return text;
	}
	// JSON.stringify(undefined) is undefined, as upstream's encodeResponse answers it
	return JSON.stringify(data) as string;
}

/** Shortest JSON of a shared answer whose body is kept as bytes ({@link answerBody}). */
const BODY_BYTES_MIN = 4096;
/** The UTF-8 bytes of each shared answer's JSON of at least {@link BODY_BYTES_MIN} characters. */
const bodies = new WeakMap<object, Buffer>();

/**
 * The HTTP body of an answer: {@link answerJson}, except that a shared answer whose JSON is long (a list page: at
 * least `min` characters, {@link BODY_BYTES_MIN} unless given) is given as its UTF-8 bytes, made once: Node writes a
 * Buffer body as it is (after the head, in one `writev`), where a string body is joined to the head and encoded
 * again for every response. The bytes made for one `min` are kept for the answer and given to any later call whose
 * `min` the JSON reaches (lib/platform/answer-text.ts asks with a lower one: record 0153).
 */
export function answerBody(data: unknown, min = BODY_BYTES_MIN): string | Buffer {
	const text = answerJson(data);
	if (text === undefined || text.length < min || data === null || typeof data !== "object") return text;
	if (!shared.has(data)) return text;
	let body = bodies.get(data);
	if (body === undefined) {
		body = Buffer.from(text);
		bodies.set(data, body);
	}
	return body;
}

/** The tag of each shared answer's kept bytes ({@link answerTag}). */
const tags = new WeakMap<object, string>();

/**
 * The tag of a shared answer whose body is kept as bytes ({@link answerBody} gave a Buffer): the SHA-256 of those
 * bytes (base64url, 43 characters), made once per answer; two processes keeping the same bytes give the same tag.
 * `undefined` for any other answer. A gateway holding bytes under this tag holds exactly these bytes
 * (docs/decisions/0133-held-answers.md).
 */
export function answerTag(data: object): string | undefined {
	let tag = tags.get(data);
	if (tag === undefined) {
		const body = bodies.get(data);
		if (body === undefined) return undefined;
		tag = createHash("sha256").update(body).digest("base64url");
		tags.set(data, tag);
	}
	return tag;
}
