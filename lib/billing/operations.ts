/**
 * The billing service's operations over {@link BillingDeps} (issue 27;
 * docs/decisions/0101-billing-service.md): the wallet read, the movements
 * booking delivers through its outbox, the credit limit it mirrors.
 */
import type { CreditLimitEvent, LedgerEntryEvent, WalletAnswer } from "../contracts";
import type { BillingDeps } from "./deps";
import { applyCreditLimit, recordEntries } from "./store";
import { type WalletQuery, walletOf } from "./wallet";

/** `GET /v1/wallet` of `sender_id` (./wallet.ts `walletOf`). */
export function walletFor(deps: BillingDeps, sender_id: number, q: WalletQuery): Promise<WalletAnswer> {
	return walletOf(deps.db, sender_id, q);
}

/**
 * `billing.recordEntries`: records booking's movements, each once, with the
 * balances (./store.ts `recordEntries`); logs the new ones at debug.
 * @throws Error for an amount that is not integer paise or an unknown kind (booking's outbox redelivers and logs it)
 */
export async function recordMovements(
	deps: BillingDeps,
	entries: LedgerEntryEvent[],
): Promise<{ recorded: number }> {
	const recorded = await recordEntries(deps.db, entries);
	if (recorded) deps.logger.debug("wallet movements recorded", { recorded, delivered: entries.length });
	return { recorded };
}

/** `billing.applyCreditLimit`: mirrors booking's credit limit when its version is newer. */
export async function mirrorCreditLimit(
	deps: BillingDeps,
	e: CreditLimitEvent,
): Promise<{ applied: boolean }> {
	return { applied: await applyCreditLimit(deps.db, e) };
}
