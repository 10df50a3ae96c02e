import type { Db } from './database.js';
import type { User } from './users.js';
import { hashSecret, newId, newSecretToken } from '../core/ids.js';

/**
 * What a token may do: `read` reads metadata only (no secret, no change); `deploy` also
 * deploys, restarts, rolls back, cancels and makes tokens; `full` all its user may. Each
 * route's scope is in src/api/route-scopes.ts.
 */
export type TokenScope = 'read' | 'deploy' | 'full';
export const TOKEN_SCOPES: readonly TokenScope[] = ['read', 'deploy', 'full'];

/** Whether a token of scope `held` may do what needs `needed`. */
export function scopeCovers(held: TokenScope, needed: TokenScope): boolean {
  return TOKEN_SCOPES.indexOf(held) >= TOKEN_SCOPES.indexOf(needed);
}

export interface ApiToken {
  id: string;
  user_id: string;
  label: string;
  scope: TokenScope;
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
  last_used_at: string | null;
}

/** What a presented token turned out to be. */
export type TokenCheck =
  | { ok: true; user: User; token: ApiToken }
  | { ok: false; reason: 'unknown' }
  | { ok: false; reason: 'expired' | 'revoked'; at: string };

const COLUMNS = 'id, user_id, label, scope, created_at, expires_at, revoked_at, last_used_at';

/** Last use is written at most this often per token, so reads do not each become a write. */
const LAST_USED_PRECISION_MS = 60_000;

/** API tokens: only their hash is kept; the clear value is shown once, at creation. */
export class ApiTokenRepository {
  constructor(private readonly db: Db) {}

  issue(userId: string, label: string, expiresAt: string | null = null, scope: TokenScope = 'full'): { secret: string; token: ApiToken } {
    const secret = newSecretToken();
    const token: ApiToken = {
      id: newId('token'),
      user_id: userId,
      label,
      scope,
      created_at: new Date().toISOString(),
      expires_at: expiresAt,
      revoked_at: null,
      last_used_at: null,
    };
    this.db
      .prepare(
        'INSERT INTO api_tokens (id, user_id, token_hash, label, scope, created_at, expires_at) VALUES (@id, @user_id, @hash, @label, @scope, @created_at, @expires_at)',
      )
      .run({ ...token, hash: hashSecret(secret) });
    return { secret, token };
  }

  /** Checks a presented token: unknown, expired, revoked, or valid (and then notes its use). */
  check(secret: string, now = new Date()): TokenCheck {
    const row = this.db.prepare(`SELECT ${COLUMNS} FROM api_tokens WHERE token_hash = ?`).get(hashSecret(secret)) as ApiToken | undefined;
    if (!row) return { ok: false, reason: 'unknown' };
    if (row.revoked_at) return { ok: false, reason: 'revoked', at: row.revoked_at };
    const time = now.toISOString();
    if (row.expires_at && row.expires_at <= time) return { ok: false, reason: 'expired', at: row.expires_at };
    const user = this.db.prepare('SELECT * FROM users WHERE id = ?').get(row.user_id) as User | undefined;
    if (!user) return { ok: false, reason: 'unknown' };
    try {
      this.db
        .prepare('UPDATE api_tokens SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)')
        .run(time, row.id, new Date(now.getTime() - LAST_USED_PRECISION_MS).toISOString());
    } catch {
      // Bookkeeping only: a store that cannot write (a full disk) must not deny a valid token.
    }
    return { ok: true, user, token: row };
  }

  byId(id: string): ApiToken | undefined {
    return this.db.prepare(`SELECT ${COLUMNS} FROM api_tokens WHERE id = ?`).get(id) as ApiToken | undefined;
  }

  listForUser(userId: string): ApiToken[] {
    return this.db.prepare(`SELECT ${COLUMNS} FROM api_tokens WHERE user_id = ? ORDER BY created_at, id`).all(userId) as ApiToken[];
  }

  listAll(): Array<ApiToken & { user_name: string }> {
    return this.db
      .prepare(
        `SELECT t.id, t.user_id, t.label, t.scope, t.created_at, t.expires_at, t.revoked_at, t.last_used_at, u.name AS user_name FROM api_tokens t JOIN users u ON u.id = t.user_id ORDER BY u.name, t.created_at, t.id`,
      )
      .all() as Array<ApiToken & { user_name: string }>;
  }

  /** Marks a token revoked; false when it already was (or does not exist). */
  revoke(id: string, now = new Date()): boolean {
    return (
      this.db.prepare('UPDATE api_tokens SET revoked_at = ? WHERE id = ? AND revoked_at IS NULL').run(now.toISOString(), id).changes > 0
    );
  }

  /** Tokens of administrators that still work, other than `exceptId`. */
  validAdminTokenCount(exceptId?: string, now = new Date()): number {
    const row = this.db
      .prepare(
        `SELECT COUNT(*) AS n FROM api_tokens t JOIN users u ON u.id = t.user_id
         WHERE u.is_admin = 1 AND t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > ?) AND t.id IS NOT ?`,
      )
      .get(now.toISOString(), exceptId ?? null) as { n: number };
    return row.n;
  }
}

/** Whether a token works now; for listings. */
export function tokenState(token: ApiToken, now = new Date()): 'valid' | 'expired' | 'revoked' {
  if (token.revoked_at) return 'revoked';
  if (token.expires_at && token.expires_at <= now.toISOString()) return 'expired';
  return 'valid';
}
