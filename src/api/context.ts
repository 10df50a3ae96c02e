import type { RequestContext, RouteContext } from './http-router.js';
import type { ApiRoute } from './route-spec.js';
import type { User } from '../store/users.js';
import type { ApiToken } from '../store/api-tokens.js';
import type { ApiDependencies } from './platform.js';

export interface ApiContext extends RequestContext {
  /** The authenticated user; routes marked public get no user. */
  user: User;
  /** The token the request was made with. */
  token: ApiToken;
  deps: ApiDependencies;
}

/** What every handler sees whatever its route: the request, its user, token and the daemon's parts. */
export type ApiRequest = Omit<ApiContext, 'params' | 'query' | 'body'>;

/** What the handler of route `R` receives: typed path parameters and its validated body. */
export type ApiRouteContext<R extends ApiRoute> = RouteContext<ApiContext, R>;
