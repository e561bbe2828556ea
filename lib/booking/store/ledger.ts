/**
 * SQL of the booking service: ledger (see ./index.ts).
 */
export {};
