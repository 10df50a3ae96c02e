import { command } from '../../command.js';
import { formatEnvLine, formatShellLine } from '../../env-format.js';
import { addonPath } from '../../addon-types.js';

export const addonEnv = command({
  path: ['addon', 'env'],
  summary: 'Show the variables an application linked to the add-on receives (credentials included)',
  usage: 'addon env <addon> [--org <org>] [--format human|json|shell]',
  options: {
    org: { type: 'string', value: '<org>', description: 'The organisation of the add-on, when several of yours have one of that name' },
  },
  args: { min: 1, max: 1 },
  arguments: [{ name: '<addon>', description: 'The add-on: its id or name' }],
  examples: ['slipway addon env shop-db', 'slipway addon env shop-db --format shell'],
  printsData: true,
  formats: ['human', 'json', 'shell'],
  async run(ctx, [ref], options) {
    const { env } = await ctx.client().request<{ env: Array<{ name: string; value: string }> }>('GET', addonPath(ref, options.org, '/env'));
    if (ctx.format === 'json') {
      ctx.out(JSON.stringify(env, null, 2) + '\n');
      return;
    }
    for (const v of env) ctx.out((ctx.format === 'shell' ? formatShellLine(v) : formatEnvLine(v)) + '\n');
  },
});
