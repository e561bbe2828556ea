/**
 * An integration cluster: service groups on several brokers over real NATS
 * (one group per "pod"), the gateway on a free port, a development identity
 * provider serving its JWKS, and the sandbox courier (simulator) on a free
 * port. Registers the `before` / `after` hooks in the calling `describe`.
 */
import type { Server } from "node:http";
import type { ServiceBroker } from "moleculer";
import type { ServiceName } from "../../lib/platform/config";
import { createDevIdp, type DevIdp, serveJwks } from "../../lib/platform/devidp";
import { startBroker } from "./broker";
import { freePort } from "./net";

/** What {@link useCluster} gives the tests (filled in its `before`). */
export interface Cluster {
	/** one broker per group, in the order given */
	brokers: ServiceBroker[];
	/** the gateway's base URL, `http://127.0.0.1:<port>` */
	base: string;
	/** mints bearer tokens the gateway accepts */
	idp: DevIdp;
}

const ENV_KEYS = [
	"AUTH_JWKS_URL",
	"AUTH_ISSUER",
	"AUTH_AUDIENCE",
	"PORT",
	"SANDBOX",
	"SANDBOX_COURIER_PORT",
	"SANDBOX_COURIER_URL",
	"NAMESPACE",
];

/**
 * Starts `groups` (node ids `<prefix>-<i>`; a group may carry the env its
 * services are created with) under the NATS namespace
 * `<run namespace>-<prefix>` (so clusters of several spec files never meet),
 * waits until `waitFor` services are visible from every node, and stops them
 * all after the tests, restoring the environment.
 */
export function useCluster(
	prefix: string,
	groups: (ServiceName[] | { services: ServiceName[]; env: Record<string, string> })[],
	waitFor: ServiceName[],
): Cluster {
	const c: Cluster = { brokers: [], base: "", idp: undefined as unknown as DevIdp };
	let jwks: Server | undefined;
	// read in `before`: the run's NAMESPACE is set by the global setup, after spec files load
	let saved: NodeJS.ProcessEnv = {};
	before(async () => {
		saved = { ...process.env };
		c.idp = await createDevIdp();
		const served = await serveJwks(c.idp);
		jwks = served.server;
		const port = await freePort();
		Object.assign(process.env, {
			AUTH_JWKS_URL: served.url,
			AUTH_ISSUER: c.idp.issuer,
			AUTH_AUDIENCE: c.idp.audience,
			PORT: String(port),
			SANDBOX: "1",
			SANDBOX_COURIER_PORT: String(await freePort()),
			NAMESPACE: `${saved.NAMESPACE}-${prefix}`,
		});
		delete process.env.SANDBOX_COURIER_URL;
		c.base = `http://127.0.0.1:${port}`;
		c.brokers.push(
			...(await Promise.all(
				groups.map((g, i) =>
					Array.isArray(g)
						? startBroker(g, { nats: true, nodeID: `${prefix}-${i}` })
						: startBroker(g.services, { nats: true, nodeID: `${prefix}-${i}`, env: g.env }),
				),
			)),
		);
		await Promise.all(c.brokers.map((b) => b.waitForServices(waitFor, 30_000)));
	});
	after(async () => {
		await Promise.all(c.brokers.map((b) => b.stop()));
		c.brokers.length = 0;
		jwks?.close();
		for (const k of ENV_KEYS) {
			if (saved[k] === undefined) delete process.env[k];
			else process.env[k] = saved[k];
		}
	});
	return c;
}
