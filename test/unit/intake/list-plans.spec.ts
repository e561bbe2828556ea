/**
 * Query plans of `GET /v1/orders` (issue 7: "keyset, never OFFSET, so a deep
 * page costs what page 1 costs"): on a seeded table (one large account among
 * many), every statement shape of lib/intake/list-store.ts reads its index
 * (migrations 0003, 0004), never a sequential scan nor the primary key
 * walked backwards over every account's rows, and the keyset shapes need no
 * sort — both as a custom plan and as the generic plan a prepared statement
 * may switch to after five runs.
 */
import assert from "node:assert/strict";
import { Client } from "pg";
import { type OrderListQuery, parseOrderListQuery } from "../../../lib/intake/list";
import {
	batchStatement,
	listOrdersStatement,
	orderPageReader,
	orderVersionReader,
	pageVersionsOf,
	rowVersions,
} from "../../../lib/intake/list-store";
import { getSequelize } from "../../../lib/platform/db";
import { useIntake } from "./setup";

interface PlanNode {
	"Node Type": string;
	"Index Name"?: string;
	"Scan Direction"?: string;
	Plans?: PlanNode[];
}

/** Node types and index names of a plan tree (`<index> backward` for a backward scan). */
function walkPlan(n: PlanNode, out: { nodes: string[]; indexes: string[] } = { nodes: [], indexes: [] }) {
	out.nodes.push(n["Node Type"]);
	if (n["Index Name"])
		out.indexes.push(`${n["Index Name"]}${n["Scan Direction"] === "Backward" ? " backward" : ""}`);
	for (const c of n.Plans ?? []) walkPlan(c, out);
	return out;
}

describe("GET /v1/orders: query plans on a seeded table", function () {
	this.timeout(120_000);
	useIntake();

	// accounts of their own, far from newSender()'s range: other spec files of the run never meet these rows
	const big = 800_000_000 + Math.floor(Math.random() * 1_000_000) * 1_000;
	const CITIES = [
		"Mumbai",
		"Delhi",
		"Bengaluru",
		"Pune",
		"Jaipur",
		"Kochi",
		"Surat",
		"Agra",
		"Indore",
		"Patna",
	];
	const STATUSES = [
		"new",
		"booked",
		"manifested",
		"in_transit",
		"delivered",
		"rto_delivered",
		"undelivered",
		"cancelled",
	];

	/**
	 * Runs `fn` on a connection of its own, without the application pool's 15 s `statement_timeout`
	 * (lib/platform/db.ts): the seed is one 162,000-row INSERT, which a busy CI machine can take longer than that to
	 * write. Only the fixture goes through it; every plan below is read through the application's pool.
	 */
	async function unbounded(fn: (c: Client) => Promise<void>): Promise<void> {
		const c = new Client({ connectionString: process.env.DATABASE_URL, statement_timeout: 0 });
		await c.connect();
		try {
			await fn(c);
		} finally {
			await c.end();
		}
	}

	before(async () => {
		// 12,000 orders of one large account among 500 accounts × 300 (the large one ~7 % of the table, as a
		// big merchant is), created over a year in the order their ids are drawn
		await unbounded(async (c) => {
			await c.query("SHOW statement_timeout").then((r) => assert.equal(r.rows[0].statement_timeout, "0"));
			await c.query(
				`INSERT INTO intake.orders (sender_id, customer_order_no, shipment_type, receiver_name, receiver_address_1,
				receiver_city, receiver_pincode, receiver_mobile_no, product_name, physical_weight,
				declared_order_total_paise, status, state, awb_number, created_at)
			SELECT CASE WHEN g % 13 = 0 THEN $1 ELSE $1 + 1 + (g % 500) END, 'PLN-' || g, (g % 5 = 0)::int,
				'Buyer', '1 Main Road', ($2::text[])[1 + g % 10], '560001', '9876543210', 'Item', 0.5,
				10000 + g, ($3::text[])[1 + g % 8], CASE WHEN g % 8 = 0 THEN 'not_shipped' ELSE 'booked' END,
				CASE WHEN g % 8 = 0 THEN NULL ELSE 'PLN' || g END,
				timestamptz '2025-01-01T00:00:00Z' + (g * interval '195 seconds')
			FROM generate_series(1, 162000) AS g`,
				[big, CITIES, STATUSES],
			);
			// statistics only: no VACUUM, so no plan here leans on index-only scans of a set visibility map
			await c.query("ANALYZE intake.orders");
		});
	});
	after(async () => {
		await unbounded(async (c) => {
			await c.query("DELETE FROM intake.orders WHERE sender_id BETWEEN $1 AND $1 + 500", [big]);
		});
	});

	/** A SQL literal of a bound value or array (test values only). */
	const literal = (v: unknown): string => {
		const text = Array.isArray(v)
			? `{${v.map((x) => (x === null ? "NULL" : `"${String(x).replaceAll('"', '\\"')}"`)).join(",")}}`
			: String(v);
		return `'${text.replaceAll("'", "''")}'`;
	};

	/**
	 * The plan of the list statement for `params` (parsed as the service
	 * parses them), prepared as lib/platform/db.ts prepares it, as a custom plan (the
	 * values known) or as the generic plan PostgreSQL may switch to.
	 */
	async function plan(
		params: Record<string, string>,
		generic: boolean,
		before_id: number | null = null,
		sender = big,
		batch = false,
	) {
		const q: OrderListQuery = { ...parseOrderListQuery(params, sender), before_id };
		const st = batch
			? batchStatement([
					{ sender_id: sender, q },
					{ sender_id: sender + 3, q },
				])
			: listOrdersStatement(sender, q);
		const db = getSequelize();
		return db.transaction(async (transaction) => {
			const run = (text: string) => db.query(text, { transaction, type: "SELECT" });
			await run(`SET LOCAL plan_cache_mode = ${generic ? "force_generic_plan" : "force_custom_plan"}`);
			await run(`PREPARE list_plan AS ${st.text}`);
			try {
				const rows = (await run(
					`EXPLAIN (FORMAT JSON) EXECUTE list_plan(${st.values.map(literal).join(", ")})`,
				)) as Array<{ "QUERY PLAN": Array<{ Plan: PlanNode }> }>;
				return walkPlan(rows[0]["QUERY PLAN"][0].Plan);
			} finally {
				await run("DEALLOCATE list_plan");
			}
		});
	}

	const cases: Array<[string, Record<string, string>, string[], boolean]> = [
		// name, query, acceptable indexes, keyset order (no sort)
		["bucket=all", {}, ["orders_list_idx"], true],
		["a bucket", { bucket: "transit" }, ["orders_bucket_idx"], true],
		["awb_number", { awb_number: "PLN12345" }, ["orders_awb_idx"], false],
		["order_no", { order_no: "PLN-12345" }, ["orders_sender_ref_idx", "orders_sender_ref_live"], false],
		["city", { city: "pune" }, ["orders_city_idx"], true],
		["shipment_type", { shipment_type: "1" }, ["orders_type_idx"], true],
		["one IST day", { date_from: "2025-03-01", date_to: "2025-03-01" }, ["orders_created_idx"], false],
		[
			"a bucket and a city",
			{ bucket: "delivered", city: "Pune" },
			["orders_bucket_idx", "orders_city_idx"],
			false,
		],
	];

	for (const [name, params, indexes, keyset] of cases) {
		for (const generic of [false, true]) {
			it(`${name} (${generic ? "generic" : "custom"} plan): ${indexes.join(" or ")}, no sequential scan`, async () => {
				const p = await plan(params, generic);
				assert.ok(!p.nodes.includes("Seq Scan"), `${name}: ${JSON.stringify(p)}`);
				assert.ok(
					p.indexes.some((i) => indexes.includes(i)),
					`${name}: ${JSON.stringify(p)}`,
				);
				assert.ok(!p.indexes.includes("orders_pkey backward"), `${name}: ${JSON.stringify(p)}`);
				if (keyset) assert.ok(!p.nodes.includes("Sort"), `${name} needs no sort: ${JSON.stringify(p)}`);
			});
		}
	}

	for (const [name, params, indexes] of cases) {
		it(`${name}, several requests in one statement (LATERAL): ${indexes.join(" or ")}`, async () => {
			const p = await plan(params, false, null, big, true);
			assert.ok(!p.nodes.includes("Seq Scan"), `${name}: ${JSON.stringify(p)}`);
			assert.ok(
				p.indexes.some((i) => indexes.includes(i)),
				`${name}: ${JSON.stringify(p)}`,
			);
			assert.ok(!p.indexes.includes("orders_pkey backward"), `${name}: ${JSON.stringify(p)}`);
		});
	}

	it("a smaller account: the list index and the bucket index, whichever plan", async () => {
		for (const generic of [false, true]) {
			const all = await plan({}, generic, null, big + 7);
			assert.deepEqual(all.indexes, ["orders_list_idx"]);
			assert.ok(!all.nodes.includes("Sort"));
			// (a bucket with fewer rows than a page may be read whole and sorted: a few dozen rows)
			const bucket = await plan({ bucket: "rto" }, generic, null, big + 7);
			assert.deepEqual(bucket.indexes, ["orders_bucket_idx"]);
			assert.ok(!bucket.nodes.includes("Seq Scan"));
		}
	});

	it("a page 10,000 rows deep has page 1's plan (keyset on order_id, no OFFSET)", async () => {
		const [{ id }] = (await getSequelize().query(
			`SELECT order_id AS id FROM intake.orders WHERE sender_id = $1 AND hidden_at IS NULL
			ORDER BY order_id DESC OFFSET 10000 LIMIT 1`,
			{ bind: [big], type: "SELECT" },
		)) as Array<{ id: string }>;
		for (const generic of [false, true]) {
			const first = await plan({}, generic);
			const deep = await plan({}, generic, Number(id));
			assert.deepEqual(deep, first);
			const st = listOrdersStatement(big, { ...parseOrderListQuery({}, big), before_id: Number(id) });
			assert.ok(!/offset/i.test(st.text));
		}
	});

	// the version read joins the rows in the page query's order, without a sort of its own (record 0140)
	let casesWithRows = 0;
	for (const [name, params] of cases) {
		it(`${name}: the page read as its rows' versions, alone and beside another account's, is the page read whole, newest first`, async () => {
			const versions = orderVersionReader(getSequelize());
			const pages = orderPageReader(getSequelize());
			const q = (sender: number) => parseOrderListQuery({ limit: "50", ...params }, sender);
			const alone = await versions(big, q(big));
			// two calls made together are read in one statement (lib/platform/coalesce.ts)
			const [mine, theirs] = await Promise.all([versions(big, q(big)), versions(big + 3, q(big + 3))]);
			const [rows, theirRows] = await Promise.all([pages(big, q(big)), pages(big + 3, q(big + 3))]);
			if (rows.length > 1) casesWithRows++;
			assert.equal(alone, pageVersionsOf(rows));
			assert.equal(mine, pageVersionsOf(rows));
			assert.equal(theirs, pageVersionsOf(theirRows));
			assert.deepEqual(
				rowVersions(mine)?.map((r) => r.order_id),
				rows.map((r) => r.order_id),
			);
		});
	}

	it("(most of those pages held rows to order)", () => {
		assert.ok(casesWithRows >= 5, `${casesWithRows} of ${cases.length}`);
	});
});
