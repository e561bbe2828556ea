/**
 * Input rules and errors of `GET /v1/shipping/serviceable` (spec §4.2, §7): 400 required / validation_failed, 422 lane_not_priced, 401.
 */
import { strict as assert } from "node:assert";
import { rejects } from "../../helpers/broker";
import { callRaw } from "../../helpers/call";
import { useRates } from "./setup";

describe("rates.serviceable: errors", () => {
	const t = useRates();
	const serviceable = (params: Record<string, unknown>) => t.serviceable(params);

	const REQUIRED = {
		error: "from_pin, to_pin and physical_weight are required",
		message: "from_pin, to_pin and physical_weight are required",
	};
	for (const params of [
		{},
		{ to_pin: "110001", physical_weight: "1" },
		{ from_pin: "110001", physical_weight: "1" },
		{ from_pin: "110001", to_pin: "560001" },
		{ from_pin: "", to_pin: "560001", physical_weight: "1" },
		{ from_pin: "110001", to_pin: "560001", physical_weight: "" },
		{ from_pin: "110001", to_pin: "  ", physical_weight: "1" },
	]) {
		it(`400 required: ${JSON.stringify(params)}`, async () => {
			const err = await rejects(() => serviceable(params));
			assert.equal(err.code, 400);
			assert.deepEqual(err.data.body, REQUIRED);
		});
	}

	for (const [params, detail] of [
		[{ from_pin: "11001", to_pin: "560001", physical_weight: "1" }, "from_pin: must be 6 digits"],
		[{ from_pin: "110001", to_pin: "56000a", physical_weight: "1" }, "to_pin: must be 6 digits"],
		[{ from_pin: " 110001", to_pin: "560001", physical_weight: "1" }, "from_pin: must be 6 digits"],
		[{ from_pin: "110001", to_pin: "560001", physical_weight: "abc" }, "physical_weight: must be a number."],
		[
			{ from_pin: "110001", to_pin: "560001", physical_weight: "0" },
			"physical_weight: must be a positive number.",
		],
		[
			{ from_pin: "110001", to_pin: "560001", physical_weight: "-2" },
			"physical_weight: must be a positive number.",
		],
		[
			{ from_pin: "110001", to_pin: "560001", physical_weight: "Infinity" },
			"physical_weight: must be a number.",
		],
		[
			{ from_pin: "110001", to_pin: "560001", physical_weight: "1", volumetric_weight: "-0.1" },
			"volumetric_weight: must be greater than or equal to 0.",
		],
		[
			{ from_pin: "110001", to_pin: "560001", physical_weight: "1", volumetric_weight: "x" },
			"volumetric_weight: must be a number.",
		],
		[
			{ from_pin: "110001", to_pin: "560001", physical_weight: "1", collectable_amount: "-5" },
			"collectable_amount: must be greater than or equal to 0.",
		],
		[
			{ from_pin: "110001", to_pin: "560001", physical_weight: "1", collectable_amount: "lots" },
			"collectable_amount: must be a number.",
		],
		[
			{ from_pin: "110001", to_pin: "560001", physical_weight: "1", operation: "return" },
			"operation: must be forward or reverse",
		],
	] as const) {
		it(`400 validation_failed: ${detail} (${JSON.stringify(params)})`, async () => {
			const err = await rejects(() => serviceable(params));
			assert.equal(err.code, 400);
			assert.equal(err.data.body.error, "validation_failed");
			assert.deepEqual(err.data.body.details, [detail]);
			assert.equal(typeof err.data.body.message, "string");
		});
	}

	it("400 validation_failed lists every bad field in details", async () => {
		const err = await rejects(() =>
			serviceable({ from_pin: "1", to_pin: "2", physical_weight: "-1", operation: "sideways" }),
		);
		assert.equal(err.code, 400);
		assert.deepEqual(err.data.body, {
			error: "validation_failed",
			message: "Validation failed",
			details: [
				"from_pin: must be 6 digits",
				"to_pin: must be 6 digits",
				"physical_weight: must be a positive number.",
				"operation: must be forward or reverse",
			],
		});
	});

	it("ignores sender_id and unknown parameters", async () => {
		const a = await serviceable({
			from_pin: "110001",
			to_pin: "560001",
			physical_weight: "1",
			sender_id: "7",
			foo: 1,
		});
		const b = await serviceable({ from_pin: "110001", to_pin: "560001", physical_weight: "1" });
		assert.deepEqual(a, b);
	});

	it("422 lane_not_priced for an unknown pincode", async () => {
		const err = await rejects(() =>
			serviceable({ from_pin: "110001", to_pin: "999999", physical_weight: "1" }),
		);
		assert.equal(err.code, 422);
		const detail = "to_pin 999999 not in the pincode directory";
		assert.deepEqual(err.data.body, {
			error: "lane_not_priced",
			message: `No courier prices this lane: ${detail}`,
			dropped_couriers: [1, 2, 3, 4, 5].map((id) => ({
				logistic_id: id,
				logistic_name: [
					"Sandbox Express",
					"Sandbox Surface",
					"Sandbox Reverse",
					"Sandbox Lite",
					"Sandbox Delhivery",
				][id - 1],
				reason: "unknown_pincode",
				detail,
			})),
		});
	});

	it("422 lane_not_priced when every courier is dropped, with the reasons", async () => {
		const err = await rejects(() =>
			serviceable({
				from_pin: "110001",
				to_pin: "744101",
				physical_weight: "22",
				order_type: "1",
				collectable_amount: "100",
			}),
		);
		assert.equal(err.code, 422);
		assert.deepEqual(Object.keys(err.data.body).sort(), ["dropped_couriers", "error", "message"]);
		assert.equal(err.data.body.error, "lane_not_priced");
		assert.deepEqual(
			err.data.body.dropped_couriers.map((d: any) => [d.logistic_id, d.reason]),
			[
				[1, "over_weight_limit"],
				[2, "not_serviceable"],
				[3, "forward_not_supported"],
				[4, "cod_config_missing"],
				[5, "not_serviceable"],
			],
		);
	});

	it("needs an authenticated caller", async () => {
		const err = await rejects(() =>
			// query strings as the gateway passes them (the contract types the validated query)
			callRaw(t.broker, "rates.serviceable", { from_pin: "110001", to_pin: "560001", physical_weight: "1" }),
		);
		assert.equal(err.code, 401);
	});
});
