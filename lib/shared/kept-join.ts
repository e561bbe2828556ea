/**
 * Texts made of two parts and compared per request (issue 32): the joined text is made again only when a part
 * changes, so a per-request comparison neither concatenates nor compares a new string each time.
 */

/**
 * A joiner of two parts with `separator` that keeps its last text: called with the same parts as last time, it
 * answers the same string it made then; with other parts, their new text (then kept).
 */
export function keptJoin(separator: string): (a: string, b: string) => string {
	let last: { a: string; b: string; text: string } | undefined;
	return (a, b) => {
		if (last?.a !== a || last.b !== b) last = { a, b, text: `${a}${separator}${b}` };
		return last.text;
	};
}
