/**
 * `simulator.overweigh` and `simulator.weightFile` (lib/simulator/weights.ts):
 * the sandbox courier "measures" a package heavier than declared, and its
 * weight (billing) CSV charges that weight. Real simulator on a broker and
 * PostgreSQL: packages are booked through the simulator's Delhivery create
 * endpoint (`POST /delhivery/api/cmu/create.json`) and one through the
 * sandbox courier `sbx-express`'s (`POST /couriers/sbx-express/api/cmu/create.json`),
 * one cancelled through the Delhivery cancel endpoint; the file must hold
 * exactly the not-cancelled packages with the recorded weight, else the
 * declared one. Every assertion on the whole file restricts it to this run's
 * AWBs (other specs of the run share the simulator's tables). Then the CSV
 * builder alone, on rows given by hand.
 */
import assert from "node:assert/strict";
import type { ServiceBroker } from "moleculer";
import type { ChargedWeight } from "../../lib/contracts";
import type { WeightRow } from "../../lib/simulator/store";
import {
	centimetres,
	gramsToKilograms,
	kilograms,
	WEIGHT_FILE_COLUMNS,
	weightCsv,
} from "../../lib/simulator/weights";
import { callAs, callRaw } from "../helpers/call";
import {
	type SandboxCourierClient,
	type SandboxDims,
	sandboxCourierClient,
	startSandboxSimulator,
	stopSandboxSimulator,
} from "../helpers/sandbox-courier";

const run = Math.random().toString(36).slice(2, 8);
const HEADER = "awb_number,charged_weight_kg,length_cm,width_cm,height_cm,weighed_on";
const IST_MS = 330 * 60_000;
const DAY = "2025-03-05";
/** this run's pickup location, at each courier */
const WAREHOUSE = `WH-WGT-${run}`;

/** Error of a refused call: a 422 naming `field` in its message or its validation data. */
const invalid =
	(field: string) =>
	(err: { code?: number; message?: string; data?: { field?: string }[] }): boolean =>
		err.code === 422 &&
		((err.message ?? "").includes(field) || (err.data ?? []).some((d) => d.field === field));

describe("simulator.overweigh / simulator.weightFile: the sandbox couriers' weight CSV", function () {
	this.timeout(20_000);
	let broker: ServiceBroker;
	let courier: SandboxCourierClient;
	/** AWBs of this run's packages */
	const awb = { plain: "", dims: "", over: "", overKeepsDims: "", cancelled: "", express: "" };
	/** what overweigh answered in `before` */
	const answers: { first?: ChargedWeight; second?: ChargedWeight; keepsDims?: ChargedWeight } = {};

	/**
	 * Books one prepaid shipment (reference `ref`) of `grams` grams (and `dims`
	 * when given) at the courier under `prefix`; answers its waybill.
	 */
	function book(prefix: string, ref: string, grams: number, dims?: SandboxDims): Promise<string> {
		return courier.book(prefix, {
			warehouse: WAREHOUSE,
			order: `wgt-${run}-${ref}`,
			client_order_no: `ORD-${ref}`,
			payment_mode: "Prepaid",
			cod_amount: 0,
			weight: grams,
			dims,
		});
	}

	/** The weight file of `params`, its package lines only (the header checked). */
	async function lines(params: Parameters<typeof weightFile>[0]): Promise<string[]> {
		const file = await weightFile(params);
		const all = file.csv.split("\n");
		assert.equal(all[0], HEADER);
		assert.equal(all.at(-1), "", "the file ends with a line end");
		assert.equal(file.lines, all.length - 2);
		return all.slice(1, -1);
	}

	function weightFile(params: { courier_code?: string; awb_numbers?: string[]; weighed_on?: string } = {}) {
		return callAs(broker, "simulator.weightFile", params);
	}

	before(async () => {
		const sim = await startSandboxSimulator();
		broker = sim.broker;
		courier = sandboxCourierClient(sim.root);

		await courier.registerWarehouse("/delhivery", WAREHOUSE);
		await courier.registerWarehouse("/couriers/sbx-express", WAREHOUSE);
		awb.plain = await book("/delhivery", "plain", 750);
		awb.dims = await book("/delhivery", "dims", 1200, {
			shipment_length: 30,
			shipment_width: 25.5,
			shipment_height: 10,
		});
		awb.over = await book("/delhivery", "over", 500);
		awb.overKeepsDims = await book("/delhivery", "keeps", 2000, {
			shipment_length: 20,
			shipment_width: 15,
			shipment_height: 10,
		});
		awb.cancelled = await book("/delhivery", "cancelled", 800);
		awb.express = await book("/couriers/sbx-express", "express", 1000, {
			shipment_length: 12,
			shipment_width: 10,
			shipment_height: 8,
		});

		const cancel = await courier.cancel("/delhivery", awb.cancelled);
		assert.equal(cancel.status, true);

		// measured twice: the second measurement replaces the first
		answers.first = await callAs(broker, "simulator.overweigh", {
			waybill: awb.over,
			charged_weight_kg: 0.9,
		});
		answers.second = await callAs(broker, "simulator.overweigh", {
			waybill: awb.over,
			charged_weight_kg: 1.25,
			length_cm: 40,
			width_cm: 30,
			height_cm: 20.25,
		});
		// heavier, no dimensions measured: the declared ones stay on the file
		answers.keepsDims = await callAs(broker, "simulator.overweigh", {
			waybill: awb.overKeepsDims,
			charged_weight_kg: 2.5,
		});
		// a cancelled package can be weighed, but no file charges it
		await callAs(broker, "simulator.overweigh", { waybill: awb.cancelled, charged_weight_kg: 3 });
	});

	after(() => stopSandboxSimulator(broker));

	/** Every AWB of this run. */
	const all = () => Object.values(awb);

	it("overweigh records the courier's measurement (a later one replaces it) and answers it as stored", () => {
		assert.deepEqual(answers.first, {
			waybill: awb.over,
			charged_weight_kg: 0.9,
			length_cm: null,
			width_cm: null,
			height_cm: null,
		});
		assert.deepEqual(answers.second, {
			waybill: awb.over,
			charged_weight_kg: 1.25,
			length_cm: 40,
			width_cm: 30,
			height_cm: 20.25,
		});
		assert.deepEqual(answers.keepsDims, {
			waybill: awb.overKeepsDims,
			charged_weight_kg: 2.5,
			length_cm: null,
			width_cm: null,
			height_cm: null,
		});
	});

	it("overweigh stores the weight to the gram and dimensions to two decimals", async () => {
		// on the cancelled package: no file charges it, so the other tests' lines stay as they are
		const stored = await callAs(broker, "simulator.overweigh", {
			waybill: awb.cancelled,
			charged_weight_kg: 1.0004,
			length_cm: 10.004,
			width_cm: 10.005,
			height_cm: 499.999,
		});
		assert.deepEqual(stored, {
			waybill: awb.cancelled,
			charged_weight_kg: 1,
			length_cm: 10,
			width_cm: 10.01,
			height_cm: 500,
		});
	});

	it("the file charges the recorded weight, else the declared one; dims recorded, else declared, else empty; no cancelled package", async () => {
		const got = await lines({ awb_numbers: all(), weighed_on: DAY });
		const want = [
			`${awb.plain},0.750,,,,${DAY}`,
			`${awb.dims},1.200,30,25.5,10,${DAY}`,
			`${awb.over},1.250,40,30,20.25,${DAY}`,
			`${awb.overKeepsDims},2.500,20,15,10,${DAY}`,
			`${awb.express},1.000,12,10,8,${DAY}`,
		].sort();
		assert.deepEqual(got, want);
		assert.ok(!got.some((l) => l.startsWith(awb.cancelled)), "the cancelled package is not charged");
	});

	it("awb_numbers restricts the file to those AWBs, ordered by AWB", async () => {
		const got = await lines({ awb_numbers: [awb.overKeepsDims, awb.cancelled, awb.plain], weighed_on: DAY });
		assert.deepEqual(
			got,
			[`${awb.plain},0.750,,,,${DAY}`, `${awb.overKeepsDims},2.500,20,15,10,${DAY}`].sort(),
		);
	});

	it("courier_code restricts the file to that courier; the date defaults to today in IST", async () => {
		const today = new Date(Date.now() + IST_MS).toISOString().slice(0, 10);
		const express = await weightFile({ courier_code: "sbx-express", awb_numbers: all() });
		assert.deepEqual(express, { csv: `${HEADER}\n${awb.express},1.000,12,10,8,${today}\n`, lines: 1 });

		const delhivery = await lines({ courier_code: "sbx-delhivery", awb_numbers: all(), weighed_on: DAY });
		assert.deepEqual(
			delhivery.map((l) => l.split(",")[0]),
			[awb.plain, awb.dims, awb.over, awb.overKeepsDims].sort(),
		);

		// no filter at all: this run's live packages are in, the cancelled one is not
		const every = (await lines({})).map((l) => l.split(","));
		const mine = every.filter(([a]) => all().includes(a));
		assert.deepEqual(
			mine.map(([a]) => a).sort(),
			all()
				.filter((a) => a !== awb.cancelled)
				.sort(),
		);
		for (const cells of every) assert.equal(cells[5], today);
	});

	it("nothing to charge: the header alone, lines 0", async () => {
		assert.deepEqual(await weightFile({ awb_numbers: [awb.cancelled] }), { csv: `${HEADER}\n`, lines: 0 });
		assert.deepEqual(await weightFile({ courier_code: "sbx-surface", awb_numbers: all() }), {
			csv: `${HEADER}\n`,
			lines: 0,
		});
		assert.deepEqual(await weightFile({ awb_numbers: [`NOPE-${run}`] }), { csv: `${HEADER}\n`, lines: 0 });
	});

	it("refuses a weighed_on that is not a calendar day and an empty awb_numbers", async () => {
		await assert.rejects(weightFile({ weighed_on: "2025-02-30" }), invalid("weighed_on"));
		await assert.rejects(
			weightFile({ weighed_on: "05-03-2025" }),
			(err: { code?: number }) => err.code === 422,
		);
		await assert.rejects(weightFile({ awb_numbers: [] }), (err: { code?: number }) => err.code === 422);
	});

	it("overweigh refuses an unknown waybill (404 not_found), some dimensions only, and weights or sizes out of range", async () => {
		await assert.rejects(
			callAs(broker, "simulator.overweigh", { waybill: `NOPE-${run}`, charged_weight_kg: 1 }),
			(err: { code?: number; type?: string }) => err.code === 404 && err.type === "not_found",
		);
		await assert.rejects(
			callAs(broker, "simulator.overweigh", { waybill: awb.dims, charged_weight_kg: 5, length_cm: 50 }),
			(err: { code?: number; message?: string; data?: { field?: string }[] }) =>
				invalid("width_cm")(err) && (err.data ?? []).map((d) => d.field).join() === "width_cm,height_cm",
		);
		await assert.rejects(
			callAs(broker, "simulator.overweigh", {
				waybill: awb.dims,
				charged_weight_kg: 5,
				length_cm: 50,
				width_cm: 40,
			}),
			invalid("height_cm"),
		);
		await assert.rejects(
			callAs(broker, "simulator.overweigh", { waybill: awb.dims, charged_weight_kg: 0 }),
			invalid("charged_weight_kg"),
		);
		await assert.rejects(
			callAs(broker, "simulator.overweigh", { waybill: awb.dims, charged_weight_kg: 1000.5 }),
			invalid("charged_weight_kg"),
		);
		await assert.rejects(
			callAs(broker, "simulator.overweigh", {
				waybill: awb.dims,
				charged_weight_kg: 5,
				length_cm: 501,
				width_cm: 40,
				height_cm: 30,
			}),
			invalid("length_cm"),
		);
		await assert.rejects(
			callAs(broker, "simulator.overweigh", {
				waybill: awb.dims,
				charged_weight_kg: 5,
				length_cm: 50,
				width_cm: -1,
				height_cm: 30,
			}),
			invalid("width_cm"),
		);
		await assert.rejects(
			callRaw(broker, "simulator.overweigh", { waybill: awb.dims, charged_weight_kg: "5" }),
			invalid("charged_weight_kg"),
		);
		await assert.rejects(
			callRaw(broker, "simulator.overweigh", { waybill: awb.dims }),
			invalid("charged_weight_kg"),
		);
		// nothing refused was recorded: the declared weight and dims still stand
		assert.deepEqual(await lines({ awb_numbers: [awb.dims], weighed_on: DAY }), [
			`${awb.dims},1.200,30,25.5,10,${DAY}`,
		]);
	});
});

describe("lib/simulator/weights.ts: the weight CSV builder", () => {
	/** A row with nothing recorded nor declared, overridden by `r`. */
	const row = (r: Partial<WeightRow> & { waybill: string }): WeightRow => ({
		charged_weight_kg: null,
		length_cm: null,
		width_cm: null,
		height_cm: null,
		declared_weight_g: null,
		declared_length_cm: null,
		declared_width_cm: null,
		declared_height_cm: null,
		...r,
	});

	it("writes the header and one line per row in the order given: recorded over declared, kg with three decimals, cm with at most two", () => {
		const file = weightCsv(
			[
				row({
					waybill: "84000000000002",
					charged_weight_kg: "1.250",
					length_cm: "40.00",
					width_cm: "30.50",
					height_cm: "20.25",
					declared_weight_g: "500",
					declared_length_cm: "10",
					declared_width_cm: "10",
					declared_height_cm: "10",
				}),
				row({ waybill: "84000000000001", declared_weight_g: "750" }),
				row({
					waybill: "84000000000003",
					charged_weight_kg: "2.500",
					declared_weight_g: "2000",
					declared_length_cm: "25.5",
					declared_width_cm: "15",
					declared_height_cm: "9.999",
				}),
				// only some declared dims: none written
				row({ waybill: "84000000000004", declared_weight_g: "1005.6", declared_length_cm: "12" }),
				// nothing usable declared
				row({ waybill: "84000000000005", declared_weight_g: "abc" }),
			],
			"2025-03-05",
		);
		assert.equal(
			file.csv,
			[
				"awb_number,charged_weight_kg,length_cm,width_cm,height_cm,weighed_on",
				"84000000000002,1.250,40,30.5,20.25,2025-03-05",
				"84000000000001,0.750,,,,2025-03-05",
				"84000000000003,2.500,25.5,15,10,2025-03-05",
				"84000000000004,1.006,,,,2025-03-05",
				"84000000000005,,,,,2025-03-05",
				"",
			].join("\n"),
		);
		assert.equal(file.lines, 5);
	});

	it("no row: the header alone, lines 0", () => {
		assert.deepEqual(weightCsv([], "2025-03-05"), { csv: `${WEIGHT_FILE_COLUMNS.join(",")}\n`, lines: 0 });
		assert.equal(WEIGHT_FILE_COLUMNS.join(","), HEADER);
	});

	it("formats weights and dimensions", () => {
		assert.equal(kilograms(1.25), "1.250");
		assert.equal(kilograms("0.5"), "0.500");
		assert.equal(kilograms(1.0006), "1.001");
		assert.equal(kilograms(12), "12.000");
		assert.equal(kilograms(0), "");
		assert.equal(kilograms(null), "");
		assert.equal(gramsToKilograms(750), "0.750");
		assert.equal(gramsToKilograms("12345"), "12.345");
		assert.equal(gramsToKilograms(-5), "");
		assert.equal(centimetres("30.00"), "30");
		assert.equal(centimetres(25.5), "25.5");
		assert.equal(centimetres("20.254"), "20.25");
		assert.equal(centimetres(""), "");
		assert.equal(centimetres("x"), "");
	});
});
