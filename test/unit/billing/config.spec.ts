/**
 * billing: configuration it refuses to run without (docs/ARCHITECTURE.md §2:
 * fail loudly at start): a cursor secret, since the wallet's pages are
 * signed (docs/decisions/0101-billing-service.md).
 */
import assert from "node:assert/strict";
import { ServiceBroker } from "moleculer";
import { loadServiceSchema } from "../../../lib/platform/system";
import { rejects, testBrokerOptions } from "../../helpers/broker";

describe("billing: start-up configuration", () => {
	it("refuses to start without a cursor secret (CURSOR_SECRET or LABEL_LINK_SECRET)", async () => {
		const saved = {
			CURSOR_SECRET: process.env.CURSOR_SECRET,
			LABEL_LINK_SECRET: process.env.LABEL_LINK_SECRET,
		};
		delete process.env.CURSOR_SECRET;
		delete process.env.LABEL_LINK_SECRET;
		const broker = new ServiceBroker(testBrokerOptions(false));
		try {
			broker.createService(loadServiceSchema("billing"));
			const err = await rejects(() => broker.start());
			assert.match(String(err?.message), /billing: CURSOR_SECRET or LABEL_LINK_SECRET is required/);
		} finally {
			await broker.stop().catch(() => undefined);
			for (const [k, v] of Object.entries(saved)) if (v !== undefined) process.env[k] = v;
		}
	});
});
