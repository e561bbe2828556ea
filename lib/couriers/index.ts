/**
 * Courier adapter registry (ARCHITECTURE §1): `adapterFor(courier)` picks the
 * adapter named by `courier.adapter` and configures it with `courier.code`.
 * Services talk to couriers only through the returned {@link CourierAdapter}.
 */
import type { CourierInfo } from "../contracts";
import { SandboxAdapter } from "./sandbox";
import type { CourierAdapter } from "./types";

export { pickupLocationOf } from "./locations";
export { PickupLocationUnknown, SandboxAdapter } from "./sandbox";
export * from "./types";

/** Factories by adapter key; add a real courier's connector here. */
const FACTORIES: Record<string, (courier: Pick<CourierInfo, "code" | "logistic_name">) => CourierAdapter> = {
	sandbox: (c) => new SandboxAdapter(c.code),
};

/**
 * Returns the adapter for `courier` (keyed by `courier.adapter`, configured
 * with `courier.code`). Settings are read from the environment at each call.
 * Throws an Error when no adapter is registered under that key.
 */
export function adapterFor(courier: Pick<CourierInfo, "adapter" | "code" | "logistic_name">): CourierAdapter {
	const f = FACTORIES[courier.adapter];
	if (!f) throw new Error(`no courier adapter "${courier.adapter}" (courier ${courier.logistic_name})`);
	return f(courier);
}
