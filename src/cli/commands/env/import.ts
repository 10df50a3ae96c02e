import { command } from '../../command.js';
import { APP_OPTIONS, resolveAppOption } from '../../app-options.js';
import { parseJsonVariables, readAll } from '../../read-variables.js';
import { parseEnvFile } from '../../env-file-parse.js';
import { OWN_SECTION } from '../../env-format.js';

/**
 * `--json` takes a list of {name, value}, or the sections `slipway env --format json` prints,
 * of which only the application's own are read.
 */
function parseJson(text: string): { variables: Array<{ name: string; value: string }>; skipped: Array<{ source: string; count: number }> } {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return { variables: parseJsonVariables(text), skipped: [] };
  }
  const isSections = Array.isArray(data) && data.length > 0 && data.every((s) => s && typeof s.source === 'string' && Array.isArray(s.env));
  if (!isSections) return { variables: parseJsonVariables(text), skipped: [] };
  const sections = data as Array<{ source: string; env: unknown[] }>;
  return {
    variables: parseJsonVariables(JSON.stringify(sections.filter((s) => s.source === OWN_SECTION).flatMap((s) => s.env))),
    skipped: sections.filter((s) => s.source !== OWN_SECTION && s.env.length > 0).map((s) => ({ source: s.source, count: s.env.length })),
  };
}

export const envImport = command({
  path: ['env', 'import'],
  summary: 'Replace all variables with NAME="value" lines (as `slipway env` prints them, or --json [{name,value}]) read from stdin',
  usage: 'env import [--json] [--app <app>] < file',
  options: {
    ...APP_OPTIONS,
    json: {
      type: 'boolean',
      description: 'Read JSON instead: a list of {"name", "value"} objects, or what `slipway env --format json` prints',
    },
  },
  args: { min: 0, max: 0 },
  examples: [
    'slipway env import < .env',
    'slipway env > app.env && slipway env import --app other < app.env',
    'slipway env --format json | slipway env import --json --app other',
  ],
  async run(ctx, _args, options) {
    const app = await resolveAppOption(ctx, options);
    const text = await readAll(ctx.stdin);
    const parsed = options.json ? parseJson(text) : parseEnvFile(text);
    for (const { source, count } of parsed.skipped) {
      ctx.err(`Left out ${count} variable(s) of ${source}: they come from that source, not from the application.\n`);
    }
    await ctx.client().request('PUT', `/v1/apps/${app.id}/env`, { env: parsed.variables });
    ctx.err(`Replaced the variables of ${app.name} with ${parsed.variables.length} variable(s).\n`);
  },
});
