/**
 * Shared setup of the billing specs that go through the real gateway: one
 * broker with the gateway and the real billing service over PostgreSQL,
 * bearer tokens of a development IdP, and the ops token `OPS_API_TOKEN` set
 * for the suite (restored after).
 */
import type { ServiceBroker } from "moleculer";
import { startWithGateway } from "../../helpers/broker";
import { type DevIdpUnderTest, useDevIdp } from "../../helpers/devidp";

/** The ops token the suites of {@link useBillingGateway} run with. */
export const OPS_TOKEN = "ops-token-for-billing-tests-0123456789";

/** What {@link useBillingGateway} starts: read once the suite runs. */
export interface BillingGateway {
	auth: DevIdpUnderTest;
	broker: ServiceBroker;
	base: string;
}

/** Registers mocha hooks starting (before) and stopping (after) the gateway and billing, with {@link OPS_TOKEN}. */
export function useBillingGateway(): BillingGateway {
	const sys = { auth: useDevIdp(), base: "" } as BillingGateway;
	const saved = process.env.OPS_API_TOKEN;
	before(async () => {
		process.env.OPS_API_TOKEN = OPS_TOKEN;
		({ broker: sys.broker, base: sys.base } = await startWithGateway(["billing"]));
	});
	after(async () => {
		await sys.broker?.stop();
		if (saved === undefined) delete process.env.OPS_API_TOKEN;
		else process.env.OPS_API_TOKEN = saved;
	});
	return sys;
}
