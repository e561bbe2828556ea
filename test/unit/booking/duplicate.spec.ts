/**
 * booking service, a courier that refuses a retried create as a duplicate of
 * our reference (issue 14: Xpressbees answers "Order number already exists"
 * and has no look-up by reference). The first create went through at the
 * courier (a real package at the simulator) but its answer was lost
 * (CourierUnavailable); the retry is refused with `CourierDuplicate`:
 * - with the AWB in the refusal: booked with that AWB, one package;
 * - without it and no look-up: failed `booking_error`, NOT booked with
 *   another courier (one package at the simulator, one attempt), ops told.
 * Test-only adapters wrap the real sandbox adapter (registerAdapter).
 */
import assert from "node:assert/strict";
import {
	type BookRequest,
	type BookResult,
	CourierDuplicate,
	CourierRefused,
	CourierUnavailable,
	registerAdapter,
	SandboxAdapter,
} from "../../../lib/couriers";
import { newSender } from "../../helpers/broker";
import { courier } from "../../helpers/fixtures";
import { addOrder, attemptsOf, book, COURIERS, settled, simPackages, useBookingBroker } from "./setup";

/** AWB of the first (lost) create per reference. */
const firstAwb = new Map<string, string>();

/** The sandbox adapter whose first create's answer is lost and whose retry is refused as a duplicate. */
class LostAnswerAdapter extends SandboxAdapter {
	constructor(
		code: string,
		private readonly awbInRefusal: boolean,
	) {
		super(code);
	}

	override async book(req: BookRequest): Promise<BookResult> {
		const awb = firstAwb.get(req.reference);
		if (awb === undefined) {
			const res = await super.book(req);
			firstAwb.set(req.reference, res.awb_number);
			throw new CourierUnavailable("socket hang up (the answer was lost)");
		}
		throw new CourierDuplicate("Order number already exists", this.awbInRefusal ? awb : null);
	}

	override async lookupByReference(): Promise<BookResult | null> {
		throw new CourierRefused("look-up by reference is not supported");
	}
}

const WITH_AWB = courier(21, "Dup Courier (AWB)", "sbx-express", { adapter: "test-dup-awb", cod: true });
const BLIND = courier(22, "Dup Courier (blind)", "sbx-express", { adapter: "test-dup-blind", cod: true });

describe("booking: a create refused as a duplicate of our reference", function () {
	this.timeout(40_000);
	before(() => {
		registerAdapter("test-dup-awb", (c) => new LostAnswerAdapter(c.code, true));
		registerAdapter("test-dup-blind", (c) => new LostAnswerAdapter(c.code, false));
		COURIERS.push(WITH_AWB, BLIND);
	});
	after(() => {
		COURIERS.splice(COURIERS.indexOf(WITH_AWB), 1);
		COURIERS.splice(COURIERS.indexOf(BLIND), 1);
	});
	const broker = useBookingBroker();

	it("books with the AWB the refusal names: the one package the first create made", async () => {
		const s = newSender();
		const o = addOrder(s);
		await book(broker(), s, { order_id: o.order_id, logistic_id: WITH_AWB.logistic_id });
		const done = await settled(o.order_id);
		assert.equal(done.state, "booked", JSON.stringify(done));
		const pk = await simPackages(o.customer_order_no);
		assert.equal(pk.length, 1);
		assert.equal(done.awb_number, pk[0].waybill);
		const [attempt, ...more] = await attemptsOf(o.order_id);
		assert.equal(more.length, 0);
		assert.equal(firstAwb.get(String(attempt.attempt_id)), pk[0].waybill);
	});

	it("without an AWB and no look-up: failed booking_error, never booked with another courier", async () => {
		const s = newSender();
		const o = addOrder(s);
		await book(broker(), s, { order_id: o.order_id, logistic_id: BLIND.logistic_id });
		const done = await settled(o.order_id);
		assert.equal(done.state, "failed", JSON.stringify(done));
		assert.equal(done.failure_code, "booking_error");
		assert.match(
			String(done.failure_reason),
			/Dup Courier \(blind\) already holds a shipment for this booking but did not give its AWB; it was not booked with another courier/,
		);
		const attempts = await attemptsOf(o.order_id);
		assert.equal(attempts.length, 1, "no fall-over attempt");
		assert.equal((await simPackages(o.customer_order_no)).length, 1, "the one package of the lost create");
	});
});
