import { command } from '../../command.js';
import { addonPath } from '../../addon-types.js';

export const addonBackupSchedule = command({
  path: ['addon', 'backup-schedule'],
  summary: "Show or change when the add-on's daily backup runs and how many days its backups are kept",
  usage: 'addon backup-schedule <addon> [--at HH:MM] [--keep <days>] [--org <org>]',
  options: {
    at: { type: 'string', value: '<HH:MM>', description: "The daily backup's time, the server's local time" },
    keep: { type: 'string', value: '<days>', description: 'How many days backups are kept (the newest verified one always is)' },
    org: { type: 'string', value: '<org>', description: 'The organisation of the add-on, when several of yours have one of that name' },
  },
  args: { min: 1, max: 1 },
  arguments: [{ name: '<addon>', description: 'The add-on: its id or name' }],
  examples: ['slipway addon backup-schedule shop-db', 'slipway addon backup-schedule shop-db --at 02:30 --keep 14'],
  printsData: true,
  async run(ctx, [ref], options) {
    const body: Record<string, unknown> = {};
    if (options.at !== undefined) body.at = options.at;
    if (options.keep !== undefined) body.keep_days = Number(options.keep);
    const { schedule } = await ctx
      .client()
      .request<{ schedule: { at: string; keep_days: number } }>('POST', addonPath(ref, options.org, '/backup-schedule'), body);
    if (ctx.format === 'json') ctx.out(JSON.stringify(schedule, null, 2) + '\n');
    else ctx.out(`Daily at ${schedule.at}, kept ${schedule.keep_days} days\n`);
  },
});
