import type { IncomingMessage } from 'node:http';
import type { Store } from '../store/store.js';
import type { User } from '../store/users.js';
import type { ApiToken } from '../store/api-tokens.js';
import { UnauthorizedError } from '../core/errors.js';

const RENEW_HINT =
  'Log in with another token (`slipway login --url <api-url> --token <token>`); `slipway tokens create` makes one, or an administrator can.';

/**
 * The user and token of a request's `Authorization: Bearer` header. An expired or revoked
 * token is refused saying so (only someone holding it learns that); anything else is "invalid".
 */
export function authenticate(store: Store, req: IncomingMessage): { user: User; token: ApiToken } {
  const secret = /^Bearer\s+(\S+)$/i.exec(req.headers.authorization ?? '')?.[1];
  if (!secret) throw new UnauthorizedError();
  const check = store.tokens.check(secret);
  if (check.ok) return { user: check.user, token: check.token };
  if (check.reason === 'expired') throw new UnauthorizedError(`This API token expired at ${check.at}.`, RENEW_HINT);
  if (check.reason === 'revoked') throw new UnauthorizedError(`This API token was revoked at ${check.at}.`, RENEW_HINT);
  throw new UnauthorizedError();
}
