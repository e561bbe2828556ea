/**
 * One delivery attempt over HTTP (issue 11 "Safety";
 * docs/decisions/0044-merchant-webhooks.md): a POST of the signed JSON body
 * with node:http(s) (keep-alive agents), the name resolved and checked by
 * ./ssrf.ts `guardedLookup` (the socket connects to the checked address; a
 * literal IP host is checked here, since Node does not look literals up), no
 * redirect followed (a 3xx is a failed attempt), the whole attempt bounded by
 * `timeoutMs` (10 s by default), and at most `capBytes` of the answer read
 * (kept for the endpoint's owner only, never shown to another account).
 */
import http from "node:http";
import https from "node:https";
import { isIP } from "node:net";
import { addressRefusal, guardedLookup, hostOf } from "./ssrf";

/** What an attempt got. `status` null: no HTTP answer (refused address, timeout, connection error). */
export interface AttemptOutcome {
	ok: boolean;
	status: number | null;
	latency_ms: number;
	/** our words on a failure (e.g. "timeout after 10000 ms", "redirect not followed (302)"), else null */
	error: string | null;
	/** the first `capBytes` of the answer, as text */
	body: string;
}

const agents = {
	http: new http.Agent({ keepAlive: true, maxSockets: 64 }),
	https: new https.Agent({ keepAlive: true, maxSockets: 64 }),
};

/** Options of {@link postWebhook}. */
export interface PostOptions {
	timeoutMs: number;
	capBytes: number;
	sandbox: boolean;
	/** the headers to send besides content-type and user-agent (the Standard Webhooks ones) */
	headers: Record<string, string>;
}

/** User-Agent of deliveries. */
export const WEBHOOK_USER_AGENT = "msa-webhooks/1.0 (Standard Webhooks)";

/**
 * POSTs `body` (JSON text) to `url`; resolves with the outcome, never
 * rejects. `ok` is a 2xx answer.
 */
export function postWebhook(url: URL, body: string, opts: PostOptions): Promise<AttemptOutcome> {
	const started = performance.now();
	const done = (o: Omit<AttemptOutcome, "latency_ms">): AttemptOutcome => ({
		...o,
		latency_ms: Math.round(performance.now() - started),
	});
	const host = hostOf(url);
	if (isIP(host)) {
		const why = addressRefusal(host, opts.sandbox);
		if (why)
			return Promise.resolve(
				done({ ok: false, status: null, error: `address not allowed: ${why}`, body: "" }),
			);
	}
	const isHttps = url.protocol === "https:";
	if (!isHttps && !(opts.sandbox && url.protocol === "http:"))
		return Promise.resolve(done({ ok: false, status: null, error: "only https URLs", body: "" }));
	return new Promise((resolve) => {
		let settled = false;
		const finish = (o: Omit<AttemptOutcome, "latency_ms">) => {
			if (settled) return;
			settled = true;
			clearTimeout(timer);
			resolve(done(o));
		};
		const req = (isHttps ? https : http).request(
			url,
			{
				method: "POST",
				agent: isHttps ? agents.https : agents.http,
				lookup: guardedLookup(opts.sandbox),
				headers: {
					"content-type": "application/json",
					"user-agent": WEBHOOK_USER_AGENT,
					"content-length": Buffer.byteLength(body),
					...opts.headers,
				},
			},
			(res) => {
				const status = res.statusCode ?? 0;
				const chunks: Buffer[] = [];
				let size = 0;
				const end = () => {
					const text = Buffer.concat(chunks).subarray(0, opts.capBytes).toString("utf8");
					const ok = status >= 200 && status < 300;
					const error = ok
						? null
						: status >= 300 && status < 400
							? `redirect not followed (${status})`
							: `HTTP ${status}`;
					finish({ ok, status, error, body: text });
				};
				res.on("data", (c: Buffer) => {
					if (size < opts.capBytes) chunks.push(c);
					size += c.length;
					if (size >= opts.capBytes) {
						end();
						res.destroy();
					}
				});
				res.on("end", end);
				res.on("error", end);
				res.on("close", end);
			},
		);
		const timer = setTimeout(() => {
			finish({ ok: false, status: null, error: `timeout after ${opts.timeoutMs} ms`, body: "" });
			req.destroy();
		}, opts.timeoutMs);
		req.on("error", (err: NodeJS.ErrnoException) => {
			const what = err.code === "EADDRNOTALLOWED" ? `address not allowed: ${err.message}` : err.message;
			finish({ ok: false, status: null, error: what.slice(0, 500), body: "" });
		});
		req.end(body);
	});
}
