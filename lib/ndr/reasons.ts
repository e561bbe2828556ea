/**
 * NDR reasons (issue 9; DOMAIN.md "Tracking and NDR"): the courier's words of
 * a failed delivery mapped onto one closed list, the words kept beside it.
 */

import type { NdrReason } from "../contracts/ndr";

/** First matching rule wins (order matters: "refused" before "not available", "closed" before "address"). */
const RULES: [RegExp, NdrReason][] = [
	[
		/\b(cod|cash)\b.*\b(not ready|unavailable|not available|short|arrang)|\b(no|insufficient) (cash|money)\b/i,
		"cod_not_ready",
	],
	[/refus|reject|does ?n.?t want|not interested|cancel+ed by (customer|consignee)/i, "refused"],
	[/future|later date|reschedul|deliver (on|after)|another (day|date)|defer/i, "future_delivery"],
	[/closed|shut|holiday/i, "premises_closed"],
	[/\boda\b|out of delivery area|non.?serviceable|outside (the )?(delivery )?area/i, "out_of_delivery_area"],
	[/address|locat|wrong (house|flat)|landmark|incomplete|incorrect/i, "address_issue"],
	[
		/unavailable|not available|not reachable|unreachable|not contactable|no response|not respond|not (at )?home|door ?lock|switch(ed)? off|did ?n.?t pick|busy/i,
		"consignee_unavailable",
	],
];

/**
 * Maps the courier's words (`remarks`, else its status words) to an
 * {@link NdrReason}; `other` when nothing matches (the words are kept).
 */
export function ndrReasonOf(words: string | null | undefined): NdrReason {
	const w = (words ?? "").trim();
	if (!w) return "other";
	for (const [re, reason] of RULES) if (re.test(w)) return reason;
	return "other";
}
