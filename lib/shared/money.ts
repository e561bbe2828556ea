/**
 * Money: stored as integer paise, answered as rupees (docs/ARCHITECTURE.md §6).
 * Round once, at the end, to the paisa.
 */

/** Rupees (number, ≤ 2 decimals expected) → integer paise, rounding half away from zero. */
export function toPaise(rupees: number): number {
	return Math.round(rupees * 100 + (rupees >= 0 ? 1e-9 : -1e-9));
}

/** Integer paise → rupees number with at most 2 decimals. */
export function toRupees(paise: number | string | bigint): number {
	return Number(paise) / 100;
}
