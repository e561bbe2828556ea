/**
 * Shared setup of the `rates` service specs (spec §4.2 serviceable, §2.7,
 * §7): one broker running ["pincode", "rates"] with the sandbox seed per spec
 * file, against the real PostgreSQL of the test run, and the seeded rows read
 * back from the database so every spec computes the expected charges
 * independently of the service.
 */
import { strict as assert } from "node:assert";
import type { ServiceBroker } from "moleculer";
import type { Quote, QuoteResult } from "../../../lib/contracts";
import { getSequelize, select } from "../../../lib/platform/db";
import { as, newSender, startBroker } from "../../helpers/broker";
import { callRaw } from "../../helpers/call";

/** A seeded rate card as stored (kg, paise). */
export interface Card {
	first_slab_kg: number;
	first_slab_paise: number;
	additional_slab_kg: number;
	additional_slab_paise: number;
	min_chargeable_kg: number;
}

/** Exactly the keys of one quote, sorted: §2.7's and ours `edd`, `edd_range` (issue 28). */
export const QUOTE_KEYS = [
	"cod_charge",
	"courier_name",
	"edd",
	"edd_range",
	"freight_charge",
	"logistic_id",
	"performance",
	"rto_charge",
	"shipping_charge_tax",
	"total",
	"weight",
	"zone",
];

/** The seeded rows, read back from the database by {@link useRates}. */
export const seeded = {
	/** key `${logistic_id}:${zone}:${direction}` */
	cards: new Map<string, Card>(),
	cod: new Map<number, { flat_paise: number; percent_bp: number }>(),
	/** RTO basis points per courier */
	rto: new Map<number, number>(),
	/** weight limit (kg) per courier, null = none */
	maxKg: new Map<number, number | null>(),
};

async function readSeeded(): Promise<void> {
	const db = getSequelize();
	seeded.cards.clear();
	seeded.cod.clear();
	seeded.rto.clear();
	seeded.maxKg.clear();
	for (const r of await select<any>(db, "SELECT * FROM rates.rate_cards"))
		seeded.cards.set(`${r.logistic_id}:${String(r.zone).trim()}:${r.direction}`, {
			first_slab_kg: Number(r.first_slab_kg),
			first_slab_paise: Number(r.first_slab_paise),
			additional_slab_kg: Number(r.additional_slab_kg),
			additional_slab_paise: Number(r.additional_slab_paise),
			min_chargeable_kg: Number(r.min_chargeable_kg),
		});
	for (const r of await select<any>(db, "SELECT * FROM rates.cod_config"))
		seeded.cod.set(r.logistic_id, { flat_paise: Number(r.flat_paise), percent_bp: r.percent_bp });
	for (const r of await select<any>(db, "SELECT * FROM rates.rto_rules"))
		seeded.rto.set(r.logistic_id, r.percent_bp);
	for (const r of await select<any>(db, "SELECT logistic_id, max_weight_kg FROM rates.couriers"))
		seeded.maxKg.set(r.logistic_id, r.max_weight_kg === null ? null : Number(r.max_weight_kg));
}

/** What a spec file gets from {@link useRates} (filled in its `before`). */
export interface RatesContext {
	broker: ServiceBroker;
	/** a fresh merchant for the authenticated calls */
	sender: number;
	/** `GET /v1/shipping/serviceable` as the merchant (params as query strings) */
	serviceable(params: Record<string, unknown>): Promise<QuoteResult>;
}

/**
 * Starts ["pincode", "rates"] (SANDBOX=1, so the sandbox couriers are seeded)
 * before the tests of the calling `describe` and stops it after; reads the
 * seeded rows into {@link seeded}.
 */
export function useRates(): RatesContext {
	const t: RatesContext = {
		broker: undefined as unknown as ServiceBroker, // set in before()
		sender: 0,
		// query strings as the gateway passes them (the contract types the validated query)
		serviceable: (params) => callRaw(t.broker, "rates.serviceable", params, as(t.sender)),
	};
	before(async () => {
		process.env.SANDBOX = "1";
		t.broker = await startBroker(["pincode", "rates"]);
		t.sender = newSender();
		await readSeeded();
	});
	after(async () => {
		await t.broker?.stop();
	});
	return t;
}

/** Expected charges, computed independently from the seeded rows (paise → rupees). */
export function expected(
	id: number,
	zone: string,
	opts: { kg: number; codAmount?: number; reverse?: boolean },
): { weight: number; freight: number; cod: number; tax: number; total: number; rto: number } {
	const card = seeded.cards.get(`${id}:${zone}:${opts.reverse ? "reverse" : "forward"}`);
	assert.ok(card, `seeded card ${id}:${zone}`);
	const w = Math.max(opts.kg, card.min_chargeable_kg);
	let slabs = 0;
	if (w > card.first_slab_kg + 1e-9)
		slabs = Math.ceil((w - card.first_slab_kg) / card.additional_slab_kg - 1e-9);
	const weight = Math.round((card.first_slab_kg + slabs * card.additional_slab_kg) * 1000) / 1000;
	const freight = card.first_slab_paise + slabs * card.additional_slab_paise;
	let codP = 0;
	if (opts.codAmount !== undefined && !opts.reverse) {
		const c = seeded.cod.get(id)!;
		codP = Math.max(c.flat_paise, Math.round((opts.codAmount * 100 * c.percent_bp) / 10000));
	}
	const tax = Math.round((freight + codP) * 0.18);
	const rtoP = opts.reverse ? 0 : Math.round((freight * (seeded.rto.get(id) ?? 10000)) / 10000);
	return {
		weight,
		freight: freight / 100,
		cod: codP / 100,
		tax: tax / 100,
		total: (freight + codP + tax) / 100,
		rto: rtoP / 100,
	};
}

/** True when the seeded flat COD fee of courier `id` beats its percentage of `amount` rupees. */
export function flatWins(id: number, amount: number): boolean {
	const c = seeded.cod.get(id)!;
	return c.flat_paise > (amount * 100 * c.percent_bp) / 10000;
}

/** Asserts that quote `q` is courier `id` in `zone` with the charges {@link expected} computes. */
export function assertPriced(
	q: Quote | undefined,
	id: number,
	zone: string,
	opts: { kg: number; codAmount?: number; reverse?: boolean },
): void {
	const e = expected(id, zone, opts);
	assert.ok(q, `a quote of courier ${id}`);
	assert.equal(q.logistic_id, id);
	assert.equal(q.zone, zone);
	assert.equal(q.weight, e.weight, "chargeable weight");
	assert.equal(q.freight_charge, e.freight, "freight");
	assert.equal(q.cod_charge, e.cod, "cod");
	assert.equal(q.shipping_charge_tax, e.tax, "gst");
	assert.equal(q.total, e.total, "total");
	assert.equal(q.rto_charge, e.rto, "rto");
}

/** The quote of courier `id`, if priced. */
export const byId = (res: QuoteResult, id: number) => res.data.find((q) => q.logistic_id === id);

/** The dropped entry of courier `id`, if dropped. */
export const droppedOf = (res: QuoteResult, id: number) =>
	res.dropped_couriers.find((d) => d.logistic_id === id);
