/**
 * Short-lived cache of positive `warehouses.resolve` answers on the order-create
 * hot path (≥ 1,000 orders/s). Only "this warehouse is the caller's and active"
 * is cached, never a miss; entries live `INTAKE_WAREHOUSE_CACHE_MS` (default
 * 5,000 ms; 0 disables) and are evicted at once by the `warehouses.changed`
 * broadcast that the warehouses service sends on every update and delete. The
 * TTL bounds staleness should a broadcast be lost (events are fire-and-forget).
 */
export class WarehouseCache {
	private readonly entries = new Map<string, number>();

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

	/** Remembers a positive resolution. */
	remember(sender_id: number, id: number): void {
		if (this.ttlMs <= 0) return;
		if (this.entries.size >= this.maxEntries) this.entries.clear();
		this.entries.set(`${sender_id}:${id}`, Date.now() + this.ttlMs);
	}

	/** Forgets a warehouse (on `warehouses.changed`). */
	evict(sender_id: number, id: number): void {
		this.entries.delete(`${sender_id}:${id}`);
	}
}
