/**
 * Environment for one mocha suite: sets `vars` in a `before` hook (services
 * read their configuration when they are created, so register this before the
 * hooks that start brokers) and restores every key — plus `alsoRestore`, keys
 * the suite sets itself later — in an `after` hook.
 */
export function useEnv(vars: Record<string, string>, alsoRestore: string[] = []): void {
	const saved = { ...process.env };
	before(() => {
		Object.assign(process.env, vars);
	});
	after(() => {
		for (const k of [...Object.keys(vars), ...alsoRestore]) {
			if (saved[k] === undefined) delete process.env[k];
			else process.env[k] = saved[k];
		}
	});
}

/**
 * Sets (or, for `undefined`, deletes) `vars` in `process.env` now; answers
 * the function that restores their previous values. Services read their
 * configuration when they are created: set it before creating them.
 */
export function setEnv(vars: Record<string, string | undefined>): () => void {
	const old: Record<string, string | undefined> = {};
	for (const [k, v] of Object.entries(vars)) {
		old[k] = process.env[k];
		if (v === undefined) delete process.env[k];
		else process.env[k] = v;
	}
	return () => {
		for (const [k, v] of Object.entries(old)) {
			if (v === undefined) delete process.env[k];
			else process.env[k] = v;
		}
	};
}
