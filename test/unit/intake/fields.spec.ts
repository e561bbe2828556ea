/**
 * intake service: lib/shared/fields parsing helpers used by the create validation.
 * Broker, fake warehouses and body builders: ./setup.ts.
 */
import assert from "node:assert/strict";
import {
	codeString,
	INDIAN_PINCODE,
	isPlainObject,
	normaliseMobile,
	PHONE_10_DIGITS,
	PINCODE_FORMAT,
	parseBool,
	parsePositiveInt,
} from "../../../lib/shared/fields";

describe("lib/shared/fields", () => {
	it("parsePositiveInt reads JSON integers and plain digit strings only", () => {
		const cases: Array<[unknown, number | null]> = [
			[5, 5],
			["42", 42],
			[" 7 ", 7],
			["9007199254740991", 9007199254740991],
			[0, null],
			["0", null],
			[-3, null],
			["-3", null],
			["+7", null],
			[1.5, null],
			["1.5", null],
			["007", null],
			["1e3", null],
			["", null],
			[null, null],
			[true, null],
			[2 ** 53, null],
			["9007199254740993", null],
		];
		for (const [v, want] of cases) assert.equal(parsePositiveInt(v), want, JSON.stringify(v));
	});

	it("parseBool reads true/false, 1/0 and their strings; nothing else", () => {
		for (const v of [true, 1, "1", "true", " TRUE "]) assert.equal(parseBool(v), true, JSON.stringify(v));
		for (const v of [false, 0, "0", "false", "False"]) assert.equal(parseBool(v), false, JSON.stringify(v));
		for (const v of [undefined, null, "", "yes", 2, "2", {}, []]) assert.equal(parseBool(v), undefined);
	});

	it("codeString, normaliseMobile, isPlainObject and the formats", () => {
		assert.equal(codeString(" 560038 "), "560038");
		assert.equal(codeString(560038), "560038");
		assert.equal(codeString(1.5), undefined);
		assert.equal(codeString(null), undefined);
		assert.equal(normaliseMobile("+91 98450-12345"), "9845012345");
		assert.equal(normaliseMobile("09845012345"), "9845012345");
		assert.equal(normaliseMobile("(984) 501.2345"), "9845012345");
		assert.equal(normaliseMobile("5845012345"), null);
		assert.equal(normaliseMobile("98450123456"), null);
		assert.equal(isPlainObject({}), true);
		assert.equal(isPlainObject([]), false);
		assert.equal(isPlainObject(null), false);
		assert.ok(PINCODE_FORMAT.test("012345") && !PINCODE_FORMAT.test("12345"));
		assert.ok(INDIAN_PINCODE.test("560038") && !INDIAN_PINCODE.test("012345"));
		assert.ok(PHONE_10_DIGITS.test("9876543210") && !PHONE_10_DIGITS.test("+919876543210"));
	});
});
