/**
 * All SQL of the booking service (schema `booking`, ../migrations.ts), one
 * module per topic: attempts and the outbox (./attempts.ts), the wallet
 * ledger and credit limits (./ledger.ts), per-account courier rankings
 * (./rankings.ts), cancellations (./cancel.ts), closing an open cancellation
 * when the merchant hides the order (./close.ts), courier scans and their
 * fold into shipment statuses (./tracking.ts).
 */
export * from "./attempts";
export * from "./cancel";
export * from "./close";
export * from "./ledger";
export * from "./rankings";
export * from "./tracking";
