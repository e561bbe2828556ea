/**
 * The gateway's alias look-up (lib/gateway/alias-index.ts, record 0137): on the real gateway's alias table, for every
 * alias's path (parameters filled in, a trailing slash, an empty or extra segment, other cases, every method) the
 * same alias and parameters as moleculer-web's own `resolveAlias`; aliases it cannot index are tried for every
 * request at their place; a table that grows is indexed again; an alias's `toString` is made once.
 */
import assert from "node:assert/strict";
import ApiGateway from "moleculer-web";
import { type IndexedAlias, resolveAliasIndexed } from "../../../lib/gateway/alias-index";
import { useGateway } from "./setup";

type Method = (this: unknown, ...args: unknown[]) => unknown;
const upstream = (ApiGateway as unknown as { methods: Record<string, Method> }).methods;
type Found = { alias: IndexedAlias; params: Record<string, unknown> } | false;

/** moleculer-web's own look-up over `aliases`. */
function upstreamResolve(aliases: IndexedAlias[], url: string, method?: string): Found {
	return upstream.resolveAlias.call({ aliases }, url, method) as Found;
}

const METHODS = ["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", undefined];

/** URLs to try for an alias path: parameters filled in, and the near misses around it. */
function urlsFor(fullPath: string): string[] {
	const filled = fullPath.replace(/:[A-Za-z_$][A-Za-z0-9_$]*/g, "42");
	const other = fullPath.replace(/:[A-Za-z_$][A-Za-z0-9_$]*/g, "a%2Fb");
	return [
		filled,
		other,
		`${filled}/`,
		`${filled}//`,
		`${filled}/extra`,
		filled.toUpperCase(),
		filled.replace(/\/[^/]*$/, ""),
		filled.replace(/\/[^/]*$/, "//"),
		filled.replace(/^\/[^/]*/, ""),
	];
}

describe("gateway: alias look-up by method and segment count (record 0137)", () => {
	const g = useGateway();

	it("answers what moleculer-web's resolveAlias answers, for every alias path and its near misses, every method", () => {
		const gw = g.broker.getLocalService("gateway") as unknown as { aliases: IndexedAlias[] };
		const aliases = gw.aliases;
		assert.ok(aliases.length > 50, `the gateway's table: ${aliases.length} aliases`);
		const urls = new Set<string>(["/", "", "/v1", "/v1/", "/nope", "/v1/orders/42/tracking/x/y/z/w"]);
		for (const a of aliases) for (const u of urlsFor(a.fullPath)) urls.add(u);
		let found = 0;
		let compared = 0;
		for (const url of urls)
			for (const method of METHODS) {
				const mine = resolveAliasIndexed(aliases, url, method);
				const theirs = upstreamResolve(aliases, url, method);
				compared++;
				if (theirs === false) {
					assert.equal(mine, false, `${method} ${url}`);
					continue;
				}
				found++;
				assert.ok(mine, `${method} ${url}: upstream found ${theirs.alias.fullPath}`);
				assert.equal(mine.alias, theirs.alias, `${method} ${url}`);
				assert.deepEqual(mine.params, theirs.params, `${method} ${url}`);
			}
		// every alias is found by its own filled path (so the comparison covers hits, not only misses)
		assert.ok(found >= aliases.length, `${found} hits of ${compared}`);
		// and it tries far fewer matchers than the scan: count them on stand-ins of the table's aliases
		let tried = 0;
		const counted = aliases.map((a) =>
			Object.assign(Object.create(a) as IndexedAlias, {
				match(url: string) {
					tried++;
					return a.match(url);
				},
				isMethod: (m: string) => a.method === "*" || a.method === m,
			}),
		);
		const hit = resolveAliasIndexed(counted, "/v1/pincode/560001", "GET");
		assert.ok(hit && hit.alias.fullPath === "/v1/pincode/:pincode");
		const mine = tried;
		tried = 0;
		upstreamResolve(counted, "/v1/pincode/560001", "GET");
		assert.ok(mine * 3 <= tried, `matchers tried: ${mine} (upstream's scan: ${tried})`);
		// the gateway's own method is this look-up
		const own = (gw as unknown as { resolveAlias(url: string, method?: string): Found }).resolveAlias(
			"/v1/pincode/560001",
			"GET",
		);
		const theirs = upstreamResolve(aliases, "/v1/pincode/560001", "GET");
		assert.ok(own && theirs);
		assert.equal(own.alias, theirs.alias);
		assert.equal(own.alias.fullPath, "/v1/pincode/:pincode");
		assert.deepEqual(own.params, { pincode: "560001" });
	});

	it("tries an alias it cannot index (any method, a wildcard) for every request, at its place in the table", () => {
		const route = { opts: {} };
		const mk = (
			method: string,
			fullPath: string,
			re: RegExp,
		): IndexedAlias & { isMethod(m: string): boolean } => ({
			method,
			fullPath,
			route,
			isMethod: (m: string) => method === "*" || method === m,
			match: (url: string) => {
				const m = re.exec(url);
				return m ? { ...m.groups } : false;
			},
		});
		const wildcard = mk("GET", "/files/*rest", /^\/files\/(?<rest>.+)$/);
		const any = mk("*", "/x/:id", /^\/x\/(?<id>[^/]+)$/);
		const plain = mk("GET", "/x/:name", /^\/x\/(?<name>[^/]+)$/);
		const deep = mk("GET", "/files/a/b", /^\/files\/a\/b$/);
		// a route whose matcher options let a path match a longer URL (`end: false`): tried for every request
		const prefix = {
			...mk("GET", "/p/:id", /^\/p\/(?<id>[^/]+)(?:\/.*)?$/),
			route: { opts: { pathToRegexpOptions: { end: false } } },
		};
		// case-sensitive routes allowing one trailing slash (path-to-regexp's default), keyed by their first segments
		const exact = { sensitive: true, trailing: true };
		const short = { ...mk("GET", "/t", /^\/t(?:\/)?$/), route: { opts: { pathToRegexpOptions: exact } } };
		const two = { ...mk("GET", "/t/u", /^\/t\/u(?:\/)?$/), route: { opts: { pathToRegexpOptions: exact } } };
		const param = {
			...mk("GET", "/t/:v", /^\/t\/(?<v>[^/]+)(?:\/)?$/),
			route: { opts: { pathToRegexpOptions: exact } },
		};
		// a case-insensitive route: its literal segments do not key it (`/K/L` is its URL too)
		const anyCase = {
			...mk("GET", "/k/l", /^\/k\/l$/i),
			route: { opts: { pathToRegexpOptions: { sensitive: false } } },
		};
		const table = [wildcard, any, plain, deep, prefix, param, two, short, anyCase];
		for (const [url, method] of [
			["/files/a/b", "GET"],
			["/files/a", "GET"],
			["/x/7", "GET"],
			["/x/7", "DELETE"],
			["/y", "GET"],
			["/p/1/more/segments", "GET"],
			["/t/u/", "GET"],
			["/t/", "GET"],
			["/t", "GET"],
			["/T/u", "GET"],
			["/K/L", "GET"],
		] as const) {
			const mine = resolveAliasIndexed(table, url, method);
			const theirs = upstreamResolve(table, url, method);
			assert.deepEqual(mine, theirs, `${method} ${url}`);
		}
		// the wildcard comes first in the table, so it wins over the deeper plain path, as upstream's scan has it
		assert.equal(
			(resolveAliasIndexed(table, "/files/a/b", "GET") as { alias: IndexedAlias }).alias,
			wildcard,
		);
		assert.equal(
			(resolveAliasIndexed(table, "/p/1/more/segments", "GET") as { alias: IndexedAlias }).alias,
			prefix,
		);
		// a parameter among the first two segments: tried for the URLs its literal neighbours are keyed by, in order
		assert.equal((resolveAliasIndexed(table, "/t/u/", "GET") as { alias: IndexedAlias }).alias, param);
		assert.equal((resolveAliasIndexed(table, "/t/", "GET") as { alias: IndexedAlias }).alias, short);
		assert.equal((resolveAliasIndexed(table, "/K/L", "GET") as { alias: IndexedAlias }).alias, anyCase);
		// `*` before the plain GET alias of the same shape
		assert.equal((resolveAliasIndexed(table, "/x/7", "GET") as { alias: IndexedAlias }).alias, any);
	});

	it("indexes a table again when it grows in place or is replaced", () => {
		const route = { opts: {} };
		const mk = (fullPath: string): IndexedAlias => ({
			method: "GET",
			fullPath,
			route,
			match: (url: string) => (url === fullPath ? {} : false),
		});
		const table = [mk("/a/b")];
		assert.equal(resolveAliasIndexed(table, "/c/d", "GET"), false);
		table.push(mk("/c/d"));
		assert.equal(
			(resolveAliasIndexed(table, "/c/d", "GET") as { alias: IndexedAlias }).alias.fullPath,
			"/c/d",
		);
		const replaced = table.filter((a) => a.fullPath !== "/c/d");
		assert.equal(resolveAliasIndexed(replaced, "/c/d", "GET"), false);
	});

	it("an alias's toString is upstream's text, made once", () => {
		const gw = g.broker.getLocalService("gateway") as unknown as { aliases: IndexedAlias[] };
		const alias = gw.aliases[0];
		const AliasClass = Object.getPrototypeOf(alias).constructor as { prototype: { toString(): string } };
		assert.equal(String(alias), AliasClass.prototype.toString.call(alias));
		assert.ok(Object.hasOwn(alias, "toString"), "kept on the alias itself");
		assert.match(String(alias), /=>/);
	});
});
