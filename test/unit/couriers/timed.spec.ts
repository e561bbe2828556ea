/**
 * Courier call metrics (lib/couriers/index.ts `COURIER_CALLS`, issue 13 / 14):
 * every operation of a real adapter that talks to the courier is timed into
 * `msa_courier_call_duration_seconds`; only the listed local members are not.
 * An operation added to an adapter without its entry in COURIER_CALLS fails here.
 */
import assert from "node:assert/strict";
import { COURIER_CALLS, DelhiveryAdapter, SandboxAdapter } from "../../../lib/couriers";
import { XpressbeesAdapter } from "../../../lib/couriers/xpressbees";

/** Members that never call the courier: the constructor, the label policy getter, push checks, helpers. */
const LOCAL = new Set([
	"constructor",
	"issuesOwnLabel",
	"verifyPush",
	"pushReplayKey",
	"parsePush",
	"unsupported",
]);

describe("couriers: every courier call is timed", () => {
	for (const Adapter of [DelhiveryAdapter, SandboxAdapter, XpressbeesAdapter]) {
		it(`${Adapter.name}: each operation is in COURIER_CALLS or known to be local`, () => {
			const ops = Object.getOwnPropertyNames(Adapter.prototype).filter((n) => !LOCAL.has(n));
			assert.ok(ops.includes("book"), "reads the operations");
			assert.deepEqual(
				ops.filter((n) => !COURIER_CALLS.has(n)),
				[],
			);
		});
	}
});
