/**
 * The IPv4 addresses embedded in IPv6 forms (lib/webhooks/embedded-ipv4.ts)
 * and the webhook address filter's judgement of them (lib/webhooks/ssrf.ts
 * `addressRefusal`, issue 31): every form extracted (IPv4-compatible,
 * IPv4-mapped, IPv4-translated, NAT64 well-known and local-use, 6to4,
 * Teredo server and client), each refused when an embedded address is not
 * public unicast and allowed when it is, the same judgement as the plain
 * IPv4 address outside the sandbox and in it.
 */
import assert from "node:assert/strict";
import ipaddr from "ipaddr.js";
import { embeddedIPv4 } from "../../../lib/webhooks/embedded-ipv4";
import { addressRefusal } from "../../../lib/webhooks/ssrf";

/** The form and the embedded addresses (as text) of `addr`, or null. */
function found(addr: string): { form: string; addresses: string[] } | null {
	const e = embeddedIPv4(ipaddr.IPv6.parse(addr));
	return e && { form: e.form, addresses: e.addresses.map(String) };
}

describe("embeddedIPv4: the IPv4 addresses an IPv6 address carries", () => {
	it("IPv4-compatible ::/96 (not :: nor ::1)", () => {
		assert.deepEqual(found("::a9fe:a9fe"), { form: "IPv4-compatible", addresses: ["169.254.169.254"] });
		assert.deepEqual(found("::a00:1"), { form: "IPv4-compatible", addresses: ["10.0.0.1"] });
		assert.deepEqual(found("::c0a8:101"), { form: "IPv4-compatible", addresses: ["192.168.1.1"] });
		assert.deepEqual(found("::808:808"), { form: "IPv4-compatible", addresses: ["8.8.8.8"] });
		// the dotted text (as inet_ntop writes ::/96): ipaddr.js reads it as IPv4-mapped, same IPv4
		assert.deepEqual(found("::169.254.169.254")?.addresses, ["169.254.169.254"]);
		assert.equal(found("::"), null);
		assert.equal(found("::1"), null);
	});

	it("IPv4-mapped ::ffff:0:0/96 and IPv4-translated ::ffff:0:0:0/96", () => {
		assert.deepEqual(found("::ffff:10.0.0.1"), { form: "IPv4-mapped", addresses: ["10.0.0.1"] });
		assert.deepEqual(found("::ffff:0:a9fe:a9fe"), {
			form: "IPv4-translated",
			addresses: ["169.254.169.254"],
		});
		assert.deepEqual(found("::ffff:0:808:808"), { form: "IPv4-translated", addresses: ["8.8.8.8"] });
	});

	it("NAT64: the well-known 64:ff9b::/96 and every placement of the local-use 64:ff9b:1::/48", () => {
		assert.deepEqual(found("64:ff9b::7f00:1"), { form: "NAT64", addresses: ["127.0.0.1"] });
		assert.deepEqual(found("64:ff9b::808:808"), { form: "NAT64", addresses: ["8.8.8.8"] });
		// local-use: placements of prefix lengths 48, 56, 64 and 96 (the u octet, bits 64–71, skipped)
		assert.deepEqual(found("64:ff9b:1:a00:1:203:405:607")?.addresses, [
			"10.0.1.2",
			"0.1.2.3",
			"1.2.3.4",
			"4.5.6.7",
		]);
		assert.deepEqual(found("64:ff9b:1:808:8:808:808:808"), {
			form: "NAT64 local-use",
			addresses: ["8.8.8.8", "8.8.8.8", "8.8.8.8", "8.8.8.8"],
		});
	});

	it("6to4 2002::/16: bits 16–47", () => {
		assert.deepEqual(found("2002:0808:0808::1"), { form: "6to4", addresses: ["8.8.8.8"] });
		assert.deepEqual(found("2002:a9fe:a9fe::"), { form: "6to4", addresses: ["169.254.169.254"] });
	});

	it("Teredo 2001::/32: the server (bits 32–63) and the client (bits 96–127, inverted)", () => {
		// RFC 4380 §4's example: server 65.54.227.120, client 192.0.2.45
		assert.deepEqual(found("2001:0:4136:e378:8000:63bf:3fff:fdd2"), {
			form: "Teredo",
			addresses: ["65.54.227.120", "192.0.2.45"],
		});
		assert.deepEqual(found("2001:0:808:808::fefe:fefe")?.addresses, ["8.8.8.8", "1.1.1.1"]);
	});

	it("nothing in other IPv6 addresses", () => {
		for (const a of ["2606:4700:4700::1111", "fe80::1", "fd00:ec2::254", "2001:db8::1", "ff02::1"])
			assert.equal(found(a), null, a);
	});
});

describe("addressRefusal: embedded IPv4 judged as the plain IPv4 address", () => {
	/** [IPv6 form, the plain IPv4 address it embeds]. */
	const PAIRS: Array<[string, string]> = [
		["::a9fe:a9fe", "169.254.169.254"],
		["::a00:1", "10.0.0.1"],
		["::c0a8:101", "192.168.1.1"],
		["::7f00:1", "127.0.0.1"],
		["::ffff:0:a00:1", "10.0.0.1"],
		["::ffff:0:7f00:1", "127.0.0.1"],
		["64:ff9b::a9fe:a9fe", "169.254.169.254"],
		["64:ff9b::7f00:1", "127.0.0.1"],
		["2002:a00:1::1", "10.0.0.1"],
		["2002:7f00:1::1", "127.0.0.1"],
		["2002:6464:6464::", "100.100.100.100"],
		["2001:0:a00:1::fefe:fefe", "10.0.0.1"], // Teredo server private
		["2001:0:808:808::80ff:fffe", "127.0.0.1"], // Teredo client loopback
		["2001:0:808:808::5601:5601", "169.254.169.254"], // Teredo client link-local
		["2002:808:808::1", "8.8.8.8"],
		["::ffff:0:808:808", "8.8.8.8"],
		["64:ff9b::808:808", "8.8.8.8"],
		["2001:0:808:808::fefe:fefe", "1.1.1.1"],
		["::808:808", "8.8.8.8"],
		["::169.254.169.254", "169.254.169.254"],
		["::127.0.0.1", "127.0.0.1"],
	];

	for (const sandbox of [false, true])
		it(`gives each form the plain address's judgement (${sandbox ? "in" : "outside"} the sandbox)`, () => {
			for (const [v6, v4] of PAIRS) {
				const plain = addressRefusal(v4, sandbox);
				const embedded = addressRefusal(v6, sandbox);
				assert.equal(embedded === null, plain === null, `${v6} (${v4}): ${embedded} vs ${plain}`);
				if (plain) assert.match(String(embedded), new RegExp(`embeds ${v4.replace(/\./g, "\\.")}\\)$`));
			}
		});

	it("refuses the issue's addresses outside the sandbox with the range of the embedded address", () => {
		assert.equal(
			addressRefusal("::a9fe:a9fe", false),
			"::a9fe:a9fe is a linkLocal address (IPv4-compatible, embeds 169.254.169.254)",
		);
		assert.equal(
			addressRefusal("::a00:1", false),
			"::a00:1 is a private address (IPv4-compatible, embeds 10.0.0.1)",
		);
		assert.equal(
			addressRefusal("::c0a8:101", false),
			"::c0a8:101 is a private address (IPv4-compatible, embeds 192.168.1.1)",
		);
	});

	it("refuses a Teredo address when either embedded address is not public, and a local-use NAT64 address unless every placement is", () => {
		assert.match(String(addressRefusal("2001:0:808:808::f5ff:fffe", false)), /private .*embeds 10\.0\.0\.1/);
		assert.match(String(addressRefusal("64:ff9b:1::808:808", false)), /unspecified .*embeds 0\.0\.0\.0/);
		assert.equal(addressRefusal("64:ff9b:1:808:8:808:808:808", false), null);
	});

	it("keeps :: and ::1 as IPv6 (unspecified refused; loopback only in the sandbox) and other IPv6 ranges as before", () => {
		assert.equal(addressRefusal("::", true), ":: is a unspecified address");
		assert.equal(addressRefusal("::1", false), "::1 is a loopback address");
		assert.equal(addressRefusal("::1", true), null);
		assert.equal(addressRefusal("2606:4700:4700::1111", false), null);
		assert.equal(addressRefusal("fd00:ec2::254", true), "fd00:ec2::254 is a uniqueLocal address");
		assert.equal(addressRefusal("2001:db8::1", false), "2001:db8::1 is a reserved address");
	});
});
