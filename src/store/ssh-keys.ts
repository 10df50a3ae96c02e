import type { Db } from './database.js';
import { newId } from '../core/ids.js';
import { ConflictError } from '../core/errors.js';

export interface SshKey {
  id: string;
  user_id: string;
  label: string;
  algorithm: string;
  fingerprint: string;
  public_key: string;
  created_at: string;
}

export class SshKeyRepository {
  constructor(private readonly db: Db) {}

  add(userId: string, key: { label: string; algorithm: string; fingerprint: string; publicKey: string }): SshKey {
    const existing = this.byFingerprint(key.fingerprint);
    if (existing) {
      throw new ConflictError(
        `This key (${key.fingerprint}) is already registered${existing.user_id === userId ? ` as ${JSON.stringify(existing.label)}` : ' by another user'}.`,
        'Each SSH key identifies one user; generate a new key with `ssh-keygen -t ed25519`.',
      );
    }
    const row: SshKey = {
      id: newId('key'),
      user_id: userId,
      label: key.label,
      algorithm: key.algorithm,
      fingerprint: key.fingerprint,
      public_key: key.publicKey,
      created_at: new Date().toISOString(),
    };
    this.db
      .prepare(
        'INSERT INTO ssh_keys (id, user_id, label, algorithm, fingerprint, public_key, created_at) VALUES (@id, @user_id, @label, @algorithm, @fingerprint, @public_key, @created_at)',
      )
      .run(row);
    return row;
  }

  listForUser(userId: string): SshKey[] {
    return this.db.prepare('SELECT * FROM ssh_keys WHERE user_id = ? ORDER BY created_at').all(userId) as SshKey[];
  }

  byFingerprint(fingerprint: string): SshKey | undefined {
    return this.db.prepare('SELECT * FROM ssh_keys WHERE fingerprint = ?').get(fingerprint) as SshKey | undefined;
  }

  remove(userId: string, idOrFingerprintOrLabel: string): boolean {
    const result = this.db
      .prepare('DELETE FROM ssh_keys WHERE user_id = ? AND (id = ? OR fingerprint = ? OR label = ?)')
      .run(userId, idOrFingerprintOrLabel, idOrFingerprintOrLabel, idOrFingerprintOrLabel);
    return result.changes > 0;
  }
}
