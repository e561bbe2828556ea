/**
 * Loads a value (a reference-data snapshot read from the database) with
 * coalescing: concurrent callers share one read, and every caller gets a value
 * whose read STARTED after its call, so a reload asked for right after an edit
 * never answers with a read that was already under way before the edit (for
 * instance the periodic refresh). At most one read runs and one waits.
 *
 * Used by the pincode directory and the rates catalog (swap the value in on
 * success; on failure the caller keeps its previous value).
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
