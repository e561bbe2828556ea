/**
 * Courier adapter registry (docs/ARCHITECTURE.md §1): `adapterFor(courier)`
 * picks the adapter named by `courier.adapter` and configures it with
 * `courier.code`. Services talk to couriers only through the returned
 * {@link CourierAdapter}.
 */

import type { CourierInfo } from "../contracts";
import { sandboxDelhiveryOverrides } from "../platform/config";
import { observeCourierCall } from "../platform/metrics";
import { DelhiveryAdapter } from "./delhivery";
import { SandboxAdapter } from "./sandbox";
import { type CourierAdapter, CourierRefused, CourierUnavailable } from "./types";
import { XpressbeesAdapter } from "./xpressbees";

export { DelhiveryAdapter } from "./delhivery";
export { pickupLocationOf } from "./locations";
export { PickupLocationUnknown, SandboxAdapter } from "./sandbox";
export * from "./types";

/** Factories by adapter key; add a real courier's connector here. */
const FACTORIES: Record<string, (courier: Pick<CourierInfo, "code" | "logistic_name">) => CourierAdapter> = {
	sandbox: (c) => new SandboxAdapter(c.code),
	// the sandbox Delhivery courier is the real adapter pointed at the simulator (its URL and sandbox token)
	delhivery: (c) => new DelhiveryAdapter(c.code, sandboxDelhiveryOverrides(c.code) ?? {}),
	xpressbees: (c) => new XpressbeesAdapter(c.code),
};

/**
 * Registers (or replaces) the adapter factory of key `key` (the couriers'
 * `adapter` column): `factory` receives the courier's `code` and
 * `logistic_name` and answers a {@link CourierAdapter}. For test-only
 * adapters (e.g. a recorded-response replay); real couriers are listed in
 * FACTORIES.
 */
export function registerAdapter(
	key: string,
	factory: (courier: Pick<CourierInfo, "code" | "logistic_name">) => CourierAdapter,
): void {
	FACTORIES[key] = factory;
}

/**
 * Returns the adapter for `courier` (keyed by `courier.adapter`, configured
 * with `courier.code`). Settings are read from the environment at each call.
 * Throws an Error when no adapter is registered under that key.
 */
export function adapterFor(courier: Pick<CourierInfo, "adapter" | "code" | "logistic_name">): CourierAdapter {
	const f = FACTORIES[courier.adapter];
	if (!f) throw new Error(`no courier adapter "${courier.adapter}" (courier ${courier.logistic_name})`);
	return timed(f(courier), courier.code);
}

/** The adapter operations that call the courier (timed by {@link timed}); every other member is local. */
export const COURIER_CALLS: ReadonlySet<string | symbol> = new Set<string | symbol>([
	"registerWarehouse",
	"book",
	"lookupByReference",
	"cancel",
	"track",
	"trackMany",
	"fetchLabel",
	"ndrAction",
	"ndrActionStatus",
	"prefetchWaybills",
	"requestPickup",
	"reschedulePickup",
	"cancelPickup",
	"rate",
	"serviceability",
]);

/** Outcome label of a courier call that threw `err`: refused (definitive no), unavailable, or error. */
function outcomeOf(err: unknown): string {
	if (err instanceof CourierRefused) return "refused";
	if (err instanceof CourierUnavailable) return "unavailable";
	return "error";
}

/**
 * `adapter` with each courier call ({@link COURIER_CALLS}) timed into
 * `msa_courier_call_duration_seconds{courier, operation, outcome}`
 * (lib/platform/metrics.ts); everything else (and every result or error) passes
 * through unchanged.
 */
function timed(adapter: CourierAdapter, courier: string): CourierAdapter {
	return new Proxy(adapter, {
		get(target, prop, receiver) {
			const v: unknown = Reflect.get(target, prop, receiver);
			if (typeof v !== "function" || !COURIER_CALLS.has(prop)) return v;
			const op = String(prop);
			return (...args: unknown[]): Promise<unknown> => {
				const start = process.hrtime.bigint();
				const done = (outcome: string) =>
					observeCourierCall(courier, op, outcome, Number(process.hrtime.bigint() - start) / 1e9);
				let pending: unknown;
				try {
					pending = v.apply(target, args);
				} catch (err) {
					done(outcomeOf(err));
					throw err;
				}
				return Promise.resolve(pending).then(
					(r: unknown) => {
						done("ok");
						return r;
					},
					(err: unknown) => {
						done(outcomeOf(err));
						throw err;
					},
				);
			};
		},
	});
}
