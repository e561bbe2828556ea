/**
 * The anchors the benchmarks measure our routes against (issue 32), each run
 * as its own child process by bench/anchors.ts, in the same run as the routes:
 *
 * - `ANCHOR=gateway` (anchor b; with `ANCHOR_TRANSPORTER` set and
 *   `ANCHOR_ROLE=gateway`, the gateway half of b-nats): a bare moleculer-web
 *   gateway on `ANCHOR_PORT`, alias `GET /anchor` → action `anchor.ping`, the
 *   bearer token verified per request by jose `jwtVerify` (RS256, issuer and
 *   audience checked, the key set of `ANCHOR_JWKS_URL` fetched once by
 *   `createRemoteJWKSet`): no verification cache, no logger, no metrics, no
 *   rate limit, no request id. The action answers `{ok:true, sender_id}`.
 *   With `ANCHOR_VERIFY=0` (the floor): the same without the verification, the
 *   least a route served through moleculer-web costs here.
 * - `ANCHOR=gateway ANCHOR_ROLE=service` (the other half of b-nats): the
 *   `anchor.ping` service alone, reached over `ANCHOR_TRANSPORTER` (NATS).
 * - `ANCHOR=insert` (anchor c): 8 pg clients looping
 *   `INSERT … ON CONFLICT DO NOTHING RETURNING id` into a table with a unique
 *   index for `ANCHOR_SECONDS`; prints `{"inserts": n, "seconds": s}` on stdout.
 *
 * Prints `ready` on stdout once listening (gateway roles).
 */
import { createRemoteJWKSet, jwtVerify } from "jose";
import { ServiceBroker } from "moleculer";
import ApiGateway from "moleculer-web";
import { Client } from "pg";

/** One env value, or a clear failure. */
function env(name: string): string {
	const v = process.env[name];
	if (!v) throw new Error(`${name} is required`);
	return v;
}

/** Anchor b / b-nats (see the module notes). */
async function gateway(): Promise<void> {
	const role = process.env.ANCHOR_ROLE ?? "both";
	const transporter = process.env.ANCHOR_TRANSPORTER;
	const broker = new ServiceBroker({
		nodeID: `anchor-${role}-${process.pid}`,
		namespace: process.env.ANCHOR_NAMESPACE ?? "anchor",
		transporter: transporter ? { type: "NATS", options: { url: transporter } } : null,
		logger: false,
		metrics: false,
		tracing: false,
	});
	if (role !== "gateway")
		broker.createService({
			name: "anchor",
			actions: {
				ping(ctx) {
					const user = ctx.meta.user as { sender_id?: unknown } | undefined;
					return { ok: true, sender_id: user?.sender_id ?? null };
				},
			},
		});
	if (role !== "service") {
		const jwks = createRemoteJWKSet(new URL(env("ANCHOR_JWKS_URL")));
		const issuer = env("ANCHOR_ISSUER");
		const audience = env("ANCHOR_AUDIENCE");
		// ANCHOR_VERIFY=0: the floor anchor, nothing verified (what moleculer-web itself costs)
		const verify = process.env.ANCHOR_VERIFY !== "0";
		broker.createService({
			name: "api",
			mixins: [ApiGateway],
			settings: {
				port: Number(env("ANCHOR_PORT")),
				ip: "127.0.0.1",
				log4XXResponses: false,
				logRequest: null,
				logResponse: null,
				routes: [
					{
						path: "/",
						authentication: true,
						mappingPolicy: "restrict",
						aliases: { "GET /anchor": "anchor.ping" },
					},
				],
			},
			methods: {
				async authenticate(_ctx: unknown, _route: unknown, req: { headers: Record<string, string> }) {
					if (!verify) return { sender_id: null };
					const h = req.headers.authorization ?? "";
					const { payload } = await jwtVerify(h.slice(7), jwks, {
						algorithms: ["RS256"],
						issuer,
						audience,
					});
					const meta = payload.app_metadata as { sender_id?: number } | undefined;
					return { sender_id: meta?.sender_id };
				},
			},
		});
	}
	await broker.start();
	if (role !== "service" && transporter) await broker.waitForServices(["anchor"], 30_000);
	process.stdout.write("ready\n");
	process.once("SIGTERM", () => void broker.stop().then(() => process.exit(0)));
}

/** Anchor c (see the module notes). */
async function insert(): Promise<void> {
	const url = env("ANCHOR_DATABASE_URL");
	const seconds = Number(process.env.ANCHOR_SECONDS ?? 10);
	const setup = new Client({ connectionString: url });
	await setup.connect();
	await setup.query(
		"CREATE TABLE IF NOT EXISTS anchor_c (id bigserial PRIMARY KEY, k text NOT NULL, body jsonb, created_at timestamptz NOT NULL DEFAULT now())",
	);
	await setup.query("CREATE UNIQUE INDEX IF NOT EXISTS anchor_c_k ON anchor_c (k)");
	await setup.end();
	const clients = await Promise.all(
		Array.from({ length: 8 }, async () => {
			const c = new Client({ connectionString: url });
			await c.connect();
			return c;
		}),
	);
	let n = 0;
	const until = Date.now() + seconds * 1000;
	const t0 = Date.now();
	await Promise.all(
		clients.map(async (c, i) => {
			let j = 0;
			while (Date.now() < until) {
				await c.query(
					"INSERT INTO anchor_c (k, body) VALUES ($1, $2) ON CONFLICT (k) DO NOTHING RETURNING id",
					[`${process.pid}-${i}-${j++}`, '{"a":1}'],
				);
				n++;
			}
		}),
	);
	const elapsed = (Date.now() - t0) / 1000;
	await Promise.all(clients.map((c) => c.end()));
	process.stdout.write(`${JSON.stringify({ inserts: n, seconds: elapsed })}\n`);
}

const which = process.env.ANCHOR;
(which === "insert"
	? insert()
	: which === "gateway"
		? gateway()
		: Promise.reject(new Error("ANCHOR?"))
).catch((err) => {
	console.error(err);
	process.exit(1);
});
