import type {
	ActionName,
	BookingUpdate,
	FailureCode,
	OrderBookingState,
	ParamsOf,
} from "../../../lib/contracts";
import type { Role } from "../../../lib/platform/auth";
import { exec, getSequelize } from "../../../lib/platform/db";
import { as } from "../../helpers/broker";
import { callAs, fakeService } from "../../helpers/call";
import { book, broker, create, forwardBody, reverseBody, useIntake, warehouseOf } from "./setup";

type SenderOrder = { sender_id: number; order_id: number };

/** Every `booking.closeCancellation` call the fake received, in order. */
export const closeCalls: SenderOrder[] = [];
/** order_id → what the fake `closeCancellation` answers (default `{closed:false, refunded:0}`). */
export const closeAnswers = new Map<number, { closed: boolean; refunded: number }>();
/** order_id → what the fake `orderState` answers for its owner (default null: no attempt). */
export const bookingStates = new Map<number, OrderBookingState>();
/** Every `booking.orderState` call the fake received. */
export const stateCalls: SenderOrder[] = [];
/** Fake booking actions that currently fail as if booking were unreachable. */
export const bookingDown = new Set<"closeCancellation" | "orderState">();

/** The fake `booking` service (typed by lib/contracts/booking.ts). */
export const FAKE_BOOKING = fakeService("booking", {
	closeCancellation(ctx) {
		if (bookingDown.has("closeCancellation")) throw new Error("booking is unreachable");
		closeCalls.push({ sender_id: ctx.params.sender_id, order_id: ctx.params.order_id });
		return closeAnswers.get(ctx.params.order_id) ?? { closed: false, refunded: 0 };
	},
	orderState(ctx) {
		if (bookingDown.has("orderState")) throw new Error("booking is unreachable");
		stateCalls.push({ sender_id: ctx.params.sender_id, order_id: ctx.params.order_id });
		const s = bookingStates.get(ctx.params.order_id);
		return s && ownerOf.get(ctx.params.order_id) === ctx.params.sender_id ? s : null;
	},
});

/** order_id → sender, for the fake `orderState` (booking answers only the owner). */
const ownerOf = new Map<number, number>();

/** Registers the hooks of a spec file: ./setup.ts `useIntake` plus the fake booking. */
export function useUnshipped(): void {
	useIntake();
	before(async () => {
		broker().createService(FAKE_BOOKING);
		await broker().waitForServices(["booking"], 10_000, 10);
	});
	beforeEach(() => {
		bookingDown.clear();
	});
}

/** Options of {@link newOrder}. */
export interface NewOrder {
	reverse?: boolean;
	/** 0 prepaid, 1 COD (forward only) */
	order_type?: 0 | 1;
	/** rupees */
	total?: number;
	ref?: string;
	channel?: string;
	/** null: created with no pickup warehouse (as orders arriving before any warehouse) */
	pickup?: number | null;
}

/** Creates an order of `sender` through `intake.createOrder` / `createReverse`; answers its id. */
export async function newOrder(sender: number, o: NewOrder = {}): Promise<number> {
	const wh = o.pickup ?? warehouseOf(sender);
	const ref = o.ref ?? `UQ-${Math.random().toString(36).slice(2, 10)}`;
	const body = o.reverse ? reverseBody(wh, ref) : forwardBody(wh, ref);
	if (o.total !== undefined) {
		body.product.declared_order_total = o.total;
		if (!o.reverse) body.product.cod_amount = o.total;
	}
	if (o.order_type === 0 && !o.reverse) {
		body.order.order_type = 0;
		body.product.cod_amount = undefined;
	}
	if (o.channel !== undefined) body.channel = o.channel;
	const { result } = await create(sender, body, o.reverse ? "intake.createReverse" : "intake.createOrder");
	const id = Number(result.order_id);
	ownerOf.set(id, sender);
	if (o.pickup === null)
		await exec(getSequelize(), "UPDATE intake.orders SET pickup_address_id = NULL WHERE order_id = $1", [id]);
	return id;
}

/** Booking moves of an order, as booking's outbox reports them (attempt 1). */
export type Move =
	| { to: "in_queue" }
	| { to: "failed"; code?: FailureCode | null; reason?: string }
	| { to: "booked" }
	| { to: "cancelled" };

/** Applies a booking update moving the order (its attempt `attempt`, default 1). */
export async function move(sender: number, order_id: number, m: Move, attempt = 1): Promise<void> {
	const u: Partial<BookingUpdate> = { attempt_id: attempt };
	if (m.to === "in_queue")
		Object.assign(u, {
			seq: 1,
			state: "booking_in_progress",
			status: "booking_queued",
			awb_number: null,
			courier: null,
		});
	else if (m.to === "failed")
		Object.assign(u, {
			seq: 2,
			state: "failed",
			status: "booking_failed",
			awb_number: null,
			courier: null,
			failure_reason: m.reason ?? "Courier said: pincode not serviceable",
			// null: a failure reported without a code (the field omitted)
			...(m.code === null ? {} : { failure_code: m.code ?? "courier_refused" }),
		});
	else if (m.to === "booked") Object.assign(u, { seq: 2 });
	else Object.assign(u, { seq: 3, state: "not_shipped", status: "cancelled", awb_number: null });
	const r = (await book(sender, order_id, u)) as { applied: boolean };
	if (!r.applied) throw new Error(`booking update of order ${order_id} not applied`);
}

/** Calls an action as `sender` (role default merchant) on this suite's broker; answers its result (typed by the contract). */
export function intakeAs<A extends ActionName>(action: A, params: ParamsOf<A>, sender: number, role?: Role) {
	return callAs(broker(), action, params, as(sender, role));
}
