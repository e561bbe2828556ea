/**
 * Coalescing of small keyed database operations (the booking outbox relay's
 * lease and delivered marks): while one run is in flight, further calls
 * queue up and the next run takes all of them at once, so under load N
 * callers cost about one round trip per in-flight period instead of N; a
 * lone caller pays nothing extra (its run starts on the next microtask).
 */

/**
 * Wraps `run(keys)` (one statement over many keys) so that concurrent calls
 * share runs: at most one run is in flight; the keys of the calls made
 * meanwhile (deduplicated, at most `maxKeys` per run, default 500) form the
 * next. Each call resolves with the result of the run that took its keys (a
 * caller picks its own rows out of it) or rejects with that run's error.
 */
export function coalesce<K, R>(run: (keys: K[]) => Promise<R>, maxKeys = 500): (keys: K[]) => Promise<R> {
	type Waiter = { keys: K[]; resolve: (r: R) => void; reject: (e: unknown) => void };
	const queue: Waiter[] = [];
	let running = false;

	async function drain(): Promise<void> {
		while (queue.length) {
			// take whole calls until maxKeys (a call is never split across runs)
			const batch: Waiter[] = [];
			const keys = new Set<K>();
			while (queue.length && (keys.size === 0 || keys.size + queue[0].keys.length <= maxKeys)) {
				const w = queue.shift() as Waiter;
				batch.push(w);
				for (const k of w.keys) keys.add(k);
			}
			try {
				const r = await run([...keys]);
				for (const w of batch) w.resolve(r);
			} catch (err) {
				for (const w of batch) w.reject(err);
			}
		}
		running = false;
	}

	return (keys: K[]) =>
		new Promise<R>((resolve, reject) => {
			queue.push({ keys, resolve, reject });
			if (!running) {
				running = true;
				queueMicrotask(() => void drain());
			}
		});
}

/**
 * Group commit: wraps `wave(items)` (one statement over many items, one
 * settled result per item, in order) so that concurrent calls share waves.
 * At most `inFlight` waves run at once (default 1); the items of the calls
 * made meanwhile (at most `maxItems` per wave, default 200) form the next.
 * Each call resolves or rejects with its own item's result; a wave that
 * throws rejects all of its calls. A lone caller pays nothing extra (its
 * wave starts on the next microtask).
 */
export function groupCommit<I, O>(
	wave: (items: I[]) => Promise<PromiseSettledResult<O>[]>,
	opts: { maxItems?: number; inFlight?: number } = {},
): (item: I) => Promise<O> {
	type Waiter = { item: I; resolve: (o: O) => void; reject: (e: unknown) => void };
	const maxItems = opts.maxItems ?? 200;
	const inFlight = opts.inFlight ?? 1;
	const queue: Waiter[] = [];
	let running = 0;
	let scheduled = false;

	async function runOne(batch: Waiter[]): Promise<void> {
		try {
			const results = await wave(batch.map((w) => w.item));
			batch.forEach((w, i) => {
				const r = results[i];
				if (r?.status === "fulfilled") w.resolve(r.value);
				else w.reject(r ? r.reason : new Error("group commit: no result for an item"));
			});
		} catch (err) {
			for (const w of batch) w.reject(err);
		}
	}

	function pump(): void {
		scheduled = false;
		while (queue.length && running < inFlight) {
			const batch = queue.splice(0, maxItems);
			running++;
			void runOne(batch).finally(() => {
				running--;
				pump();
			});
		}
	}

	return (item: I) =>
		new Promise<O>((resolve, reject) => {
			queue.push({ item, resolve, reject });
			if (!scheduled && running < inFlight) {
				scheduled = true;
				queueMicrotask(pump);
			}
		});
}
