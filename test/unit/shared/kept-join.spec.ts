/** lib/shared/kept-join.ts `keptJoin` (issue 32): the joined text of two parts, made again only when a part changes. */
import assert from "node:assert/strict";
import { keptJoin } from "../../../lib/shared/kept-join";

describe("keptJoin: a two-part text kept while its parts are unchanged", () => {
	it("joins with the separator; equal parts made apart give the same text", () => {
		const join = keptJoin("\n");
		const first = join("https://t.example/{awb}", "base\nsecret");
		assert.equal(first, "https://t.example/{awb}\nbase\nsecret");
		assert.equal(join(`https://t.example/${"{awb}"}`, ["base", "secret"].join("\n")), first);
	});

	it("makes a new text when either part changes, and keeps that one", () => {
		const join = keptJoin("|");
		assert.equal(join("a", "b"), "a|b");
		assert.equal(join("a", "c"), "a|c");
		assert.equal(join("x", "c"), "x|c");
		assert.equal(join("x", "c"), "x|c");
		assert.equal(join("a", "b"), "a|b", "an earlier pair is made again, not mixed with the last");
	});
});
