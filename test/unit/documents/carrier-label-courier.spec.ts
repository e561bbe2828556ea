/**
 * Courier-issued labels, courier side (lib/couriers `issuesOwnLabel` / `fetchLabel`, the sandbox
 * mapper `parseLabel`, the simulator's `GET /api/p/packing_slip?wbns=`): which sandbox couriers
 * issue their own label (`SANDBOX_OWN_LABEL_COURIERS`), how each answer of the packing slip is read
 * (file, definitive "no label", retryable), and the simulator's answers for a courier that issues none.
 */
import assert from "node:assert/strict";
import type { ServiceBroker } from "moleculer";
import { CourierRefused, CourierUnavailable, NoCourierLabel, SandboxAdapter } from "../../../lib/couriers";
import { parseLabel } from "../../../lib/couriers/sandbox/mapper";
import { sandboxOwnLabelCouriers, sandboxSettings } from "../../../lib/couriers/sandbox/settings";
import { describeFile } from "../../../lib/documents/policy";
import { rejects, startBroker } from "../../helpers/broker";
import { freePort } from "../../helpers/net";
import { eventually } from "../../helpers/poll";

const PDF = Buffer.from("%PDF-1.7\n% courier\n%%EOF\n", "latin1");
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13]);
const json = (v: unknown) => Buffer.from(JSON.stringify(v));

describe("courier-issued labels: the courier side", () => {
	describe("which couriers issue their own label (a setting of the courier account)", () => {
		it("SANDBOX_OWN_LABEL_COURIERS: unset → sbx-lite; a list; `none` or empty → no courier", () => {
			assert.deepEqual(sandboxOwnLabelCouriers({}), ["sbx-lite"]);
			assert.deepEqual(sandboxOwnLabelCouriers({ SANDBOX_OWN_LABEL_COURIERS: " sbx-surface, sbx-lite " }), [
				"sbx-surface",
				"sbx-lite",
			]);
			assert.deepEqual(sandboxOwnLabelCouriers({ SANDBOX_OWN_LABEL_COURIERS: "none" }), []);
			assert.deepEqual(sandboxOwnLabelCouriers({ SANDBOX_OWN_LABEL_COURIERS: "" }), []);
			assert.equal(sandboxSettings("sbx-lite", {}).ownLabel, true);
			assert.equal(sandboxSettings("sbx-express", {}).ownLabel, false);
			assert.equal(sandboxSettings("sbx-lite", { SANDBOX_OWN_LABEL_COURIERS: "none" }).ownLabel, false);
		});

		it("an adapter of a courier that issues none answers NoCourierLabel (a CourierRefused) without a call", async () => {
			// nothing listens on port 9: a call would be CourierUnavailable
			const adapter = new SandboxAdapter("sbx-express", { baseUrl: "http://127.0.0.1:9", ownLabel: false });
			assert.equal(adapter.issuesOwnLabel, false);
			const err = await rejects(() => adapter.fetchLabel("14000000000001"));
			assert.ok(err instanceof NoCourierLabel);
			assert.ok(err instanceof CourierRefused);
			assert.equal(err.message, "sbx-express does not issue its own labels");
			const lite = new SandboxAdapter("sbx-lite", { baseUrl: "http://127.0.0.1:9", ownLabel: true });
			assert.equal(lite.issuesOwnLabel, true);
			assert.ok((await rejects(() => lite.fetchLabel("13000000000001"))) instanceof CourierUnavailable);
		});
	});

	describe("reading a packing slip answer (mapper parseLabel)", () => {
		const read = (status: number, content_type: string, bytes: Buffer) =>
			parseLabel({ status, content_type, bytes }, "sbx-lite", "13000000000042");

		it("200 with a PDF or PNG whose bytes match: the file, bytes untouched", () => {
			const pdf = read(200, "application/pdf", PDF);
			assert.equal(pdf.content_type, "application/pdf");
			assert.ok(pdf.bytes.equals(PDF));
			assert.equal(read(200, "image/png", PNG).content_type, "image/png");
		});

		it("200 JSON packages_found 0: NoCourierLabel (definitive)", () => {
			assert.throws(
				() => read(200, "application/json", json({ packages_found: 0, packages: [] })),
				(e: Error) => e instanceof NoCourierLabel && /has no label for this AWB/.test(e.message),
			);
		});

		it("anything else is not a decision: CourierUnavailable (retried)", () => {
			const cases: [number, string, Buffer][] = [
				[401, "application/json", json({ detail: "bad token" })],
				[404, "application/json", json({ error: "not enabled" })],
				[200, "application/json", json({ packages_found: 1 })],
				[200, "application/json", Buffer.from("{not json")],
				[200, "text/html", Buffer.from("<html>")],
				[200, "application/pdf", Buffer.from("<html>not a pdf")],
				[200, "application/pdf", Buffer.alloc(0)],
				[400, "application/pdf", PDF],
			];
			for (const [status, type, bytes] of cases) {
				assert.throws(
					() => read(status, type, bytes),
					(e: Error) => e instanceof CourierUnavailable,
					`${status} ${type} ${bytes.length}`,
				);
			}
		});
	});

	describe("serving a stored file (documents policy describeFile)", () => {
		it("the courier's type when the bytes agree; sniffed otherwise; never a renderable page type", () => {
			assert.deepEqual(describeFile(PDF, "application/pdf"), { type: "application/pdf", ext: "pdf" });
			assert.deepEqual(describeFile(PNG, "image/png; charset=binary"), { type: "image/png", ext: "png" });
			assert.deepEqual(describeFile(PDF, "text/html"), { type: "application/pdf", ext: "pdf" });
			assert.deepEqual(describeFile(PDF, null), { type: "application/pdf", ext: "pdf" });
			assert.deepEqual(describeFile(Buffer.from("<html>"), "text/html"), {
				type: "application/octet-stream",
				ext: "bin",
			});
		});
	});

	describe("the simulator's packing slip", () => {
		let broker: ServiceBroker | undefined;
		let port = 0;
		const saved = { ...process.env };

		before(async () => {
			port = await freePort();
			Object.assign(process.env, { SANDBOX: "1", SANDBOX_COURIER_PORT: String(port) });
			delete process.env.SANDBOX_COURIER_URL;
			delete process.env.SANDBOX_OWN_LABEL_COURIERS;
			broker = await startBroker(["simulator"]);
			await eventually(async () => (await fetch(`http://127.0.0.1:${port}/health`).catch(() => null))?.ok, {
				what: "the simulator listening",
			});
		});
		after(async () => {
			await broker?.stop();
			for (const k of ["SANDBOX", "SANDBOX_COURIER_PORT"]) {
				if (saved[k] === undefined) delete process.env[k];
				else process.env[k] = saved[k];
			}
		});

		const slip = (code: string, query: string) =>
			fetch(`http://127.0.0.1:${port}/couriers/${code}/api/p/packing_slip${query}`, {
				headers: { Authorization: "Token sandbox-token" },
			});

		it("a courier that issues no labels answers 404; an unknown AWB 200 packages_found 0; no waybill 400; no token 401", async () => {
			const off = await slip("sbx-express", "?wbns=14000000000001");
			assert.equal(off.status, 404);
			assert.deepEqual(await off.json(), { error: "Packing slips are not enabled for SBX Express" });
			const unknown = await slip("sbx-lite", "?wbns=13999999999999");
			assert.equal(unknown.status, 200);
			assert.deepEqual(await unknown.json(), { packages_found: 0, packages: [] });
			assert.equal((await slip("sbx-lite", "")).status, 400);
			const anon = await fetch(`http://127.0.0.1:${port}/couriers/sbx-lite/api/p/packing_slip?wbns=1`);
			assert.equal(anon.status, 401);
			// through the adapter: a definitive "no label"
			const err = await rejects(() => new SandboxAdapter("sbx-lite").fetchLabel("13999999999999"));
			assert.ok(err instanceof NoCourierLabel, String(err));
		});
	});
});
