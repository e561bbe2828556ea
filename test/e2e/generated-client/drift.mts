/**
 * The negative control of flow.mts: calls that drifted from the served
 * document, each on a line marked `DRIFT`. test/e2e/generated-client.spec.ts
 * type-checks it next to the generated `schema.d.ts` and expects `tsc` to
 * report an error on every marked line and nowhere else: the generated types
 * are real (not `any`), so a renamed route, field or parameter breaks the build.
 * Never run.
 */
import createClient from "openapi-fetch";
import type { paths } from "./schema.js";

const client = createClient<paths>({ baseUrl: "http://127.0.0.1:9" });

/** Each marked call names something the document does not have. */
export async function drifted(order_id: number): Promise<string> {
	await client.GET("/v1/shipping/servicable", {}); // DRIFT: a misspelt route
	await client.POST("/v1/shipping/book", { body: { orderId: order_id } }); // DRIFT: a body field renamed
	await client.GET("/v1/documents/label/{orderId}", { params: { path: { order_id } } }); // DRIFT: a path parameter renamed
	await client.POST("/v1/warehouses", { body: { warehouse_name: "Main" } }); // DRIFT: required fields missing
	const s = await client.GET("/v1/orders/status", { params: { query: { order_no: "ORD-1" } } });
	return s.data ? s.data.awb : ""; // DRIFT: a field the answer does not have
}
