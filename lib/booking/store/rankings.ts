/**
 * SQL of the booking service: rankings (see ./index.ts).
 */
export {};
