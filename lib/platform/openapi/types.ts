/**
 * Types of the OpenAPI 3.1 document (issue 11) as the route definitions
 * (lib/platform/openapi/route.ts) and the document builder (lib/openapi/)
 * use them: the 3.1 shapes of openapi-types.
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
