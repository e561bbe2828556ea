/**
 * pg's row template made as a plain object (lib/platform/pg-row-template.ts, docs/decisions/0149-pg-row-template.md,
 * framework patch 0087 §15): for the same row descriptions, the patched `Result#addFields` leaves a Result exactly
 * as upstream's does (fields, type parsers, template keys in order, values, prototype), so `parseRow` makes the
 * same rows; and rows read through lib/platform/db.ts from the test run's PostgreSQL have the columns as named.
 */
import assert from "node:assert/strict";
import pg from "pg";
import { getSequelize, select } from "../../../lib/platform/db";
import { addFields, type FieldDescription, upstreamAddFields } from "../../../lib/platform/pg-row-template";

/** A fresh pg Result (rows as objects), the type overrides given or pg-types'. */
interface Made {
	fields: FieldDescription[];
	_parsers?: unknown[];
	_prebuiltEmptyResultObject: Record<string, null>;
	parseRow(rowData: unknown[]): Record<string, unknown>;
}
const newResult = (types?: unknown): Made =>
	new (pg as unknown as { Result: new (rowMode?: string, types?: unknown) => Made }).Result(undefined, types);

/** Column descriptions: text (25) and int8 (20) alternating unless given. */
const described = (names: string[], oids?: number[]): FieldDescription[] =>
	names.map((name, i) => ({ name, dataTypeID: oids?.[i] ?? (i % 2 ? 25 : 20), format: "text" }));

/** What a Result holds after addFields, comparable across the two implementations. */
function held(r: Made) {
	const t = r._prebuiltEmptyResultObject;
	return {
		fields: r.fields,
		parsers: r._parsers,
		keys: Reflect.ownKeys(t),
		values: Reflect.ownKeys(t).map((k) => Object.getOwnPropertyDescriptor(t, k)),
		prototype: Object.getPrototypeOf(t),
	};
}

const cases: Record<string, string[]> = {
	"no column": [],
	"one column": ["order_id"],
	"sixty columns": Array.from({ length: 60 }, (_, i) => `column_${i}`),
	"a name twice": ["a", "b", "a"],
	"integer-like names": ["2", "x", "1", "0"],
	"names of Object.prototype's members": [
		"constructor",
		"toString",
		"hasOwnProperty",
		"valueOf",
		"__defineGetter__",
	],
	"a column named __proto__": ["a", "__proto__", "b"],
};

describe("pg row template (framework patch 0087 §15)", () => {
	for (const [name, names] of Object.entries(cases)) {
		it(`leaves a Result as upstream's addFields does: ${name}`, () => {
			const fields = described(names);
			const up = newResult();
			upstreamAddFields.call(up as never, fields);
			const ours = newResult();
			addFields.call(ours as never, fields);
			assert.deepStrictEqual(held(ours), held(up));
			assert.equal(ours.fields, fields, "the descriptions themselves are kept");
			// the rows parseRow makes from either template: the same keys in the same order, the same values
			const data = names.map((_, i) => (i % 3 === 2 ? null : String(i + 10)));
			const a = up.parseRow(data);
			const b = ours.parseRow(data);
			assert.deepStrictEqual(Reflect.ownKeys(b), Reflect.ownKeys(a));
			assert.deepStrictEqual(b, a);
			assert.equal(Object.getPrototypeOf(b), Object.getPrototypeOf(a));
		});
	}

	it("a column list seen again (names read afresh, as from the socket) gives the same rows; the names keep their text", () => {
		const names = Array.from({ length: 40 }, (_, i) => `again_${i}`);
		const fresh = () => described(names.map((n) => Buffer.from(n).toString()));
		const data = names.map((_, i) => String(i));
		const rows = [0, 1, 2].map(() => {
			const r = newResult();
			const fields = fresh();
			addFields.call(r as never, fields);
			assert.deepEqual(
				fields.map((f) => f.name),
				names,
			);
			return r.parseRow(data);
		});
		const up = newResult();
		upstreamAddFields.call(up as never, fresh());
		for (const row of rows) assert.deepStrictEqual(row, up.parseRow(data));
		// a row is a copy: changing one changes neither the next nor the template
		rows[0].again_0 = "changed";
		const r = newResult();
		addFields.call(r as never, fresh());
		assert.equal(r.parseRow(data).again_0, "0");
		assert.equal(r._prebuiltEmptyResultObject.again_0, null);
	});

	it("takes each column's parser from the result's type overrides when it has them", () => {
		const asked: string[] = [];
		const parser = (v: string) => `parsed ${v}`;
		const overrides = {
			getTypeParser: (oid: number, format: string) => {
				asked.push(`${oid}/${format}`);
				return parser;
			},
		};
		const r = newResult(overrides);
		addFields.call(r as never, [
			{ name: "a", dataTypeID: 1184 },
			{ name: "b", dataTypeID: 20, format: "binary" },
		]);
		assert.deepEqual(asked, ["1184/text", "20/binary"]);
		assert.deepEqual(r._parsers, [parser, parser]);
	});

	it("is pg's Result#addFields once lib/platform/db.ts is loaded", () => {
		const proto = (pg as unknown as { Result: { prototype: { addFields: unknown } } }).Result.prototype;
		assert.equal(proto.addFields, addFields);
		assert.notEqual(upstreamAddFields, addFields);
	});

	it("rows read from PostgreSQL through lib/platform/db.ts have their columns as named, typed by the parsers", async () => {
		const db = getSequelize();
		const [row] = await select<Record<string, unknown>>(
			db,
			`SELECT $1::bigint AS "constructor", 2::int AS "1", 'x' AS a, NULL::text AS "toString",
			        true AS flag, 'p' AS "__proto__", 'again' AS a`,
			[5],
		);
		assert.deepStrictEqual(Reflect.ownKeys(row), ["1", "constructor", "a", "toString", "flag", "__proto__"]);
		assert.equal(Object.getPrototypeOf(row), Object.prototype);
		assert.equal(row.constructor, "5", "int8 comes as text (pg's default parser)");
		assert.equal(row[1], 2);
		assert.equal(row.a, "again", "a repeated name keeps its first place and the last value");
		assert.equal(row.toString, null);
		assert.equal(row.flag, true);
		assert.equal(Object.getOwnPropertyDescriptor(row, "__proto__")?.value, "p");
	});
});
