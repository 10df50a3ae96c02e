import { userFacingDiskError } from '../core/disk-full.js';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { SlipwayError, ValidationError, NotFoundError } from '../core/errors.js';
import type { ApiRoute, Method, PathParams, RouteBody, RouteOutput, RouteQuery, RouteSpec } from './route-spec.js';
import { queryValues } from './request-validation.js';

export type { Method };

export interface RequestContext {
  req: IncomingMessage;
  res: ServerResponse;
  params: Record<string, string>;
  query: URLSearchParams;
  /** Parsed JSON body (objects only); a malformed body is a 400 with the parser's message. */
  body(): Promise<Record<string, unknown>>;
}

/** A handler returns the JSON to send, or `undefined` after writing the response itself (streams). */
export type Handler<C> = (ctx: C) => Promise<unknown> | unknown;

/**
 * What a declared route's handler receives: the request, the path parameters of its path, its
 * query parameters and its body, already checked against its declaration by the router
 * (nothing to check again).
 */
export type RouteContext<C extends RequestContext, R extends ApiRoute> = Omit<C, 'params' | 'query' | 'body'> & {
  params: PathParams<R['path']>;
  query: RouteQuery<R>;
  body: RouteBody<R>;
};

/** A declared route's handler: typed from the declaration, answering what it declares. */
export type RouteHandler<C extends RequestContext, R extends ApiRoute> = (
  ctx: RouteContext<C, R>,
) => RouteOutput<R> | Promise<RouteOutput<R>>;

interface Route<C> {
  method: Method;
  pattern: string;
  regex: RegExp;
  keys: string[];
  handler: Handler<C>;
  spec?: RouteSpec;
}

export interface RouterOptions<C> {
  /** Every route must declare what it takes and answers (the API's routes do). */
  requireSpec?: boolean;
  /** Runs before a route's handler with its declaration, to refuse a request that does not fit it. */
  check?(spec: RouteSpec, ctx: C, route: { method: Method; pattern: string }): Promise<void> | void;
}

const MAX_BODY = 4 * 1024 * 1024;

function compile(pattern: string): { regex: RegExp; keys: string[] } {
  const keys: string[] = [];
  const source = pattern
    .split('/')
    .map((part) => {
      if (part.startsWith(':')) {
        keys.push(part.slice(1));
        return '([^/]+)';
      }
      return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    })
    .join('/');
  return { regex: new RegExp(`^${source}$`), keys };
}

export async function readJsonBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new ValidationError(`Request body is larger than ${MAX_BODY} bytes.`);
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ValidationError(`Request body is not valid JSON: ${(error as Error).message}`);
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw new ValidationError('Request body must be a JSON object.');
  }
  return parsed as Record<string, unknown>;
}

export function sendJson(res: ServerResponse, status: number, data: unknown): void {
  const text = JSON.stringify(data);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

export function sendError(res: ServerResponse, error: unknown): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  // A full data disk is the operator's to fix, not an internal error: say so (HTTP 507).
  error = userFacingDiskError(error);
  if (error instanceof SlipwayError) {
    sendJson(res, error.status, { error: { code: error.code, message: error.message, hint: error.hint ?? null } });
    return;
  }
  process.stderr.write(`API error: ${(error as Error)?.stack ?? String(error)}\n`);
  sendJson(res, 500, {
    error: { code: 'internal', message: 'Internal error in the slipway daemon.', hint: 'See the daemon output for details.' },
  });
}

/**
 * Decodes one percent-encoded path segment; a malformed escape (`%E0%A4%A`, `%zz`) is the
 * client's mistake, so it is a 400 rather than the URIError decodeURIComponent throws.
 */
export function decodePathSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    throw new ValidationError(
      `The path segment "${segment}" is not valid percent-encoding.`,
      'Encode each "%" as %25 and each non-ASCII character as the %XX bytes of its UTF-8 form (encodeURIComponent does both).',
    );
  }
}

/** A small method + path router: the API stays thin, so this is all it needs. */
export class HttpRouter<C extends RequestContext> {
  private readonly routes: Route<C>[] = [];

  constructor(private readonly options: RouterOptions<C> = {}) {}

  add(method: Method, pattern: string, handler: Handler<C>): this;
  add(method: Method, pattern: string, spec: RouteSpec, handler: Handler<C>): this;
  add(method: Method, pattern: string, specOrHandler: RouteSpec | Handler<C>, maybeHandler?: Handler<C>): this {
    const spec = typeof specOrHandler === 'function' ? undefined : specOrHandler;
    const handler = typeof specOrHandler === 'function' ? specOrHandler : maybeHandler!;
    if (!spec && this.options.requireSpec) {
      throw new Error(
        `The API route ${method} ${pattern} has no RouteSpec: declare what it takes and answers (see src/api/route-spec.ts).`,
      );
    }
    this.routes.push({ method, pattern, handler, spec, ...compile(pattern) });
    return this;
  }

  /** Serves a declared route (src/api/route-spec.ts): its method, path and declaration come from one object. */
  handle<R extends ApiRoute>(route: R, handler: RouteHandler<C, R>): this {
    return this.add(route.method, route.path, route, async (ctx) => {
      // The check option has read and validated the body before the handler runs.
      const body = (route.body ? await ctx.body() : undefined) as RouteBody<R>;
      const query = queryValues(route, ctx.query) as RouteQuery<R>;
      return handler({ ...ctx, params: ctx.params as PathParams<R['path']>, query, body });
    });
  }

  match(method: string, path: string): { route: Route<C>; params: Record<string, string> } | 'method-not-allowed' | undefined {
    let pathMatched = false;
    for (const route of this.routes) {
      const m = route.regex.exec(path);
      if (!m) continue;
      pathMatched = true;
      if (route.method !== method) continue;
      const params: Record<string, string> = {};
      route.keys.forEach((key, i) => {
        params[key] = decodePathSegment(m[i + 1]!);
      });
      return { route, params };
    }
    return pathMatched ? 'method-not-allowed' : undefined;
  }

  list(): Array<{ method: Method; pattern: string; spec?: RouteSpec }> {
    return this.routes.map(({ method, pattern, spec }) => ({ method, pattern, spec }));
  }

  async dispatch(ctxBase: Omit<C, 'params'>, method: string, path: string): Promise<void> {
    const found = this.match(method, path);
    if (found === undefined) throw new NotFoundError(`No API endpoint ${method} ${path}.`, 'See /v1/openapi.json for the endpoints.');
    if (found === 'method-not-allowed') {
      throw new SlipwayError(405, 'method_not_allowed', `${method} is not allowed on ${path}.`);
    }
    const ctx = { ...ctxBase, params: found.params } as C;
    const { spec, method: routeMethod, pattern } = found.route;
    if (spec && this.options.check) await this.options.check(spec, ctx, { method: routeMethod, pattern });
    const result = await found.route.handler(ctx);
    if (result !== undefined && !ctx.res.headersSent) {
      sendJson(ctx.res, spec?.success.status ?? (ctx.req.method === 'POST' ? 201 : 200), result);
    }
  }
}
