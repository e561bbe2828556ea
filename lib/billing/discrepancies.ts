/**
 * Weight discrepancies (issue 27; docs/decisions/0105-weight-discrepancies.md).
 *
 * A courier reports the weight it charged in its weight (billing) file: CSV
 * `awb_number,charged_weight_kg,length_cm,width_cm,height_cm` (kg with at
 * most 3 decimals; the three dimensions in cm all given or all empty; extra
 * columns ignored). Each line is compared with what the order declared:
 *
 * - billable weight on each side = max(dead weight, volumetric weight
 *   L × W × H / 5000), in grams, as booking prices it (lib/shared/lane.ts);
 * - within the account's tolerance (default max(50 g, 10 % of ours)) →
 *   `within_tolerance`, nothing opened;
 * - beyond it, both weights are priced on the shipment's lane with the
 *   courier's current rate card (`rates.quote`): no extra charge (the same
 *   slab) → `same_slab`; else a discrepancy opens with the extra charge
 *   (GST included) held in the wallet (`weight_discrepancy` entry) and the
 *   merchant event `weight_discrepancy.opened`;
 * - exceptions: `invalid_line`, `unknown_awb` (no shipment of ours — billing's
 *   own, else booking's live booked AWB — or another courier's than the file's), `duplicate` (earlier in the file, or
 *   a discrepancy already opened for the AWB), `not_priced` (the lane or the
 *   courier cannot be priced now).
 *
 * The merchant accepts (the hold is the charge) or disputes (a reason and
 * 1–5 images) within {@link DISCREPANCY_RESPONSE_DAYS} days, else it is
 * `auto_accepted`; ops resolve a dispute `won` (the hold refunded) or `lost`.
 */
import { createHash } from "node:crypto";
import type { Readable } from "node:stream";
import { parse } from "csv-parse/sync";
import pMap from "p-map";
import {
	type AutoAcceptResult,
	type Caller,
	DISCREPANCIES_DEFAULT_LIMIT,
	DISCREPANCIES_MAX_LIMIT,
	DISCREPANCY_RESPONSE_DAYS,
	DISCREPANCY_STATUSES,
	DISPUTE_MAX_IMAGE_BYTES,
	DISPUTE_MAX_IMAGES,
	DISPUTE_MAX_REASON,
	type DiscrepancyPage,
	type DiscrepancyStatus,
	type HttpParams,
	MAX_EXCEPTION_LINES,
	type MeasuredWeight,
	type MerchantEvent,
	type OrderRecord,
	WEIGHT_FILE_COLUMNS,
	type WeightDiscrepancy,
	type WeightExceptionKind,
	type WeightExceptionLine,
	type WeightReport,
	type WeightTolerance,
} from "../contracts";
import { call } from "../contracts/call";
import { type CursorPosition, decodeCursor, encodeCursor } from "../platform/cursor";
import { fail, failWith, validationFailed } from "../platform/errors";
import { parsePositiveInt } from "../shared/fields";
import { addDays, isCalendarDay, istMidnight } from "../shared/ist-date";
import { type Dimensions, dimensionsOf, kgToGrams, laneOf, volumetricKg } from "../shared/lane";
import { toPaise, toRupees } from "../shared/money";
import { readMultipartForm } from "../shared/multipart";
import type { BillingDeps } from "./deps";
import {
	acceptOpen,
	autoAcceptDue,
	type DiscrepancyRow,
	discrepancyOf,
	discrepancyPage,
	disputeOpen,
	type ImageRow,
	imageBytes,
	imagesOf,
	type KnownShipment,
	knownShipments,
	type NewDiscrepancy,
	recordWeightReport,
	reportedAwbs,
	resolveDisputed,
	setTolerance,
	storedWeightReport,
	tolerancesOf,
} from "./discrepancy-store";
import { cleanImage } from "./images";
import { pageLimit } from "./wallet";

/** Largest weight file read (bytes). */
export const MAX_WEIGHT_FILE_BYTES = 8 * 1024 * 1024;

/** Remote calls made at once while a file's lines are priced. */
const PRICING_CONCURRENCY = 8;

/** One line of a weight file, parsed (or refused: `invalid`). */
export interface WeightLine {
	line_no: number;
	awb_number: string | null;
	/** grams, rounded up */
	charged_g: number;
	dims: Dimensions | null;
	invalid: string | null;
}

const KG = /^\d{1,4}(\.\d{1,3})?$/;
const CM = /^\d{1,3}(\.\d{1,2})?$/;

/**
 * Reads a weight CSV (UTF-8, optional BOM, header {@link WEIGHT_FILE_COLUMNS}
 * in any order, blank lines skipped) into lines; a line that cannot be read
 * keeps its number and the reason.
 * @throws 400 `invalid_weight_file` when the header lacks a column or the CSV cannot be parsed
 */
export function parseWeightFile(csv: string): WeightLine[] {
	let records: string[][];
	try {
		records = parse(csv, { bom: true, skip_empty_lines: true, relax_column_count: true, trim: true });
	} catch (err) {
		throw fail("invalid_weight_file", `not CSV (${err instanceof Error ? err.message : String(err)})`);
	}
	const [header, ...rows] = records;
	const at = new Map((header ?? []).map((h, i) => [h.toLowerCase(), i]));
	const missing = WEIGHT_FILE_COLUMNS.filter((c) => !at.has(c));
	if (missing.length) throw fail("invalid_weight_file", `the header lacks ${missing.join(", ")}`);
	const col = (r: string[], c: (typeof WEIGHT_FILE_COLUMNS)[number]) => (r[at.get(c) ?? -1] ?? "").trim();
	return rows.map((r, i) => {
		const awb = col(r, "awb_number");
		const kg = col(r, "charged_weight_kg");
		const sides = [col(r, "length_cm"), col(r, "width_cm"), col(r, "height_cm")];
		const given = sides.filter((d) => d !== "").length;
		const dimsOk = given === 0 || (given === 3 && sides.every((d) => CM.test(d) && Number(d) > 0));
		const invalid = !awb
			? "awb_number is empty"
			: awb.length > 64
				? "awb_number is longer than 64 characters"
				: !KG.test(kg) || Number(kg) <= 0
					? `charged_weight_kg "${kg}" is not a weight in kg (more than 0, at most 3 decimals)`
					: !dimsOk
						? "length_cm, width_cm and height_cm must be all given (cm, more than 0, at most 2 decimals) or all empty"
						: null;
		return {
			line_no: i + 1,
			awb_number: awb ? awb.slice(0, 64) : null,
			charged_g: invalid ? 0 : kgToGrams(Number(kg)),
			dims:
				invalid || given === 0
					? null
					: { length: Number(sides[0]), width: Number(sides[1]), height: Number(sides[2]) },
			invalid,
		};
	});
}

/** Billable grams of a dead weight (grams) and dimensions (cm): the larger of dead and volumetric. */
export function billableGrams(dead_g: number, dims: Dimensions | null): number {
	return Math.max(dead_g, kgToGrams(volumetricKg(dims)));
}

/** True when `charged_g` exceeds `declared_g` by more than max(`grams`, `percent` % of `declared_g`). */
export function beyondTolerance(
	declared_g: number,
	charged_g: number,
	tolerance: { grams: number; percent: number },
): boolean {
	const allowed = Math.max(tolerance.grams, Math.ceil((declared_g * tolerance.percent) / 100));
	return charged_g - declared_g > allowed;
}

/** The verdict of one line: an exception, within tolerance, same slab, or a discrepancy to open. */
type Verdict =
	| { kind: "exception"; exception: WeightExceptionKind; detail: string }
	| { kind: "within_tolerance" }
	| { kind: "same_slab" }
	| { kind: "open"; opening: NewDiscrepancy };

/** Timeout (ms) of each remote call made while a weight file is priced. */
const CALL_TIMEOUT_MS = 10_000;

/**
 * A live booked shipment by its AWB as booking knows it (account, order,
 * courier), or null: for an AWB whose first status change has not reached
 * billing yet.
 */
async function bookedShipment(via: Caller, awb_number: string): Promise<KnownShipment | null> {
	const opts = { timeout: CALL_TIMEOUT_MS };
	const owner = await call(via, "booking.awbOwner", { awb_number }, opts);
	if (!owner) return null;
	const shipment = await call(via, "booking.getShipment", owner, opts);
	return shipment && shipment.awb_number === awb_number
		? { awb_number, sender_id: owner.sender_id, order_id: owner.order_id, logistic_id: shipment.logistic_id }
		: null;
}

/**
 * Prices one readable line whose AWB is a shipment of ours: tolerance first
 * (no call when within it), then both weights on the shipment's lane.
 */
async function verdictOf(
	via: Caller,
	line: WeightLine,
	ship: { sender_id: number; order_id: number; logistic_id: number; awb_number: string },
	tolerance: { grams: number; percent: number },
): Promise<Verdict> {
	const opts = { timeout: CALL_TIMEOUT_MS };
	const order: OrderRecord | null = await call(
		via,
		"intake.getOrder",
		{ sender_id: ship.sender_id, order_id: ship.order_id },
		opts,
	);
	if (!order)
		return {
			kind: "exception",
			exception: "unknown_awb",
			detail: `the order of AWB ${ship.awb_number} is gone`,
		};
	const declaredDims = dimensionsOf(order);
	const declared_g = billableGrams(kgToGrams(order.product.physical_weight), declaredDims);
	const charged_g = billableGrams(line.charged_g, line.dims);
	if (!beyondTolerance(declared_g, charged_g, tolerance)) return { kind: "within_tolerance" };
	const warehouse = order.pickup_address_id
		? await call(
				via,
				"warehouses.get",
				{ sender_id: ship.sender_id, id: order.pickup_address_id, include_retired: true },
				opts,
			)
		: null;
	if (!warehouse)
		return {
			kind: "exception",
			exception: "not_priced",
			detail: `the pickup warehouse of AWB ${ship.awb_number} is unknown`,
		};
	const measured = { weight: line.charged_g / 1000, dims: line.dims };
	const [ours, theirs] = await Promise.all([
		call(via, "rates.quote", laneOf(order, warehouse, ship.logistic_id), opts),
		call(via, "rates.quote", laneOf(order, warehouse, ship.logistic_id, measured), opts),
	]);
	const a = ours.data.find((q) => q.logistic_id === ship.logistic_id);
	const b = theirs.data.find((q) => q.logistic_id === ship.logistic_id);
	if (!a || !b) {
		const why = [...ours.dropped_couriers, ...theirs.dropped_couriers].find(
			(d) => d.logistic_id === ship.logistic_id,
		)?.reason;
		return {
			kind: "exception",
			exception: "not_priced",
			detail: `courier ${ship.logistic_id} does not price this lane now${why ? ` (${why})` : ""}`,
		};
	}
	const extra = toPaise(b.total) - toPaise(a.total);
	if (extra <= 0) return { kind: "same_slab" };
	const dimsArray = (d: Dimensions | null) => (d ? [d.length, d.width, d.height] : null);
	return {
		kind: "open",
		opening: {
			sender_id: ship.sender_id,
			order_id: ship.order_id,
			awb_number: ship.awb_number,
			logistic_id: ship.logistic_id,
			declared_g: kgToGrams(order.product.physical_weight),
			declared_dims_cm: dimsArray(declaredDims),
			declared_chargeable_g: kgToGrams(a.weight),
			charged_g: line.charged_g,
			charged_dims_cm: dimsArray(line.dims),
			charged_chargeable_g: kgToGrams(b.weight),
			extra_paise: extra,
		},
	};
}

/** The merchant event of an opened discrepancy (`weight_discrepancy.opened`; webhooks' `data`). */
export function openedEvent(d: DiscrepancyRow): MerchantEvent {
	const view = discrepancyView(d, []);
	return {
		event_id: `weight_discrepancy.opened:${d.id}`,
		type: "weight_discrepancy.opened",
		sender_id: d.sender_id,
		order_id: d.order_id,
		occurred_at: d.opened_at.toISOString(),
		data: {
			discrepancy_id: d.id,
			awb_number: d.awb_number,
			logistic_id: d.logistic_id,
			status: "open",
			declared_weight: view.declared.chargeable_weight,
			charged_weight: view.charged.chargeable_weight,
			extra_charge: view.extra_charge,
			respond_by: view.respond_by,
		},
	};
}

/**
 * `billing.reconcileWeights` (`POST /v1/ops/weight-reports`): reads a
 * courier's weight CSV, prices the lines beyond tolerance, and records the
 * file with its discrepancies in one transaction (./discrepancy-store.ts
 * `recordWeightReport`). The same file again answers its stored outcome.
 * `logistic_id`: the file's courier, when known (another courier's AWB is `unknown_awb`).
 * @throws 400 `invalid_weight_file` (larger than 8 MB, header, not CSV); a remote call failing (503 at the gateway:
 *   nothing is recorded, the file may be sent again)
 */
export async function reconcileWeights(
	deps: BillingDeps,
	via: Caller,
	csv: string,
	logistic_id: number | null,
): Promise<WeightReport> {
	if (Buffer.byteLength(csv) > MAX_WEIGHT_FILE_BYTES)
		throw fail("invalid_weight_file", `larger than ${MAX_WEIGHT_FILE_BYTES} bytes`);
	const sha256 = createHash("sha256").update(csv).digest("hex");
	const before = await storedWeightReport(deps.db, sha256);
	if (before)
		return { ...(before.outcome as unknown as WeightReport), report_id: before.id, duplicate_file: true };
	const lines = parseWeightFile(csv);
	const awbs = [...new Set(lines.flatMap((l) => (l.awb_number && !l.invalid ? [l.awb_number] : [])))];
	const known = await knownShipments(deps.db, awbs);
	const reported = await reportedAwbs(deps.db, awbs);
	// AWBs billing has not heard of on the status channel yet: booking knows every live booked one
	const asked = await pMap(
		awbs.filter((a) => !known.has(a) && !reported.has(a)),
		async (awb) => [awb, await bookedShipment(via, awb)] as const,
		{ concurrency: PRICING_CONCURRENCY },
	);
	for (const [awb, s] of asked) if (s) known.set(awb, s);
	const tolerances = await tolerancesOf(deps.db, [...new Set([...known.values()].map((k) => k.sender_id))]);
	const seen = new Set<string>();
	const verdicts = await pMap(
		lines,
		async (l): Promise<Verdict> => {
			const ex = (exception: WeightExceptionKind, detail: string): Verdict => ({
				kind: "exception",
				exception,
				detail,
			});
			if (l.invalid || !l.awb_number) return ex("invalid_line", l.invalid ?? "unreadable");
			const awb = l.awb_number;
			if (seen.has(awb)) return ex("duplicate", `AWB ${awb} is on an earlier line of this file`);
			seen.add(awb);
			const s = known.get(awb);
			if (!s) {
				if (reported.has(awb))
					return ex("duplicate", `a weight discrepancy was opened for AWB ${awb} before`);
				return ex("unknown_awb", `no shipment has AWB ${awb}`);
			}
			if (logistic_id !== null && s.logistic_id !== logistic_id)
				return ex("unknown_awb", `AWB ${awb} is a shipment of courier ${s.logistic_id}, not ${logistic_id}`);
			if (reported.has(awb)) return ex("duplicate", `a weight discrepancy was opened for AWB ${awb} before`);
			return verdictOf(via, l, s, tolerances.get(s.sender_id) ?? { grams: 50, percent: 10 });
		},
		{ concurrency: PRICING_CONCURRENCY },
	);
	const openings = verdicts.flatMap((v) => (v.kind === "open" ? [v.opening] : []));
	const count = (k: Verdict["kind"]) => verdicts.filter((v) => v.kind === k).length;
	const out = await recordWeightReport(deps.db, {
		sha256,
		logistic_id,
		lines: lines.length,
		openings,
		respondDays: DISCREPANCY_RESPONSE_DAYS,
		eventOf: openedEvent,
		outcomeOf: (opened, skipped) => {
			const exceptions: WeightExceptionLine[] = [];
			lines.forEach((l, i) => {
				const v = verdicts[i];
				if (v.kind === "exception")
					exceptions.push({
						line_no: l.line_no,
						awb_number: l.awb_number,
						kind: v.exception,
						detail: v.detail,
					});
				else if (v.kind === "open" && l.awb_number && skipped.has(l.awb_number))
					exceptions.push({
						line_no: l.line_no,
						awb_number: l.awb_number,
						kind: "duplicate",
						detail: `a weight discrepancy was opened for AWB ${l.awb_number} meanwhile`,
					});
			});
			return {
				lines: lines.length,
				opened: opened.length,
				opened_amount: toRupees(opened.reduce((sum, d) => sum + d.extra_paise, 0)),
				within_tolerance: count("within_tolerance"),
				same_slab: count("same_slab"),
				exceptions: exceptions.length,
				exception_lines: exceptions.slice(0, MAX_EXCEPTION_LINES),
			};
		},
	});
	if ((out.outcome as { opened?: number }).opened)
		deps.logger.info("weight file opened discrepancies", {
			report_id: out.id,
			...out.outcome,
			exception_lines: undefined,
		});
	return {
		...(out.outcome as unknown as WeightReport),
		report_id: out.id,
		duplicate_file: out.duplicate,
	};
}

/** kg of grams (3 decimals). */
const kg = (g: number) => g / 1000;

/** One side's weight as shown. */
function measured(dead_g: number, dims: number[] | null, chargeable_g: number): MeasuredWeight {
	return {
		weight: kg(dead_g),
		length: dims?.[0] ?? null,
		width: dims?.[1] ?? null,
		height: dims?.[2] ?? null,
		chargeable_weight: kg(chargeable_g),
	};
}

/** A discrepancy as the API shows it (rupees, kg, cm, UTC). */
export function discrepancyView(d: DiscrepancyRow, images: ImageRow[]): WeightDiscrepancy {
	return {
		id: d.id,
		awb_number: d.awb_number,
		order_id: d.order_id,
		logistic_id: d.logistic_id,
		status: d.status,
		declared: measured(d.declared_g, d.declared_dims_cm, d.declared_chargeable_g),
		charged: measured(d.charged_g, d.charged_dims_cm, d.charged_chargeable_g),
		slab_difference: kg(d.charged_chargeable_g - d.declared_chargeable_g),
		extra_charge: toRupees(d.extra_paise),
		opened_at: d.opened_at.toISOString(),
		respond_by: d.respond_by.toISOString(),
		dispute_reason: d.dispute_reason,
		disputed_at: d.disputed_at ? d.disputed_at.toISOString() : null,
		images: images.map((i) => ({
			n: i.n,
			content_type: i.content_type,
			bytes: i.size,
			width: i.width,
			height: i.height,
			url: `/v1/weight-discrepancies/${d.id}/images/${i.n}`,
		})),
		resolution_note: d.resolution_note,
		closed_at: d.closed_at ? d.closed_at.toISOString() : null,
	};
}

/** Cursor kind of the discrepancy list. */
const KIND = "weight_discrepancies";

/**
 * `GET /v1/weight-discrepancies`: query `limit` (1–1000, default 20),
 * `status` (one of {@link DISCREPANCY_STATUSES}), `from` / `to` (IST days
 * `YYYY-MM-DD`, inclusive, on the opening date), `awb_number`, `cursor` (a
 * `nextCursor` of the same filters). Newest first.
 * @throws 400 `validation_failed` (limit, status, from, to, awb_number); 400 `cursor: unrecognised shape`
 */
export async function discrepancyList(
	deps: BillingDeps,
	sender_id: number,
	params: HttpParams,
): Promise<DiscrepancyPage> {
	const limit = pageLimit(params.limit, DISCREPANCIES_DEFAULT_LIMIT, DISCREPANCIES_MAX_LIMIT);
	const bad: string[] = [];
	const text = (k: string) => {
		const v = params[k];
		return typeof v === "string" && v !== "" ? v : null;
	};
	const status = text("status");
	if (status !== null && !(DISCREPANCY_STATUSES as readonly string[]).includes(status))
		bad.push(`status: must be one of ${DISCREPANCY_STATUSES.join(", ")}`);
	const from = text("from");
	const to = text("to");
	if (from !== null && !isCalendarDay(from)) bad.push("from: must be a date YYYY-MM-DD");
	if (to !== null && !isCalendarDay(to)) bad.push("to: must be a date YYYY-MM-DD");
	if (from && to && isCalendarDay(from) && isCalendarDay(to) && from > to)
		bad.push("to: must not be before from");
	const awb = text("awb_number");
	if (awb !== null && awb.length > 64) bad.push("awb_number: at most 64 characters");
	if (bad.length) throw validationFailed(bad);
	const key = [status, from, to, awb].map((x) => x ?? "").join("|");
	let before: number | null = null;
	if (params.cursor !== undefined && params.cursor !== "") {
		const ours = (p: CursorPosition): p is { s: number; id: number; f: string } =>
			p.s === sender_id && typeof p.id === "number" && Number.isSafeInteger(p.id) && p.id > 0 && p.f === key;
		before = decodeCursor(KIND, params.cursor, ours).id;
	}
	const page = await discrepancyPage(deps.db, sender_id, before, limit, {
		status: status as DiscrepancyStatus | null,
		from: from ? istMidnight(from) : null,
		to: to ? istMidnight(addDays(to, 1)) : null,
		awb_number: awb,
	});
	const images = await imagesOf(
		deps.db,
		page.rows.map((r) => r.id),
	);
	const last = page.rows.at(-1);
	return {
		data: page.rows.map((r) => discrepancyView(r, images.get(r.id) ?? [])),
		pagination: {
			mode: "cursor",
			limit,
			nextCursor: page.more && last ? encodeCursor(KIND, { s: sender_id, id: last.id, f: key }) : null,
		},
	};
}

/** A positive integer path parameter, or 400 `validation_failed` `<name>: must be a positive integer`. */
function idOf(raw: unknown, name = "id"): number {
	const id = parsePositiveInt(raw);
	if (id === null) throw validationFailed([`${name}: must be a positive integer`]);
	return id;
}

/** The row with its images, as shown. */
async function shown(deps: BillingDeps, d: DiscrepancyRow): Promise<WeightDiscrepancy> {
	return discrepancyView(d, (await imagesOf(deps.db, [d.id])).get(d.id) ?? []);
}

/**
 * `GET /v1/weight-discrepancies/{id}`: the sender's discrepancy.
 * @throws 400 `validation_failed` (id); 404 `discrepancy_not_found` (missing and another account's alike)
 */
export async function discrepancyDetail(
	deps: BillingDeps,
	sender_id: number,
	rawId: unknown,
): Promise<WeightDiscrepancy> {
	const d = await discrepancyOf(deps.db, sender_id, idOf(rawId));
	if (!d) throw fail("discrepancy_not_found");
	return shown(deps, d);
}

/**
 * `POST /v1/weight-discrepancies/{id}/accept`: the merchant accepts the
 * courier's weight; the hold stays as the charge.
 * @throws 400 `validation_failed` (id); 404 `discrepancy_not_found`; 409 `discrepancy_not_open`
 */
export async function acceptDiscrepancy(
	deps: BillingDeps,
	sender_id: number,
	rawId: unknown,
): Promise<WeightDiscrepancy> {
	const id = idOf(rawId);
	const r = await acceptOpen(deps.db, sender_id, id);
	if (!r) throw fail("discrepancy_not_found");
	if ("current" in r)
		throw failWith("discrepancy_not_open", { status: r.current.status }, id, r.current.status);
	return shown(deps, r.row);
}

/** The dispute form's limits: one `reason` field, 1–5 `images` files of ≤ 5 MB. */
const DISPUTE_FORM = {
	maxFiles: DISPUTE_MAX_IMAGES,
	maxFileBytes: DISPUTE_MAX_IMAGE_BYTES,
	maxBodyBytes: DISPUTE_MAX_IMAGES * DISPUTE_MAX_IMAGE_BYTES + 64 * 1024,
	fields: 4,
	fieldNameSize: 100,
	fieldSize: 4 * DISPUTE_MAX_REASON,
	parts: DISPUTE_MAX_IMAGES + 4,
};

/**
 * `POST /v1/weight-discrepancies/{id}/dispute` (multipart/form-data): field
 * `reason` (10–1000 characters, trimmed) and 1–5 file parts `images` (JPEG
 * or PNG by their bytes, ≤ 5 MB each; stored without metadata, ./images.ts).
 * The whole form is read before anything is decided; nothing is stored unless
 * all of it is accepted.
 * @throws 400 `validation_failed` (id); 400 `invalid_dispute` (form, reason, images); 413 `image_too_large`;
 *   404 `discrepancy_not_found`; 409 `discrepancy_not_open`
 */
export async function disputeDiscrepancy(
	deps: BillingDeps,
	sender_id: number,
	params: { path?: Record<string, string>; content_type: string },
	stream: Readable | null,
): Promise<WeightDiscrepancy> {
	const id = parsePositiveInt(params.path?.id);
	if (!stream) throw fail("invalid_dispute", "no multipart/form-data body");
	const form = await readMultipartForm(stream, params.content_type, {
		...DISPUTE_FORM,
		tooLarge: () =>
			failWith("image_too_large", { limit_bytes: DISPUTE_MAX_IMAGE_BYTES }, DISPUTE_MAX_IMAGE_BYTES),
		invalid: (why) => fail("invalid_dispute", `not a well-formed multipart/form-data body (${why})`),
	});
	if (id === null) throw validationFailed(["id: must be a positive integer"]);
	const reasons = form.fields.filter(([k]) => k === "reason").map(([, v]) => v.trim());
	if (reasons.length !== 1) throw fail("invalid_dispute", "send exactly one reason field");
	const reason = reasons[0];
	if (reason.length < 10 || reason.length > DISPUTE_MAX_REASON)
		throw fail("invalid_dispute", `reason must be 10 to ${DISPUTE_MAX_REASON} characters`);
	const files = form.files;
	if (files.some((f) => f.fieldname !== "images"))
		throw fail("invalid_dispute", "file parts must be named images");
	if (files.length < 1) throw fail("invalid_dispute", "attach 1 to 5 images (JPEG or PNG) as images");
	const images = [];
	for (const [i, f] of files.entries()) images.push(await cleanImage(f.bytes, i + 1));
	const r = await disputeOpen(deps.db, sender_id, id, reason, images);
	if (!r) throw fail("discrepancy_not_found");
	if ("current" in r)
		throw failWith("discrepancy_not_open", { status: r.current.status }, id, r.current.status);
	deps.logger.info("weight discrepancy disputed", { discrepancy_id: id, sender_id, images: images.length });
	return shown(deps, r.row);
}

/**
 * `POST /v1/ops/weight-discrepancies/{id}/resolve` `{outcome: "won"|"lost", note?}`:
 * ops' decision on a dispute; `won` refunds the hold. The same outcome again
 * answers the discrepancy unchanged.
 * @throws 400 `validation_failed` (id); 404 `discrepancy_not_found`; 409 `discrepancy_not_disputed`
 */
export async function resolveDiscrepancy(
	deps: BillingDeps,
	rawId: unknown,
	outcome: "won" | "lost",
	note: string | null,
): Promise<WeightDiscrepancy> {
	const id = idOf(rawId);
	const r = await resolveDisputed(deps.db, id, outcome, note);
	if (!r) throw fail("discrepancy_not_found");
	if ("current" in r)
		throw failWith("discrepancy_not_disputed", { status: r.current.status }, id, r.current.status);
	if (!r.again) deps.logger.info("weight discrepancy resolved", { discrepancy_id: id, outcome });
	return shown(deps, r.row);
}

/**
 * Image `n` of a discrepancy's dispute: of `sender_id`'s (merchant route) or
 * of any account's (null: ops).
 * @throws 400 `validation_failed` (id, n); 404 `discrepancy_not_found`
 */
export async function disputeImage(
	deps: BillingDeps,
	sender_id: number | null,
	rawId: unknown,
	rawN: unknown,
): Promise<{ content_type: string; bytes: Buffer }> {
	const id = idOf(rawId);
	const n = idOf(rawN, "n");
	const img = n <= DISPUTE_MAX_IMAGES ? await imageBytes(deps.db, sender_id, id, n) : null;
	if (!img) throw fail("discrepancy_not_found");
	return img;
}

/** `PUT /v1/ops/accounts/{sender_id}/weight-tolerance` `{grams, percent}`: sets an account's tolerance. */
export async function weightTolerance(
	deps: BillingDeps,
	rawSender: unknown,
	grams: number,
	percent: number,
): Promise<WeightTolerance> {
	const sender_id = idOf(rawSender, "sender_id");
	await setTolerance(deps.db, sender_id, grams, percent);
	return { sender_id, grams, percent };
}

/** The auto-accept job: open discrepancies past `respond_by` at `now` become `auto_accepted`. */
export async function autoAccept(deps: BillingDeps, now: Date = new Date()): Promise<AutoAcceptResult> {
	const auto_accepted = await autoAcceptDue(deps.db, now);
	if (auto_accepted) deps.logger.info("weight discrepancies auto-accepted", { auto_accepted });
	return { auto_accepted };
}
