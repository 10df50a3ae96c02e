import { command, type CommandContext } from '../../command.js';
import { printTable } from '../../output.js';
import { UsageError } from '../../errors.js';
import {
  QUOTA_FLAGS,
  QUOTA_NAMES,
  type QuotaLimits,
  type QuotaName,
  SIZE_QUOTAS,
  formatQuota,
  quotaBodyField,
} from '../../../quotas/limits.js';
import { orgOrOnly } from './members.js';

interface OrgQuota {
  org: string;
  limits: QuotaLimits;
  defaults: QuotaLimits;
  overridden: QuotaName[];
  usage: Partial<Record<QuotaName, number | string | null>>;
}

/** One line per quota: what is used, the limit, and whether it is the organisation's own. */
function printQuota(ctx: CommandContext, quota: OrgQuota): void {
  const rows = QUOTA_NAMES.map((name) => {
    const used = quota.usage[name];
    return {
      quota: QUOTA_FLAGS[name],
      used: used === undefined ? '-' : used === null ? '-' : formatQuota(name, used),
      limit: formatQuota(name, quota.limits[name]),
      source: quota.overridden.includes(name) ? 'set' : 'default',
    };
  });
  printTable(ctx, rows, ['quota', 'used', 'limit', 'source'], quota);
}

export const orgQuota = command({
  path: ['org', 'quota'],
  summary: 'Show what an organisation uses and its quotas',
  usage: 'org quota [<org>]',
  args: { min: 0, max: 1 },
  arguments: [{ name: '[<org>]', description: 'The organisation, id or name (default: your only one)' }],
  examples: ['slipway org quota acme', 'slipway org quota acme --format json'],
  printsData: true,
  async run(ctx, [org]) {
    const name = await orgOrOnly(ctx, org);
    const { quota } = await ctx.client().request<{ quota: OrgQuota }>('GET', `/v1/orgs/${encodeURIComponent(name)}/quota`);
    printQuota(ctx, quota);
  },
});

const VALUE: Record<QuotaName, string> = {
  apps: '<n>',
  addons: '<n>',
  instances: '<n>',
  memory_bytes: '<size>',
  max_flavor: '<flavour>',
  workers: '<n>',
  runs: '<n>',
  domains: '<n>',
  cron_jobs: '<n>',
  drains: '<n>',
  drain_buffer_bytes: '<size>',
  webhooks: '<n>',
  notify_emails: '<n>',
  backups: '<n>',
};

const DESCRIPTION: Record<QuotaName, string> = {
  apps: 'Applications it may have',
  addons: 'Add-ons it may have',
  instances: 'Instances over all its apps (each app counts its instance count)',
  memory_bytes: "Memory over all its apps: instances × the flavour's memory, e.g. 64G",
  max_flavor: 'The biggest instance flavour its apps may use',
  workers: 'Workers (CC_WORKER_COMMAND*) over all its instances',
  runs: 'One-off commands (`slipway run`) open at once',
  domains: 'Custom domains over all its apps',
  cron_jobs: 'Cron jobs over the serving releases of all its apps',
  drains: 'Log drains over all its apps',
  drain_buffer_bytes: "Disk its drains' buffers may take (each drain reserves the daemon's --drain-buffer-size), e.g. 256M",
  webhooks: 'Webhooks over all its apps',
  notify_emails: 'E-mail notifications over all its apps',
  backups: 'Manual backups (`slipway addon backup`) kept at once over all its add-ons',
};

export const orgQuotaSet = command({
  path: ['org', 'quota', 'set'],
  summary: "Set an organisation's quotas (administrators); `default` puts one back to the daemon's",
  usage:
    'org quota set <org> [--apps N] [--addons N] [--instances N] [--memory <size>] [--max-flavor F] [--workers N] [--runs N] [--domains N] [--cron-jobs N] [--drains N] [--drain-buffer <size>] [--webhooks N] [--notify-emails N] [--backups N]',
  options: Object.fromEntries(
    QUOTA_NAMES.map((name) => [
      QUOTA_FLAGS[name],
      { type: 'string' as const, value: VALUE[name], description: `${DESCRIPTION[name]}; \`default\`: the daemon's --default-quota` },
    ]),
  ),
  args: { min: 1, max: 1 },
  arguments: [{ name: '<org>', description: 'The organisation, id or name' }],
  examples: ['slipway org quota set acme --apps 10 --memory 16G --max-flavor M', 'slipway org quota set acme --apps default'],
  printsData: true,
  async run(ctx, [org], options) {
    const body: Record<string, unknown> = {};
    for (const name of QUOTA_NAMES) {
      const value = options[QUOTA_FLAGS[name]];
      if (typeof value !== 'string') continue;
      const text = value.trim();
      // Counts travel as JSON numbers; a size or a flavour as text.
      const counted = !SIZE_QUOTAS.has(name) && name !== 'max_flavor' && /^\d+$/.test(text);
      body[quotaBodyField(name)] = text.toLowerCase() === 'default' ? null : counted ? Number(text) : text;
    }
    if (Object.keys(body).length === 0) {
      throw new UsageError(`Give one or more quotas: ${QUOTA_NAMES.map((n) => `--${QUOTA_FLAGS[n]}`).join(', ')}.`);
    }
    const { quota } = await ctx.client().request<{ quota: OrgQuota }>('PUT', `/v1/orgs/${encodeURIComponent(org)}/quota`, body);
    printQuota(ctx, quota);
  },
});
