import type { Infer, Schema } from './schema.js';
import { ROUTE_SCOPES, type RouteKey } from './route-scopes.js';

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
 * these, and the contract test checks real answers against them. Routes declare theirs with
 * `route()` below, which adds the method, path and scope.
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
}

export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'PATCH';

/** The names of a path's `:params`: `'/v1/apps/:app/env/:name'` gives `'app' | 'name'`. */
type ParamNames<P extends string> = P extends `${string}:${infer Name}/${infer Rest}`
  ? Name | ParamNames<`/${Rest}`>
  : P extends `${string}:${infer Name}`
    ? Name
    : never;

/** The decoded path parameters of a path, each present (the router matched them all). */
export type PathParams<P extends string> = { readonly [K in ParamNames<P>]: string };

type MethodOf<K extends RouteKey> = K extends `${infer M extends Method} ${string}` ? M : never;
type PathOf<K extends RouteKey> = K extends `${Method} ${infer P}` ? P : never;

/** A route as its room declares it: `route` is its key in ROUTE_SCOPES, `METHOD /path`. */
export type RouteDeclaration = RouteSpec & { route: RouteKey };

/** Each `:param` of the path described, for the OpenAPI document. */
type ParamsDescribed<K extends RouteKey> = [ParamNames<PathOf<K>>] extends [never]
  ? { params?: never }
  : { params: { readonly [N in ParamNames<PathOf<K>>]: string } };

/** A declared route: its declaration with the method, path and scope read from its key. */
export type ApiRoute<D extends RouteDeclaration = RouteDeclaration> = D & {
  method: MethodOf<D['route']>;
  path: PathOf<D['route']>;
  /** Its least token scope, as the one table of src/api/route-scopes.ts states it. */
  scope: (typeof ROUTE_SCOPES)[D['route']];
};

/**
 * Declares a route. Its key must be in ROUTE_SCOPES (so its scope is decided in the table the
 * security review reads), each `:param` of its path described; its handler is then typed from
 * this object (`RouteInput`, `RouteOutput`).
 */
export function route<D extends RouteDeclaration>(declaration: D & ParamsDescribed<D['route']>): ApiRoute<D> {
  const space = declaration.route.indexOf(' ');
  return {
    ...declaration,
    method: declaration.route.slice(0, space) as MethodOf<D['route']>,
    path: declaration.route.slice(space + 1) as PathOf<D['route']>,
    scope: ROUTE_SCOPES[declaration.route] as (typeof ROUTE_SCOPES)[D['route']],
  };
}

/**
 * The query parameters a route's handler receives: those its declaration has and the request
 * gave, each validated and read as its schema says (a whole number as a number).
 */
export type RouteQuery<R> = R extends { query: infer Q extends Record<string, QueryParam> }
  ? { readonly [K in keyof Q]?: Infer<Q[K]['schema']> }
  : Record<never, never>;

/** The validated JSON body a route's handler receives (`undefined` for a route that reads none). */
export type RouteBody<R> = R extends { body: infer B extends Schema } ? Infer<B> : undefined;

/** What a route's handler returns: its success answer, or `undefined` after writing the response itself. */
export type RouteOutput<R> = R extends { success: { response: { schema: infer S extends Schema } } } ? Infer<S> | undefined : unknown;
