/**
 * SQL of the booking service: cancel (see ./index.ts).
 */
export {};
