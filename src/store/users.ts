import type { Db } from './database.js';
import { hashSecret, newId, newSecretToken } from '../core/ids.js';
import { ConflictError } from '../core/errors.js';

export interface User {
  id: string;
  name: string;
  is_admin: number;
  created_at: string;
}

export class UserRepository {
  constructor(private readonly db: Db) {}

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

  /** Issues a token; the clear value is returned once and only its hash is kept. */
  issueToken(userId: string, label: string): string {
    const token = newSecretToken();
    this.db
      .prepare('INSERT INTO api_tokens (id, user_id, token_hash, label, created_at) VALUES (?, ?, ?, ?, ?)')
      .run(newId('token'), userId, hashSecret(token), label, new Date().toISOString());
    return token;
  }

  byToken(token: string): User | undefined {
    return this.db
      .prepare('SELECT u.* FROM users u JOIN api_tokens t ON t.user_id = u.id WHERE t.token_hash = ?')
      .get(hashSecret(token)) as User | undefined;
  }
}
