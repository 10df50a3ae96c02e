import { command } from '../../command.js';
import { CliError } from '../../errors.js';
import { addonPath } from '../../addon-types.js';
import type { BackupSummary } from '../../backup-types.js';

export const addonBackupVerify = command({
  path: ['addon', 'backup', 'verify'],
  summary: 'Restore-test a backup now: restore it into a throw-away copy and check it; fails when it does not restore',
  usage: 'addon backup verify <addon> <backup-id> [--org <org>]',
  options: {
    org: { type: 'string', value: '<org>', description: 'The organisation of the add-on, when several of yours have one of that name' },
  },
  args: { min: 2, max: 2 },
  arguments: [
    { name: '<addon>', description: 'The add-on: its id or name' },
    { name: '<backup-id>', description: 'The backup, as `addon backups` lists it' },
  ],
  examples: ['slipway addon backup verify shop-db backup_m3x2k1...'],
  printsData: true,
  async run(ctx, [ref, id], options) {
    ctx.err('Restoring the backup into a throw-away copy...\n');
    const { backup } = await ctx
      .client()
      .request<{ backup: BackupSummary }>('POST', addonPath(ref, options.org, `/backups/${encodeURIComponent(id)}/verify`));
    if (ctx.format === 'json') ctx.out(JSON.stringify(backup, null, 2) + '\n');
    else ctx.out(`${backup.id}: ${backup.verification} (${backup.verification_detail})\n`);
    if (backup.verification !== 'verified') {
      throw new CliError(
        `Backup ${backup.id} failed its restore test: ${backup.verification_detail}`,
        'Take a new backup and verify it; keep the failed one for inspection.',
      );
    }
  },
});
