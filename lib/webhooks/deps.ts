/**
 * What the webhooks modules (./requests.ts, ./fanout.ts, ./deliver.ts,
 * ./worker.ts) need of the running `webhooks` service: built by the
 * service's `deps()` method, so the modules are plain functions
 * (docs/ARCHITECTURE.md §1 "The one service shape";
 * docs/decisions/0091-service-shape.md). SQL only through ./store.ts.
 */
import type { DeliverDeps } from "./deliver";

/**
 * The webhooks service's pieces: the `webhooks` schema's connection (`db`),
 * the broker, {@link WebhookSettings} (`settings`), the logger, and the
 * delivery's per-process state (`slots`, `batch`; the latter made in
 * `started`, it needs the db). The same pieces a delivery attempt needs
 * ({@link DeliverDeps}), so one `deps()` serves the actions, the channels,
 * the worker and the sweeper.
 */
export type WebhooksDeps = DeliverDeps;
