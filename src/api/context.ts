import type { RequestContext } from './http-router.js';
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
