import { command } from '../../command.js';
import { confirmByTyping } from '../../confirm.js';
import { UsageError } from '../../errors.js';
import { addonPath, type AddonSummary } from '../../addon-types.js';

export const addonRestore = command({
  path: ['addon', 'restore'],
  summary:
    'Restore an add-on to a backup or to a second in its restore window: in place, or into a new add-on with --as; --as alone forks it as it is now',
  usage: 'addon restore <addon> ((--backup <id> | --to <RFC 3339 time>) [--as <new-name>] | --as <new-name>) [--yes] [--org <org>]',
  options: {
    backup: { type: 'string', value: '<id>', description: 'The backup to restore, as `addon backups` lists it' },
    to: {
      type: 'string',
      value: '<time>',
      description: 'A time such as 2026-11-25T14:32:10Z (RFC 3339) inside the restore window (PostgreSQL; Redis restores to a backup)',
    },
    as: {
      type: 'string',
      value: '<new-name>',
      description: 'Restore into a new add-on of that name (new credentials); the source is untouched',
    },
    yes: { type: 'boolean', short: 'y', description: 'Do not ask before replacing the data in place' },
    org: { type: 'string', value: '<org>', description: 'The organisation of the add-on, when several of yours have one of that name' },
  },
  args: { min: 1, max: 1 },
  arguments: [{ name: '<addon>', description: 'The add-on: its id or name' }],
  examples: [
    'slipway addon restore shop-db --to 2026-11-25T14:32:10Z --as shop-db-yesterday',
    'slipway addon restore shop-db --backup backup_m3x2k1... --yes',
    'slipway addon restore shop-db --as shop-db-preview',
  ],
  printsData: true,
  async run(ctx, [ref], options) {
    const backup = options.backup;
    const to = options.to;
    const as = options.as;
    const fork = backup === undefined && to === undefined && as !== undefined;
    if (!fork && (backup === undefined) === (to === undefined)) {
      throw new UsageError('Give either --backup <id> or --to <time>, or only --as <new-name> to fork the add-on as it is now.');
    }
    const client = ctx.client();
    const org = options.org;
    const { addon } = await client.request<{ addon: AddonSummary }>('GET', addonPath(ref, org));
    if (as === undefined && !options.yes) {
      await confirmByTyping(
        ctx,
        `Replace the data of ${JSON.stringify(addon.name)} with its state at ${backup ?? to}? A safety backup is taken first; its apps lose their connections meanwhile.`,
        addon.name,
        '--yes',
      );
    }
    ctx.err(`Restoring ${addon.name}...\n`);
    const result = await client.request<{ addon: AddonSummary; safety_backup: string | null }>(
      'POST',
      `/v1/addons/${encodeURIComponent(addon.id)}/restore`,
      { ...(backup ? { backup } : to ? { to } : {}), ...(as ? { as } : {}) },
    );
    if (ctx.format === 'json') {
      ctx.out(JSON.stringify(result, null, 2) + '\n');
      return;
    }
    if (as)
      ctx.err(
        `Restored into the new add-on ${result.addon.name} (${result.addon.id}); \`slipway addon env ${result.addon.name}\` gives its credentials.\n`,
      );
    else ctx.err(`Restored ${addon.name} in place; the safety backup taken before is ${result.safety_backup}.\n`);
    ctx.out(`${result.addon.id}\n`);
  },
});
