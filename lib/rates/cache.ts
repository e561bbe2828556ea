/**
 * In-process caching of reference data: {@link TtlLru} for pincode facts
 * fetched from another service (snapshots read from the database reload
 * through lib/platform/reloader.ts).
 */

/**
 * A small LRU cache with a time-to-live. Map insertion order is the recency order.
 *
 * A read moves its entry to the recent end only when at least half of `max` entries were placed (set or moved)
 * after it (issue 32: a Map delete and set on every read of a hot pincode cost more than the lookup). Eviction
 * takes the oldest entries beyond `max`, so an entry is evicted only after `max` placements since its own: an entry
 * read at least once in every `max / 2` placements is never evicted, and no entry among the `max / 2` most recently
 * used is. With `max` ≤ 2 every read moves its entry (exact LRU).
 */
export class TtlLru<V> {
	private readonly map = new Map<string, { value: V; expires: number; placed: number }>();
	/** Placements so far (sets and moves); an entry's `placed` is the count at its own. */
	private placements = 0;
	/** Placements after an entry's own that make a read move it to the recent end. */
	private readonly moveAfter: number;

	/**
	 * @param max maximum entries kept (least recently used evicted first)
	 * @param ttlMs time-to-live of an entry in milliseconds
	 */
	constructor(
		private readonly max: number,
		private readonly ttlMs: number,
		private readonly now: () => number = Date.now,
	) {
		this.moveAfter = Math.max(1, Math.floor(max / 2));
	}

	/** The live value for `key`, refreshing its recency (see the class notes); undefined when absent or expired. */
	get(key: string): V | undefined {
		const e = this.map.get(key);
		if (!e) return undefined;
		if (e.expires <= this.now()) {
			this.map.delete(key);
			return undefined;
		}
		if (this.placements - e.placed >= this.moveAfter) {
			this.map.delete(key);
			e.placed = ++this.placements;
			this.map.set(key, e);
		}
		return e.value;
	}

	/** Stores `value` under `key`, evicting the least recently used entries beyond `max`. */
	set(key: string, value: V): void {
		this.map.delete(key);
		this.map.set(key, { value, expires: this.now() + this.ttlMs, placed: ++this.placements });
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
