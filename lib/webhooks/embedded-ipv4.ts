/**
 * The IPv4 addresses an IPv6 address carries (issue 31 "Webhook SSRF filter";
 * docs/decisions/0076-embedded-ipv4.md). A host reached through
 * one of these forms is, or may be routed to, its IPv4 address, so the
 * webhook address filter (./ssrf.ts `addressRefusal`) judges the embedded
 * IPv4 address(es) as it judges the plain IPv4 address.
 *
 * Forms (the ranges are ipaddr.js's, parsing is ipaddr.js's):
 * - IPv4-compatible `::/96` (RFC 4291 §2.5.5.1, deprecated; `::` and `::1`
 *   excluded, they are the unspecified and loopback IPv6 addresses): bits 96–127.
 * - IPv4-mapped `::ffff:0:0/96` (RFC 4291 §2.5.5.2): bits 96–127.
 * - IPv4-translated `::ffff:0:0:0/96` (RFC 6145 / 7915): bits 96–127.
 * - NAT64 well-known prefix `64:ff9b::/96` (RFC 6052): bits 96–127.
 * - NAT64 local-use prefix `64:ff9b:1::/48` (RFC 8215): the operator picks a
 *   prefix length of 48, 56, 64 or 96 bits inside it, which moves the IPv4
 *   address (RFC 6052 §2.2, skipping the `u` octet, bits 64–71); the length
 *   cannot be known from the address, so every one of the four placements is
 *   an embedded address and all must pass.
 * - 6to4 `2002::/16` (RFC 3056): bits 16–47.
 * - Teredo `2001::/32` (RFC 4380): the server's IPv4 in bits 32–63 and the
 *   client's in bits 96–127 stored inverted (XOR 0xffffffff); both embedded.
 */
import ipaddr from "ipaddr.js";

/** The name of an IPv6 form that carries IPv4 addresses. */
export type EmbeddingForm =
	| "IPv4-compatible"
	| "IPv4-mapped"
	| "IPv4-translated"
	| "NAT64"
	| "NAT64 local-use"
	| "6to4"
	| "Teredo";

/** What {@link embeddedIPv4} finds: the form and its IPv4 address(es), at least one. */
export interface Embedded {
	form: EmbeddingForm;
	addresses: ipaddr.IPv4[];
}

/** The IPv4 address of bytes `b[at..at+3]`. */
function v4(b: number[], at: number): ipaddr.IPv4 {
	return new ipaddr.IPv4([b[at], b[at + 1], b[at + 2], b[at + 3]]);
}

/** The IPv4 address of four bytes picked from `b` at `positions` (NAT64 placements around the `u` octet). */
function pick(b: number[], positions: [number, number, number, number]): ipaddr.IPv4 {
	return new ipaddr.IPv4(positions.map((p) => b[p]));
}

/**
 * The IPv4 address(es) embedded in `ip` and the form embedding them, or null
 * when `ip` is not one of the forms listed in this module's comment (and for
 * `::` and `::1`). Pure; throws nothing.
 * @example embeddedIPv4(ipaddr.IPv6.parse("::a9fe:a9fe")) → { form: "IPv4-compatible", addresses: [169.254.169.254] }
 * @example embeddedIPv4(ipaddr.IPv6.parse("2002:808:808::1")) → { form: "6to4", addresses: [8.8.8.8] }
 */
export function embeddedIPv4(ip: ipaddr.IPv6): Embedded | null {
	const b = ip.toByteArray();
	const range = ip.range();
	switch (range) {
		case "ipv4Mapped":
			return { form: "IPv4-mapped", addresses: [v4(b, 12)] };
		case "rfc6145":
			return { form: "IPv4-translated", addresses: [v4(b, 12)] };
		case "6to4":
			return { form: "6to4", addresses: [v4(b, 2)] };
		case "teredo": {
			const client = b.slice(12, 16).map((x) => x ^ 0xff);
			return { form: "Teredo", addresses: [v4(b, 4), v4(client, 0)] };
		}
		case "rfc6052":
			// 64:ff9b::/96 (bytes 4–11 zero) or the local-use 64:ff9b:1::/48
			if (ip.match(ipaddr.IPv6.parse("64:ff9b::"), 96)) return { form: "NAT64", addresses: [v4(b, 12)] };
			return {
				form: "NAT64 local-use",
				addresses: [
					pick(b, [6, 7, 9, 10]), // prefix /48: bits 48–63, then 72–87
					pick(b, [7, 9, 10, 11]), // /56: bits 56–63, then 72–95
					pick(b, [9, 10, 11, 12]), // /64: bits 72–103
					v4(b, 12), // /96: bits 96–127
				],
			};
	}
	// IPv4-compatible ::/96: the first 96 bits zero, not :: nor ::1
	if (range === "unspecified" || range === "loopback") return null;
	if (b.slice(0, 12).every((x) => x === 0)) return { form: "IPv4-compatible", addresses: [v4(b, 12)] };
	return null;
}
