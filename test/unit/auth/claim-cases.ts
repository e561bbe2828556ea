/**
 * Claim values refused by lib/platform/auth.ts (issue 12), shared by the unit specs of
 * the claims (test/unit/auth/claims.spec.ts) and the gateway's HTTP specs
 * (test/unit/gateway/auth.spec.ts).
 */

/** 2^53 − 1 */
const MAX = Number.MAX_SAFE_INTEGER;

/** sender_id values refused as malformed (401 token_claims). */
export const BAD_SENDERS: unknown[] = [
	"0x3e9",
	"0X3E9",
	"1e3",
	"1E3",
	" 1001",
	"1001 ",
	"+1001",
	"01001",
	"1001.0",
	"1_001",
	"١٠٠١", // Arabic-Indic digits
	"",
	"0",
	"-5",
	String(MAX + 1),
	"99999999999999999999",
	1001.5,
	0,
	-5,
	-0,
	MAX + 1,
	2 ** 64,
	true,
	false,
	[1001],
	["1001"],
	[],
	{},
	{ value: 1001 },
];

/** role values that are not strings (401 token_claims). */
export const NON_STRING_ROLES: unknown[] = [5, true, ["merchant"], { role: "merchant" }];
