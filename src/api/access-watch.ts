import type { Store } from '../store/store.js';
import { tokenState } from '../store/api-tokens.js';

/**
 * Why a request that stays open (a followed log, a `slipway run` session) must end now: its
 * token was revoked or expired, or its user left the organisation of the app it concerns.
 * Undefined while it may go on. Administrators keep their access to every app.
 */
export function accessEnded(store: Store, access: { tokenId: string; userId: string; appId?: string }): string | undefined {
  const token = store.tokens.byId(access.tokenId);
  const state = token ? tokenState(token) : 'revoked';
  if (state !== 'valid') return `the API token it was opened with was ${state}`;
  if (access.appId === undefined) return undefined;
  const user = store.users.byId(access.userId);
  if (!user) return 'its user no longer exists';
  // An app named rather than given by id is looked up by the route: only the token is watched then.
  const app = store.apps.byId(access.appId);
  if (!app) return undefined;
  if (!user.is_admin && !store.orgs.isMember(app.org_id, user.id))
    return "its user is no longer a member of the application's organisation";
  return undefined;
}

/** How often an open request's access is checked: revocations take effect within this. */
export const ACCESS_CHECK_MS = 1000;

/**
 * Checks an open request's access every second while it lasts and calls `end` with the reason
 * once it is gone; returns the function that stops the checks (when the request ends anyway).
 */
export function endWhenAccessEnds(
  store: Store,
  access: { tokenId: string; userId: string; appId?: string },
  end: (reason: string) => void,
): () => void {
  const timer = setInterval(() => {
    const reason = accessEnded(store, access);
    if (reason === undefined) return;
    clearInterval(timer);
    end(reason);
  }, ACCESS_CHECK_MS);
  timer.unref();
  return () => clearInterval(timer);
}
