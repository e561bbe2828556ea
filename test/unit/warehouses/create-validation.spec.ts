/** `warehouses` service — create validation: every §2.9 field rule and its `details` message (§7, §8). Broker and fakes: ./setup.ts. */
import { strict as assert } from "node:assert";
import { getSequelize, select } from "../../../lib/platform/db";
import { newSender, rejects } from "../../helpers/broker";
import { expectInvalid, fake, RETURN_BLOCK, useWarehouses, valid } from "./setup";

describe("warehouses: create validation (§2.9, §7, §8)", function () {
	this.timeout(60_000);
	const h = useWarehouses();
	const { create, rowOf } = h;
	const db = () => getSequelize();

	const long = (n: number) => "W".repeat(n);
	const cases: [string, Record<string, unknown>, string[]][] = [
		["2-character name", { warehouse_name: "ab" }, ["warehouse_name: must be at least 3 characters"]],
		["192-character name", { warehouse_name: long(192) }, ["warehouse_name: must be at most 191 characters"]],
		[
			"name of 2 after trimming",
			{ warehouse_name: "   ab   " },
			["warehouse_name: must be at least 3 characters"],
		],
		["missing name", { warehouse_name: undefined }, ["warehouse_name: is required"]],
		["blank name", { warehouse_name: "    " }, ["warehouse_name: is required"]],
		["null name", { warehouse_name: null }, ["warehouse_name: is required"]],
		["numeric name", { warehouse_name: 12345 }, ["warehouse_name: must be a string"]],
		["missing contact_person_name", { contact_person_name: undefined }, ["contact_person_name: is required"]],
		[
			"2-character contact_person_name",
			{ contact_person_name: "Al" },
			["contact_person_name: must be at least 3 characters"],
		],
		["missing contact_no", { contact_no: undefined }, ["contact_no: is required"]],
		["9-digit contact_no", { contact_no: "987654321" }, ["contact_no: must be 10 digits"]],
		["11-digit contact_no", { contact_no: "98765432101" }, ["contact_no: must be 10 digits"]],
		["contact_no with a dash", { contact_no: "98765-4321" }, ["contact_no: must be 10 digits"]],
		["contact_no with +91", { contact_no: "+919876543210" }, ["contact_no: must be 10 digits"]],
		["missing address_line_1", { address_line_1: undefined }, ["address_line_1: is required"]],
		[
			"sparse address_line_1",
			{ address_line_1: "Plot 5" },
			["address_line_1: must be at least 10 characters"],
		],
		[
			"256-character address_line_1",
			{ address_line_1: long(256) },
			["address_line_1: must be at most 255 characters"],
		],
		["missing city", { city: undefined }, ["city: is required"]],
		["blank state", { state: "  " }, ["state: is required"]],
		["101-character city", { city: long(101) }, ["city: must be at most 100 characters"]],
		["missing pincode", { pincode: undefined }, ["pincode: is required"]],
		["5-digit pincode", { pincode: "56000" }, ["pincode: must be 6 digits"]],
		["7-digit pincode", { pincode: "5600011" }, ["pincode: must be 6 digits"]],
		["pincode with a letter", { pincode: "56000A" }, ["pincode: must be 6 digits"]],
		["unknown pincode", { pincode: "999999" }, ["pincode: not a known Indian pincode"]],
		["malformed contact_email", { contact_email: "ops@" }, ["contact_email: must be a valid email address"]],
		[
			"lower-case gstin",
			{ gstin: "29abcde1234f1z5" },
			["gstin: must be a valid GSTIN (15 characters, e.g. 27AAPFU0939F1ZV)"],
		],
		[
			"gstin with 0 in position 13",
			{ gstin: "29ABCDE1234F0Z5" },
			["gstin: must be a valid GSTIN (15 characters, e.g. 27AAPFU0939F1ZV)"],
		],
		[
			"gstin without Z in position 14",
			{ gstin: "29ABCDE1234F1Y5" },
			["gstin: must be a valid GSTIN (15 characters, e.g. 27AAPFU0939F1ZV)"],
		],
		[
			"14-character gstin",
			{ gstin: "29ABCDE1234F1Z" },
			["gstin: must be a valid GSTIN (15 characters, e.g. 27AAPFU0939F1ZV)"],
		],
		[
			"gstin with letters for the state code",
			{ gstin: "AAABCDE1234F1Z5" },
			["gstin: must be a valid GSTIN (15 characters, e.g. 27AAPFU0939F1ZV)"],
		],
		[
			"unknown warehouse_type",
			{ warehouse_type: "warehouse" },
			["warehouse_type: must be one of fulfillment_pickup, pickup, fulfillment"],
		],
		["is_return_same not a boolean", { is_return_same: "yes" }, ["is_return_same: must be a boolean"]],
		["is_default not a boolean", { is_default: "maybe" }, ["is_default: must be a boolean"]],
		[
			"is_return_same false without a return block",
			{ is_return_same: false },
			[
				"return_warehouse_name: is required",
				"return_contact_person_name: is required",
				"return_contact_no: is required",
				"return_address_line_1: is required",
				"return_city: is required",
				"return_state: is required",
				"return_pincode: is required",
			],
		],
		[
			"is_return_same absent without a return block",
			{ is_return_same: undefined },
			[
				"return_warehouse_name: is required",
				"return_contact_person_name: is required",
				"return_contact_no: is required",
				"return_address_line_1: is required",
				"return_city: is required",
				"return_state: is required",
				"return_pincode: is required",
			],
		],
		[
			"bad return leg fields",
			{
				is_return_same: false,
				...RETURN_BLOCK,
				return_contact_no: "12345",
				return_pincode: "4000",
				return_address_line_1: "Short",
				return_contact_person_name: "Jo",
				return_contact_email: "nope",
				return_warehouse_name: "R",
			},
			[
				"return_warehouse_name: must be at least 3 characters",
				"return_contact_person_name: must be at least 3 characters",
				"return_contact_no: must be 10 digits",
				"return_address_line_1: must be at least 10 characters",
				"return_pincode: must be 6 digits",
				"return_contact_email: must be a valid email address",
			],
		],
		[
			"is_return_same false with every return_* field but the name (§2.9: the name is required too)",
			{ is_return_same: false, ...RETURN_BLOCK, return_warehouse_name: undefined },
			["return_warehouse_name: is required"],
		],
		[
			"is_return_same false with a blank or null return_warehouse_name",
			{ is_return_same: "false", ...RETURN_BLOCK, return_warehouse_name: "   " },
			["return_warehouse_name: is required"],
		],
		[
			"is_return_same 0 with a null return_warehouse_name",
			{ is_return_same: 0, ...RETURN_BLOCK, return_warehouse_name: null },
			["return_warehouse_name: is required"],
		],
		[
			"unknown return pincode",
			{ is_return_same: false, ...RETURN_BLOCK, return_pincode: "999999" },
			["return_pincode: not a known Indian pincode"],
		],
		[
			"several failures",
			{ warehouse_name: "ab", contact_no: "1", pincode: "x", gstin: "bad", city: "" },
			[
				"warehouse_name: must be at least 3 characters",
				"contact_no: must be 10 digits",
				"city: is required",
				"pincode: must be 6 digits",
				"gstin: must be a valid GSTIN (15 characters, e.g. 27AAPFU0939F1ZV)",
			],
		],
	];
	for (const [name, over, details] of cases) {
		it(`rejects ${name}`, async () => {
			const sender = newSender();
			const body = valid(over);
			for (const k of Object.keys(over)) if (over[k] === undefined) delete body[k];
			await expectInvalid(create(sender, body), details);
			const rows = await select(db(), "SELECT 1 FROM warehouses.warehouses WHERE sender_id = $1", [sender]);
			assert.equal(rows.length, 0, "nothing stored");
		});
	}

	it("answers one detail as the message too", async () => {
		const err = await rejects(() => create(newSender(), valid({ contact_no: "1" })));
		assert.equal(err.data.body.message, "contact_no: must be 10 digits");
	});

	const accepted: [string, Record<string, unknown>][] = [
		["a 3-character name", { warehouse_name: "Abc" }],
		["a 191-character name", { warehouse_name: long(191) }],
		[
			"no optional fields",
			{ contact_email: undefined, address_line_2: undefined, gstin: undefined, warehouse_type: undefined },
		],
		["blank optional fields", { contact_email: "", address_line_2: "  ", gstin: null }],
		["a numeric contact_no and pincode", { contact_no: 9876543210, pincode: 560001 }],
		["is_return_same 1", { is_return_same: 1 }],
		['is_return_same "true"', { is_return_same: "true" }],
		['is_return_same "false" with a return block', { is_return_same: "false", ...RETURN_BLOCK }],
		["is_return_same 0 with a return block", { is_return_same: 0, ...RETURN_BLOCK }],
		["warehouse_type fulfillment", { warehouse_type: "fulfillment" }],
		["warehouse_type fulfillment_pickup", { warehouse_type: "fulfillment_pickup" }],
	];
	for (const [name, over] of accepted) {
		it(`accepts ${name}`, async () => {
			const body = valid(over);
			for (const k of Object.keys(over)) if (over[k] === undefined) delete body[k];
			const res = await create(newSender(), body);
			assert.ok(Number.isInteger(res.data.id) && res.data.id > 0);
		});
	}

	it("stores a separate return leg when is_return_same is false, and mirrors it when true", async () => {
		const sender = newSender();
		const sep = await create(sender, valid({ is_return_same: "false", ...RETURN_BLOCK }));
		const r1 = await rowOf(sep.data.id);
		assert.equal(r1.is_return_same, false);
		assert.equal(r1.return_city, "Mumbai");
		assert.equal(r1.return_pincode, "400001");
		assert.equal(r1.return_contact_no, "9123456780");
		assert.equal(r1.return_warehouse_name, "Returns Desk");

		const same = await create(
			sender,
			valid({ is_return_same: 1, return_city: "Ignored", contact_no: 9876543210 }),
		);
		const r2 = await rowOf(same.data.id);
		assert.equal(r2.is_return_same, true);
		assert.equal(r2.contact_no, "9876543210");
		assert.equal(r2.return_city, "Bengaluru");
		assert.equal(r2.return_address_line_1, r2.address_line_1);
		assert.equal(r2.return_contact_person_name, "Ravi Kumar");
		assert.equal(r2.return_warehouse_name, r2.warehouse_name);
		assert.equal(r2.return_contact_email, "ops@example.in");
	});

	it("trims names and stores the default warehouse_type", async () => {
		const sender = newSender();
		const res = await create(
			sender,
			valid({ warehouse_name: "  Trimmed Name  ", warehouse_type: undefined }),
		);
		const row = await rowOf(res.data.id);
		assert.equal(row.warehouse_name, "Trimmed Name");
		assert.equal(row.warehouse_type, "fulfillment_pickup");
	});

	it("skips the pincode directory check when the pincode service is down", async () => {
		fake.pincodeDown = true;
		const res = await create(newSender(), valid({ pincode: "999998" }));
		assert.ok(res.data.id > 0);
	});
});
