/**
 * Types of the OpenAPI 3.1 document (issue 11). Each area of the API
 * describes its operations in lib/openapi/paths/<area>.ts as an
 * {@link AreaPaths}: keyed by the gateway's alias key exactly as written in
 * lib/gateway/routes.ts (`"GET /v1/orders/:id"`), so a test can prove that
 * every route has a description and every description a route. The document
 * builder (lib/openapi/index.ts) turns alias paths into OpenAPI paths
 * (`:id` → `{id}`).
 */
import type { OpenAPIV3_1 } from "openapi-types";

/** One operation (method + path) of the document. */
export type Operation = OpenAPIV3_1.OperationObject;
/** A JSON Schema (2020-12 dialect, as OpenAPI 3.1 uses). */
export type JsonSchema = OpenAPIV3_1.SchemaObject;
/** A response object. */
export type Response = OpenAPIV3_1.ResponseObject;
/** A parameter object. */
export type Parameter = OpenAPIV3_1.ParameterObject;
/** Operations of one area, keyed by the gateway alias key (`"<METHOD> <alias path>"`). */
export type AreaPaths = Record<string, Operation>;
