import type { Schema } from './schema.js';

/** A query parameter: its schema (over the text of its value) and what it does. */
export interface QueryParam {
  schema: Schema;
  description: string;
  /** What a wrong value is told it must be, e.g. "a whole number of lines such as 100". */
  expects?: string;
}

export interface SuccessResponse {
  description: string;
  schema: Schema;
  /** The body is newline-delimited JSON, one `schema` per line (a log stream). */
  stream?: boolean;
  /** The body is text of this media type (Prometheus metrics) rather than JSON. */
  text?: string;
}

/**
 * What one API route takes and answers. The router refuses a request that does not fit (an
 * unknown query parameter or body field, a wrong type), the OpenAPI document is built from
 * these, and the contract test checks real answers against them.
 */
export interface RouteSpec {
  operationId: string;
  /** The group the route is listed under: Apps, Deployments, Add-ons... */
  tag: string;
  summary: string;
  description?: string;
  /** One line per `:param` of the path. */
  params?: Record<string, string>;
  query?: Record<string, QueryParam>;
  /** The JSON object the route reads, when it reads one. */
  body?: Schema;
  /** The status of success (200, or 201 for POST) and its answer; 101 for an upgrade. */
  success: { status: 101 | 200 | 201; response: SuccessResponse };
  /** Error statuses the route itself may answer (400 for invalid input, 401 and 5xx are added for all). */
  errors: readonly number[];
  /** No token needed. The scope a route needs is stated in route-scopes.ts, beside every other route's. */
  public?: boolean;
}
