/**
 * Which receiver URLs and addresses webhooks may reach (issue 11 "Safety";
 * docs/decisions/0044-merchant-webhooks.md): outside the sandbox only `https`,
 * and only public unicast addresses (ipaddr.js `range()` is `unicast`):
 * loopback, private (10/8, 172.16/12, 192.168/16), link-local (169.254/16,
 * with the cloud metadata address 169.254.169.254; fe80::/10), unique-local
 * (fc00::/7, e.g. fd00:ec2::254), carrier-grade NAT (100.64/10, with
 * 100.100.100.200), unspecified, multicast, broadcast and reserved
 * addresses are refused; an IPv6 address that embeds IPv4 addresses
 * (IPv4-compatible `::/96`, IPv4-mapped, IPv4-translated, NAT64, 6to4,
 * Teredo: ./embedded-ipv4.ts) is judged by them as the plain IPv4 address is
 * (docs/decisions/0076-embedded-ipv4.md). In the sandbox
 * (`SANDBOX=1`) `http` and loopback are allowed as well, nothing else.
 *
 * The check runs at subscribe time (the literal address, or every address the
 * name resolves to) and again at every delivery: the HTTP client resolves
 * the name itself through {@link guardedLookup} and connects to the address
 * it checked, so a name that changes its answer (DNS rebinding) cannot steer
 * a delivery to a refused address.
 */
import { promises as dns, lookup as dnsLookup, type LookupAddress } from "node:dns";
import { isIP } from "node:net";
import ipaddr from "ipaddr.js";
import { WEBHOOK_MAX_URL_LENGTH } from "../contracts";
import { type ApiError, fail, validationFailed } from "../platform/errors";
import { embeddedIPv4 } from "./embedded-ipv4";

/** Whether an IPv4 address may be reached: public unicast, or loopback in the sandbox. */
function ipv4Allowed(ip: ipaddr.IPv4, sandbox: boolean): boolean {
	const range = ip.range();
	return range === "unicast" || (sandbox && range === "loopback");
}

/**
 * Why an address (a literal IPv4 or IPv6 address, as text) is refused, or
 * null when it may be reached: public unicast, or loopback in the sandbox.
 * An IPv6 address embedding IPv4 addresses (./embedded-ipv4.ts: IPv4-
 * compatible, IPv4-mapped, IPv4-translated, NAT64, 6to4, Teredo) is judged by
 * them, each as the plain IPv4 address would be in the same mode, so
 * `::a9fe:a9fe` is refused as 169.254.169.254 is, and `2002:808:808::1`
 * (8.8.8.8) passes where a public address does
 * (docs/decisions/0076-embedded-ipv4.md). Pure; throws nothing.
 * @example addressRefusal("::a00:1", false) → "::a00:1 is a private address (IPv4-compatible, embeds 10.0.0.1)"
 */
export function addressRefusal(address: string, sandbox: boolean): string | null {
	let ip: ipaddr.IPv4 | ipaddr.IPv6;
	try {
		ip = ipaddr.parse(address);
	} catch {
		return `${address} is not an IP address`;
	}
	if (ip.kind() === "ipv4") {
		const v4 = ip as ipaddr.IPv4;
		return ipv4Allowed(v4, sandbox) ? null : `${address} is a ${v4.range()} address`;
	}
	const embedded = embeddedIPv4(ip as ipaddr.IPv6);
	if (embedded) {
		const bad = embedded.addresses.find((a) => !ipv4Allowed(a, sandbox));
		return bad ? `${address} is a ${bad.range()} address (${embedded.form}, embeds ${bad.toString()})` : null;
	}
	const range = ip.range();
	if (range === "unicast") return null;
	if (sandbox && range === "loopback") return null;
	return `${address} is a ${range} address`;
}

/** 422 `url_not_allowed` with the reason. */
export function urlNotAllowed(why: string): ApiError {
	return fail("url_not_allowed", why);
}

/**
 * Parses and checks a receiver URL's shape: absolute, `https` (or `http` in
 * the sandbox), a host, no user name or password, at most
 * {@link WEBHOOK_MAX_URL_LENGTH} characters; a literal IP host is checked with
 * {@link addressRefusal}. Resolution is {@link assertResolvable}'s.
 * @throws ApiError 400 `validation_failed` (not a URL), 422 `url_not_allowed`
 */
export function checkUrlShape(raw: string, sandbox: boolean): URL {
	let u: URL;
	try {
		u = new URL(raw);
	} catch {
		throw validationFailed(["url: must be an absolute URL"]);
	}
	if (raw.length > WEBHOOK_MAX_URL_LENGTH)
		throw urlNotAllowed(`longer than ${WEBHOOK_MAX_URL_LENGTH} characters`);
	if (u.protocol !== "https:" && !(sandbox && u.protocol === "http:"))
		throw urlNotAllowed(sandbox ? "only http and https URLs" : "only https URLs (http only in the sandbox)");
	if (u.username || u.password) throw urlNotAllowed("credentials in the URL");
	const host = hostOf(u);
	if (!host) throw urlNotAllowed("no host");
	if (isIP(host)) {
		const why = addressRefusal(host, sandbox);
		if (why) throw urlNotAllowed(why);
	}
	return u;
}

/** The URL's host without IPv6 brackets. */
export function hostOf(u: URL): string {
	return u.hostname.replace(/^\[(.*)\]$/, "$1");
}

/**
 * Resolves the URL's host name (every address) and refuses it when it does
 * not resolve or any address is refused (subscribe time).
 * @throws ApiError 422 `url_not_allowed`
 */
export async function assertResolvable(u: URL, sandbox: boolean): Promise<void> {
	const host = hostOf(u);
	if (isIP(host)) return;
	let addrs: LookupAddress[];
	try {
		addrs = await dns.lookup(host, { all: true, verbatim: true });
	} catch {
		throw urlNotAllowed(`${host} does not resolve`);
	}
	if (!addrs.length) throw urlNotAllowed(`${host} does not resolve`);
	for (const a of addrs) {
		const why = addressRefusal(a.address, sandbox);
		if (why) throw urlNotAllowed(`${host} resolves to ${why}`);
	}
}

/** Node's `lookup` callback, in both of its shapes (one address, or all). */
type LookupCallback = (
	err: NodeJS.ErrnoException | null,
	address: string | LookupAddress[],
	family?: number,
) => void;

/**
 * A `lookup` for `http.request` / `net.connect`: resolves the name, refuses
 * the connection (error `EADDRNOTALLOWED`) when any address is refused, and
 * hands the socket the checked addresses only, so the connection goes to an
 * address this function checked.
 */
export function guardedLookup(sandbox: boolean) {
	return (
		hostname: string,
		options: { all?: boolean; family?: number | string },
		cb: LookupCallback,
	): void => {
		dnsLookup(hostname, { all: true, verbatim: true }, (err, addrs) => {
			if (err) return cb(err, options.all ? [] : "", 0);
			for (const a of addrs) {
				const why = addressRefusal(a.address, sandbox);
				if (why) {
					const e: NodeJS.ErrnoException = new Error(`${hostname} resolves to ${why}`);
					e.code = "EADDRNOTALLOWED";
					return cb(e, options.all ? [] : "", 0);
				}
			}
			if (!addrs.length)
				return cb(
					Object.assign(new Error(`${hostname} does not resolve`), { code: "ENOTFOUND" }),
					options.all ? [] : "",
					0,
				);
			if (options.all) return cb(null, addrs);
			cb(null, addrs[0].address, addrs[0].family);
		});
	};
}
