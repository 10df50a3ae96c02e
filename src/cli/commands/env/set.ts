import { command } from '../../command.js';
import { APP_OPTIONS, resolveAppOption } from '../../app-options.js';

export const envSet = command({
  path: ['env', 'set'],
  summary: 'Set an environment variable on the application',
  usage: 'env set <variable-name> <variable-value> [--app <app>]',
  options: { ...APP_OPTIONS },
  args: { min: 2, max: 2 },
  valuesMayStartWithDash: true,
  arguments: [
    { name: '<variable-name>', description: 'Letters, digits and _ (not starting with a digit)' },
    {
      name: '<variable-value>',
      description: 'Its value; one that starts with - is taken as the value (JVM options), -- before it works too',
    },
  ],
  examples: [
    'slipway env set NODE_ENV production',
    'slipway env set CC_NODE_VERSION 22',
    'slipway env set JAVA_OPTS "-Xmx512m -Dplay.http.secret.key=$SECRET"',
    'slipway env set FLAGS -- "--verbose"',
  ],
  async run(ctx, [name, value], options) {
    const app = await resolveAppOption(ctx, options);
    await ctx.client().request('PUT', `/v1/apps/${app.id}/env/${encodeURIComponent(name)}`, { value });
    ctx.err(`Set ${name} on ${app.name}. Running instances see it after the next deploy or \`slipway restart\`.\n`);
  },
});
