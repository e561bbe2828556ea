/**
 * A Moleculer logger that keeps the warn / error / fatal entries of every
 * module of a broker in memory (and writes nothing), so a spec can assert what
 * a request logged, e.g. that a hostile request logged no error with a stack.
 * Pass it as the broker's `logger` option.
 */
import { Loggers } from "moleculer";

/** One captured log entry. */
export interface LogEntry {
	level: string;
	/** the module (`GATEWAY`, `BROKER`, `TRANSIT`…) */
	mod: string;
	args: unknown[];
}

/** Captures warn, error and fatal entries (finer levels are dropped). */
export class CaptureLogger extends Loggers.Base<Record<string, unknown>> {
	readonly entries: LogEntry[] = [];

	constructor() {
		super({ level: "warn" });
	}

	/** Moleculer's appender hook: one handler per module. */
	override getLogHandler(bindings: { mod?: string }): (level: string, args: unknown[]) => void {
		return (level, args) => {
			if (level === "warn" || level === "error" || level === "fatal") {
				this.entries.push({ level, mod: String(bindings.mod ?? ""), args });
			}
		};
	}

	/** The error and fatal entries (as `mod: text`, with any `stack` found in their arguments). */
	errors(): string[] {
		return this.entries
			.filter((e) => e.level === "error" || e.level === "fatal")
			.map(
				(e) => `${e.mod}: ${e.args.map((a) => (typeof a === "string" ? a : JSON.stringify(a))).join(" ")}`,
			);
	}

	/** Forgets every entry. */
	clear(): void {
		this.entries.length = 0;
	}
}
