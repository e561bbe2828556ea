/**
 * In-process caching of reference data: {@link TtlLru} for pincode facts
 * fetched from another service, {@link Reloader} for snapshots read from the
 * database (rates catalog, pincode directory).
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

/**
 * Loads a value (a reference-data snapshot read from the database) with
 * coalescing: concurrent callers share one read, and every caller gets a value
 * whose read STARTED after its call, so a reload asked for right after an edit
 * never answers with a read that was already under way before the edit (for
 * instance the periodic refresh). At most one read runs and one waits.
 *
 * Used by the pincode directory and the rates catalog (swap the value in on
 * success; on failure the caller keeps its previous value). Generic: a
 * candidate for lib/ once other services need it.
 */
export class Reloader<T> {
	private running?: Promise<T>;
	private queued?: Promise<T>;

	/** @param read the load itself; its rejection is passed to every caller waiting on that read */
	constructor(private readonly read: () => Promise<T>) {}

	/** A fresh value, read no earlier than this call. Rejects when that read fails. */
	load(): Promise<T> {
		if (!this.running) return this.start();
		if (!this.queued) {
			this.queued = this.running
				.catch(() => undefined)
				.then(() => {
					this.queued = undefined;
					return this.start();
				});
		}
		return this.queued;
	}

	private start(): Promise<T> {
		const p: Promise<T> = this.read().finally(() => {
			if (this.running === p) this.running = undefined;
		});
		this.running = p;
		return p;
	}
}
