/**
 * In-process caching of reference data: {@link TtlLru} for pincode facts
 * fetched from another service (snapshots read from the database reload
 * through lib/platform/reloader.ts).
 */

/** A small LRU cache with a time-to-live. Map insertion order is the recency order. */
export class TtlLru<V> {
	private readonly map = new Map<string, { value: V; expires: number }>();

	/**
	 * @param max maximum entries kept (least recently used evicted first)
	 * @param ttlMs time-to-live of an entry in milliseconds
	 */
	constructor(
		private readonly max: number,
		private readonly ttlMs: number,
		private readonly now: () => number = Date.now,
	) {}

	/** The live value for `key`, refreshing its recency; undefined when absent or expired. */
	get(key: string): V | undefined {
		const e = this.map.get(key);
		if (!e) return undefined;
		if (e.expires <= this.now()) {
			this.map.delete(key);
			return undefined;
		}
		this.map.delete(key);
		this.map.set(key, e);
		return e.value;
	}

	/** Stores `value` under `key`, evicting the least recently used entries beyond `max`. */
	set(key: string, value: V): void {
		this.map.delete(key);
		this.map.set(key, { value, expires: this.now() + this.ttlMs });
		while (this.map.size > this.max) {
			const oldest = this.map.keys().next().value as string;
			this.map.delete(oldest);
		}
	}

	/** Drops every entry. */
	clear(): void {
		this.map.clear();
	}

	/** Number of entries held (live or not yet swept). */
	get size(): number {
		return this.map.size;
	}
}
