/**
 * Weight discrepancies (issue 27; lib/billing/discrepancies.ts,
 * docs/decisions/0105-weight-discrepancies.md) through the real gateway and
 * billing over PostgreSQL: a courier's weight file reconciled line by line
 * (opened with its hold, within tolerance, same slab, each exception kind; a
 * file once), the merchant's list, detail, accept and multipart dispute
 * (images checked by their bytes, stored without metadata; read-only roles
 * refused; another account's 404), ops' resolution (won refunds the hold),
 * the auto-accept job, the account tolerance, and the ledger's balances
 * recomputed from its entries. Fakes answer intake, warehouses and rates (a
 * rate card of 0.5 kg slabs: ₹40 the first, ₹35 each further).
 */
import assert from "node:assert/strict";
import sharp from "sharp";
import { beyondTolerance, billableGrams, parseWeightFile } from "../../../lib/billing/discrepancies";
import { insertShipment, recomputedBalances } from "../../../lib/billing/store";
import type { OrderRecord, QuoteParams, WeightDiscrepancy, WeightReport } from "../../../lib/contracts";
import { getSequelize, select } from "../../../lib/platform/db";
import { newSender } from "../../helpers/broker";
import { fakeService } from "../../helpers/call";
import { freshId } from "../../helpers/fixtures";
import { http } from "../gateway/setup";
import { OPS_TOKEN, useBillingGateway } from "./setup";

const HEADER = "awb_number,charged_weight_kg,length_cm,width_cm,height_cm";

/** The fake rate card: 0.5 kg slabs, ₹40 the first, ₹35 each further; courier 9 prices nothing. */
function quote(p: QuoteParams) {
	if (p.logistic_id === 9)
		return { data: [], dropped_couriers: [{ logistic_id: 9, logistic_name: "Nine", reason: "lane closed" }] };
	const g = Math.ceil(Math.max(p.physical_weight, p.volumetric_weight ?? 0) * 1000 - 1e-6);
	const slabs = Math.max(1, Math.ceil(g / 500));
	return {
		data: [
			{ logistic_id: p.logistic_id, courier_name: "Fake", total: 40 + 35 * (slabs - 1), weight: slabs / 2 },
		],
		dropped_couriers: [],
	};
}

describe("billing: weight discrepancies", function () {
	this.timeout(60_000);

	describe("rules", () => {
		it("billable weight is the larger of dead and volumetric (L×W×H/5000); tolerance is max(grams, percent)", () => {
			assert.equal(billableGrams(500, null), 500);
			assert.equal(billableGrams(500, { length: 40, width: 30, height: 20 }), 4800);
			assert.equal(beyondTolerance(500, 550, { grams: 50, percent: 10 }), false, "50 g over: within");
			assert.equal(beyondTolerance(500, 551, { grams: 50, percent: 10 }), true);
			assert.equal(beyondTolerance(2000, 2200, { grams: 50, percent: 10 }), false, "10 % of 2 kg = 200 g");
			assert.equal(beyondTolerance(2000, 2201, { grams: 50, percent: 10 }), true);
		});

		it("reads a weight file: kg to the gram, dimensions all or none, bad lines kept with their reason", () => {
			const lines = parseWeightFile(
				`\ufeff${HEADER},weighed_on\nA1,1.2505,,,,x\nA2,0.75,40,30,20.5,x\nA3,0.5,40,,,x\n,1,,,,x\nA4,-1,,,,x\n`,
			);
			assert.equal(lines[0].invalid?.includes("charged_weight_kg"), true, "4 decimals refused");
			assert.deepEqual(
				{ g: lines[1].charged_g, dims: lines[1].dims, invalid: lines[1].invalid },
				{ g: 750, dims: { length: 40, width: 30, height: 20.5 }, invalid: null },
			);
			assert.match(lines[2].invalid ?? "", /all given/);
			assert.match(lines[3].invalid ?? "", /awb_number is empty/);
			assert.match(lines[4].invalid ?? "", /charged_weight_kg/);
			assert.throws(() => parseWeightFile("awb_number,charged_weight_kg\nA,1\n"), /lacks length_cm/);
		});
	});

	describe("through the gateway", () => {
		const sys = useBillingGateway();
		/** order id → the fake intake's order facts */
		const orders = new Map<number, { kg: number; dims?: [number, number, number]; warehouse?: boolean }>();
		/** AWB → its owner, for the fake booking (AWBs billing has not heard of on the status channel) */
		const booked = new Map<string, { sender_id: number; order_id: number }>();
		before(async () => {
			sys.broker.createService(
				fakeService("intake", {
					getOrder(ctx) {
						const o = orders.get(ctx.params.order_id);
						if (!o) return null;
						return {
							order_id: ctx.params.order_id,
							sender_id: ctx.params.sender_id,
							direction: "forward",
							payment_mode: "prepaid",
							pickup_address_id: o.warehouse === false ? null : 1,
							consignee: { pincode: "560001" },
							product: {
								physical_weight: o.kg,
								length: o.dims?.[0] ?? null,
								width: o.dims?.[1] ?? null,
								height: o.dims?.[2] ?? null,
								cod_amount: null,
							},
						} as unknown as OrderRecord;
					},
				}),
			);
			sys.broker.createService(
				fakeService("warehouses", {
					get: () => ({ pickup: { pincode: "110001" } }) as never,
				}),
			);
			sys.broker.createService(fakeService("rates", { quote: (ctx) => quote(ctx.params) as never }));
			sys.broker.createService(
				fakeService("booking", {
					awbOwner: (ctx) => booked.get(ctx.params.awb_number) ?? null,
					getShipment: (ctx) =>
						[...booked.entries()].find(([, o]) => o.order_id === ctx.params.order_id)
							? ({
									awb_number: [...booked.entries()].find(([, o]) => o.order_id === ctx.params.order_id)?.[0],
									logistic_id: 1,
								} as never)
							: null,
				}),
			);
			await sys.broker.waitForServices(["intake", "warehouses", "rates", "booking"], 10_000, 10);
		});

		const db = () => getSequelize();
		const ops = (method: string, path: string, body?: unknown) =>
			http(sys.base, method, path, { body, token: OPS_TOKEN });
		const reconcile = async (csv: string, logistic_id?: number) => {
			const r = await ops("POST", "/v1/ops/weight-reports", { csv, ...(logistic_id ? { logistic_id } : {}) });
			assert.equal(r.status, 200, r.text);
			return r.body as WeightReport;
		};

		/** A shipment of `sender` billing knows (delivered, prepaid), its order declared `kg` (and dims). */
		async function shipment(
			sender: number,
			o: { kg: number; dims?: [number, number, number]; warehouse?: boolean; logistic_id?: number },
		): Promise<{ awb: string; order_id: number }> {
			const order_id = freshId();
			const awb = `WD${order_id}`;
			orders.set(order_id, o);
			await insertShipment(db(), {
				awb_number: awb,
				seq: 6,
				target: "pending",
				at: new Date().toISOString(),
				sender_id: sender,
				order_id,
				logistic_id: o.logistic_id ?? 1,
				payment_mode: "prepaid",
				cod_amount_paise: 0,
			});
			return { awb, order_id };
		}

		const balanceOf = async (sender: number) =>
			Number(
				(
					await select<{ balance_paise: string }>(
						db(),
						"SELECT balance_paise FROM billing.balances WHERE sender_id = $1",
						[sender],
					)
				)[0]?.balance_paise ?? 0,
			);

		it("opens a discrepancy with its hold only beyond tolerance and at a higher charge; every other line is counted or an exception", async () => {
			const sender = newSender();
			const a = await shipment(sender, { kg: 0.5 });
			const within = await shipment(sender, { kg: 0.5 });
			const sameSlab = await shipment(sender, { kg: 0.6 });
			const noWarehouse = await shipment(sender, { kg: 0.5, warehouse: false });
			const bulky = await shipment(sender, { kg: 0.5, dims: [10, 10, 10] });
			const closed = await shipment(sender, { kg: 0.5, logistic_id: 9 });
			// booking's charge of A (its attempt is named by the hold)
			const attempt = freshId();
			await sys.broker.call("billing.recordEntries", {
				entries: [
					{
						sender_id: sender,
						attempt_id: attempt,
						order_id: a.order_id,
						kind: "charge",
						amount_paise: 4000,
						awb_number: a.awb,
						note: null,
						occurred_at: new Date().toISOString(),
					},
				],
			});
			const csv = [
				HEADER,
				`${a.awb},1.2,,,`,
				`${within.awb},0.54,,,`,
				`${sameSlab.awb},0.9,,,`,
				`NOSUCH${freshId()},2,,,`,
				`${a.awb},1.3,,,`,
				`X,abc,,,`,
				`${noWarehouse.awb},3,,,`,
				`${bulky.awb},0.5,40,30,20`,
				`${closed.awb},3,,,`,
			].join("\n");
			const report = await reconcile(csv);
			assert.equal(report.duplicate_file, false);
			assert.equal(report.lines, 9);
			assert.equal(report.opened, 2, JSON.stringify(report));
			// A: 0.5 → 1.5 kg = 2 slabs more (₹70); bulky: 0.5 → 5.0 kg = 9 slabs more (₹315)
			assert.equal(report.opened_amount, 385);
			assert.equal(report.within_tolerance, 1);
			assert.equal(report.same_slab, 1);
			assert.deepEqual(
				report.exception_lines.map((e) => [e.line_no, e.kind]),
				[
					[4, "unknown_awb"],
					[5, "duplicate"],
					[6, "invalid_line"],
					[7, "not_priced"],
					[9, "not_priced"],
				],
			);
			assert.equal(report.exceptions, 5);

			const list = await http(sys.base, "GET", "/v1/weight-discrepancies", {
				token: await sys.auth.tokenFor(sender),
			});
			assert.equal(list.status, 200, list.text);
			const byAwb = new Map((list.body.data as WeightDiscrepancy[]).map((d) => [d.awb_number, d]));
			const da = byAwb.get(a.awb);
			assert.ok(da, list.text);
			assert.equal(da.status, "open");
			assert.deepEqual(da.declared, {
				weight: 0.5,
				length: null,
				width: null,
				height: null,
				chargeable_weight: 0.5,
			});
			assert.deepEqual(da.charged, {
				weight: 1.2,
				length: null,
				width: null,
				height: null,
				chargeable_weight: 1.5,
			});
			assert.equal(da.slab_difference, 1);
			assert.equal(da.extra_charge, 70);
			assert.equal(
				new Date(da.respond_by).getTime() - new Date(da.opened_at).getTime(),
				7 * 86_400_000,
				"7 days to answer",
			);
			// the list's filters: the AWB, the opening day (IST) and the status
			const token = await sys.auth.tokenFor(sender);
			const q = async (qs: string) => {
				const r = await http(sys.base, "GET", `/v1/weight-discrepancies?${qs}`, { token });
				assert.equal(r.status, 200, r.text);
				return (r.body.data as WeightDiscrepancy[]).map((x) => x.awb_number).sort();
			};
			const today = new Date(Date.now() + 5.5 * 3_600_000).toISOString().slice(0, 10);
			assert.deepEqual(await q(`awb_number=${a.awb}`), [a.awb]);
			assert.deepEqual(await q(`from=${today}&to=${today}`), [a.awb, bulky.awb].sort());
			assert.deepEqual(await q("from=2020-01-01&to=2020-01-31"), []);
			assert.deepEqual(await q("status=disputed"), []);
			const inverted = await http(sys.base, "GET", "/v1/weight-discrepancies?from=2026-02-01&to=2026-01-01", {
				token,
			});
			assert.equal(inverted.status, 400, inverted.text);
			assert.deepEqual(inverted.body.details, ["to: must not be before from"]);
			const db2 = byAwb.get(bulky.awb);
			assert.deepEqual(db2?.charged, {
				weight: 0.5,
				length: 40,
				width: 30,
				height: 20,
				chargeable_weight: 5,
			});

			// the holds: one wallet entry each, naming A's booking attempt; the balance is their sum plus the charge
			const holds = await select<{ awb_number: string; amount_paise: string; attempt_id: string | null }>(
				db(),
				"SELECT awb_number, amount_paise, attempt_id FROM billing.ledger WHERE sender_id = $1 AND kind = 'weight_discrepancy' ORDER BY awb_number",
				[sender],
			);
			assert.deepEqual(
				holds.map((h) => [
					h.awb_number,
					Number(h.amount_paise),
					h.attempt_id === null ? null : Number(h.attempt_id),
				]),
				[
					[a.awb, 7000, attempt],
					[bulky.awb, 31500, null],
				].sort((x, y) => String(x[0]).localeCompare(String(y[0]))),
			);
			assert.equal(await balanceOf(sender), -(4000 + 7000 + 31500));
			const wallet = await http(sys.base, "GET", "/v1/wallet", { token: await sys.auth.tokenFor(sender) });
			assert.equal(wallet.status, 200, wallet.text);
			assert.equal(wallet.body.balance, -425);
			assert.ok(wallet.body.data.some((m: { kind: string }) => m.kind === "weight_discrepancy"));
			// the merchant event of each, in billing's outbox
			const events = await select<{
				event: { type: string; order_id: number; data: Record<string, unknown> };
			}>(
				db(),
				"SELECT event FROM billing.event_outbox WHERE (event->>'sender_id')::bigint = $1 ORDER BY id",
				[sender],
			);
			assert.deepEqual(
				events.map((e) => [e.event.type, e.event.data.awb_number]).sort(),
				[
					["weight_discrepancy.opened", a.awb],
					["weight_discrepancy.opened", bulky.awb],
				].sort(),
			);

			// the same file again: its stored outcome, nothing opened twice
			const again = await reconcile(csv);
			assert.deepEqual(again, { ...report, duplicate_file: true });
			// another file with A: a discrepancy was opened for it before
			const other = await reconcile(`${HEADER}\n${a.awb},1.4,,,\n`);
			assert.equal(other.opened, 0);
			assert.equal(other.exception_lines[0]?.kind, "duplicate");
			assert.equal(await balanceOf(sender), -(4000 + 7000 + 31500));
			assert.deepEqual(await recomputedBalances(db()), [], "balances equal the sum of their entries");
		});

		it("an AWB billing has not heard of yet is matched through booking's live booked shipment", async () => {
			const sender = newSender();
			const order_id = freshId();
			const awb = `BK${order_id}`;
			orders.set(order_id, { kg: 0.5 });
			booked.set(awb, { sender_id: sender, order_id });
			const r = await reconcile(`${HEADER}\n${awb},1.2,,,\n`);
			assert.equal(r.opened, 1, JSON.stringify(r));
			const [row] = await select<{ sender_id: string; order_id: string }>(
				db(),
				"SELECT sender_id, order_id FROM billing.weight_discrepancies WHERE awb_number = $1",
				[awb],
			);
			assert.deepEqual([Number(row.sender_id), Number(row.order_id)], [sender, order_id]);
		});

		it("the file's courier: an AWB of another courier is unknown_awb", async () => {
			const sender = newSender();
			const s = await shipment(sender, { kg: 0.5, logistic_id: 2 });
			const r = await reconcile(`${HEADER}\n${s.awb},3,,,\n`, 1);
			assert.equal(r.exception_lines[0]?.kind, "unknown_awb");
			assert.equal(r.opened, 0);
		});

		it("an account's tolerance (ops) decides what opens", async () => {
			const sender = newSender();
			const t = await ops("PUT", `/v1/ops/accounts/${sender}/weight-tolerance`, { grams: 1000, percent: 0 });
			assert.equal(t.status, 200, t.text);
			assert.deepEqual(t.body, { sender_id: sender, grams: 1000, percent: 0 });
			const s = await shipment(sender, { kg: 0.5 });
			const r = await reconcile(`${HEADER}\n${s.awb},1.2,,,\n`);
			assert.equal(r.within_tolerance, 1, JSON.stringify(r));
			const bad = await ops("PUT", `/v1/ops/accounts/${sender}/weight-tolerance`, {
				grams: -1,
				percent: 101,
			});
			assert.equal(bad.status, 400, bad.text);
			assert.equal(bad.body.error, "validation_failed");
		});

		/** One open discrepancy of a new account: its id, the account and its merchant token. */
		async function opened(): Promise<{ id: number; sender: number; token: string }> {
			const sender = newSender();
			const s = await shipment(sender, { kg: 0.5 });
			const r = await reconcile(`${HEADER}\n${s.awb},2,,,\n`);
			assert.equal(r.opened, 1, JSON.stringify(r));
			const [row] = await select<{ id: string }>(
				db(),
				"SELECT id FROM billing.weight_discrepancies WHERE awb_number = $1",
				[s.awb],
			);
			return { id: Number(row.id), sender, token: await sys.auth.tokenFor(sender) };
		}

		it("the merchant reads and accepts an open one; read-only roles and other accounts cannot", async () => {
			const d = await opened();
			const one = await http(sys.base, "GET", `/v1/weight-discrepancies/${d.id}`, { token: d.token });
			assert.equal(one.status, 200, one.text);
			assert.equal(one.body.status, "open");
			const stranger = await sys.auth.tokenFor(newSender());
			assert.equal(
				(await http(sys.base, "GET", `/v1/weight-discrepancies/${d.id}`, { token: stranger })).status,
				404,
			);
			const strangerAccept = await http(sys.base, "POST", `/v1/weight-discrepancies/${d.id}/accept`, {
				token: stranger,
			});
			assert.equal(strangerAccept.status, 404, strangerAccept.text);
			assert.equal(strangerAccept.body.error, "discrepancy_not_found");
			const finance = await sys.auth.tokenFor(d.sender, "merchant_finance");
			assert.equal(
				(await http(sys.base, "GET", `/v1/weight-discrepancies/${d.id}`, { token: finance })).status,
				200,
				"read-only roles may read",
			);
			const ro = await http(sys.base, "POST", `/v1/weight-discrepancies/${d.id}/accept`, { token: finance });
			assert.equal(ro.status, 403, ro.text);
			assert.equal(ro.body.error, "Read-only role");
			const bad = await http(sys.base, "GET", "/v1/weight-discrepancies?status=nope&from=2026-13-01", {
				token: d.token,
			});
			assert.equal(bad.status, 400, bad.text);
			assert.equal(bad.body.details.length, 2, bad.text);

			const ok = await http(sys.base, "POST", `/v1/weight-discrepancies/${d.id}/accept`, { token: d.token });
			assert.equal(ok.status, 200, ok.text);
			assert.equal(ok.body.status, "accepted");
			assert.ok(ok.body.closed_at);
			const twice = await http(sys.base, "POST", `/v1/weight-discrepancies/${d.id}/accept`, {
				token: d.token,
			});
			assert.equal(twice.status, 409, twice.text);
			assert.equal(twice.body.error, "discrepancy_not_open");
			assert.equal(twice.body.status, "accepted");
			const filtered = await http(sys.base, "GET", "/v1/weight-discrepancies?status=open", {
				token: d.token,
			});
			assert.deepEqual(filtered.body.data, [], "status filter");
			assert.equal(await balanceOf(d.sender), -10500, "accepted: the hold (₹105) stays the charge");
		});

		/** A POST of a multipart form to the dispute route. */
		async function dispute(id: number, token: string, form: FormData) {
			const r = await fetch(`${sys.base}/v1/weight-discrepancies/${id}/dispute`, {
				method: "POST",
				headers: { authorization: `Bearer ${token}` },
				body: form,
			});
			const text = await r.text();
			return { status: r.status, text, body: text ? JSON.parse(text) : undefined };
		}

		it("a dispute with images (checked by their bytes, stored without EXIF); ops decide: won refunds the hold", async () => {
			const d = await opened();
			const png = await sharp({ create: { width: 64, height: 48, channels: 3, background: "#36c" } })
				.png()
				.withExif({ IFD0: { Copyright: "GPS-SECRET-PLACE" } })
				.toBuffer();
			assert.ok(png.includes("GPS-SECRET-PLACE"), "the upload carries EXIF");
			const jpeg = await sharp({ create: { width: 32, height: 32, channels: 3, background: "#fa0" } })
				.jpeg()
				.withExif({ IFD0: { Artist: "GPS-SECRET-PLACE" } })
				.toBuffer();

			const notImage = new FormData();
			notImage.append("reason", "The parcel weighed 500 g at pickup");
			notImage.append(
				"images",
				new Blob([Buffer.from("%PDF-1.7 not an image")], { type: "image/png" }),
				"a.png",
			);
			const r1 = await dispute(d.id, d.token, notImage);
			assert.equal(r1.status, 400, r1.text);
			assert.equal(r1.body.error, "invalid_dispute");
			assert.match(r1.body.message, /not a JPEG or PNG/);

			const noImage = new FormData();
			noImage.append("reason", "The parcel weighed 500 g at pickup");
			const r2 = await dispute(d.id, d.token, noImage);
			assert.equal(r2.status, 400, r2.text);
			assert.equal(r2.body.error, "invalid_dispute");

			const six = new FormData();
			six.append("reason", "The parcel weighed 500 g at pickup");
			for (let i = 0; i < 6; i++) six.append("images", new Blob([png], { type: "image/png" }), `p${i}.png`);
			const r6 = await dispute(d.id, d.token, six);
			assert.equal(r6.status, 400, r6.text);
			assert.equal(r6.body.error, "invalid_dispute");
			assert.match(r6.body.message, /more than 5 file parts/);

			const terse = new FormData();
			terse.append("reason", "too light");
			terse.append("images", new Blob([png], { type: "image/png" }), "p.png");
			const rt = await dispute(d.id, d.token, terse);
			assert.equal(rt.status, 400, rt.text);
			assert.match(rt.body.message, /reason must be 10 to 1000 characters/);

			const badId = await dispute(0, d.token, terse);
			assert.equal(badId.status, 400, badId.text);
			assert.equal(badId.body.error, "validation_failed");

			const big = new FormData();
			big.append("reason", "The parcel weighed 500 g at pickup");
			big.append("images", new Blob([Buffer.concat([png, Buffer.alloc(5 * 1024 * 1024)])]), "big.png");
			const r3 = await dispute(d.id, d.token, big);
			assert.equal(r3.status, 413, r3.text);
			assert.equal(r3.body.error, "image_too_large");

			const finance = await sys.auth.tokenFor(d.sender, "merchant_finance");
			const good = () => {
				const f = new FormData();
				f.append("images", new Blob([png], { type: "image/png" }), "scale.png");
				f.append("reason", "  The parcel weighed 500 g at pickup; photo of the scale attached.  ");
				f.append("images", new Blob([jpeg], { type: "image/jpeg" }), "box.jpg");
				return f;
			};
			const r4 = await dispute(d.id, finance, good());
			assert.equal(r4.status, 403, r4.text);
			assert.equal(r4.body.error, "Read-only role");
			const unchanged = await http(sys.base, "GET", `/v1/weight-discrepancies/${d.id}`, { token: d.token });
			assert.equal(unchanged.body.status, "open", "nothing refused was stored");
			assert.deepEqual(unchanged.body.images, []);

			const r5 = await dispute(d.id, d.token, good());
			assert.equal(r5.status, 200, r5.text);
			assert.equal(r5.body.status, "disputed");
			assert.equal(
				r5.body.dispute_reason,
				"The parcel weighed 500 g at pickup; photo of the scale attached.",
			);
			assert.deepEqual(
				r5.body.images.map((i: { n: number; content_type: string; width: number }) => [
					i.n,
					i.content_type,
					i.width,
				]),
				[
					[1, "image/png", 64],
					[2, "image/jpeg", 32],
				],
			);
			const img = await http(sys.base, "GET", `/v1/weight-discrepancies/${d.id}/images/1`, {
				token: d.token,
			});
			assert.equal(img.status, 200);
			assert.equal(img.headers.get("content-type"), "image/png");
			assert.equal(img.bytes.includes("GPS-SECRET-PLACE"), false, "EXIF stripped");
			assert.equal((await sharp(img.bytes).metadata()).width, 64);
			const img2 = await http(sys.base, "GET", `/v1/weight-discrepancies/${d.id}/images/2`, {
				token: d.token,
			});
			assert.equal(img2.bytes.includes("GPS-SECRET-PLACE"), false, "EXIF stripped from the JPEG");
			const noSuchImage = await http(sys.base, "GET", `/v1/weight-discrepancies/${d.id}/images/3`, {
				token: d.token,
			});
			assert.equal(noSuchImage.status, 404, "two images were stored");
			const strangerImg = await http(sys.base, "GET", `/v1/weight-discrepancies/${d.id}/images/1`, {
				token: await sys.auth.tokenFor(newSender()),
			});
			assert.equal(strangerImg.status, 404);
			const opsImg = await ops("GET", `/v1/ops/weight-discrepancies/${d.id}/images/2`);
			assert.equal(opsImg.status, 200);
			assert.equal(opsImg.headers.get("content-type"), "image/jpeg");
			const again = await dispute(d.id, d.token, good());
			assert.equal(again.status, 409, again.text);
			assert.equal(again.body.error, "discrepancy_not_open");

			assert.equal(await balanceOf(d.sender), -10500, "held while disputed");
			const won = await ops("POST", `/v1/ops/weight-discrepancies/${d.id}/resolve`, {
				outcome: "won",
				note: "scale photo matches the declared weight",
			});
			assert.equal(won.status, 200, won.text);
			assert.equal(won.body.status, "won");
			assert.equal(won.body.resolution_note, "scale photo matches the declared weight");
			assert.equal(await balanceOf(d.sender), 0, "the hold refunded");
			const wonAgain = await ops("POST", `/v1/ops/weight-discrepancies/${d.id}/resolve`, { outcome: "won" });
			assert.equal(wonAgain.status, 200, wonAgain.text);
			assert.equal(await balanceOf(d.sender), 0, "refunded once");
			const lost = await ops("POST", `/v1/ops/weight-discrepancies/${d.id}/resolve`, { outcome: "lost" });
			assert.equal(lost.status, 409, lost.text);
			assert.equal(lost.body.error, "discrepancy_not_disputed");
			const wallet = await http(sys.base, "GET", "/v1/wallet", { token: d.token });
			assert.deepEqual(
				wallet.body.data.map((m: { kind: string; amount: number }) => [m.kind, m.amount]),
				[
					["weight_discrepancy_refund", 105],
					["weight_discrepancy", 105],
				],
			);
			assert.deepEqual(await recomputedBalances(db()), []);
		});

		it("ops resolve lost: the hold stays the charge; an open one cannot be resolved", async () => {
			const d = await opened();
			const early = await ops("POST", `/v1/ops/weight-discrepancies/${d.id}/resolve`, { outcome: "lost" });
			assert.equal(early.status, 409, early.text);
			assert.equal(early.body.status, "open");
			const f = new FormData();
			f.append("reason", "The courier weighed the wrong parcel");
			f.append(
				"images",
				new Blob([
					await sharp({ create: { width: 8, height: 8, channels: 3, background: "#000" } })
						.png()
						.toBuffer(),
				]),
				"p.png",
			);
			assert.equal((await dispute(d.id, d.token, f)).status, 200);
			const lost = await ops("POST", `/v1/ops/weight-discrepancies/${d.id}/resolve`, { outcome: "lost" });
			assert.equal(lost.status, 200, lost.text);
			assert.equal(lost.body.status, "lost");
			assert.equal(await balanceOf(d.sender), -10500);
			const missing = await ops("POST", "/v1/ops/weight-discrepancies/999999999/resolve", { outcome: "won" });
			assert.equal(missing.status, 404, missing.text);
		});

		it("unanswered for 7 days: auto-accepted by the job; an answered one is left alone", async () => {
			const d = await opened();
			const e = await opened();
			await http(sys.base, "POST", `/v1/weight-discrepancies/${e.id}/accept`, { token: e.token });
			const soon = (await sys.broker.call("billing.autoAcceptDiscrepancies", {
				now: new Date(Date.now() + 6 * 86_400_000).toISOString(),
			})) as { auto_accepted: number };
			assert.equal(
				(await http(sys.base, "GET", `/v1/weight-discrepancies/${d.id}`, { token: d.token })).body.status,
				"open",
				`6 days: still open (${soon.auto_accepted} others)`,
			);
			const later = (await sys.broker.call("billing.autoAcceptDiscrepancies", {
				now: new Date(Date.now() + 8 * 86_400_000).toISOString(),
			})) as { auto_accepted: number };
			assert.ok(later.auto_accepted >= 1);
			assert.equal(
				(await http(sys.base, "GET", `/v1/weight-discrepancies/${d.id}`, { token: d.token })).body.status,
				"auto_accepted",
			);
			assert.equal(
				(await http(sys.base, "GET", `/v1/weight-discrepancies/${e.id}`, { token: e.token })).body.status,
				"accepted",
			);
		});
	});
});
