import { command } from '../../command.js';
import { addonPath } from '../../addon-types.js';
import { humanSize, type BackupSummary } from '../../backup-types.js';

export const addonBackup = command({
  path: ['addon', 'backup'],
  summary: 'Take a backup of the add-on now; prints its id once it is stored (its restore test follows)',
  usage: 'addon backup <addon> [--org <org>]',
  options: {
    org: { type: 'string', value: '<org>', description: 'The organisation of the add-on, when several of yours have one of that name' },
  },
  args: { min: 1, max: 1 },
  arguments: [{ name: '<addon>', description: 'The add-on: its id or name' }],
  examples: ['slipway addon backup shop-db'],
  printsData: true,
  async run(ctx, [ref], options) {
    ctx.err('Taking the backup...\n');
    const { backup } = await ctx.client().request<{ backup: BackupSummary }>('POST', addonPath(ref, options.org, '/backups'));
    if (ctx.format === 'json') {
      ctx.out(JSON.stringify(backup, null, 2) + '\n');
      return;
    }
    ctx.out(`${backup.id}\n`);
    ctx.err(`Stored (${humanSize(backup.size_bytes)}); its restore test runs now: \`slipway addon backups ${ref}\` shows the result.\n`);
  },
});
