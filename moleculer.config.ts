/**
 * Moleculer broker options (ARCHITECTURE §2, STACK-NOTES "Moleculer 0.15").
 *
 * - NATS transporter from `TRANSPORTER` (nats 2.x client); none means in-process.
 * - `requestTimeout` so a call to a dead node never waits forever.
 * - No broker retries: calls with external side effects (courier bookings) must
 *   never be repeated by the broker; durable retries live in BullMQ jobs.
 * - Tracking on, so a stopping node finishes in-flight calls (graceful shutdown).
 * - Structured JSON logs.
 * - Durable channels (`@moleculer/channels`, lib/channels.ts): NATS JetStream
 *   with a transporter, else Redis Streams with `REDIS_URL`, else in process.
 */
import type { BrokerOptions } from "moleculer";
import { PermissionsMiddleware } from "./lib/auth";
import { channelsMiddleware } from "./lib/channels";
import { loadConfig, type RuntimeConfig } from "./lib/config";
import { jsonFormatter, RequestContextMiddleware } from "./lib/logging";

/** Builds broker options for this process. `nodeID` defaults to hostname-pid. */
export default function brokerOptions(
	cfg: RuntimeConfig = loadConfig(),
	overrides: Partial<BrokerOptions> = {},
): BrokerOptions {
	return {
		namespace: cfg.namespace,
		nodeID: process.env.NODEID || undefined,
		transporter: cfg.transporter
			? { type: "NATS", options: { url: cfg.transporter, maxReconnectAttempts: -1 } }
			: undefined,
		serializer: "CBOR",
		requestTimeout: 20_000,
		retryPolicy: { enabled: false },
		circuitBreaker: { enabled: false },
		tracking: { enabled: true, shutdownTimeout: 15_000 },
		registry: { strategy: "RoundRobin", preferLocal: true, stopDelay: 100 },
		heartbeatInterval: 5,
		heartbeatTimeout: 15,
		logger: {
			type: "Console",
			options: { level: cfg.logLevel, formatter: jsonFormatter, colors: false, moduleColors: false },
		},
		metrics: { enabled: false },
		middlewares: [RequestContextMiddleware, PermissionsMiddleware, channelsMiddleware(cfg)],
		...overrides,
	};
}
