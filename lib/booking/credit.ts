/**
 * Credit limits of accounts (ops action `booking.setCreditLimit`;
 * docs/decisions/0020-wallet.md): booking enforces them when a booking is
 * made (./store/ledger.ts `assertCredit`); each change is mirrored to the
 * billing service, which shows it in `GET /v1/wallet`
 * (docs/decisions/0101-billing-service.md).
 */
import type { Sequelize } from "sequelize";
import type { CreditLimit } from "../contracts";
import { toPaise, toRupees } from "../shared/money";
import { setCreditLimitPaise } from "./store/ledger";

/**
 * Sets (rupees ≥ 0, rounded to the paisa) or removes (null) the credit limit
 * of `sender_id`; answers it as stored (rupees). Ops only (`booking.setCreditLimit`).
 */
export async function setCreditLimit(
	db: Sequelize,
	sender_id: number,
	credit_limit: number | null,
): Promise<CreditLimit> {
	const paise = credit_limit === null ? null : toPaise(credit_limit);
	await setCreditLimitPaise(db, sender_id, paise);
	return { sender_id, credit_limit: paise === null ? null : toRupees(paise) };
}
