/**
 * SQL of the notifications service (schema `notifications`, ./migrations.ts): the brands of the
 * buyer tracking page.
 */
import type { Sequelize } from "sequelize";
import type { Branding } from "../contracts";
import { select } from "../platform/db";

/** A stored brand. */
interface StoredBrand {
	brand_name: string | null;
	logo_url: string | null;
	colour: string | null;
	support_phone: string | null;
	support_email: string | null;
	updated_at: Date | null;
}

/** A stored brand as the API answers it; no row: the neutral brand (every field null). */
export const brandView = (r: StoredBrand | undefined): Branding => ({
	brand_name: r?.brand_name ?? null,
	logo_url: r?.logo_url ?? null,
	colour: r?.colour ?? null,
	support_phone: r?.support_phone ?? null,
	support_email: r?.support_email ?? null,
	updated_at: r?.updated_at ? new Date(r.updated_at).toISOString() : null,
});

const COLUMNS = "brand_name, logo_url, colour, support_phone, support_email, updated_at";

/** The account's brand (every field null, `updated_at` null, when never set). */
export async function brandOf(db: Sequelize, sender: number): Promise<Branding> {
	const [row] = await select<StoredBrand>(
		db,
		`SELECT ${COLUMNS} FROM notifications.brands WHERE sender_id = $1`,
		[sender],
	);
	return brandView(row);
}

/** Writes the account's whole brand (`b`: every field, null clears) in one upsert; the brand after. */
export async function saveBrand(
	db: Sequelize,
	sender: number,
	b: Omit<Branding, "updated_at">,
): Promise<Branding> {
	const [row] = await select<StoredBrand>(
		db,
		`INSERT INTO notifications.brands (sender_id, brand_name, logo_url, colour, support_phone, support_email)
		 VALUES ($1, $2, $3, $4, $5, $6)
		 ON CONFLICT (sender_id) DO UPDATE SET brand_name = $2, logo_url = $3, colour = $4, support_phone = $5,
		   support_email = $6, updated_at = now()
		 RETURNING ${COLUMNS}`,
		[sender, b.brand_name, b.logo_url, b.colour, b.support_phone, b.support_email],
	);
	return brandView(row);
}
