/**
 * Parsed queries kept by the values they were parsed from (issue 32): a read route whose query is the same for many
 * requests (a list filter, a lane) parses and checks it once. The key is the values of the keys the parser reads,
 * as given, NUL-separated (an absent value and an empty one give the same key: the parsers using this read both as
 * absent). A query with one of those values that is not a string (a repeated key's array, a number) or that holds
 * a NUL is parsed every time and not kept; a parse that throws keeps nothing, so a bad query is refused every time.
 * What the parser returns is given to every later request with the same values: it must be frozen.
 */
export class KeptParses<T> {
	private readonly kept = new Map<string, T>();

	/**
	 * @param keys the keys of the params the parser reads (any other key is not part of the key)
	 * @param max most distinct keys kept; at that size the store starts over
	 */
	constructor(
		private readonly keys: readonly string[],
		private readonly max: number,
	) {}

	/** What `parse(params)` returned for the same values of the keys, else `parse(params)` (kept when it has a key). */
	get<P extends Readonly<Record<string, unknown>>>(params: P, parse: (params: P) => T): T {
		const key = this.keyOf(params);
		if (key === undefined) return parse(params);
		let parsed = this.kept.get(key);
		if (parsed === undefined) {
			parsed = parse(params);
			if (this.kept.size >= this.max) this.kept.clear();
			this.kept.set(key, parsed);
		}
		return parsed;
	}

	/** The key of `params` (see the class notes); undefined when a value is not a string or holds a NUL. */
	keyOf(params: Readonly<Record<string, unknown>>): string | undefined {
		let key = "";
		for (const k of this.keys) {
			const v = params[k];
			if (v === undefined) key += "\0";
			else if (typeof v !== "string" || v.includes("\0")) return undefined;
			else key += `${v}\0`;
		}
		return key;
	}

	/** Number of parsed queries kept. */
	get size(): number {
		return this.kept.size;
	}
}
