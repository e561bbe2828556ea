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
