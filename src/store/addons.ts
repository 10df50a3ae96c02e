import type { Db } from './database.js';
import { newId } from '../core/ids.js';
import { ConflictError, NotFoundError } from '../core/errors.js';
import type { StoreSecrets } from './store-secrets.js';

export interface AddonRow {
  id: string;
  org_id: string;
  provider: string;
  name: string;
  /** The provider's bookkeeping for this add-on, secrets included, sealed (read it with config()); never sent in listings. */
  config_json: string;
  created_at: string;
}

export class AddonRepository {
  constructor(
    private readonly db: Db,
    private readonly secrets: StoreSecrets,
  ) {}

  /**
   * Records a new add-on before its resources exist, so the name is taken at once and a
   * second create with the same name fails before provisioning anything. The provider's
   * config is filled in by setConfig() once provisioning succeeded.
   */
  create(input: { orgId: string; provider: string; name: string }): AddonRow {
    if (this.byName(input.orgId, input.name)) {
      throw new ConflictError(
        `The organisation already has an add-on named ${JSON.stringify(input.name)}.`,
        'Choose another name; `slipway addon list` shows the existing ones.',
      );
    }
    const id = newId('addon');
    const row: AddonRow = {
      id,
      org_id: input.orgId,
      provider: input.provider,
      name: input.name,
      config_json: this.secrets.seal('{}', place(input.orgId, id)),
      created_at: new Date().toISOString(),
    };
    this.db
      .prepare(
        'INSERT INTO addons (id, org_id, provider, name, config_json, created_at) VALUES (@id, @org_id, @provider, @name, @config_json, @created_at)',
      )
      .run(row);
    return row;
  }

  setConfig(id: string, config: Record<string, string>): void {
    const row = this.byId(id);
    if (!row) throw new NotFoundError(`There is no add-on ${id}.`);
    this.db
      .prepare('UPDATE addons SET config_json = ? WHERE id = ?')
      .run(this.secrets.seal(JSON.stringify(config), place(row.org_id, id)), id);
  }

  config(row: AddonRow): Record<string, string> {
    return JSON.parse(this.secrets.open(row.config_json, place(row.org_id, row.id))) as Record<string, string>;
  }

  byId(id: string): AddonRow | undefined {
    return this.db.prepare('SELECT * FROM addons WHERE id = ?').get(id) as AddonRow | undefined;
  }

  byName(orgId: string, name: string): AddonRow | undefined {
    return this.db.prepare('SELECT * FROM addons WHERE org_id = ? AND name = ?').get(orgId, name) as AddonRow | undefined;
  }

  /** Add-ons of every organisation the user belongs to with this name (names are unique per org only). */
  byNameForUser(userId: string, name: string): AddonRow[] {
    return this.db
      .prepare(
        'SELECT a.* FROM addons a JOIN memberships m ON m.org_id = a.org_id WHERE m.user_id = ? AND a.name = ? ORDER BY a.created_at',
      )
      .all(userId, name) as AddonRow[];
  }

  listForUser(userId: string): AddonRow[] {
    return this.db
      .prepare('SELECT a.* FROM addons a JOIN memberships m ON m.org_id = a.org_id WHERE m.user_id = ? ORDER BY a.created_at')
      .all(userId) as AddonRow[];
  }

  listForOrg(orgId: string): AddonRow[] {
    return this.db.prepare('SELECT * FROM addons WHERE org_id = ? ORDER BY created_at').all(orgId) as AddonRow[];
  }

  all(): AddonRow[] {
    return this.db.prepare('SELECT * FROM addons ORDER BY created_at').all() as AddonRow[];
  }

  /** Names of the providers that have at least one add-on: the ones to start with the daemon. */
  providersInUse(): string[] {
    return (this.db.prepare('SELECT DISTINCT provider FROM addons ORDER BY provider').all() as Array<{ provider: string }>).map(
      (r) => r.provider,
    );
  }

  remove(id: string): void {
    this.db.prepare('DELETE FROM addons WHERE id = ?').run(id);
  }
}

function place(orgId: string, id: string) {
  return { table: 'addons', column: 'config_json', owner: [orgId, id] };
}
