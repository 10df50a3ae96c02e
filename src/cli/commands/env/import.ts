import dotenv from 'dotenv';
import type { Command } from '../../command.js';
import { APP_OPTIONS, resolveAppOption } from '../../app-options.js';
import { CliError } from '../../errors.js';

async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  return Buffer.concat(chunks).toString('utf8');
}

/** `[{"name","value"}]` from JSON input, checked for shape before anything is sent. */
function parseJsonList(text: string): Array<{ name: string; value: string }> {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new CliError(`Standard input is not valid JSON: ${(error as Error).message}.`, 'Give [{"name": "...", "value": "..."}].');
  }
  if (!Array.isArray(data) || !data.every((e) => e && typeof e.name === 'string' && typeof e.value === 'string')) {
    throw new CliError('Standard input must be a JSON array of {"name": "...", "value": "..."} objects.');
  }
  return data.map((e: { name: string; value: string }) => ({ name: e.name, value: e.value }));
}

export const envImport: Command = {
  path: ['env', 'import'],
  summary: 'Replace all variables with NAME=VALUE lines (or --json [{name,value}]) read from stdin',
  usage: 'env import [--json] [--app <app>] < file',
  options: {
    ...APP_OPTIONS,
    json: { type: 'boolean', description: 'Read a JSON array of {"name", "value"} objects instead of NAME=VALUE lines' },
  },
  args: { min: 0, max: 0 },
  examples: ['slipway env import < .env', 'slipway env --format json | slipway env import --json --app other'],
  async run(ctx, _args, options) {
    const app = await resolveAppOption(ctx, options);
    const text = await readAll(ctx.stdin);
    // dotenv's parser handles quoted multi-line values and comments the way .env files do.
    const env = options.json ? parseJsonList(text) : Object.entries(dotenv.parse(text)).map(([name, value]) => ({ name, value }));
    await ctx.client().request('PUT', `/v1/apps/${app.id}/env`, { env });
    ctx.err(`Replaced the variables of ${app.name} with ${env.length} variable(s).\n`);
  },
};
