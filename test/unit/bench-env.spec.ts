/**
 * bench/lib.ts `envFromJson`: the settings a bench adds to a system's environment (BENCH_SYSTEM_ENV,
 * BENCH_A_ENV, BENCH_B_ENV) are a JSON object of strings; anything else fails naming the variable.
 */
import assert from "node:assert/strict";
import { envFromJson } from "../../bench/lib";

describe("bench: settings from a JSON variable (envFromJson)", () => {
	const NAME = "MSA_TEST_BENCH_ENV";
	afterEach(() => {
		delete process.env[NAME];
	});

	it("unset is no settings; a JSON object of strings is those settings", () => {
		assert.deepEqual(envFromJson(NAME), {});
		process.env[NAME] = '{"GATEWAY_ACCESS_LOG":"1","RATE_LIMIT_ACCOUNT_PER_MIN":"0"}';
		assert.deepEqual(envFromJson(NAME), { GATEWAY_ACCESS_LOG: "1", RATE_LIMIT_ACCOUNT_PER_MIN: "0" });
	});

	it("not JSON, not an object, or a value that is not a string: an error naming the variable", () => {
		for (const raw of [
			"{GATEWAY_ACCESS_LOG:1}",
			'["1"]',
			"null",
			'"x"',
			'{"RATE_LIMIT_ACCOUNT_PER_MIN":0}',
		]) {
			process.env[NAME] = raw;
			assert.throws(
				() => envFromJson(NAME),
				new RegExp(`^Error: ${NAME} must be a JSON object of strings`),
				raw,
			);
		}
	});
});
