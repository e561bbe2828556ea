/**
 * Writes to `process.env`, counted, so a setting read from it can be kept until the environment changes (issue 32,
 * docs/decisions/0151-settings-kept-until-the-environment-changes.md).
 *
 * Reading `process.env[name]` is not a property read: Node asks the C library for the variable and makes a new
 * string each time, a fraction of a microsecond that the hot routes paid several times per request
 * (lib/platform/config.ts `setting`: the tracking URL template, the label link's secret and public base, the cursor
 * key). In a deployed process the environment never changes after the start, but tests and the zero-setup start
 * write it at run time and expect the next read to see the value. So `process.env` is replaced, once, by a Proxy of
 * itself whose only difference is that every write (`=`, `Object.assign`, `delete`, `Object.defineProperty`) adds
 * one to {@link envWrites} before it reaches the real object: a value parsed at write count n is still the value
 * while the count is n. Reads, key listings and spreads go through to the real object, as before; child processes
 * and worker threads are given the real environment (Node passes its own copy when `env` is `process.env`).
 *
 * A write that does not go through `process.env` (a reference to the original object kept before this module was
 * loaded) is not counted: nothing in this code base keeps one, and {@link isWatchedEnv} lets a reader fall back to
 * reading each time when `process.env` has been replaced by someone else.
 */

/** The real `process.env` (Node's own object), as it was when this module was loaded. */
const realEnv: NodeJS.ProcessEnv = process.env;

/** Writes made to the environment through `process.env` since this module was loaded. */
let writes = 0;

/** `process.env` as this module leaves it: the real object behind a Proxy that counts writes. */
const watchedEnv: NodeJS.ProcessEnv = new Proxy(realEnv, {
	set(target, key, value) {
		writes++;
		return Reflect.set(target, key, value);
	},
	deleteProperty(target, key) {
		writes++;
		return Reflect.deleteProperty(target, key);
	},
	defineProperty(target, key, descriptor) {
		writes++;
		return Reflect.defineProperty(target, key, descriptor);
	},
});

process.env = watchedEnv;

/**
 * The number of writes made to `process.env` so far (each assignment, deletion or definition of a variable counts
 * one, whether or not the value changed): a value read from `process.env` at count n is its value while the count is
 * still n, provided {@link isWatchedEnv} holds for `process.env`.
 */
export function envWrites(): number {
	return writes;
}

/** True when `env` is the `process.env` whose writes {@link envWrites} counts (false once someone replaced it). */
export function isWatchedEnv(env: NodeJS.ProcessEnv): boolean {
	return env === watchedEnv && process.env === watchedEnv;
}
