import { command } from '../../command.js';
import { printTable } from '../../output.js';
import { addonPath } from '../../addon-types.js';
import { humanSize, type BackupSummary } from '../../backup-types.js';

export const addonBackups = command({
  path: ['addon', 'backups'],
  summary: "List an add-on's backups with their restore test (failed ones first) and its restore window",
  usage: 'addon backups <addon> [--org <org>]',
  options: {
    org: { type: 'string', value: '<org>', description: 'The organisation of the add-on, when several of yours have one of that name' },
  },
  args: { min: 1, max: 1 },
  arguments: [{ name: '<addon>', description: 'The add-on: its id or name' }],
  examples: ['slipway addon backups shop-db', 'slipway addon backups shop-db --format json'],
  printsData: true,
  async run(ctx, [ref], options) {
    const answer = await ctx
      .client()
      .request<{ backups: BackupSummary[]; window: { from: string; to: string } | null; schedule: { at: string; keep_days: number } }>(
        'GET',
        addonPath(ref, options.org, '/backups'),
      );
    if (ctx.format === 'json') {
      ctx.out(JSON.stringify(answer.backups, null, 2) + '\n');
      return;
    }
    printTable(
      ctx,
      answer.backups.map((b) => ({
        id: b.id,
        time: b.created_at,
        size: humanSize(b.size_bytes),
        kind: b.kind,
        verification: b.verification,
        detail: b.verification_detail || '-',
      })),
      ['id', 'time', 'size', 'kind', 'verification', 'detail'],
    );
    const schedule = `Daily backup at ${answer.schedule.at}, kept ${answer.schedule.keep_days} days`;
    ctx.err(
      answer.window
        ? `Restorable to any second from ${answer.window.from} to now. ${schedule}.\n`
        : answer.backups.length > 0
          ? // Add-ons that restore to a backup only (Redis snapshots) have no window.
            `Restorable to any of these backups that did not fail its restore test. ${schedule}.\n`
          : `No backup yet. ${schedule}; take one now with \`slipway addon backup ${ref}\`.\n`,
    );
  },
});
