import type { Db } from './database.js';
import { newId } from '../core/ids.js';
import { ConflictError } from '../core/errors.js';

export interface Org {
  id: string;
  name: string;
  created_at: string;
}

export class OrgRepository {
  constructor(private readonly db: Db) {}

  create(name: string): Org {
    if (this.byName(name)) {
      throw new ConflictError(`An organisation named ${JSON.stringify(name)} already exists.`, 'Choose another name.');
    }
    const org: Org = { id: newId('org'), name, created_at: new Date().toISOString() };
    this.db.prepare('INSERT INTO orgs (id, name, created_at) VALUES (@id, @name, @created_at)').run(org);
    return org;
  }

  byId(id: string): Org | undefined {
    return this.db.prepare('SELECT * FROM orgs WHERE id = ?').get(id) as Org | undefined;
  }

  byName(name: string): Org | undefined {
    return this.db.prepare('SELECT * FROM orgs WHERE name = ?').get(name) as Org | undefined;
  }

  listForUser(userId: string): Array<Org & { role: 'owner' | 'member' }> {
    return this.db
      .prepare('SELECT o.*, m.role FROM orgs o JOIN memberships m ON m.org_id = o.id WHERE m.user_id = ? ORDER BY o.name')
      .all(userId) as Array<Org & { role: 'owner' | 'member' }>;
  }

  addMember(orgId: string, userId: string, role: 'owner' | 'member'): void {
    this.db
      .prepare('INSERT INTO memberships (org_id, user_id, role) VALUES (?, ?, ?) ON CONFLICT DO UPDATE SET role = excluded.role')
      .run(orgId, userId, role);
  }

  isMember(orgId: string, userId: string): boolean {
    return this.db.prepare('SELECT 1 FROM memberships WHERE org_id = ? AND user_id = ?').get(orgId, userId) !== undefined;
  }

  members(orgId: string): Array<{ user_id: string; name: string; role: 'owner' | 'member' }> {
    return this.db
      .prepare(
        'SELECT u.id AS user_id, u.name, m.role FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.org_id = ? ORDER BY u.name',
      )
      .all(orgId) as Array<{ user_id: string; name: string; role: 'owner' | 'member' }>;
  }

  roleOf(orgId: string, userId: string): 'owner' | 'member' | undefined {
    const row = this.db.prepare('SELECT role FROM memberships WHERE org_id = ? AND user_id = ?').get(orgId, userId) as
      | { role: 'owner' | 'member' }
      | undefined;
    return row?.role;
  }

  ownerCount(orgId: string): number {
    return (this.db.prepare("SELECT COUNT(*) AS n FROM memberships WHERE org_id = ? AND role = 'owner'").get(orgId) as { n: number }).n;
  }

  removeMember(orgId: string, userId: string): boolean {
    return this.db.prepare('DELETE FROM memberships WHERE org_id = ? AND user_id = ?').run(orgId, userId).changes > 0;
  }
}
