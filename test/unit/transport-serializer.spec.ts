/**
 * The transport serializer (lib/platform/transport-serializer.ts, docs/decisions/0120-cbor-records.md, issue 32):
 * a packet whose payload repeats an object shape (a list page, a batch) crosses as cbor-x records, each shape's
 * keys once; any other packet as Moleculer's CBOR serializer wrote it; every value as a local call passes it; and
 * a node of the previous release (Moleculer's CBOR defaults) and a node of this one read each other's packets as
 * the same plain objects, so a rolling upgrade may mix them.
 */
import assert from "node:assert/strict";
import { Serializers, type ServiceBroker } from "moleculer";
import { REPEATED_SHAPES, repeatsShapes, ShapeAwareCbor } from "../../lib/platform/transport-serializer";
import brokerOptions from "../../moleculer.config";

/** What a test uses of a Moleculer serializer. */
interface Codec {
	serialize(obj: unknown): Buffer;
	deserialize(buf: Buffer): unknown;
}

/** A Moleculer serializer resolved from `opt` (a broker option's `serializer` entry) and initialised. */
function codec(opt: unknown): Codec {
	const s = Serializers.resolve(opt as never);
	s.init({} as ServiceBroker);
	return s as unknown as Codec;
}

/** A response packet as Moleculer sends one, answering a list page of `n` orders. */
function pagePacket(n: number): Record<string, unknown> {
	return {
		ver: "5",
		sender: "intake-1",
		id: "0e1d2bf7-d050-4a94-935b-c2c9e9849629",
		success: true,
		meta: { user: { sender_id: 900001, role: "merchant", caps: ["orders.write"], read_only: false } },
		data: {
			data: Array.from({ length: n }, (_, i) => ({
				order_id: 60 + i,
				order_no: `ORD-${i}`,
				order_type: i % 2,
				order_value: 1499.5,
				cod_amount: i % 2 ? 1499.5 : null,
				receiver: { name: "Ravi Kumar", city: "Bengaluru", pincode: "560001" },
				awb_number: i % 3 ? null : `SBX${1000 + i}`,
				created_at: new Date(Date.UTC(2026, 10, 29, 10, 0, i)).toISOString(),
			})),
			pagination: { mode: "cursor", limit: n, nextCursor: null },
		},
		stream: false,
		seq: null,
	};
}

/** Values a local call passes as they are: Dates, Buffers, `undefined`, nested arrays, shapes in any key order. */
const mixed = {
	when: new Date(Date.UTC(2026, 10, 29, 4, 30)),
	pdf: Buffer.from("%PDF-1.7 label"),
	absent: undefined,
	nothing: null,
	nested: [1, "two", [3, { four: 4 }], { a: 1, b: 2 }, { b: 3, a: 4 }, { a: 5 }],
	big: 2 ** 53 - 1,
	negative: -12.75,
	text: "₹ 1,499 — Bengaluru",
};

describe("transport serializer: CBOR, records where a shape repeats", () => {
	const ours = codec(brokerOptions().serializer);
	// Moleculer's CBOR serializer with its own defaults: what the previous release sent and read
	const previous = codec("CBOR");

	it("a page of same-shaped objects crosses with each shape's keys once, and decodes to the same values", () => {
		const packet = pagePacket(50);
		const mine = ours.serialize(packet);
		const theirs = previous.serialize(packet);
		assert.ok(
			mine.length < theirs.length * 0.6,
			`${mine.length} bytes with records against ${theirs.length} without`,
		);
		assert.deepStrictEqual(ours.deserialize(mine), packet);
	});

	it("every node's broker options use it", () => {
		assert.ok(brokerOptions().serializer instanceof ShapeAwareCbor);
	});

	it("a packet that repeats no shape is written byte for byte as the previous release wrote it", () => {
		const values: { data?: unknown; params?: unknown }[] = [
			pagePacket(REPEATED_SHAPES - 1),
			{ data: mixed },
			{ params: { order_id: 7 }, meta: {} },
		];
		for (const value of values) {
			assert.equal(repeatsShapes(value), false);
			assert.deepStrictEqual(ours.serialize(value), previous.serialize(value));
		}
	});

	it("picks the packets whose answer, event data or parameters hold an array of objects", () => {
		const rows = Array.from({ length: REPEATED_SHAPES }, (_, i) => ({ id: i }));
		assert.equal(repeatsShapes({ data: rows }), true);
		assert.equal(repeatsShapes({ data: { data: rows, pagination: {} } }), true);
		assert.equal(repeatsShapes({ params: { rows } }), true);
		assert.equal(repeatsShapes({ data: rows.slice(1) }), false);
		assert.equal(repeatsShapes({ data: { ids: rows.map((r) => r.id) } }), false);
		assert.equal(repeatsShapes({ data: { pdfs: rows.map(() => Buffer.from("x")) } }), false);
		assert.equal(repeatsShapes({ data: { nested: { deeper: rows } } }), false);
	});

	it("never looks into bytes: a Buffer answer is written as before without reading its keys", () => {
		const pdf = Buffer.alloc(64 * 1024, 7);
		// an own key a scan of the Buffer's keys would read (after its 65,536 indices)
		Object.defineProperty(pdf, "rows", {
			enumerable: true,
			get() {
				throw new Error("the Buffer's keys were scanned");
			},
		});
		assert.equal(repeatsShapes({ data: pdf }), false);
		assert.equal(repeatsShapes({ params: { order_ids: [1, 2] }, data: new Uint8Array(16) }), false);
		const clean = { data: Buffer.alloc(64 * 1024, 7) };
		assert.deepStrictEqual(ours.serialize(clean), previous.serialize(clean));
	});

	it("keeps what a local call passes: Dates, Buffers, undefined, nested arrays, shapes in any key order", () => {
		const repeated = { data: Array.from({ length: REPEATED_SHAPES }, () => mixed) };
		assert.equal(repeatsShapes(repeated), true);
		for (const value of [{ data: mixed }, repeated]) {
			const back = ours.deserialize(ours.serialize(value)) as { data: typeof mixed | (typeof mixed)[] };
			assert.deepStrictEqual(back, value);
			const one = Array.isArray(back.data) ? back.data[REPEATED_SHAPES - 1] : back.data;
			assert.ok(one.when instanceof Date);
			assert.ok(Buffer.isBuffer(one.pdf));
			assert.ok("absent" in one);
		}
	});

	it("a node of the previous release and a node of this one read each other's packets as plain objects", () => {
		for (const value of [pagePacket(50), pagePacket(3), mixed]) {
			const fromPrevious = ours.deserialize(previous.serialize(value));
			assert.deepStrictEqual(fromPrevious, value);
			const fromOurs = previous.deserialize(ours.serialize(value));
			assert.deepStrictEqual(fromOurs, value);
		}
	});
});
