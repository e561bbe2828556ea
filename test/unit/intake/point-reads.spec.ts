/**
 * The coalesced point reads of the order detail and the status read (issue 32,
 * lib/intake/deps.ts `orderRow` / `storedStatus`): concurrent reads of
 * several senders share one statement and each gets only its own sender's
 * order — the same order id or reference asked by another sender in the same
 * wave answers null (§1 rule 4).
 */
import assert from "node:assert/strict";
import { intakeWriters } from "../../../lib/intake/deps";
import { UNCHANGED } from "../../../lib/intake/list-store";
import { getSequelize } from "../../../lib/platform/db";
import { newSender } from "../../helpers/broker";
import { broker, create, forwardBody, useIntake, warehouseOf } from "./setup";

describe("intake: coalesced detail and status reads (one statement per wave, per-sender answers)", () => {
	useIntake();

	it("a wave of detail reads answers each pair only when the order is that sender's", async () => {
		const a = newSender();
		const b = newSender();
		const ref = `PR-${a}`;
		const made = await create(a, forwardBody(warehouseOf(a), ref));
		const id = made.result.order_id;
		const w = intakeWriters(getSequelize(), broker());
		const [mine, theirs, missing] = await Promise.all([
			w.orderRow(a, id),
			w.orderRow(b, id),
			w.orderRow(a, id + 1_000_000),
		]);
		assert.ok(mine !== null && mine !== UNCHANGED);
		assert.equal(Number(mine.order_id), id);
		assert.equal(mine.customer_order_no, ref);
		assert.equal(
			(mine as unknown as Record<string, unknown>).owner_id,
			undefined,
			"the key column is not in the row",
		);
		assert.equal(theirs, null);
		assert.equal(missing, null);
	});

	it("a wave of status reads answers each reference only for its sender", async () => {
		const a = newSender();
		const b = newSender();
		const ref = `PS-${a}`;
		const made = await create(a, forwardBody(warehouseOf(a), ref));
		const other = await create(b, forwardBody(warehouseOf(b), `${ref}-B`));
		const w = intakeWriters(getSequelize(), broker());
		const [mine, theirs, bOwn] = await Promise.all([
			w.storedStatus(a, ref),
			w.storedStatus(b, ref),
			w.storedStatus(b, `${ref}-B`),
		]);
		assert.equal(mine?.order_id, made.result.order_id);
		assert.equal(mine?.record.order_no, ref);
		assert.equal(mine?.record.state, "not_shipped");
		assert.equal(theirs, null);
		assert.equal(bOwn?.order_id, other.result.order_id);
	});
});
