import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { command } from '../../command.js';
import { CliError } from '../../errors.js';
import { addonPath } from '../../addon-types.js';

export const addonBackupDownload = command({
  path: ['addon', 'backup', 'download'],
  summary: 'Save a backup as a portable dump (PostgreSQL: pg_dump custom format for pg_restore; Redis: the RDB file)',
  usage: 'addon backup download <addon> <backup-id> --output <file> [--org <org>]',
  options: {
    output: { type: 'string', short: 'o', value: '<file>', description: 'Where to write the dump (a new file)' },
    org: { type: 'string', value: '<org>', description: 'The organisation of the add-on, when several of yours have one of that name' },
  },
  args: { min: 2, max: 2 },
  arguments: [
    { name: '<addon>', description: 'The add-on: its id or name' },
    { name: '<backup-id>', description: 'The backup, as `addon backups` lists it' },
  ],
  examples: [
    'slipway addon backup download shop-db backup_m3x2k1... --output shop.dump && pg_restore -d mydb shop.dump',
    'slipway addon backup download shop-cache backup_m3x2k1... --output dump.rdb',
  ],
  async run(ctx, [ref, id], options) {
    const output = options.output;
    if (!output) throw new CliError('Say where to write the dump with --output <file>.');
    const response = await ctx.client().raw('GET', addonPath(ref, options.org, `/backups/${encodeURIComponent(id)}/dump`));
    if (!response.ok) {
      const text = await response.text();
      let error: { message?: string; hint?: string } | undefined;
      try {
        error = (JSON.parse(text) as { error?: { message?: string; hint?: string } }).error;
      } catch {
        // not JSON
      }
      throw new CliError(error?.message ?? `The download failed (status ${response.status}).`, error?.hint);
    }
    try {
      await pipeline(response.body, createWriteStream(output, { flags: 'wx' }));
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'EEXIST') throw new CliError(`${output} exists already; choose a new file.`);
      await rm(output, { force: true });
      throw new CliError(`The download was cut: ${(error as Error).message}`, 'Nothing was kept; try again.');
    }
    ctx.err(`Wrote ${output}.\n`);
  },
});
