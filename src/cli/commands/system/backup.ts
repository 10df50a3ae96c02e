import { command } from '../../command.js';
import { humanSize } from '../../backup-types.js';
import { UsageError } from '../../errors.js';

interface SystemBackupReport {
  path: string;
  name: string;
  place: string;
  created_at: string;
  slipway_version: string;
  repositories: number;
  addons: Array<{ name: string; provider: string; backup_id: string }>;
  files: number;
  size_bytes: number;
  releases: number;
  releases_bytes: number;
  shared_releases: number;
  encrypted: boolean;
  warning: string | null;
}

export const systemBackup = command({
  path: ['system', 'backup'],
  summary:
    "Administrators: write a whole-platform backup (store, repositories, CA, SSH host key, every add-on's data, the apps' kept releases) to the backup store, or into a folder",
  usage: 'system backup [--to <folder>]',
  options: {
    to: {
      type: 'string',
      value: '<folder>',
      description:
        "An absolute folder on the daemon's machine (put it on another disk) instead of the backup store add-on backups go to; the backup is a slipway-platform-<time> folder in it",
    },
  },
  args: { min: 0, max: 0 },
  examples: ['slipway system backup', 'slipway system backup --to /mnt/backups/slipway --format json'],
  printsData: true,
  async run(ctx, _args, options) {
    const to = options.to;
    if (to !== undefined && !to.startsWith('/')) {
      throw new UsageError(
        `--to takes an absolute folder on the daemon machine, not ${JSON.stringify(to)}; leave it out to use the backup store.`,
      );
    }
    ctx.err('Taking a fresh backup of every add-on, restore-testing it, then copying the platform...\n');
    const report = await ctx.client().request<SystemBackupReport>('POST', '/v1/system/backup', to === undefined ? {} : { to });
    // Said on stderr whatever the format: a backup in clear is something to know, not data.
    if (report.warning) ctx.err(`Warning: ${report.warning}.\n`);
    if (ctx.format === 'json') {
      ctx.out(JSON.stringify(report, null, 2) + '\n');
      return;
    }
    ctx.out(`${report.path}\n`);
    const addons = report.addons.length ? report.addons.map((a) => `${a.name} (${a.provider}, ${a.backup_id})`).join(', ') : 'none';
    const shared = report.shared_releases ? ` (${report.shared_releases} shared with an earlier backup, not copied again)` : '';
    const from = to === undefined ? `${report.name} --backup-folder/--backup-s3-url <this backup store>` : report.path;
    ctx.err(
      `Wrote to ${report.place} the store, ${report.repositories} repositor${report.repositories === 1 ? 'y' : 'ies'}, the CA and SSH host key, and the add-ons ${addons}: ` +
        `${report.files} files, ${humanSize(report.size_bytes)}, listed with their SHA-256 in manifest.json; ` +
        `${report.releases} kept release${report.releases === 1 ? '' : 's'}, ${humanSize(report.releases_bytes)}${shared}.\n` +
        `Restore it on a new machine with: slipway server --restore-from ${from} --data-dir <empty folder>` +
        `${report.encrypted ? ' --backup-key-file <the same key file>' : ''}\n`,
    );
  },
});
