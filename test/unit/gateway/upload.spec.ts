/**
 * The gateway's upload route (lib/gateway/route-options.ts `uploadRoute`,
 * lib/gateway/upload.ts `uploadParams`): every alias of kind `upload` is a
 * moleculer-web `stream` alias, and the action's params are exactly
 * `{query, content_type, path}`: the query string, the `Content-Type` header
 * and the alias's path parameters (flat strings), none of them ever taken
 * from another place (a query key named `content_type`, `path` or like a path
 * parameter stays in `query`). The body is never read by the gateway: it
 * reaches the action whole as `ctx.stream`.
 *
 * The route's real options on a real moleculer-web (its path-param
 * parsing, `mergeParams: false`) with a path-parameter alias of the test's
 * own, and the real gateway with the bulk upload (no path parameter).
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import type { Readable } from "node:stream";
import { type Context, ServiceBroker } from "moleculer";
import ApiGateway from "moleculer-web";
import type { UploadParams } from "../../../lib/contracts";
import { INTAKE_BULK_ROUTES } from "../../../lib/contracts/http/intake-bulk";
import { gatewayRoutes } from "../../../lib/gateway/route-options";
import { UPLOAD_ALIASES } from "../../../lib/gateway/routes";
import { uploadParams } from "../../../lib/gateway/upload";
import type { RouteOptions } from "../../../lib/gateway/web-types";
import { startWithGateway, testBrokerOptions } from "../../helpers/broker";
import { fakeService } from "../../helpers/call";
import { skipContract } from "../../helpers/contract";
import { useDevIdp } from "../../helpers/devidp";

/** The gateway's real `upload` route options. */
function realUploadRoute(): RouteOptions {
	const route = gatewayRoutes({ nodeID: "test-node", devIdp: false, trustProxy: 0 }).find(
		(r) => r.name === "upload",
	);
	assert.ok(route, "the gateway has an upload route");
	return route;
}

/** Reads `stream` to its end. */
async function bytesOf(stream: Readable | null | undefined): Promise<Buffer> {
	const chunks: Buffer[] = [];
	if (stream) for await (const c of stream) chunks.push(Buffer.from(c));
	return Buffer.concat(chunks);
}

const sha = (b: Buffer) => createHash("sha256").update(b).digest("hex");

describe("gateway upload route: every upload alias, params {query, content_type, path}", () => {
	describe("the route options", () => {
		it("serve every alias of UPLOAD_ALIASES as a stream alias of its action, raw body, params set by uploadParams", () => {
			const route = realUploadRoute();
			assert.ok(Object.keys(UPLOAD_ALIASES).length >= 1);
			assert.deepEqual(
				route.aliases,
				Object.fromEntries(
					Object.entries(UPLOAD_ALIASES).map(([key, action]) => [key, { type: "stream", action }]),
				),
			);
			assert.equal(route.mergeParams, false);
			assert.equal(route.bodyParsers, false);
			assert.equal(route.authentication, true);
			assert.equal(route.authorization, true);
			assert.equal(route.onBeforeCall, uploadParams);
		});
	});

	describe("uploadParams", () => {
		it("takes the query, the Content-Type header and the path parameters, each from its own place", () => {
			const req = {
				headers: { "content-type": "multipart/form-data; boundary=b" },
				query: { x: "1", content_type: "text/plain", path: "evil", id: "9" },
				$params: { body: undefined, query: {}, params: { id: "7", rest: ["a", "b"], gone: undefined } },
			};
			uploadParams(undefined, undefined, req as never);
			const params: UploadParams = req.$params as never;
			assert.deepEqual(params, {
				query: { x: "1", content_type: "text/plain", path: "evil", id: "9" },
				content_type: "multipart/form-data; boundary=b",
				path: { id: "7", rest: "a/b" },
			});
			assert.equal(Object.getPrototypeOf(params.path), Object.prototype);
		});

		it('no path parameters, no query, no Content-Type: {} and ""', () => {
			const req = { headers: {}, $params: { body: undefined, query: {} } };
			uploadParams(undefined, undefined, req as never);
			assert.deepEqual(req.$params, { query: {}, content_type: "", path: {} });
		});
	});

	describe("on moleculer-web, an upload alias with a path parameter", () => {
		skipContract("the test's own aliases on a fake action: route mechanics, not in the API document");
		let broker: ServiceBroker;
		let base: string;
		const seen: Array<{ params: unknown; size: number; sha: string }> = [];

		before(async () => {
			broker = new ServiceBroker(testBrokerOptions(false));
			broker.createService({
				name: "fake",
				actions: {
					async dispute(ctx: Context) {
						const body = await bytesOf(ctx.stream as Readable | undefined);
						seen.push({ params: ctx.params, size: body.length, sha: sha(body) });
						return { ok: true };
					},
				},
			});
			const real = realUploadRoute();
			broker.createService({
				name: "gw",
				mixins: [ApiGateway],
				settings: {
					port: 0,
					ip: "127.0.0.1",
					routes: [
						{
							...real,
							// the test's own aliases (the real ones are checked above); no bearer here
							aliases: {
								"POST /v1/weight-discrepancies/:id/dispute": { type: "stream", action: "fake.dispute" },
								"POST /v1/flat": { type: "stream", action: "fake.dispute" },
							},
							authentication: false,
							authorization: false,
						},
					],
				},
			});
			await broker.start();
			const gw = broker.getLocalService("gw") as unknown as { server: { address(): { port: number } } };
			base = `http://127.0.0.1:${gw.server.address().port}`;
		});
		after(async () => {
			await broker?.stop();
		});

		it('POST /v1/weight-discrepancies/7/dispute?x=1: params {query:{x:"1"}, content_type, path:{id:"7"}}, the body whole as ctx.stream', async () => {
			seen.length = 0;
			const fd = new FormData();
			fd.append("reason", "wrong weight");
			fd.append("images", new Blob([Buffer.alloc(300_000, 3)], { type: "image/jpeg" }), "a.jpg");
			const req = new Request(`${base}/v1/weight-discrepancies/7/dispute?x=1`, { method: "POST", body: fd });
			const sent = Buffer.from(await req.clone().arrayBuffer());
			const r = await fetch(req);
			assert.equal(r.status, 200, await r.text());
			assert.equal(seen.length, 1);
			assert.deepEqual(seen[0].params, {
				query: { x: "1" },
				content_type: req.headers.get("content-type"),
				path: { id: "7" },
			});
			assert.equal(seen[0].size, sent.length);
			assert.equal(seen[0].sha, sha(sent));
		});

		it("a query key never stands in for content_type, path or a path parameter; a path parameter is decoded", async () => {
			seen.length = 0;
			const r = await fetch(
				`${base}/v1/weight-discrepancies/a%20b/dispute?content_type=text%2Fplain&path=x&id=9&params=y`,
				{
					method: "POST",
					headers: { "content-type": "multipart/form-data; boundary=zz" },
					body: "--zz--\r\n",
				},
			);
			assert.equal(r.status, 200, await r.text());
			assert.deepEqual(seen[0].params, {
				query: { content_type: "text/plain", path: "x", id: "9", params: "y" },
				content_type: "multipart/form-data; boundary=zz",
				path: { id: "a b" },
			});
		});

		it('an alias without path parameters: path {}; no Content-Type: ""', async () => {
			seen.length = 0;
			const r = await fetch(`${base}/v1/flat`, { method: "POST", body: Buffer.from("raw") });
			assert.equal(r.status, 200, await r.text());
			const params = seen[0].params as UploadParams;
			assert.deepEqual(params.path, {});
			assert.deepEqual(params.query, {});
			assert.equal(params.content_type, "");
			assert.equal(seen[0].size, 3);
		});
	});

	describe("through the real gateway, the bulk upload", function () {
		this.timeout(60_000);
		const idp = useDevIdp();
		let broker: ServiceBroker;
		let base: string;
		let got: { params: UploadParams; size: number } | undefined;

		before(async () => {
			({ broker, base } = await startWithGateway([
				fakeService("intake", {
					bulkUpload: {
						access: INTAKE_BULK_ROUTES["intake.bulkUpload"].access,
						async handler(ctx) {
							const body = await bytesOf(ctx.stream as Readable | undefined);
							got = { params: ctx.params, size: body.length };
							ctx.meta.$statusCode = 202;
							return { job_id: 1, status: "queued" as const };
						},
					},
				}),
			]));
		});
		after(async () => {
			await broker?.stop();
		});

		it("POST /v1/intake/bulk?sender_address_id=5: params {query, content_type, path: {}}", async () => {
			const token = await idp.tokenFor(4242);
			const body = Buffer.from('--b1\r\nContent-Disposition: form-data; name="a"\r\n\r\n1\r\n--b1--\r\n');
			const r = await fetch(`${base}/v1/intake/bulk?sender_address_id=5`, {
				method: "POST",
				headers: { authorization: `Bearer ${token}`, "content-type": "multipart/form-data; boundary=b1" },
				body,
			});
			assert.equal(r.status, 202, await r.text());
			assert.deepEqual(got?.params, {
				query: { sender_address_id: "5" },
				content_type: "multipart/form-data; boundary=b1",
				path: {},
			});
			assert.equal(got?.size, body.length);
		});
	});
});
