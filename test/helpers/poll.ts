/**
 * The one polling helper of the test suite: asynchronous effects (outbox
 * relays, BullMQ jobs, events over NATS) are awaited by polling the real
 * state, never by sleeping a fixed time.
 */
import assert from "node:assert/strict";

export interface PollOptions<T> {
	/** what is awaited, for the failure message */
	what?: string;
	/** give up after this many ms (default 15 000) */
	ms?: number;
	/** poll interval in ms (default 50) */
	every?: number;
	/** when the probed value is good enough (default: truthy) */
	ok?: (v: T) => boolean;
	/** on timeout, what else the failure message shows (state behind the probe, for a rare failure) */
	diagnose?: () => Promise<unknown>;
}

/**
 * Calls `probe` until `ok(value)` holds (default: the value is truthy) and
 * returns that value; fails the test with the last value seen after `ms`.
 */
export async function eventually<T>(
	probe: () => Promise<T> | T,
	opts: PollOptions<T> = {},
): Promise<NonNullable<T>> {
	const { what = "condition", ms = 15_000, every = 50, ok = (v: T) => Boolean(v), diagnose } = opts;
	const end = Date.now() + ms;
	for (;;) {
		const v = await probe();
		if (ok(v)) return v as NonNullable<T>;
		if (Date.now() > end) {
			const more = diagnose ? `; ${JSON.stringify(await diagnose().catch((e: Error) => e.message))}` : "";
			assert.fail(`timed out after ${ms} ms waiting for ${what}: last ${JSON.stringify(v)}${more}`);
		}
		await new Promise((r) => setTimeout(r, every));
	}
}
