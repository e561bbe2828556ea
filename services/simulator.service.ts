/**
 * Sandbox courier simulator (docs/ARCHITECTURE.md §4): plays four sandbox
 * couriers behind their own HTTP server (node:http on
 * 127.0.0.1:`SANDBOX_COURIER_PORT`), speaking the Delhivery-like wire format
 * of lib/couriers/sandbox/wire.ts. Runs only when `SANDBOX=1` (lib/platform/config.ts
 * `sandbox`).
 *
 * Couriers (`/couriers/<code>/…`; an unknown code answers 404):
 * - `sbx-express` AWB 14 digits, `sbx-surface` 15, `sbx-reverse` 12, `sbx-lite` 13 (no COD).
 * - `sbx-delhivery` under `/delhivery/…`: Delhivery's own B2C protocol (lib/simulator/delhivery.ts), the
 *   base URL of the real Delhivery adapter in the sandbox (lib/platform/config.ts `sandboxDelhiveryOverrides`).
 *
 * Behaviour of a real courier:
 * - AWB issued within a configurable delay (`SANDBOX_COURIER_DELAY_MS`; default
 *   random 100–300 ms), from a PostgreSQL sequence (unique across couriers).
 * - Idempotent on our client reference (`order` of the shipment): the same
 *   reference always answers the same AWB, also after a restart, because state
 *   lives in PostgreSQL schema `simulator`.
 * - Refusals with the courier's words: unregistered pickup location, consignee
 *   pincode not 6 digits or on the refuse list ({@link REFUSED_PINCODES}),
 *   weight over 30 kg or not positive, phone not 10 digits, COD on `sbx-lite`,
 *   COD without an amount. Warehouse registration is refused for a name under 3
 *   characters, an address line 1 under 10 characters, a phone not 10 digits,
 *   or a pincode malformed / on the refuse list.
 * - Requires `Authorization: Token <SANDBOX_COURIER_TOKEN>` (default `sandbox-token`), else 401.
 *
 * Fault injection (create only), triggered when the consignee `name` contains
 * the marker, so a merchant can rehearse failures through the public API:
 * - `SIMULATE_TIMEOUT`: books (or finds the reference's existing AWB), then
 *   holds the answer for `SANDBOX_COURIER_HANG_MS` (default the adapter's
 *   timeout + 3 s): the caller times out although the AWB exists, which the
 *   booking worker must reconcile by looking the reference up. A refused
 *   shipment answers at once.
 * - `SIMULATE_5XX`: the first create of each reference answers 503 before
 *   anything is booked (remembered in `simulator.faults`, also across
 *   restarts); later creates of that reference work.
 * - `SIMULATE_REFUSE`: refused with "Shipment rejected by the courier (SIMULATE_REFUSE)".
 *
 * Tracking: `GET /couriers/<code>/api/v1/packages/json/?waybill=a,b,…` answers
 * up to 50 waybills in one call (every one it knows, with all its scans; two
 * queries whatever the count). Scan push: when `SANDBOX_SCAN_PUSH_URL` is set
 * (e.g. `http://127.0.0.1:3000/v1/tracking/webhooks/{courier}`, `{courier}`
 * replaced by the courier code), every scan emitted on demand is also POSTed
 * there in Delhivery's push shape, signed `x-sandbox-timestamp: <unix seconds>`
 * and `x-sandbox-signature: sha256=<hex HMAC-SHA256 of "<timestamp>.<body>">`
 * under `SANDBOX_WEBHOOK_SECRET` (no default: the simulator refuses to start
 * with `SANDBOX_SCAN_PUSH_URL` set and no key), fire-and-forget with a 2 s
 * timeout: a failed push is logged and the poller still finds the scan
 * (lib/simulator/push.ts).
 *
 * Courier-issued labels: the couriers of `SANDBOX_OWN_LABEL_COURIERS` (default
 * `sbx-lite`) issue their own label file, Delhivery's packing slip:
 * `GET /couriers/<code>/api/p/packing_slip?wbns=<awb>` answers a one-page 4 × 6
 * PDF (`application/pdf`, the same bytes on every call; lib/simulator/label.ts);
 * an AWB it does not hold → 200 `{packages_found: 0, packages: []}`; another
 * courier → 404. A consignee named with `SIMULATE_LABEL_5XX` gets a 503 on the
 * first packing slip asked per AWB (the capture is retried).
 *
 * NDR actions (Delhivery's `POST /couriers/<code>/api/p/update`, body
 * `{data: [{waybill, act, action_data?}]}`, acts `RE-ATTEMPT`, `DEFER_DLV`
 * with `action_data.deferred_date`, `EDIT_DETAILS` with `action_data.phone` /
 * `add` / `pin`): decided at once (Delhivery answers an upload id and decides
 * later). Accepted only while the shipment's last scan is `undelivered`
 * (Pending), else refused in the courier's words ("RE-ATTEMPT not allowed:
 * shipment is Delivered"); DEFER_DLV's date must be after today (IST) and at
 * most 6 days after the first pending scan's day; EDIT_DETAILS needs a 10-digit
 * phone and/or an address and cannot change the pincode. An accepted act is
 * recorded in `simulator.ndr_actions` and answered with an upload id (`UPL…`);
 * the same act again on the same pending scan answers the same id. No scan is
 * added: the next attempt's outcome is emitted like any scan. Faults
 * (consignee name): `SIMULATE_NDR_5XX` → 503 on the first act per AWB,
 * `SIMULATE_NDR_DOWN` → 503 on every act.
 *
 * COD remittance: the `simulator.remittanceFile` action answers the file a
 * courier sends the aggregator for the cash it collected (CSV
 * `awb_number,amount,remittance_reference,remittance_date`, one line per
 * delivered, not-cancelled COD package; lib/simulator/remittance.ts), which
 * billing's reconciliation reads.
 *
 * Weights: the `simulator.overweigh` action makes a courier "measure" a
 * package it holds heavier (and/or bigger) than declared: `{waybill,
 * charged_weight_kg, length_cm?, width_cm?, height_cm?}` (kg, cm; the three
 * dimensions or none) recorded in `simulator.charged_weights` (a later call
 * replaces it). The `simulator.weightFile` action answers the weight (billing)
 * file a courier sends the aggregator for the weight it charged (CSV
 * `awb_number,charged_weight_kg,length_cm,width_cm,height_cm,weighed_on`, one
 * line per not-cancelled package: the recorded weight, else the declared one,
 * in kg with three decimals; the recorded dimensions, else the declared ones,
 * else empty cells, in cm; lib/simulator/weights.ts), which billing's weight
 * reconciliation reads to open weight discrepancies.
 *
 * Every courier call is recorded in `simulator.calls` (courier, endpoint,
 * reference / waybill / location name, HTTP status (endpoints create, lookup, cancel, warehouse, label, ndr), create outcome
 * `booked` | `duplicate` | `refused` | `503`, ndr outcome `accepted` | `duplicate` | `refused` | `503`) for ops and tests.
 *
 * Ops/testing endpoints: `GET /health`, `GET /state` (counts per courier),
 * `GET /references?reference=a,b` (per client reference: packages held, live
 * ones, creates received; the `simulator.references` action),
 * `POST /couriers/<code>/sandbox/scan` `{waybill, event, reason?}` (same as
 * the `simulator.emitScan` action, events {@link EMITTABLE_EVENTS}: every
 * normalized status but booked, manifested and cancelled; 404 for an AWB not
 * of that courier).
 *
 * Where it lives: couriers and refusal rules lib/simulator/couriers.ts, the
 * endpoints lib/simulator/api.ts, the HTTP server lib/simulator/server.ts,
 * SQL lib/simulator/store.ts, tables lib/simulator/migrations.ts, the
 * remittance file lib/simulator/remittance.ts, the weight file
 * lib/simulator/weights.ts.
 */
import { Errors } from "moleculer";
import {
	type ChargedWeight,
	type EmittedScan,
	MAX_CHARGED_DIMENSION_CM,
	MAX_CHARGED_WEIGHT_KG,
	MAX_REMITTANCE_AWBS,
	MAX_WEIGHT_FILE_AWBS,
	type RemittanceFile,
	type SimulatorReference,
	type SimulatorState,
	type WeightFile,
} from "../lib/contracts";
import { requireSandboxWebhookSecret } from "../lib/couriers/sandbox/settings";
import { loadConfig, setting } from "../lib/platform/config";
import { defineService } from "../lib/platform/service";
import { isCalendarDay, istDay } from "../lib/shared/ist-date";
import { addScan, MAX_REFERENCES, referencesView, stateView } from "../lib/simulator/api";
import { EMITTABLE_EVENTS } from "../lib/simulator/couriers";
import { SIMULATOR_MIGRATIONS } from "../lib/simulator/migrations";
import { pushUrlFor } from "../lib/simulator/push";
import { remittanceCsv } from "../lib/simulator/remittance";
import { SimulatorServer } from "../lib/simulator/server";
import { deliveredCodPackages, upsertChargedWeight, weighedPackages } from "../lib/simulator/store";
import { weightCsv } from "../lib/simulator/weights";
import { DbMixin } from "../mixins/db.mixin";

/** State set in `started`. */
interface SimulatorVars {
	/** the couriers' HTTP server, while listening */
	server?: SimulatorServer;
}

/** Params of the sandbox couriers' files (remittance, weight): a courier and/or at most `max` AWBs. */
function fileFilters(max: number) {
	return {
		courier_code: { type: "string", min: 1, optional: true },
		awb_numbers: { type: "array", items: { type: "string", min: 1 }, min: 1, max, optional: true },
	} as const;
}

/** A file's optional day param (`YYYY-MM-DD`; {@link assertCalendarDay} checks it is a real day). */
const FILE_DAY = { type: "string", pattern: /^\d{4}-\d{2}-\d{2}$/, optional: true } as const;

/**
 * Refuses a given day that is not a real calendar day.
 * @throws 422 ValidationError `<field>: must be a real calendar date YYYY-MM-DD`
 */
function assertCalendarDay(field: string, day: string | undefined): void {
	if (day !== undefined && !isCalendarDay(day))
		throw new Errors.ValidationError(
			`${field}: must be a real calendar date YYYY-MM-DD`,
			"VALIDATION_ERROR",
			[{ type: "date", field, actual: day }],
		);
}

export default defineService<SimulatorVars>()({
	name: "simulator",
	mixins: [DbMixin("simulator", SIMULATOR_MIGRATIONS)],
	settings: {},
	actions: {
		/**
		 * Emits a tracking scan for a booked AWB, as the courier would
		 * (docs/ARCHITECTURE.md §4 sandbox events). Params: `awb_number`, `event`
		 * (one of {@link EMITTABLE_EVENTS}: every normalized status but booked,
		 * manifested and cancelled), `reason?` (NDR reason / remark, ≤ 255).
		 * The scan is stored (the track API answers it) and, when
		 * `SANDBOX_SCAN_PUSH_URL` is set, also pushed there signed
		 * (lib/simulator/push.ts; fire-and-forget, a failure is logged).
		 * Returns `{courier_code, awb_number, code, at}` (at ISO-8601 UTC); throws
		 * a 404 MoleculerClientError `not_found` for an unknown AWB.
		 */
		emitScan: {
			params: {
				awb_number: { type: "string", min: 1 },
				event: { type: "enum", values: [...EMITTABLE_EVENTS] },
				reason: { type: "string", optional: true, max: 255 },
			},
			async handler(ctx): Promise<EmittedScan> {
				const { awb_number, event, reason } = ctx.params;
				const added = await addScan(this.db, awb_number, event, { reason, logger: this.logger });
				if (!added) throw new Errors.MoleculerClientError(`No such waybill ${awb_number}`, 404, "not_found");
				return added.scan;
			},
		},
		/** Ops view: packages, cancellations and pickup locations per courier code. */
		state: {
			async handler(): Promise<SimulatorState> {
				return stateView(this.db);
			},
		},
		/**
		 * Ops/test view of client references (our booking attempt ids; at most
		 * 500): per reference, the packages the sandbox couriers hold
		 * (`{courier_code, awb_number, cancelled_at}`, ISO-8601 UTC), `live` (not
		 * cancelled) and `creates` (create calls received). The exactly-once
		 * invariant: over an order's attempts, live ≤ 1.
		 */
		references: {
			params: {
				references: { type: "array", items: { type: "string", min: 1 }, max: MAX_REFERENCES },
			},
			async handler(ctx): Promise<{ references: SimulatorReference[] }> {
				return { references: await referencesView(this.db, ctx.params.references) };
			},
		},
		/**
		 * The sandbox couriers' COD remittance file, as a courier sends one to
		 * the aggregator (billing's reconciliation reads it; internal, no route).
		 * Params, all optional: `courier_code`, `awb_numbers` (1–10000),
		 * `remittance_date` (`YYYY-MM-DD`, a real calendar day; default today in
		 * IST). Every COD package (payment mode compared case-insensitively), not
		 * cancelled, with a `delivered` scan, of that courier and/or those AWBs
		 * when given, ordered by waybill. Returns `{csv, lines}`: header
		 * `awb_number,amount,remittance_reference,remittance_date`, one line per
		 * package (amount in rupees with two decimals, reference
		 * `SBX-REM-<YYYYMMDD>-<courier_code>`; lib/simulator/remittance.ts);
		 * none → the header alone, `lines` 0. A date that is not a calendar day
		 * → 422 ValidationError.
		 */
		remittanceFile: {
			params: { ...fileFilters(MAX_REMITTANCE_AWBS), remittance_date: FILE_DAY },
			async handler(ctx): Promise<RemittanceFile> {
				const { courier_code, awb_numbers, remittance_date } = ctx.params;
				assertCalendarDay("remittance_date", remittance_date);
				const rows = await deliveredCodPackages(this.db, {
					courierCode: courier_code,
					waybills: awb_numbers,
				});
				return remittanceCsv(rows, remittance_date ?? istDay());
			},
		},
		/**
		 * The sandbox courier "measures" a package it holds (any courier,
		 * cancelled or not) heavier and/or bigger than declared, as a courier's
		 * hub weighs a shipment; its weight file (`simulator.weightFile`)
		 * charges that weight. Params: `waybill`, `charged_weight_kg` (kg,
		 * 0.001–1000; stored to the gram), `length_cm?`, `width_cm?`,
		 * `height_cm?` (cm, 0.01–500 each; stored with two decimals; all three or
		 * none). Upsert: a later call replaces the measurement, dimensions
		 * included. Returns `{waybill, charged_weight_kg, length_cm, width_cm,
		 * height_cm}` as stored (numbers; null dimensions when none given).
		 * Throws a 404 MoleculerClientError `not_found` for an AWB the simulator
		 * does not hold, a 422 ValidationError when only some dimensions are
		 * given (or a param fails its rule).
		 */
		overweigh: {
			params: {
				waybill: { type: "string", min: 1 },
				charged_weight_kg: { type: "number", min: 0.001, max: MAX_CHARGED_WEIGHT_KG },
				length_cm: { type: "number", min: 0.01, max: MAX_CHARGED_DIMENSION_CM, optional: true },
				width_cm: { type: "number", min: 0.01, max: MAX_CHARGED_DIMENSION_CM, optional: true },
				height_cm: { type: "number", min: 0.01, max: MAX_CHARGED_DIMENSION_CM, optional: true },
			},
			async handler(ctx): Promise<ChargedWeight> {
				const { waybill, charged_weight_kg, length_cm, width_cm, height_cm } = ctx.params;
				const dims = { length_cm, width_cm, height_cm };
				const missing = Object.entries(dims)
					.filter(([, v]) => v === undefined)
					.map(([k]) => k);
				if (missing.length && missing.length < 3) {
					throw new Errors.ValidationError(
						`${missing.join(", ")}: length_cm, width_cm and height_cm are given all three or none`,
						"VALIDATION_ERROR",
						missing.map((field) => ({ type: "required", field, actual: undefined })),
					);
				}
				const row = await upsertChargedWeight(this.db, waybill, { charged_weight_kg, ...dims });
				if (!row) throw new Errors.MoleculerClientError(`No such waybill ${waybill}`, 404, "not_found");
				const cm = (v: string | null) => (v === null ? null : Number(v));
				return {
					waybill: row.waybill,
					charged_weight_kg: Number(row.charged_weight_kg),
					length_cm: cm(row.length_cm),
					width_cm: cm(row.width_cm),
					height_cm: cm(row.height_cm),
				};
			},
		},
		/**
		 * The sandbox couriers' weight (billing) file, as a courier reports the
		 * weight it charged (billing's weight reconciliation reads it; internal,
		 * no route). Params, all optional: `courier_code`, `awb_numbers`
		 * (1–10000), `weighed_on` (`YYYY-MM-DD`, a real calendar day; default
		 * today in IST). Every package not cancelled, of that courier and/or
		 * those AWBs when given, ordered by waybill. Returns `{csv, lines}`:
		 * header `awb_number,charged_weight_kg,length_cm,width_cm,height_cm,weighed_on`,
		 * one line per package: the weight recorded by `simulator.overweigh`,
		 * else the declared one of its create payload (grams on the wire), in kg
		 * with three decimals (`0.750`); the recorded dimensions, else the
		 * declared ones, else three empty cells, in cm with at most two decimals
		 * (`30`, `25.5`); lib/simulator/weights.ts. None → the header alone,
		 * `lines` 0. A date that is not a calendar day → 422 ValidationError.
		 */
		weightFile: {
			params: { ...fileFilters(MAX_WEIGHT_FILE_AWBS), weighed_on: FILE_DAY },
			async handler(ctx): Promise<WeightFile> {
				const { courier_code, awb_numbers, weighed_on } = ctx.params;
				assertCalendarDay("weighed_on", weighed_on);
				const rows = await weighedPackages(this.db, { courierCode: courier_code, waybills: awb_numbers });
				return weightCsv(rows, weighed_on ?? istDay());
			},
		},
	},
	async started() {
		if (!loadConfig().sandbox) {
			this.logger.warn("simulator: SANDBOX is off; the sandbox courier simulator is not started");
			return;
		}
		// pushes need the key they are signed with
		// (docs/decisions/0078-sandbox-scan-signatures.md)
		if (pushUrlFor("sbx-express")) requireSandboxWebhookSecret("simulator");
		const port = loadConfig().simulatorPort;
		const server = new SimulatorServer(this.db, this.logger);
		// HOST as the gateway reads it (0.0.0.0 in the Kubernetes dev overlay, so other pods reach it); else loopback
		const host = setting("HOST") ?? "127.0.0.1";
		await server.listen(port, host);
		this.server = server;
		this.logger.info(`sandbox courier simulator listening on ${host}:${port}`);
	},
	async stopped() {
		const server = this.server;
		this.server = undefined;
		await server?.close();
	},
});
