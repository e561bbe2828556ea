/**
 * Child process of test/integration/colocated.spec.ts (not a spec): a fresh
 * V8, so the allocation sites of the call path have no history. Starts
 * pincode on a broker with the NATS transporter (co-located calls run
 * in-process, moleculer.config.ts `QueueGroupCalls`), sends a burst of
 * 5 × 5,000 calls in flight at once (the answers of the last four rounds
 * held meanwhile, as overlapping requests' are), then 60,000 calls one after
 * another, and prints `{"promoted": [bytes per scavenge…]}` of those. With
 * V8's pretenuring (`MSA_V8_PRETENURING=on`) the burst tenures the sites and
 * every scavenge promotes megabytes; without it, next to nothing.
 * Environment: the test run's (DATABASE_URL, TEST_NATS_URL, NAMESPACE …).
 */
import { userFor } from "../../lib/platform/auth";
import { closeAllPools } from "../../lib/platform/db";
import { newSender, startBroker } from "../helpers/broker";
import { callAs } from "../helpers/call";
import { burstInFlight, promotedPerScavenge } from "../helpers/gc";

async function main(): Promise<void> {
	const broker = await startBroker(["pincode"], { nats: true, nodeID: `burst-probe-${process.pid}` });
	try {
		const meta = { user: userFor(newSender()) };
		const lookup = () =>
			callAs(broker, "pincode.lookup", { pincode: "560001" }, { meta }) as Promise<{ state: string }>;
		const held = await burstInFlight(lookup);
		if (held !== 20_000) throw new Error(`the burst held ${held} answers`);
		const promoted = await promotedPerScavenge(async () => {
			for (let i = 0; i < 60_000; i++) {
				const a = await lookup();
				if (a.state !== "Karnataka") throw new Error(JSON.stringify(a));
			}
		});
		process.stdout.write(`${JSON.stringify({ promoted })}\n`);
	} finally {
		await broker.stop();
		await closeAllPools();
	}
}

main().then(
	() => process.exit(0),
	(err) => {
		console.error(err);
		process.exit(1);
	},
);
