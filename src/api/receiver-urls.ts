import { scopeCovers, type TokenScope } from '../store/api-tokens.js';

const HIDDEN = '***';

/**
 * A receiver's URL with every part that may carry a secret hidden: the user and password, the
 * path (Slack, Discord and log services put their key there), the query and the fragment. The
 * scheme, host and port stay, so one can still tell where lines and events go.
 */
export function redactedUrl(raw: string): string {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return '(invalid URL)';
  }
  const userinfo = url.username || url.password ? `${HIDDEN}@` : '';
  const path = url.pathname === '' || url.pathname === '/' ? url.pathname : `/${HIDDEN}`;
  const query = url.search ? `?${HIDDEN}` : '';
  const fragment = url.hash ? `#${HIDDEN}` : '';
  return `${url.protocol}//${userinfo}${url.host}${path}${query}${fragment}`;
}

/** A drain's or webhook's URL as a token of this scope may see it: whole for `full`, redacted below. */
export function receiverUrlFor(scope: TokenScope, shown: string): string {
  return scopeCovers(scope, 'full') ? shown : redactedUrl(shown);
}

/** A receiver's user name (HTTP basic authentication), hidden below `full` as the rest of its credentials. */
export function receiverUserFor(scope: TokenScope, username: string | null): string | null {
  return username === null || scopeCovers(scope, 'full') ? username : HIDDEN;
}
