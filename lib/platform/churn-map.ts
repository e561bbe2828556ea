/**
 * A map for keys that come and go, and Moleculer's table of pending remote calls kept in one (issue 32,
 * docs/decisions/0148-pending-calls-table.md; a framework patch, docs/decisions/0087-framework-patches.md §14).
 *
 * Why not a `Map`: V8 keeps a `Map`'s entries in a hash table that it replaces by a new one whenever the table
 * fills up with deleted entries, grows or shrinks; the replaced table keeps its entries and a pointer to its
 * successor (for iterators still walking it). A `Map` whose keys are added and deleted all the time (a call's id
 * while the call is pending, here thousands a second with some fifty at a time) replaces its table every few
 * dozen operations. Once one replaced table has lived long enough to be promoted to the old generation, it is
 * garbage there that still points at the next table, which points at the next: every young-generation
 * collection keeps the whole chain, with the entries' values (the calls' contexts, params and answers), alive and
 * copies it, until the next full collection: on the split system's gateway the collector was the largest item of
 * its CPU profile. An object in dictionary mode
 * ({@link ChurnMap}) rehashes into a new store without a link from the old one: the same churn leaves nothing
 * behind.
 */
import type { Middleware, ServiceBroker } from "moleculer";

/**
 * `Map<string, V>` on a prototype-less object (keys are strings; a value may be anything but `undefined`).
 * Iteration (`entries`, `keys`, `values`, `forEach`, `for…of`) visits the keys present when it reaches them;
 * deleting a key while iterating is allowed (it is not visited afterwards), as with a `Map`. The order is an
 * object's key order (integer-like keys first), not insertion order: nothing that keeps one here depends on it.
 * Costs: `get`, `has`, `set`, `delete` are one property access (plus a count), as fast as a `Map`'s.
 */
export class ChurnMap<V> implements Map<string, V> {
	private table: Record<string, V> = Object.create(null);
	private count = 0;

	get size(): number {
		return this.count;
	}

	get [Symbol.toStringTag](): string {
		return "ChurnMap";
	}

	get(key: string): V | undefined {
		return this.table[key];
	}

	has(key: string): boolean {
		return this.table[key] !== undefined;
	}

	/** Sets `key` to `value`; `value` must not be `undefined` (a TypeError), which this map reads as "absent". */
	set(key: string, value: V): this {
		if (value === undefined) throw new TypeError("ChurnMap holds no undefined value");
		if (this.table[key] === undefined) this.count++;
		this.table[key] = value;
		return this;
	}

	delete(key: string): boolean {
		if (this.table[key] === undefined) return false;
		delete this.table[key];
		this.count--;
		return true;
	}

	clear(): void {
		this.table = Object.create(null);
		this.count = 0;
	}

	forEach(f: (value: V, key: string, map: Map<string, V>) => void, thisArg?: unknown): void {
		const t = this.table;
		for (const key in t) {
			const v = t[key];
			if (v !== undefined) f.call(thisArg, v, key, this);
		}
	}

	*entries(): MapIterator<[string, V]> {
		const t = this.table;
		for (const key in t) {
			const v = t[key];
			if (v !== undefined) yield [key, v];
		}
	}

	*keys(): MapIterator<string> {
		const t = this.table;
		for (const key in t) if (t[key] !== undefined) yield key;
	}

	*values(): MapIterator<V> {
		const t = this.table;
		for (const key in t) {
			const v = t[key];
			if (v !== undefined) yield v;
		}
	}

	[Symbol.iterator](): MapIterator<[string, V]> {
		return this.entries();
	}
}

/** The part of Moleculer's `Transit` this module replaces. */
interface TransitTable {
	pendingRequests: Map<string, unknown>;
}

/**
 * Moleculer middleware (a broker with a transporter): at `created`, before any call, the transit's
 * `pendingRequests` (the remote calls awaiting their answer, by context id; upstream a `Map`) becomes a
 * {@link ChurnMap}. Moleculer uses `get`, `set`, `delete`, `forEach` and `size` on it; lib/platform/dead-node.ts
 * iterates it; lib/platform/request-metrics.ts reads `size`. A broker without a transit is left as it is.
 */
export const PendingCallsTable = {
	name: "PendingCallsTable",
	created(broker: ServiceBroker) {
		const transit = broker.transit as unknown as TransitTable | undefined;
		if (transit) transit.pendingRequests = new ChurnMap<unknown>();
	},
} satisfies Middleware;
