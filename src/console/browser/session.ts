/**
 * The API token of the signed-in user. It lives in sessionStorage: it is gone when the tab
 * closes, and other sites cannot read it.
 */
const KEY = 'slipway.token';

export function savedToken(): string | undefined {
  return sessionStorage.getItem(KEY) ?? undefined;
}

export function saveToken(token: string): void {
  sessionStorage.setItem(KEY, token);
}

export function forgetToken(): void {
  sessionStorage.removeItem(KEY);
}
