import type { Db } from './database.js';

/** The quotas an administrator set for one organisation; null: the daemon's default. */
export interface OrgQuotaRow {
  apps: number | null;
  addons: number | null;
  instances: number | null;
  memory_bytes: number | null;
  max_flavor: string | null;
  workers: number | null;
  runs: number | null;
  domains: number | null;
  cron_jobs: number | null;
  drains: number | null;
  drain_buffer_bytes: number | null;
  webhooks: number | null;
  notify_emails: number | null;
  backups: number | null;
}

export const ORG_QUOTA_COLUMNS = [
  'apps',
  'addons',
  'instances',
  'memory_bytes',
  'max_flavor',
  'workers',
  'runs',
  'domains',
  'cron_jobs',
  'drains',
  'drain_buffer_bytes',
  'webhooks',
  'notify_emails',
  'backups',
] as const;
export type OrgQuotaColumn = (typeof ORG_QUOTA_COLUMNS)[number];

const EMPTY: OrgQuotaRow = {
  apps: null,
  addons: null,
  instances: null,
  memory_bytes: null,
  max_flavor: null,
  workers: null,
  runs: null,
  domains: null,
  cron_jobs: null,
  drains: null,
  drain_buffer_bytes: null,
  webhooks: null,
  notify_emails: null,
  backups: null,
};

export class OrgQuotaRepository {
  constructor(private readonly db: Db) {}

  /** The overrides of an organisation (all null when none were set). */
  of(orgId: string): OrgQuotaRow {
    const row = this.db.prepare(`SELECT ${ORG_QUOTA_COLUMNS.join(', ')} FROM org_quotas WHERE org_id = ?`).get(orgId) as
      | OrgQuotaRow
      | undefined;
    return { ...EMPTY, ...row };
  }

  /** Sets the columns given; a null clears that override back to the default. */
  set(orgId: string, changes: Partial<OrgQuotaRow>): OrgQuotaRow {
    const next = { ...this.of(orgId) };
    for (const column of ORG_QUOTA_COLUMNS) {
      if (column in changes) (next as Record<string, unknown>)[column] = changes[column] ?? null;
    }
    this.db
      .prepare(
        `INSERT INTO org_quotas (org_id, ${ORG_QUOTA_COLUMNS.join(', ')}) VALUES (@org_id, ${ORG_QUOTA_COLUMNS.map((c) => `@${c}`).join(', ')})
         ON CONFLICT (org_id) DO UPDATE SET ${ORG_QUOTA_COLUMNS.map((c) => `${c} = excluded.${c}`).join(', ')}`,
      )
      .run({ org_id: orgId, ...next });
    return next;
  }
}
