import type { Db } from './database.js';
import { newId } from '../core/ids.js';
import { ApiTokenRepository } from './api-tokens.js';
import { ConflictError } from '../core/errors.js';

export interface User {
  id: string;
  name: string;
  is_admin: number;
  created_at: string;
}

export class UserRepository {
  private readonly tokens: ApiTokenRepository;

  constructor(private readonly db: Db) {
    this.tokens = new ApiTokenRepository(db);
  }

  create(name: string, isAdmin = false): User {
    if (this.byName(name)) throw new ConflictError(`A user named ${JSON.stringify(name)} already exists.`);
    const user: User = { id: newId('user'), name, is_admin: isAdmin ? 1 : 0, created_at: new Date().toISOString() };
    this.db.prepare('INSERT INTO users (id, name, is_admin, created_at) VALUES (@id, @name, @is_admin, @created_at)').run(user);
    return user;
  }

  byId(id: string): User | undefined {
    return this.db.prepare('SELECT * FROM users WHERE id = ?').get(id) as User | undefined;
  }

  byName(name: string): User | undefined {
    return this.db.prepare('SELECT * FROM users WHERE name = ?').get(name) as User | undefined;
  }

  count(): number {
    return (this.db.prepare('SELECT COUNT(*) AS n FROM users').get() as { n: number }).n;
  }

  /** Issues a token that never expires; the clear value is returned once and only its hash is kept. */
  issueToken(userId: string, label: string): string {
    return this.tokens.issue(userId, label).secret;
  }

  /** The user of a token that works now (neither expired nor revoked). */
  byToken(token: string): User | undefined {
    const check = this.tokens.check(token);
    return check.ok ? check.user : undefined;
  }
}
