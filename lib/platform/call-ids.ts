/**
 * Ids of the broker's calls and events (Moleculer's `uidGenerator`; issue 32,
 * docs/decisions/0152-call-ids-from-a-process-prefix.md).
 *
 * Moleculer gives every context an id (`ctx.id`): the key of a pending remote call in the transit's table
 * (lib/platform/churn-map.ts), the `id` of every request and response packet over NATS, the `call_id` and
 * `parent_id` of log lines, the `requestID` of a call that starts outside the gateway, and booking's `call_key` (the
 * key under which a resent call finds its attempt). Its own generator makes a random UUID per id from four
 * `Math.random()` draws and sixteen string joins. Here an id is a prefix drawn once per broker from the system's
 * secure random source (96 bits, base64url) and a counter of that broker in base 36: `"Xq3…Zk-1f"`. Two brokers
 * (two processes, or a process restarted) share a prefix with odds of one in 2^96 per pair, the same order as two
 * random UUIDs colliding (122 bits each), and one broker never repeats an id (the counter stays exact up to 2^53).
 * The ids are shorter (about 22 characters, not 36) and cost a string join and a number's text each.
 */
import { randomBytes } from "node:crypto";

/** Random bytes of a broker's id prefix (96 bits: 16 base64url characters). */
const PREFIX_BYTES = 12;

/**
 * A new id generator for one broker (Moleculer's `uidGenerator` option): each call answers
 * `<prefix>-<n in base 36>`, `n` = 1, 2, 3 …, with a prefix of {@link PREFIX_BYTES} secure random bytes in base64url
 * drawn when the generator is made. Ids of one generator never repeat; ids of two generators differ unless their
 * random prefixes are equal.
 */
export function callIdGenerator(): () => string {
	const prefix = `${randomBytes(PREFIX_BYTES).toString("base64url")}-`;
	let n = 0;
	return () => {
		n++;
		return prefix + n.toString(36);
	};
}
