/**
 * The gateway's alias look-up by method and segment count (issue 32, docs/decisions/0137-alias-index.md).
 *
 * moleculer-web 0.11 finds a request's alias by trying every alias of its table in order (`resolveAlias`: the
 * method, then the alias's path-to-regexp matcher) and takes the first that matches; the table is sorted deepest
 * path first, so a three-segment read such as `GET /v1/pincode/{pin}` tried every longer GET path's matcher before
 * its own. {@link resolveAliasIndexed} tries, in the table's order, only the aliases that can match:
 *
 * - a "plain" alias (a method other than `*`, a full path of literal segments and `:name` parameters, a route whose
 *   `pathToRegexpOptions` set at most `sensitive` and `trailing`, as every route of ours does) matches only URLs of
 *   its method with as many segments (path-to-regexp 8: a literal segment matches itself, `:name` one non-empty
 *   segment without `/`, and at most one trailing `/`, not counted); it is tried only for those;
 * - any other alias (a wildcard, an optional group, `*` for the method, a route with its own matcher options) is
 *   tried for every request, at its place in the table.
 *
 * The answer is upstream's: the same alias and the same parameters, since the candidates are the aliases that could
 * match, in the table's order, each checked by its own matcher.
 */

/** What the look-up reads of a moleculer-web `Alias`. */
export interface IndexedAlias {
	/** `GET`, `POST`… or `*` */
	method: string;
	/** the route's path joined with the alias's path (`/v1/pincode/:pincode`) */
	fullPath: string;
	/** the alias's route and its path-to-regexp options */
	route: { opts?: { pathToRegexpOptions?: unknown } };
	/** path-to-regexp's matcher: the parameters, or `false` */
	match(url: string): Record<string, unknown> | false;
}

/**
 * An index of one alias table. Each list holds, in the table's order, the aliases that can match a URL of its key,
 * those tried for every request included: by `method count first second` (the URL's first two segments), by
 * `method count` (a URL whose first two segments no alias names literally) and {@link AliasIndex.general}.
 */
interface AliasIndex {
	/** the table's length when indexed (moleculer-web appends to the same array when a route's aliases grow) */
	length: number;
	bySegments: Map<string, IndexedAlias[]>;
	byCount: Map<string, IndexedAlias[]>;
	general: IndexedAlias[];
}

/** Where an alias is tried: for every request, for its method and segment count, or for those and its first two segments. */
type Reach =
	| { kind: "general" }
	| { kind: "count"; count: string }
	| { kind: "segments"; count: string; segments: string };

/** A literal segment or a `:name` parameter: nothing path-to-regexp 8 reads as a wildcard, group or escape. */
const PLAIN_SEGMENT = /^(?:[A-Za-z0-9._~-]+|:[A-Za-z_$][A-Za-z0-9_$]*)$/;

/**
 * path-to-regexp options that leave a plain alias matching one segment per segment: `sensitive` (case) and
 * `trailing` (one trailing `/` allowed or not, which {@link segmentCount} does not count). Any other (`end: false`,
 * `delimiter`, …) makes the route's aliases tried for every request.
 */
const SEGMENT_NEUTRAL_OPTIONS = new Set(["sensitive", "trailing"]);

const indexes = new WeakMap<readonly IndexedAlias[], AliasIndex>();

/** Parts of a path split at `/`, one trailing `/` not counted (`/v1/orders/` → 3, as `/v1/orders`). */
function segmentCount(path: string): number {
	let n = 1;
	for (let i = 0; i < path.length; i++) if (path.charCodeAt(i) === 47) n++;
	return n > 2 && path.charCodeAt(path.length - 1) === 47 ? n - 1 : n;
}

/** Where alias `a` can match (see the file head). */
function reachOf(a: IndexedAlias): Reach {
	if (a.method === "*") return { kind: "general" };
	const options = a.route.opts?.pathToRegexpOptions;
	if (options !== undefined && (typeof options !== "object" || options === null)) return { kind: "general" };
	for (const k of Object.keys(options ?? {})) if (!SEGMENT_NEUTRAL_OPTIONS.has(k)) return { kind: "general" };
	const parts = a.fullPath.split("/");
	if (parts[0] !== "") return { kind: "general" };
	for (let i = 1; i < parts.length; i++) if (!PLAIN_SEGMENT.test(parts[i])) return { kind: "general" };
	const count = `${a.method} ${parts.length}`;
	// literal first segments narrow it further when they compare as strings do: a case-sensitive route
	const sensitive = (options as { sensitive?: unknown } | undefined)?.sensitive === true;
	const firstTwo = parts.slice(1, 3);
	if (!sensitive || firstTwo.some((p) => p.startsWith(":"))) return { kind: "count", count };
	return { kind: "segments", count, segments: `${count} ${firstTwo.join("/")}` };
}

/** Builds the index of `aliases` (in their order). */
function build(aliases: readonly IndexedAlias[]): AliasIndex {
	const reaches = aliases.map(reachOf);
	const bySegments = new Map<string, IndexedAlias[]>();
	const byCount = new Map<string, IndexedAlias[]>();
	/** the segment lists of each `method count` */
	const segmentListsOf = new Map<string, IndexedAlias[][]>();
	for (const r of reaches) {
		if (r.kind === "general") continue;
		if (!byCount.has(r.count)) byCount.set(r.count, []);
		if (r.kind === "segments" && !bySegments.has(r.segments)) {
			const list: IndexedAlias[] = [];
			bySegments.set(r.segments, list);
			segmentListsOf.set(r.count, [...(segmentListsOf.get(r.count) ?? []), list]);
		}
	}
	const general: IndexedAlias[] = [];
	aliases.forEach((a, i) => {
		const r = reaches[i];
		if (r.kind === "general") {
			general.push(a);
			for (const list of byCount.values()) list.push(a);
			for (const list of bySegments.values()) list.push(a);
		} else if (r.kind === "count") {
			byCount.get(r.count)?.push(a);
			for (const list of segmentListsOf.get(r.count) ?? []) list.push(a);
		} else bySegments.get(r.segments)?.push(a);
	});
	return { length: aliases.length, bySegments, byCount, general };
}

/** The key of a URL's first two segments for {@link AliasIndex.bySegments}: `count first/second`. */
function segmentsKey(count: string, path: string): string {
	const url = path.length > 1 && path.endsWith("/") ? path.slice(0, -1) : path;
	const a = url.indexOf("/", 1);
	if (a < 0) return `${count} ${url.slice(1)}`;
	const b = url.indexOf("/", a + 1);
	return `${count} ${b < 0 ? url.slice(1) : url.slice(1, b)}`;
}

/**
 * moleculer-web's `resolveAlias(url, method)` over the table `aliases`: `{ alias, params }` of the first alias in
 * the table's order whose method is `method` (or `*`) and whose matcher matches `url`, else `false`. The index of a
 * table is made on its first look-up and made again when the table is another array or has another length (moleculer-web
 * replaces the array when it removes aliases, appends and sorts in place, synchronously, when it adds them).
 */
export function resolveAliasIndexed(
	aliases: readonly IndexedAlias[],
	url: string,
	method = "GET",
): { alias: IndexedAlias; params: Record<string, unknown> } | false {
	let index = indexes.get(aliases);
	if (index === undefined || index.length !== aliases.length) {
		index = build(aliases);
		indexes.set(aliases, index);
	}
	const count = `${method} ${segmentCount(url)}`;
	const candidates =
		index.bySegments.get(segmentsKey(count, url)) ?? index.byCount.get(count) ?? index.general;
	for (const alias of candidates) {
		if (alias.method !== "*" && alias.method !== method) continue;
		const params = alias.match(url);
		if (params) return { alias, params };
	}
	return false;
}
