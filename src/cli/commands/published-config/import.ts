import { command } from '../../command.js';
import { APP_OPTIONS, resolveAppOption } from '../../app-options.js';
import { reportRedeploys, type Redeployed } from '../../report-redeploys.js';
import { parseDotenvVariables, parseJsonVariables, readAll } from '../../read-variables.js';

export const publishedConfigImport = command({
  path: ['published-config', 'import'],
  summary: 'Replace everything the application exposes with NAME=VALUE lines (or --json [{name,value}]) read from stdin',
  usage: 'published-config import [--json] [--app <app>] < file',
  options: {
    ...APP_OPTIONS,
    json: { type: 'boolean', description: 'Read a JSON array of {"name", "value"} objects instead of NAME=VALUE lines' },
  },
  args: { min: 0, max: 0 },
  examples: [
    'slipway published-config import < exposed.env',
    'slipway published-config --format json | slipway published-config import --json --app other',
  ],
  async run(ctx, _args, options) {
    const app = await resolveAppOption(ctx, options);
    const text = await readAll(ctx.stdin);
    const vars = options.json ? parseJsonVariables(text) : parseDotenvVariables(text);
    const { redeployed } = await ctx
      .client()
      .request<{ redeployed: Redeployed[] }>('PUT', `/v1/apps/${app.id}/published-config`, { published_config: vars });
    ctx.err(`${app.name} now exposes ${vars.length} variable(s).\n`);
    reportRedeploys(ctx, redeployed);
  },
});
