/**
 * `simulator.remittanceFile` (lib/simulator/remittance.ts): the sandbox
 * couriers' COD remittance CSV. Real simulator on a broker and PostgreSQL:
 * packages are booked through the simulator's Delhivery create endpoint
 * (`POST /delhivery/api/cmu/create.json`), one cancelled through its cancel
 * endpoint, delivered with `simulator.emitScan`; the file must hold exactly
 * the delivered, not-cancelled COD packages. Every assertion on the whole
 * file restricts it to this run's AWBs (other specs of the run share the
 * simulator's tables).
 */
import assert from "node:assert/strict";
import type { ServiceBroker } from "moleculer";
import { callAs } from "../helpers/call";
import {
	type SandboxCourierClient,
	sandboxCourierClient,
	startSandboxSimulator,
	stopSandboxSimulator,
} from "../helpers/sandbox-courier";

const run = Math.random().toString(36).slice(2, 8);
const COURIER = "sbx-delhivery";
const HEADER = "awb_number,amount,remittance_reference,remittance_date";
const IST_MS = 330 * 60_000;
/** this run's pickup location */
const WAREHOUSE = `WH-REM-${run}`;

describe("simulator.remittanceFile: the sandbox couriers' COD remittance CSV", function () {
	this.timeout(20_000);
	let broker: ServiceBroker;
	let courier: SandboxCourierClient;
	/** AWBs of this run's packages */
	const awb = { cod: "", cod2: "", prepaid: "", undelivered: "", cancelled: "" };

	/** Books one shipment (reference `ref`, 750 g; `cod_amount` in rupees) at the sandbox Delhivery; answers its waybill. */
	function book(
		ref: string,
		payment: { payment_mode: "COD" | "Prepaid"; cod_amount: number },
	): Promise<string> {
		return courier.book("", {
			warehouse: WAREHOUSE,
			order: `rem-${run}-${ref}`,
			client_order_no: `ORD-${ref}`,
			...payment,
			weight: 750,
		});
	}

	/** Emits `events` for `awb_number`, in order. */
	async function scan(awb_number: string, ...events: ("picked_up" | "out_for_delivery" | "delivered")[]) {
		for (const event of events) await callAs(broker, "simulator.emitScan", { awb_number, event });
	}

	before(async () => {
		const sim = await startSandboxSimulator();
		broker = sim.broker;
		// the sandbox Delhivery: the paths below carry no prefix
		courier = sandboxCourierClient(`${sim.root}/delhivery`);

		await courier.registerWarehouse("", WAREHOUSE);
		awb.cod = await book("cod", { payment_mode: "COD", cod_amount: 1499 });
		awb.prepaid = await book("prepaid", { payment_mode: "Prepaid", cod_amount: 0 });
		awb.undelivered = await book("undelivered", { payment_mode: "COD", cod_amount: 799 });
		awb.cancelled = await book("cancelled", { payment_mode: "COD", cod_amount: 650 });
		awb.cod2 = await book("cod2", { payment_mode: "COD", cod_amount: 250.5 });

		// cancelled while manifested; a delivered scan afterwards must not make it remitted
		const cancel = await courier.cancel("", awb.cancelled);
		assert.equal(cancel.status, true);

		await scan(awb.cod, "picked_up", "out_for_delivery", "delivered");
		await scan(awb.cod2, "picked_up", "out_for_delivery", "delivered");
		await scan(awb.prepaid, "picked_up", "out_for_delivery", "delivered");
		await scan(awb.undelivered, "picked_up", "out_for_delivery");
		await scan(awb.cancelled, "delivered");
	});

	after(() => stopSandboxSimulator(broker));

	/** Every AWB of this run. */
	const all = () => Object.values(awb);

	it("holds only the delivered, not-cancelled COD packages, ordered by AWB, amounts in rupees", async () => {
		const file = await callAs(broker, "simulator.remittanceFile", {
			awb_numbers: all(),
			remittance_date: "2025-03-05",
		});
		const ref = `SBX-REM-20250305-${COURIER}`;
		const lines = [`${awb.cod},1499.00,${ref},2025-03-05`, `${awb.cod2},250.50,${ref},2025-03-05`].sort();
		assert.equal(file.csv, `${HEADER}\n${lines.join("\n")}\n`);
		assert.equal(file.lines, 2);
	});

	it("awb_numbers restricts the file to those AWBs", async () => {
		const file = await callAs(broker, "simulator.remittanceFile", {
			awb_numbers: [awb.cod, awb.prepaid, awb.undelivered, awb.cancelled],
			remittance_date: "2025-03-05",
		});
		assert.equal(file.csv, `${HEADER}\n${awb.cod},1499.00,SBX-REM-20250305-${COURIER},2025-03-05\n`);
		assert.equal(file.lines, 1);
	});

	it("courier_code restricts the file to that courier; the date defaults to today in IST", async () => {
		const today = new Date(Date.now() + IST_MS).toISOString().slice(0, 10);
		const file = await callAs(broker, "simulator.remittanceFile", {
			courier_code: COURIER,
			awb_numbers: [awb.cod],
		});
		assert.equal(
			file.csv,
			`${HEADER}\n${awb.cod},1499.00,SBX-REM-${today.replaceAll("-", "")}-${COURIER},${today}\n`,
		);
		assert.equal(file.lines, 1);

		// no filter at all: this run's delivered COD packages are in, the others are not
		const every = await callAs(broker, "simulator.remittanceFile");
		const awbs = every.csv
			.trimEnd()
			.split("\n")
			.slice(1)
			.map((l) => l.split(",")[0]);
		assert.equal(every.lines, awbs.length);
		assert.ok(awbs.includes(awb.cod) && awbs.includes(awb.cod2));
		for (const a of [awb.prepaid, awb.undelivered, awb.cancelled]) assert.ok(!awbs.includes(a), a);
	});

	it("no package to remit: the header alone, lines 0", async () => {
		const other = await callAs(broker, "simulator.remittanceFile", {
			courier_code: "sbx-express",
			awb_numbers: all(),
		});
		assert.deepEqual(other, { csv: `${HEADER}\n`, lines: 0 });
		const none = await callAs(broker, "simulator.remittanceFile", {
			awb_numbers: [awb.prepaid, awb.undelivered, awb.cancelled],
		});
		assert.deepEqual(none, { csv: `${HEADER}\n`, lines: 0 });
	});

	it("refuses a remittance_date that is not a calendar day and an empty awb_numbers", async () => {
		await assert.rejects(
			callAs(broker, "simulator.remittanceFile", { remittance_date: "2025-02-30" }),
			(err: { code?: number; message?: string }) =>
				err.code === 422 && /remittance_date/.test(err.message ?? ""),
		);
		await assert.rejects(
			callAs(broker, "simulator.remittanceFile", { awb_numbers: [] }),
			(err: { code?: number }) => err.code === 422,
		);
	});
});
