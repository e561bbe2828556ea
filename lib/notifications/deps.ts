/**
 * What the notifications modules (./branding.ts, ./track.ts, ./dispatch.ts, ./preferences.ts) need of the running
 * `notifications` service: built by the service's `deps()` method, so the modules are plain
 * functions. SQL only through ./store.ts (brands) and ./message-store.ts (messages, preferences, opt-outs).
 */
import type { Logger, ServiceBroker } from "moleculer";
import type { Sequelize } from "sequelize";
import type { CallOptions } from "../contracts";

/** The notifications service's pieces its modules use. */
export interface NotificationsDeps {
	/** the `notifications` schema's connection */
	db: Sequelize;
	broker: ServiceBroker;
	logger: Logger;
}

/** Options of the calls to booking and intake: 3 s, a failure rethrown as it came (the page answers 503). */
export const CALL_OPTIONS: CallOptions = { timeout: 3000 };
