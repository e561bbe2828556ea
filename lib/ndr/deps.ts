/**
 * What the ndr modules (./cases.ts, ./policy.ts, the service) need of the
 * running service: its database, broker, settings, logger and the
 * options of its calls to other services.
 */
import type { Logger, ServiceBroker } from "moleculer";
import type { Sequelize } from "sequelize";
import type { CallOptions } from "../contracts";
import type { UnreachableCode } from "../platform/errors";
import type { NdrSettings } from "./settings";

export interface NdrDeps {
	db: Sequelize;
	broker: ServiceBroker;
	settings: NdrSettings;
	logger: Logger;
	/** call options: the configured timeout, and the 503 code a failure becomes (default `service_unavailable`) */
	callOptions(unavailable?: UnreachableCode | false): CallOptions;
}

/** An error's message, whatever was thrown. */
export function messageOf(err: unknown): string {
	return err instanceof Error ? err.message : String(err);
}
