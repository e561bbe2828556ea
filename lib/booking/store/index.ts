/**
 * All SQL of the booking service (schema `booking`, ../migrations.ts), one
 * module per topic: attempts and the outbox (./attempts.ts), the wallet
 * ledger and credit limits (./ledger.ts), per-account courier rankings
 * (./rankings.ts), cancellations (./cancel.ts).
 */
export * from "./attempts";
export * from "./cancel";
export * from "./ledger";
export * from "./rankings";
