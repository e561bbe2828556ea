/**
 * Contract of the `booking` service (spec §2.4, §3, §4.2 book): booking
 * attempts, their outbox and the booking worker.
 */
import type { BookingState, HttpParams } from "./common";

/** A live shipment (booking attempt that holds an AWB). Money in rupees. */
export interface ShipmentRecord {
	order_id: number;
	attempt_id: number;
	logistic_id: number;
	courier_name: string;
	awb_number: string;
	state: BookingState;
	/** sort / routing code from the courier, if any */
	routing_code: string | null;
	charges: { freight_charge: number; cod_charge: number; shipping_charge_tax: number; total: number } | null;
	booked_at: string;
}

/** 202 answer of `POST /v1/shipping/book`. Never carries the AWB. */
export type BookAnswer =
	| { status: "queued"; idem_key: string }
	| { status: "queued"; mode: "auto"; idem_key: string };

/** Answer of the worker step `booking.processAttempt`. */
export interface ProcessResult {
	attempt_id: number;
	state: string;
	awb_number?: string | null;
}

export interface BookingActions {
	/** POST /v1/shipping/book (§4.2, §3, §7): 202 {@link BookAnswer}. */
	"booking.book": { params: HttpParams; result: BookAnswer };
	/** Worker (BullMQ queue "booking"): books one attempt; at-least-once, idempotent. */
	"booking.processAttempt": { params: { attempt_id: number }; result: ProcessResult };
	/** Internal: the order's live booked shipment, or null. */
	"booking.getShipment": { params: { sender_id: number; order_id: number }; result: ShipmentRecord | null };
	/** Ops: delivers due outbox rows now. */
	"booking.relayOutbox": { params: Record<string, never>; result: { delivered: number; failed: number } };
	/** Ops: one sweeper pass now. */
	"booking.sweep": { params: Record<string, never>; result: { enqueued: number } };
}

export type BookingEvents = Record<never, never>;
