/**
 * The gateway's listen address (issue 12): `HOST`, default 0.0.0.0; the
 * zero-setup start (lib/platform/system.ts) sets HOST=127.0.0.1 before the gateway
 * is created, so its development IdP is reachable from this machine only.
 */
import { strict as assert } from "node:assert";
import type { AddressInfo } from "node:net";
import { startDevIdp } from "../../helpers/devidp";
import { FAKES, startGateway } from "../gateway/setup";

describe("hardening: the gateway binds HOST", () => {
	for (const [host, expected] of [
		[undefined, "0.0.0.0"],
		["127.0.0.1", "127.0.0.1"],
	] as const) {
		it(`HOST=${host ?? "(unset)"} listens on ${expected}`, async () => {
			const idp = await startDevIdp({ HOST: host });
			const { broker } = await startGateway(FAKES);
			try {
				const gw = broker.getLocalService("gateway") as unknown as { server: { address(): AddressInfo } };
				assert.equal(gw.server.address().address, expected);
			} finally {
				await broker.stop();
				idp.stop();
			}
		});
	}
});
