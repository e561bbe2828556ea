/**
 * SQL of the simulator (schema `simulator`, lib/simulator/migrations.ts): the
 * sandbox couriers' packages, scans, pickup locations, played faults, call
 * log and charged weights. Every function takes the service's Sequelize pool.
 */
import type { Sequelize } from "sequelize";
import type { WireShipment, WireWarehouse } from "../couriers/sandbox/wire";
import { exec, select } from "../platform/db";

/** A row of `simulator.packages`. */
export interface PackageRow {
	courier_code: string;
	refnum: string;
	waybill: string;
	sort_code: string | null;
	pickup_location: string;
	shipment: WireShipment;
	/** ISO-8601 UTC, null while not cancelled */
	cancelled_at: string | null;
	created_at: string | Date;
}

/** A row of `simulator.scans`. */
export interface ScanRow {
	waybill: string;
	/** our normalized scan code (SCAN_KINDS key) */
	code: string;
	location: string;
	instructions: string;
	at: string | Date;
}

/** Courier endpoints recorded in `simulator.calls`. */
export type CallEndpoint =
	| "create"
	| "lookup"
	| "cancel"
	| "warehouse"
	| "label"
	| "ndr"
	| "pickup"
	| "pickup_edit"
	| "pickup_cancel";

/**
 * Records that fault `fault` (`5xx` of a create, keyed by reference;
 * `label_5xx` of a packing slip and `ndr_5xx` of an NDR act, keyed by waybill) of (`courierCode`,
 * `refnum`) is played; true the first time only (remembered across restarts).
 */
export async function firstFault(
	db: Sequelize,
	courierCode: string,
	refnum: string,
	fault: "5xx" | "label_5xx" | "ndr_5xx" = "5xx",
): Promise<boolean> {
	const { count } = await exec(
		db,
		`INSERT INTO simulator.faults (courier_code, refnum, fault) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
		[courierCode, refnum, fault],
	);
	return count > 0;
}

/** The registered pickup location `name` of a courier (its city), or undefined. */
export async function pickupLocation(
	db: Sequelize,
	courierCode: string,
	name: string,
): Promise<{ city: string } | undefined> {
	const [row] = await select<{ city: string }>(
		db,
		`SELECT city FROM simulator.pickup_locations WHERE courier_code = $1 AND name = $2`,
		[courierCode, name],
	);
	return row;
}

/** Inserts or updates pickup location `w` (by courier and `w.name`). */
export async function upsertPickupLocation(
	db: Sequelize,
	courierCode: string,
	w: WireWarehouse,
): Promise<void> {
	await exec(
		db,
		`INSERT INTO simulator.pickup_locations (courier_code, name, pincode, city, payload)
				 VALUES ($1, $2, $3, $4, $5::jsonb)
				 ON CONFLICT (courier_code, name) DO UPDATE SET pincode = EXCLUDED.pincode, city = EXCLUDED.city,
				   payload = EXCLUDED.payload, updated_at = now()`,
		[courierCode, w.name, w.pin, w.city, JSON.stringify(w)],
	);
}

/** The package of a courier by client reference (`refnum`) or AWB (`waybill`), or undefined. */
export async function packageBy(
	db: Sequelize,
	courierCode: string,
	col: "refnum" | "waybill",
	value: string,
): Promise<PackageRow | undefined> {
	const rows = await select<PackageRow>(
		db,
		`SELECT * FROM simulator.packages WHERE courier_code = $1 AND ${col} = $2`,
		[courierCode, value],
	);
	return rows[0];
}

/** Packages of a courier whose `refnum` (or `waybill`) is in `list`, oldest first. */
export async function packagesBy(
	db: Sequelize,
	courierCode: string,
	col: "refnum" | "waybill",
	list: string[],
): Promise<PackageRow[]> {
	return select<PackageRow>(
		db,
		`SELECT * FROM simulator.packages WHERE courier_code = $1 AND ${col} = ANY($2::text[]) ORDER BY created_at`,
		[courierCode, list],
	);
}

/** A new package to book. */
export interface NewPackage {
	courierCode: string;
	ref: string;
	/** leading digits of the AWB */
	awbPrefix: string;
	/** digits after the prefix (zero-padded sequence number) */
	digits: number;
	sortCode: string;
	pickupName: string;
	shipment: WireShipment;
}

/**
 * The values of package `p` as {@link insertPackage} and {@link bookRegistered}
 * bind them ($1–$9): courier, reference, AWB prefix and digits, sort code,
 * client order number, pickup location, payment mode, the shipment (JSON).
 */
function packageValues(p: NewPackage): unknown[] {
	return [
		p.courierCode,
		p.ref,
		p.awbPrefix,
		p.digits,
		p.sortCode,
		p.shipment.client_order_no ?? null,
		p.pickupName,
		p.shipment.payment_mode,
		JSON.stringify(p.shipment),
	];
}

/**
 * Books `p` with the next AWB of `simulator.awb_seq` and, in the same
 * statement, adds its first scan `scan` (code, location, instructions);
 * undefined (nothing written) when the reference was booked concurrently
 * (ON CONFLICT DO NOTHING).
 */
export async function insertPackage(
	db: Sequelize,
	p: NewPackage,
	scan: { code: string; location: string; instructions: string },
): Promise<PackageRow | undefined> {
	const { rows } = await exec<PackageRow>(
		db,
		`WITH p AS (
		   INSERT INTO simulator.packages (courier_code, refnum, waybill, sort_code, client_order_no, pickup_location, payment_mode, shipment)
		   VALUES ($1, $2, $3 || lpad(nextval('simulator.awb_seq')::text, $4, '0'), $5, $6, $7, $8, $9::jsonb)
		   ON CONFLICT (courier_code, refnum) DO NOTHING
		   RETURNING *),
		 s AS (
		   INSERT INTO simulator.scans (waybill, code, location, instructions)
		   SELECT waybill, $10, $11, $12 FROM p)
		 SELECT * FROM p`,
		[...packageValues(p), scan.code, scan.location, scan.instructions],
	);
	return rows[0];
}

/**
 * A create of one bookable shipment in ONE statement: when pickup location
 * `p.pickupName` is registered, books `p` as {@link insertPackage} does (its
 * first scan `scan` located in the pickup's city) and logs the create call
 * as {@link logCreateCalls} would (`booked`, or `duplicate` when the
 * reference was booked before: nothing inserted). `known` false: the pickup
 * location is not registered and nothing was written (the caller refuses
 * the shipment its usual way). `row` is the package inserted, undefined for
 * a duplicate (read it with {@link packageBy}).
 */
export async function bookRegistered(
	db: Sequelize,
	p: NewPackage,
	scan: { code: string; instructions: string },
): Promise<{ known: boolean; row: PackageRow | undefined }> {
	const { rows } = await exec<PackageRow & { x_known: boolean }>(
		db,
		`WITH loc AS (
		   SELECT city FROM simulator.pickup_locations WHERE courier_code = $1 AND name = $7),
		 p AS (
		   INSERT INTO simulator.packages (courier_code, refnum, waybill, sort_code, client_order_no, pickup_location, payment_mode, shipment)
		   SELECT $1, $2, $3 || lpad(nextval('simulator.awb_seq')::text, $4, '0'), $5, $6, $7, $8, $9::jsonb FROM loc
		   ON CONFLICT (courier_code, refnum) DO NOTHING
		   RETURNING *),
		 s AS (
		   INSERT INTO simulator.scans (waybill, code, location, instructions)
		   SELECT p.waybill, $10, loc.city, $11 FROM p, loc),
		 c AS (
		   INSERT INTO simulator.calls (courier_code, endpoint, refnum, status, outcome)
		   SELECT $1, 'create', $2, 200, CASE WHEN EXISTS (SELECT 1 FROM p) THEN 'booked' ELSE 'duplicate' END FROM loc)
		 SELECT EXISTS (SELECT 1 FROM loc) AS x_known, p.* FROM (SELECT 1) one LEFT JOIN p ON true`,
		[...packageValues(p), scan.code, scan.instructions],
	);
	const { x_known, ...row } = rows[0];
	return { known: x_known, row: row.waybill ? (row as PackageRow) : undefined };
}

/** Marks a package cancelled; true when it was not cancelled before. */
export async function markCancelled(db: Sequelize, courierCode: string, waybill: string): Promise<boolean> {
	const { count } = await exec(
		db,
		`UPDATE simulator.packages SET cancelled_at = now() WHERE courier_code = $1 AND waybill = $2 AND cancelled_at IS NULL`,
		[courierCode, waybill],
	);
	return count > 0;
}

/** Adds a scan to `waybill` and answers it. */
export async function insertScan(
	db: Sequelize,
	waybill: string,
	code: string,
	location: string,
	instructions = "",
): Promise<ScanRow> {
	const { rows } = await exec<ScanRow>(
		db,
		`INSERT INTO simulator.scans (waybill, code, location, instructions) VALUES ($1, $2, $3, $4) RETURNING *`,
		[waybill, code, location, instructions],
	);
	return rows[0];
}

/** Scans of `waybills`, oldest first. */
export async function scansOf(db: Sequelize, waybills: string[]): Promise<ScanRow[]> {
	return select<ScanRow>(db, `SELECT * FROM simulator.scans WHERE waybill = ANY($1::text[]) ORDER BY id`, [
		waybills,
	]);
}

/** Code of the latest scan of `waybill`, or undefined. */
export async function lastScanCode(db: Sequelize, waybill: string): Promise<string | undefined> {
	const last = await select<{ code: string }>(
		db,
		`SELECT code FROM simulator.scans WHERE waybill = $1 ORDER BY id DESC LIMIT 1`,
		[waybill],
	);
	return last[0]?.code;
}

/** The latest scan of `waybill` (id and code), or undefined. */
export async function lastScan(
	db: Sequelize,
	waybill: string,
): Promise<{ id: string; code: string } | undefined> {
	const [row] = await select<{ id: string; code: string }>(
		db,
		`SELECT id, code FROM simulator.scans WHERE waybill = $1 ORDER BY id DESC LIMIT 1`,
		[waybill],
	);
	return row;
}

/** Time of the first scan `code` of `waybill` (e.g. the first `undelivered`: the first pending date), or undefined. */
export async function firstScanAt(db: Sequelize, waybill: string, code: string): Promise<Date | undefined> {
	const [row] = await select<{ at: string | Date }>(
		db,
		`SELECT at FROM simulator.scans WHERE waybill = $1 AND code = $2 ORDER BY id LIMIT 1`,
		[waybill, code],
	);
	return row ? new Date(row.at) : undefined;
}

/** A row of `simulator.ndr_actions`. */
export interface NdrActionRow {
	courier_code: string;
	waybill: string;
	/** the pending (`undelivered`) scan the act answers */
	scan_id: string;
	act: string;
	action_data: Record<string, unknown>;
	request_id: string;
	at: string | Date;
}

/**
 * The request id of an act already accepted for the same pending scan with
 * the same `act` and `action_data` (a repeated act), or undefined.
 */
export async function sameNdrAction(
	db: Sequelize,
	a: Pick<NdrActionRow, "courier_code" | "waybill" | "scan_id" | "act" | "action_data">,
): Promise<string | undefined> {
	const [row] = await select<{ request_id: string }>(
		db,
		`SELECT request_id FROM simulator.ndr_actions
		  WHERE courier_code = $1 AND waybill = $2 AND scan_id = $3 AND act = $4 AND action_data = $5::jsonb
		  ORDER BY id LIMIT 1`,
		[a.courier_code, a.waybill, a.scan_id, a.act, JSON.stringify(a.action_data)],
	);
	return row?.request_id;
}

/** Records accepted NDR acts (one statement). */
export async function insertNdrActions(
	db: Sequelize,
	rows: Pick<NdrActionRow, "courier_code" | "waybill" | "scan_id" | "act" | "action_data" | "request_id">[],
): Promise<void> {
	if (!rows.length) return;
	await exec(
		db,
		`INSERT INTO simulator.ndr_actions (courier_code, waybill, scan_id, act, action_data, request_id)
		 SELECT r.courier_code, r.waybill, r.scan_id, r.act, r.action_data, r.request_id
		 FROM jsonb_to_recordset($1::jsonb) AS r(courier_code text, waybill text, scan_id bigint, act text, action_data jsonb, request_id text)`,
		[JSON.stringify(rows)],
	);
}

/** NDR acts accepted for `waybill`, oldest first (ops and tests). */
export async function ndrActionsOf(db: Sequelize, waybill: string): Promise<NdrActionRow[]> {
	return select<NdrActionRow>(db, `SELECT * FROM simulator.ndr_actions WHERE waybill = $1 ORDER BY id`, [
		waybill,
	]);
}

/** The courier and consignee city of AWB `awb` (of `courierCode`, or of any courier), or undefined. */
export async function packageForScan(
	db: Sequelize,
	awb: string,
	courierCode?: string,
): Promise<{ courier_code: string; city: string | null } | undefined> {
	const [pkg] = await select<{ courier_code: string; city: string | null }>(
		db,
		`SELECT courier_code, shipment->>'city' AS city FROM simulator.packages
				 WHERE waybill = $1 AND ($2::text IS NULL OR courier_code = $2)`,
		[awb, courierCode ?? null],
	);
	return pkg;
}

/**
 * Records the create calls of `calls` (one row each: reference, status,
 * outcome) in one statement.
 */
export async function logCreateCalls(
	db: Sequelize,
	courierCode: string,
	calls: { refnum: string; status: number; outcome: string }[],
): Promise<void> {
	if (!calls.length) return;
	await exec(
		db,
		`INSERT INTO simulator.calls (courier_code, endpoint, refnum, status, outcome)
		 SELECT $1, 'create', c.refnum, c.status, c.outcome
		 FROM unnest($2::text[], $3::int[], $4::text[]) WITH ORDINALITY AS c(refnum, status, outcome, n)
		 ORDER BY c.n`,
		[courierCode, calls.map((c) => c.refnum), calls.map((c) => c.status), calls.map((c) => c.outcome)],
	);
}

/** Records one courier call. `refnum` is the reference, waybill or name asked for. */
export async function logCall(
	db: Sequelize,
	courierCode: string,
	endpoint: CallEndpoint,
	refnum: string,
	status: number,
	outcome: string | null = null,
): Promise<void> {
	await exec(
		db,
		`INSERT INTO simulator.calls (courier_code, endpoint, refnum, status, outcome) VALUES ($1, $2, $3, $4, $5)`,
		[courierCode, endpoint, refnum, status, outcome],
	);
}

/** Counts per courier code: packages, cancelled packages, pickup locations (pg answers counts as strings). */
export async function countsPerCourier(db: Sequelize): Promise<{
	packages: { courier_code: string; packages: string; cancelled: string }[];
	pickupLocations: { courier_code: string; n: string }[];
}> {
	const packages = await select<{ courier_code: string; packages: string; cancelled: string }>(
		db,
		`SELECT courier_code, count(*) AS packages, count(cancelled_at) AS cancelled FROM simulator.packages GROUP BY 1`,
	);
	const pickupLocations = await select<{ courier_code: string; n: string }>(
		db,
		`SELECT courier_code, count(*) AS n FROM simulator.pickup_locations GROUP BY 1`,
	);
	return { packages, pickupLocations };
}

/** A package held under one of the asked references (any courier). */
export interface ReferencePackageRow {
	refnum: string;
	courier_code: string;
	waybill: string;
	cancelled_at: string | Date | null;
}

/**
 * Packages (any courier, oldest first) and create calls (count per reference,
 * any outcome) of the client references `refs`.
 */
export async function referenceCounts(
	db: Sequelize,
	refs: string[],
): Promise<{ packages: ReferencePackageRow[]; creates: { refnum: string; n: string }[] }> {
	const packages = await select<ReferencePackageRow>(
		db,
		`SELECT refnum, courier_code, waybill, cancelled_at FROM simulator.packages
				 WHERE refnum = ANY($1::text[]) ORDER BY created_at, waybill`,
		[refs],
	);
	const creates = await select<{ refnum: string; n: string }>(
		db,
		`SELECT refnum, count(*) AS n FROM simulator.calls WHERE endpoint = 'create' AND refnum = ANY($1::text[]) GROUP BY 1`,
		[refs],
	);
	return { packages, creates };
}

/** A package of a COD remittance file: its courier, AWB and COD amount as the create payload carried it. */
export interface RemittanceRow {
	courier_code: string;
	waybill: string;
	/** `shipment->>'cod_amount'` (rupees, as sent: e.g. `1499` or `250.5`), null when absent */
	cod_amount: string | null;
}

/**
 * The packages a COD remittance file pays (lib/simulator/remittance.ts): COD
 * (`payment_mode` compared case-insensitively), not cancelled, with a
 * `delivered` scan; only of `courierCode` and/or of the AWBs `waybills` when
 * given; ordered by waybill.
 */
export async function deliveredCodPackages(
	db: Sequelize,
	filter: { courierCode?: string; waybills?: string[] } = {},
): Promise<RemittanceRow[]> {
	return select<RemittanceRow>(
		db,
		`SELECT p.courier_code, p.waybill, p.shipment->>'cod_amount' AS cod_amount
		   FROM simulator.packages p
		  WHERE lower(p.payment_mode) = 'cod'
		    AND p.cancelled_at IS NULL
		    AND EXISTS (SELECT 1 FROM simulator.scans s WHERE s.waybill = p.waybill AND s.code = 'delivered')
		    AND ($1::text IS NULL OR p.courier_code = $1)
		    AND ($2::text[] IS NULL OR p.waybill = ANY($2::text[]))
		  ORDER BY p.waybill`,
		[filter.courierCode ?? null, filter.waybills ?? null],
	);
}

/**
 * A row of `simulator.charged_weights` as answered: numerics as PostgreSQL
 * writes them (`charged_weight_kg` kg with three decimals, e.g. `1.250`; the
 * dimensions cm with two, e.g. `30.00`, null when not measured).
 */
export interface ChargedWeightRow {
	waybill: string;
	charged_weight_kg: string;
	length_cm: string | null;
	width_cm: string | null;
	height_cm: string | null;
}

/**
 * Records (upserts) the weight `w.charged_weight_kg` (kg, stored rounded to
 * the gram) and the dimensions `w.length_cm` / `w.width_cm` / `w.height_cm`
 * (cm, rounded to two decimals; all three or none) a courier measured for
 * package `waybill`, in one statement; a later call replaces the earlier
 * measurement (dimensions included). Answers the stored row, or undefined
 * (nothing written) when no package has that waybill.
 */
export async function upsertChargedWeight(
	db: Sequelize,
	waybill: string,
	w: { charged_weight_kg: number; length_cm?: number; width_cm?: number; height_cm?: number },
): Promise<ChargedWeightRow | undefined> {
	const { rows } = await exec<ChargedWeightRow>(
		db,
		`INSERT INTO simulator.charged_weights (waybill, charged_weight_kg, length_cm, width_cm, height_cm)
		 SELECT p.waybill, $2::numeric, $3::numeric, $4::numeric, $5::numeric FROM simulator.packages p WHERE p.waybill = $1
		 ON CONFLICT (waybill) DO UPDATE SET charged_weight_kg = EXCLUDED.charged_weight_kg,
		   length_cm = EXCLUDED.length_cm, width_cm = EXCLUDED.width_cm, height_cm = EXCLUDED.height_cm,
		   updated_at = now()
		 RETURNING waybill, charged_weight_kg::text AS charged_weight_kg, length_cm::text AS length_cm,
		   width_cm::text AS width_cm, height_cm::text AS height_cm`,
		[waybill, w.charged_weight_kg, w.length_cm ?? null, w.width_cm ?? null, w.height_cm ?? null],
	);
	return rows[0];
}

/**
 * A package of a weight file: its AWB, the measured weight and dimensions
 * (`simulator.charged_weights`, null when none recorded) and the declared ones
 * as its create payload carried them (text, null when absent).
 */
export interface WeightRow {
	waybill: string;
	/** recorded charged weight, kg with three decimals (`1.250`), null when not over-weighed */
	charged_weight_kg: string | null;
	/** recorded dimensions, cm with two decimals (`30.00`), null when none recorded */
	length_cm: string | null;
	width_cm: string | null;
	height_cm: string | null;
	/** `shipment->>'weight'`: the declared weight in grams, as sent (e.g. `750`) */
	declared_weight_g: string | null;
	/** `shipment->>'shipment_length'` / `_width` / `_height`: declared dimensions in cm, as sent (e.g. `25.5`) */
	declared_length_cm: string | null;
	declared_width_cm: string | null;
	declared_height_cm: string | null;
}

/**
 * The packages a weight file charges (lib/simulator/weights.ts): not
 * cancelled, with their recorded charged weight and dimensions when
 * over-weighed; only of `courierCode` and/or of the AWBs `waybills` when
 * given; ordered by waybill.
 */
export async function weighedPackages(
	db: Sequelize,
	filter: { courierCode?: string; waybills?: string[] } = {},
): Promise<WeightRow[]> {
	return select<WeightRow>(
		db,
		`SELECT p.waybill,
		        w.charged_weight_kg::text AS charged_weight_kg,
		        w.length_cm::text AS length_cm, w.width_cm::text AS width_cm, w.height_cm::text AS height_cm,
		        p.shipment->>'weight' AS declared_weight_g,
		        p.shipment->>'shipment_length' AS declared_length_cm,
		        p.shipment->>'shipment_width' AS declared_width_cm,
		        p.shipment->>'shipment_height' AS declared_height_cm
		   FROM simulator.packages p
		   LEFT JOIN simulator.charged_weights w ON w.waybill = p.waybill
		  WHERE p.cancelled_at IS NULL
		    AND ($1::text IS NULL OR p.courier_code = $1)
		    AND ($2::text[] IS NULL OR p.waybill = ANY($2::text[]))
		  ORDER BY p.waybill`,
		[filter.courierCode ?? null, filter.waybills ?? null],
	);
}
