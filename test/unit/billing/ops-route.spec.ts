/**
 * The ops route of couriers' COD remittance files through the real gateway
 * (issue 27; `POST /v1/ops/cod-remittances`; docs/decisions/0103-ops-routes.md):
 * only the ops token `OPS_API_TOKEN` opens it — no token, a merchant's JWT,
 * a wrong token, or none configured answer 401 in the §2.11 envelope —
 * and a file is reconciled, its body checked (400 `validation_failed`,
 * 400 `invalid_remittance_file`). Real gateway, billing and PostgreSQL.
 */
import assert from "node:assert/strict";
import { insertShipment } from "../../../lib/billing/store";
import { getSequelize } from "../../../lib/platform/db";
import { newSender } from "../../helpers/broker";
import { freshId } from "../../helpers/fixtures";
import { http } from "../gateway/setup";
import { OPS_TOKEN, useBillingGateway } from "./setup";

describe("billing: POST /v1/ops/cod-remittances (ops token)", function () {
	this.timeout(30_000);
	const sys = useBillingGateway();
	const OPS = OPS_TOKEN;
	const post = (body: unknown, token?: string) =>
		http(sys.base, "POST", "/v1/ops/cod-remittances", { body, token });

	it("answers 401 without the ops token: none, a merchant's JWT, a wrong one, or none configured", async () => {
		const body = { csv: "awb_number,amount,remittance_reference,remittance_date\n" };
		const none = await post(body);
		assert.equal(none.status, 401);
		assert.deepEqual(none.body, { error: "Authentication required" });
		const merchant = await post(body, await sys.auth.tokenFor(newSender(), "merchant_admin"));
		assert.equal(merchant.status, 401);
		assert.equal(merchant.body.error, "Invalid or expired token");
		assert.equal(merchant.body.code, "token_invalid");
		assert.equal((await post(body, `${OPS}x`)).status, 401);
		delete process.env.OPS_API_TOKEN;
		try {
			assert.equal((await post(body, OPS)).status, 401, "no token configured: every ops call refused");
		} finally {
			process.env.OPS_API_TOKEN = OPS_TOKEN;
		}
	});

	it("reconciles a file with the ops token; the same file again is its stored outcome", async () => {
		const awb = `OPS${freshId()}`;
		await insertShipment(getSequelize(), {
			awb_number: awb,
			seq: 6,
			target: "collected",
			at: new Date().toISOString(),
			sender_id: newSender(),
			order_id: freshId(),
			logistic_id: 1,
			payment_mode: "cod",
			cod_amount_paise: 99_900,
		});
		const csv = `awb_number,amount,remittance_reference,remittance_date\n${awb},999.00,REM-OPS-1,2026-11-21\nX${awb},5,REM-OPS-1,2026-11-21\n`;
		const r = await post({ csv, logistic_id: "1" }, OPS);
		assert.equal(r.status, 200, r.text);
		assert.equal(r.body.duplicate_file, false);
		assert.equal(r.body.matched, 1);
		assert.equal(r.body.matched_amount, 999);
		assert.deepEqual(r.body.exception_lines, [
			{ line_no: 2, awb_number: `X${awb}`, kind: "unknown_awb", detail: `no shipment has AWB X${awb}` },
		]);
		const again = await post({ csv, logistic_id: 1 }, OPS);
		assert.equal(again.status, 200);
		assert.deepEqual(again.body, { ...r.body, duplicate_file: true });
	});

	it("400 validation_failed for a body without csv; 400 invalid_remittance_file for a header that lacks a column or a file that is not CSV", async () => {
		const missing = await post({ logistic_id: 1 }, OPS);
		assert.equal(missing.status, 400);
		assert.equal(missing.body.error, "validation_failed");
		const header = await post({ csv: "awb,amount\nA,1\n" }, OPS);
		assert.equal(header.status, 400);
		assert.deepEqual(header.body, {
			error: "invalid_remittance_file",
			message: "remittance file: the header lacks awb_number, remittance_reference, remittance_date",
		});
		const notCsv = await post(
			{ csv: 'awb_number,amount,remittance_reference,remittance_date\n"AWB1,1' },
			OPS,
		);
		assert.equal(notCsv.status, 400);
		assert.equal(notCsv.body.error, "invalid_remittance_file");
		assert.match(notCsv.body.message, /^remittance file: not CSV \(/);
	});

	it("413 for a body over the ops route's 10 MB, before the action is reached", async () => {
		const big = await post({ csv: "x".repeat(10 * 1024 * 1024 + 1) }, OPS);
		assert.equal(big.status, 413);
		assert.equal(big.body.error, "payload_too_large");
	});
});
