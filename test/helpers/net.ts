/** Network helpers for tests and benchmarks. */
import { readFileSync } from "node:fs";
import { createServer } from "node:net";

/**
 * The first of the kernel's ephemeral ports (the source ports of outgoing
 * connections), from `/proc/sys/net/ipv4/ip_local_port_range`; Linux's
 * default when unreadable.
 */
function ephemeralStart(): number {
	try {
		const lo = Number(readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8").trim().split(/\s+/)[0]);
		if (Number.isInteger(lo) && lo > 0) return lo;
	} catch {
		// not Linux: the default below
	}
	return 32768;
}

/**
 * Ports the Fetch standard's "bad port" list blocks at or above 10000 (https://fetch.spec.whatwg.org/#port-blocking):
 * Node's `fetch` refuses them (`TypeError: fetch failed`, cause `bad port`), so a server on one is unreachable to
 * the tests' clients.
 */
const FETCH_BAD_PORTS = new Set([10080]);

/** Ports this process has handed out (never twice). */
const handedOut = new Set<number>();

/** Whether 127.0.0.1:`port` can be listened on right now. */
function canListen(port: number): Promise<boolean> {
	return new Promise((resolve) => {
		const s = createServer();
		s.once("error", () => resolve(false));
		s.listen(port, "127.0.0.1", () => s.close(() => resolve(true)));
	});
}

/**
 * A TCP port on 127.0.0.1 that nobody listens on right now, for a server
 * started a little later (often by a child process). Chosen below the
 * kernel's ephemeral range: a port the kernel handed out itself (`listen(0)`)
 * is an ephemeral one, and an outgoing connection (PostgreSQL, Redis, NATS:
 * a test opens hundreds) could take it as its source port before the server
 * binds it (EADDRINUSE, seen in a CI run). Never a port `fetch` blocks, never
 * the same port twice in a process.
 * @throws Error when no port of 10000 … (ephemeral start − 1) is free after 200 tries
 */
export async function freePort(): Promise<number> {
	const lo = 10_000;
	const hi = Math.max(lo + 1000, ephemeralStart() - 1);
	for (let i = 0; i < 200; i++) {
		const port = lo + Math.floor(Math.random() * (hi - lo));
		if (handedOut.has(port) || FETCH_BAD_PORTS.has(port)) continue;
		if (await canListen(port)) {
			handedOut.add(port);
			return port;
		}
	}
	throw new Error(`no free port in ${lo}-${hi}`);
}
