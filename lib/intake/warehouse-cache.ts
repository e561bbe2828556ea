/**
 * Short-lived cache of positive `warehouses.resolve` answers on the order-create
 * hot path (≥ 1,000 orders/s). Only "this warehouse is the caller's and active"
 * is cached, never a miss; entries live `INTAKE_WAREHOUSE_CACHE_MS` (default
 * 5,000 ms; 0 disables) and are evicted at once by the `warehouses.changed`
 * broadcast that the warehouses service sends after every update and delete.
 * The TTL bounds staleness should a broadcast be lost (events are
 * fire-and-forget).
 *
 * A lookup that was in flight while an eviction arrived must not refill the
 * cache with its (possibly pre-delete) answer: callers take a {@link begin}
 * token before calling `warehouses.resolve` and hand it to {@link remember},
 * which drops the answer when any eviction happened in between.
 *
 * Limit (documented, not closed here): a warehouse deleted while an order is
 * being created from it can still receive that order — see the note on
 * `warehouses.remove` (services/warehouses.service.ts).
 */
export class WarehouseCache {
	private readonly entries = new Map<string, number>();
	/** Count of evictions so far; a lookup started at an older epoch is not remembered. */
	private epoch = 0;

	constructor(
		private readonly ttlMs: number,
		private readonly maxEntries = 50_000,
	) {}

	/** True when (sender_id, id) resolved to an active warehouse within the TTL. */
	has(sender_id: number, id: number): boolean {
		if (this.ttlMs <= 0) return false;
		const key = `${sender_id}:${id}`;
		const until = this.entries.get(key);
		if (until === undefined) return false;
		if (until < Date.now()) {
			this.entries.delete(key);
			return false;
		}
		return true;
	}

	/** Token to take before a `warehouses.resolve` call whose positive answer will be remembered. */
	begin(): number {
		return this.epoch;
	}

	/**
	 * Remembers a positive resolution obtained by a lookup started at `since`
	 * ({@link begin}); ignored when an eviction arrived meanwhile. When the
	 * cache is full it is emptied (a burst of misses, never a stale answer).
	 */
	remember(sender_id: number, id: number, since: number): void {
		if (this.ttlMs <= 0 || since !== this.epoch) return;
		if (this.entries.size >= this.maxEntries) this.entries.clear();
		this.entries.set(`${sender_id}:${id}`, Date.now() + this.ttlMs);
	}

	/** Forgets a warehouse (on `warehouses.changed`) and voids the lookups in flight. */
	evict(sender_id: number, id: number): void {
		this.epoch += 1;
		this.entries.delete(`${sender_id}:${id}`);
	}
}
