/**
 * Test brokers: real services on a `ServiceBroker` with no transporter (unit) or
 * on real NATS (integration; several brokers in one test so serialization and
 * `meta` cross the wire). The database, Redis prefix and namespace come from
 * test/helpers/global.ts.
 */
import { type BrokerOptions, ServiceBroker, type ServiceSchema } from "moleculer";
import type { ActionName, CallMeta, ParamsOf, ResultOf } from "../../lib/contracts";
import { type AuthUser, type Role, userFor } from "../../lib/platform/auth";
import { loadConfig, type ServiceName } from "../../lib/platform/config";
import { loadServiceSchema } from "../../lib/platform/system";
import brokerOptions from "../../moleculer.config";

/**
 * Broker options of a test broker: the production options (moleculer.config.ts)
 * with logs off unless TEST_LOGS is set, and, for an in-process broker (no
 * transporter: no other node has to notice it leave), no stop delay.
 */
export function testBrokerOptions(nats: boolean, overrides: Partial<BrokerOptions> = {}): BrokerOptions {
	const base = brokerOptions(
		{ ...loadConfig(), transporter: nats ? process.env.TEST_NATS_URL : undefined },
		{ logger: process.env.TEST_LOGS ? undefined : false, ...overrides },
	);
	return nats ? base : { ...base, registry: { ...base.registry, stopDelay: 0 } };
}

/** The names of the middlewares the production broker options (moleculer.config.ts) list, with `transporter` or without one. */
export function middlewareNames(transporter: string | undefined): (string | undefined)[] {
	return (brokerOptions({ ...loadConfig(), transporter }).middlewares ?? []).map(
		(m) => (m as { name?: string }).name,
	);
}

/**
 * Starts a broker running `services` (in-process transport unless `nats` is
 * true). `opts.env` is set while its services are created (synchronously,
 * then restored): what a service reads at creation, e.g. intake's
 * `INTAKE_BULK_WORKER`, differs per broker of one test process.
 */
export async function startBroker(
	services: ServiceName[],
	opts: { nats?: boolean; nodeID?: string; env?: Record<string, string> } = {},
): Promise<ServiceBroker> {
	const broker = new ServiceBroker(testBrokerOptions(!!opts.nats, { nodeID: opts.nodeID }));
	const saved = Object.fromEntries(Object.keys(opts.env ?? {}).map((k) => [k, process.env[k]]));
	Object.assign(process.env, opts.env);
	try {
		for (const s of services) broker.createService(loadServiceSchema(s));
	} finally {
		for (const [k, v] of Object.entries(saved)) {
			if (v === undefined) delete process.env[k];
			else process.env[k] = v;
		}
	}
	await broker.start();
	return broker;
}

/**
 * Starts one in-process broker (no transporter) running the real gateway and
 * then `services`, each a service name (the real service) or a schema (a
 * fake, e.g. test/helpers/call.ts `fakeService`); answers the broker and the
 * gateway's base URL `http://127.0.0.1:<port>`. Set the gateway's
 * environment first (test/helpers/devidp.ts `useDevIdp`).
 */
export async function startWithGateway(
	services: (ServiceName | ServiceSchema)[],
): Promise<{ broker: ServiceBroker; base: string }> {
	const broker = new ServiceBroker(testBrokerOptions(false));
	for (const s of ["gateway" as const, ...services])
		broker.createService(typeof s === "string" ? loadServiceSchema(s) : s);
	try {
		await broker.start();
	} catch (err) {
		await broker.stop().catch(() => undefined);
		throw err;
	}
	const gw = broker.getLocalService("gateway") as unknown as { server: { address(): { port: number } } };
	return { broker, base: `http://127.0.0.1:${gw.server.address().port}` };
}

/**
 * Registers mocha hooks that start {@link startWithGateway}`(services)` before
 * the suite and stop it after; the broker and the gateway's base URL are read
 * from the returned object once the suite runs.
 */
export function useGatewayWith(services: (ServiceName | ServiceSchema)[]): {
	broker: ServiceBroker;
	base: string;
} {
	const started = {} as { broker: ServiceBroker; base: string };
	before(async () => {
		Object.assign(started, await startWithGateway(services));
	});
	after(async () => {
		await started.broker?.stop();
	});
	return started;
}

/** `meta` for a call made as merchant `sender_id` with `role`. */
export function as(sender_id: number, role: Role = "merchant"): { meta: { user: AuthUser } } {
	return { meta: { user: userFor(sender_id, role) } };
}

/** The HTTP status and body of a rejected call (an ApiError's `code` and `data.body`). */
export function bodyOf(err: any): { status: number; body: any } {
	return { status: err.code, body: err.data?.body };
}

/**
 * Calls `action` on `broker` as `sender` with `role` (params and result typed by
 * the contract, lib/contracts); answers the result and the status the action
 * set (200 unless set).
 */
export async function callAsOn<A extends ActionName>(
	broker: ServiceBroker,
	action: A,
	params: ParamsOf<A>,
	sender: number,
	role: Role = "merchant",
): Promise<{ res: ResultOf<A>; status: number }> {
	const opts = as(sender, role);
	const res = (await broker.call(action, params, opts)) as ResultOf<A>;
	return { res, status: (opts.meta as CallMeta).$statusCode ?? 200 };
}

let nextSender = 10_000 + Math.floor(Math.random() * 1000) * 100;
/** A fresh account id per test, so tests never see each other's rows. */
export function newSender(): number {
	nextSender += 1;
	return nextSender;
}

/** Runs `fn` expecting it to throw; returns the error (fails the test otherwise). */
export async function rejects(fn: () => Promise<unknown>): Promise<any> {
	try {
		await fn();
	} catch (err) {
		return err;
	}
	throw new Error("expected a rejection");
}
