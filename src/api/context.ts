import type { RequestContext } from './http-router.js';
import type { User } from '../store/users.js';
import type { ApiDependencies } from './platform.js';

export interface ApiContext extends RequestContext {
  /** The authenticated user; routes marked public get no user. */
  user: User;
  deps: ApiDependencies;
}
