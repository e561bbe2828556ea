/** booking: configuration it refuses to run without (ARCHITECTURE §2: fail loudly at start). */
import assert from "node:assert/strict";
import { ServiceBroker } from "moleculer";
import { loadServiceSchema } from "../../../lib/system";
import { rejects, testBrokerOptions } from "../../helpers/broker";

describe("booking: start-up configuration", () => {
	it("refuses to start without a cursor secret (CURSOR_SECRET or LABEL_LINK_SECRET)", async () => {
		const saved = {
			CURSOR_SECRET: process.env.CURSOR_SECRET,
			LABEL_LINK_SECRET: process.env.LABEL_LINK_SECRET,
		};
		delete process.env.CURSOR_SECRET;
		delete process.env.LABEL_LINK_SECRET;
		const broker = new ServiceBroker(testBrokerOptions(false));
		try {
			broker.createService(loadServiceSchema("booking"));
			const err = await rejects(() => broker.start());
			assert.match(String(err?.message), /CURSOR_SECRET or LABEL_LINK_SECRET is required/);
		} finally {
			await broker.stop().catch(() => undefined);
			for (const [k, v] of Object.entries(saved)) if (v !== undefined) process.env[k] = v;
		}
	});
});
