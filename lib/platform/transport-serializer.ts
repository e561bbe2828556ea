/**
 * The transport serializer of every node (moleculer.config.ts; docs/decisions/0042-cbor-serializer.md and
 * 0120-cbor-records.md, issue 32): Moleculer's CBOR serializer (cbor-x), writing a packet whose payload repeats
 * an object shape with cbor-x records, and any other packet as Moleculer's CBOR serializer writes it.
 *
 * A record writes a shape's keys once per packet (a record definition), then only the values of each object of
 * that shape. A page of 50 orders then crosses as a third of the bytes and its reader decodes each key once per
 * shape instead of once per object. For a packet of a few objects of different shapes (most calls and answers)
 * records cost more than maps to write and read, so those packets stay maps: byte for byte what the previous
 * release wrote.
 *
 * Each packet carries its own record definitions (no structures shared between packets or nodes), and reading
 * stays Moleculer's, which reads records and maps alike. So any packet decodes alone, and a node of the previous
 * release (Moleculer's CBOR defaults) and a node of this one read each other's packets.
 */
import { Encoder } from "cbor-x";
import { Serializers } from "moleculer";

/** Fewest objects in one array for a packet to be written with records (where they begin to cost less than maps). */
export const REPEATED_SHAPES = 6;

/** Whether `v` is an array of at least {@link REPEATED_SHAPES} values whose first is a plain object. */
function repeatedObjects(v: unknown): boolean {
	if (!Array.isArray(v) || v.length < REPEATED_SHAPES) return false;
	const first: unknown = v[0];
	return typeof first === "object" && first !== null && !Array.isArray(first) && !ArrayBuffer.isView(first);
}

/**
 * Whether a packet's payload repeats an object shape: its answer or event data (`data`) or a call's parameters
 * (`params`) is such an array, or holds one as an own property (a page's `data`, a batch's rows). Bytes (a label
 * PDF, a Buffer of any size) are never looked into: their keys are their indices.
 */
export function repeatsShapes(packet: { data?: unknown; params?: unknown }): boolean {
	for (const body of [packet.data, packet.params]) {
		if (typeof body !== "object" || body === null || ArrayBuffer.isView(body)) continue;
		if (repeatedObjects(body)) return true;
		if (Array.isArray(body)) continue;
		for (const key in body) if (repeatedObjects((body as Record<string, unknown>)[key])) return true;
	}
	return false;
}

/**
 * Moleculer's CBOR serializer ({@link Serializers.CBOR}: maps, `useTag259ForMaps: false`, as before) with a
 * second cbor-x encoder writing records, used for the packets {@link repeatsShapes} picks. Reading is
 * Moleculer's own: its cbor-x decoder reads record tags whatever its options, and maps as plain objects.
 */
export class ShapeAwareCbor extends Serializers.CBOR {
	private readonly records = new Encoder({ useRecords: true });

	/** One packet's payload (Moleculer's packet fields) as CBOR bytes: records when it repeats a shape, else maps. */
	override serialize(obj: { data?: unknown; params?: unknown }): Buffer {
		return repeatsShapes(obj) ? this.records.encode(obj) : super.serialize(obj);
	}
}
