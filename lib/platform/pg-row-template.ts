/**
 * pg's row template built as a plain object (issue 32, docs/decisions/0149-pg-row-template.md; a framework patch,
 * docs/decisions/0087-framework-patches.md §15).
 *
 * For every statement it runs, pg reads the answer's row description (one per execution, also of a prepared
 * statement: pg describes the portal each time) and `Result#addFields` makes a template row from it: the column
 * names set to null on an `Object.create(null)` object, then copied with `{ ...row }`. A prototype-less object
 * is in dictionary mode from its creation, and copying a dictionary-mode object adds its properties one by one in
 * the runtime: a cost per column, paid whether or not a row comes back. The
 * booking path reads several wide rows per booking (the order, its live attempt, the warehouse). Setting the
 * names on a plain object literal gives the same template (own data properties in the same order, all null, the
 * same prototype) in a fast-mode object, for less CPU per statement (`npm run bench:row-template` prints both).
 *
 * The one name that differs on a plain object is `__proto__` (assigning it sets the prototype instead of making
 * a property): a description naming a column `__proto__` is handed to upstream's `addFields` unchanged.
 */
import pg from "pg";

/** A column of a row description, as pg-protocol parses it (the fields `addFields` reads). */
export interface FieldDescription {
	name: string;
	dataTypeID: number;
	format?: string;
}

/** A type parser of pg-types (text value → JS value). */
type TypeParser = (value: string) => unknown;

/** The parts of pg's `Result` that `addFields` writes (pg/lib/result.js). */
interface PgResult {
	fields: FieldDescription[];
	_parsers?: TypeParser[];
	_types?: { getTypeParser(oid: number, format: string): TypeParser };
	_prebuiltEmptyResultObject: Record<string, null>;
}

/** What this module reads and replaces of pg's `Result` (untyped in @types/pg). */
interface ResultPrototype {
	addFields(this: PgResult, fields: FieldDescription[]): void;
	parseRow(this: PgResult, rowData: unknown[]): Record<string, unknown>;
}

const prototype = (pg as unknown as { Result: { prototype: ResultPrototype } }).Result.prototype;

/** Upstream's `Result#addFields` (pg 8.23.1, pinned), kept for a description naming a column `__proto__`. */
export const upstreamAddFields: ResultPrototype["addFields"] = prototype.addFields;

/**
 * `Result#addFields(fieldDescriptions)` as upstream does it (the fields kept, a type parser per column from the
 * result's type overrides or pg-types, `_prebuiltEmptyResultObject` = every column name → null in description
 * order, on a plain object), with the template made by assignment on an object literal. A description naming a
 * column `__proto__` goes to {@link upstreamAddFields}.
 */
export function addFields(this: PgResult, fieldDescriptions: FieldDescription[]): void {
	for (let i = 0; i < fieldDescriptions.length; i++) {
		if (fieldDescriptions[i].name === "__proto__") {
			upstreamAddFields.call(this, fieldDescriptions);
			return;
		}
	}
	this.fields = fieldDescriptions;
	if (fieldDescriptions.length) this._parsers = new Array(fieldDescriptions.length);
	const parsers = this._parsers as TypeParser[];
	const row: Record<string, null> = {};
	for (let i = 0; i < fieldDescriptions.length; i++) {
		const desc = fieldDescriptions[i];
		row[desc.name] = null;
		parsers[i] = this._types
			? this._types.getTypeParser(desc.dataTypeID, desc.format || "text")
			: (pg.types.getTypeParser(desc.dataTypeID, (desc.format || "text") as "text") as TypeParser);
	}
	this._prebuiltEmptyResultObject = row;
}

/**
 * Installs {@link addFields} as pg's `Result#addFields` (idempotent). lib/platform/db.ts calls it when loaded,
 * before any connection exists, so every Result of the process (Sequelize's included: the same pg module) uses it.
 */
export function installRowTemplate(): void {
	prototype.addFields = addFields;
}
