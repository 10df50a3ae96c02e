import { SlipwayError } from '../core/errors.js';
import { QUOTA_FLAGS, type QuotaName, SIZE_QUOTAS, formatQuota } from './limits.js';

/** What a refusal says: the quota, the use now, and the one command that raises it. */
export interface QuotaRefusal {
  org: string;
  quota: QuotaName;
  /** What the organisation uses now. */
  used: number | string;
  limit: number | string;
  /** What the change would bring it to, when more than one at a time is asked. */
  after?: number;
  /** Which parts of the app the count is made of, e.g. "2 instances and 3 worker instances at most". */
  note?: string;
}

const NOUN: Readonly<Record<QuotaName, string>> = {
  apps: 'apps',
  addons: 'add-ons',
  instances: 'instances',
  memory_bytes: 'instance memory',
  max_flavor: 'flavour',
  workers: 'workers',
  runs: 'one-off runs',
  domains: 'domains',
  cron_jobs: 'cron jobs',
  drains: 'drains',
  drain_buffer_bytes: 'drain buffers',
  webhooks: 'webhooks',
  notify_emails: 'e-mail notifications',
  backups: 'manual backups',
};

/** e.g. "organisation acme has 5 of 5 apps (quota apps)". */
export function refusalMessage(r: QuotaRefusal): { message: string; hint: string } {
  const flag = QUOTA_FLAGS[r.quota];
  const value = r.quota === 'max_flavor' ? 'F' : SIZE_QUOTAS.has(r.quota) ? '<size>' : 'N';
  const hint = `Ask an administrator to raise it: slipway org quota set ${r.org} --${flag} ${value}`;
  if (r.quota === 'max_flavor') {
    return {
      message: `organisation ${r.org} may use flavours up to ${r.limit}, not ${r.used} (quota max-flavor).`,
      hint,
    };
  }
  const used = formatQuota(r.quota, r.used);
  const limit = formatQuota(r.quota, r.limit);
  const after =
    (r.after === undefined ? '' : `; this would make ${formatQuota(r.quota, r.after)}`) +
    (r.note === undefined ? '' : `, with this app's ${r.note}`);
  return { message: `organisation ${r.org} has ${used} of ${limit} ${NOUN[r.quota]}${after} (quota ${flag}).`, hint };
}

/** The API's refusal: 403 with the code `quota_exceeded`. */
export class QuotaExceededError extends SlipwayError {
  constructor(refusal: QuotaRefusal) {
    const { message, hint } = refusalMessage(refusal);
    super(403, 'quota_exceeded', message, hint);
  }
}

/** Refused: the user owns as many organisations as the daemon allows one user (`--orgs-per-user`). */
export class OrgsPerUserExceededError extends SlipwayError {
  constructor(user: string, owned: number, limit: number) {
    super(
      403,
      'quota_exceeded',
      `user ${user} owns ${owned} of ${limit} organisations (quota orgs-per-user).`,
      'Use one of your organisations (`slipway org list`), or ask an administrator to raise it: slipway server --orgs-per-user N',
    );
  }
}
