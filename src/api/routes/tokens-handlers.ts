import type { HttpRouter } from '../http-router.js';
import type { ApiContext, ApiRequest } from '../context.js';
import { scopeCovers, tokenState, type ApiToken } from '../../store/api-tokens.js';
import { ConflictError, ForbiddenError, NotFoundError } from '../../core/errors.js';
import { checkDisplayName } from '../../core/names.js';
import { tokenRoutes } from './tokens-routes.js';

export function tokenView(token: ApiToken & { user_name?: string }) {
  return {
    id: token.id,
    label: token.label,
    scope: token.scope,
    user_id: token.user_id,
    ...(token.user_name !== undefined ? { user_name: token.user_name } : {}),
    created_at: token.created_at,
    expires_at: token.expires_at,
    revoked_at: token.revoked_at,
    last_used_at: token.last_used_at,
    state: tokenState(token),
  };
}

/** When a token made now with this lifetime ends (the declaration holds it to 1 s .. ten years). */
function expiresAt(seconds: number | undefined): string | null {
  return seconds === undefined ? null : new Date(Date.now() + seconds * 1000).toISOString();
}

/** A token the user may act on: one of their own, or any for an administrator; by id or by one of their labels. */
function tokenFor(ctx: ApiRequest, ref: string): ApiToken {
  const { tokens } = ctx.deps.store;
  const byId = tokens.byId(ref);
  if (byId && (byId.user_id === ctx.user.id || ctx.user.is_admin)) return byId;
  const labelled = tokens.listForUser(ctx.user.id).filter((t) => t.label === ref && !t.revoked_at);
  if (labelled.length === 1) return labelled[0]!;
  if (labelled.length > 1)
    throw new ConflictError(`Several of your tokens are labelled ${JSON.stringify(ref)}.`, 'Give its id (`slipway tokens list`).');
  throw new NotFoundError(`You have no API token ${JSON.stringify(ref)}.`, '`slipway tokens list` shows ids and labels.');
}

/** API tokens: each user makes, lists and revokes their own; administrators see and revoke everyone's. */
export function tokenHandlers(router: HttpRouter<ApiContext>): void {
  router.handle(tokenRoutes.list, ({ user, deps, query }) => {
    if (query.all === '1') {
      if (!user.is_admin) throw new ForbiddenError("Only an administrator can list everyone's tokens.", 'Leave out --all to list yours.');
      return { tokens: deps.store.tokens.listAll().map(tokenView) };
    }
    return { tokens: deps.store.tokens.listForUser(user.id).map(tokenView) };
  });

  /** A token never makes one with more power or a longer life than its own (a leaked token cannot outlive its end). */
  router.handle(tokenRoutes.create, ({ user, deps, body, token: current }) => {
    const label = checkDisplayName('token', body.label ?? `token ${new Date().toISOString().slice(0, 10)}`);
    const scope = body.scope ?? current.scope;
    if (!scopeCovers(current.scope, scope)) {
      throw new ForbiddenError(
        `This API token has the scope "${current.scope}": it cannot make a token of scope "${scope}".`,
        `Ask for --scope ${current.scope} or less, or make it with a token of scope ${scope}.`,
      );
    }
    const expires = expiresAt(body.expires_in);
    if (current.expires_at && (expires === null || expires > current.expires_at)) {
      throw new ForbiddenError(
        `This API token expires at ${current.expires_at}: it cannot make one that outlives it.`,
        `Give --expires with a lifetime that ends before then, or make it with a token that does not expire.`,
      );
    }
    const { secret, token } = deps.store.tokens.issue(user.id, label, expires, scope);
    return { token: tokenView(token), secret };
  });

  /**
   * Revoking ends a token at once. The last working administrator token is kept, so the
   * platform never loses its administration: make another one first, then revoke the old one.
   */
  router.handle(tokenRoutes.revoke, (ctx) => {
    const { store } = ctx.deps;
    const token = tokenFor(ctx, ctx.params.token);
    if (token.revoked_at) throw new ConflictError(`The token ${token.id} was already revoked at ${token.revoked_at}.`);
    const owner = store.users.byId(token.user_id);
    if (owner?.is_admin && tokenState(token) === 'valid' && store.tokens.validAdminTokenCount(token.id) === 0) {
      throw new ConflictError(
        `The token ${token.id} is the last working administrator token: revoking it would leave nobody able to administer this slipway.`,
        'Create another one first (`slipway tokens create`), log in with it, then revoke this one.',
      );
    }
    store.tokens.revoke(token.id);
    return { token: tokenView(store.tokens.byId(token.id)!), was_current: token.id === ctx.token.id };
  });
}
