import { command } from '../command.js';
import { printTable } from '../output.js';
import { UsageError } from '../errors.js';

interface RuntimeRow {
  runtime: 'node' | 'bun';
  version: string;
  end_of_life: boolean;
  default: boolean;
}

export const runtimes = command({
  path: ['runtimes'],
  summary: 'List the Node.js and Bun versions builds can use (end-of-life and default ones marked)',
  usage: 'runtimes [--runtime node|bun]',
  options: { runtime: { type: 'string', value: 'node|bun', choices: ['node', 'bun'], description: 'Only the versions of this runtime' } },
  args: { min: 0, max: 0 },
  examples: ['slipway runtimes', 'slipway runtimes --runtime node'],
  printsData: true,
  async run(ctx, _args, options) {
    const only = options.runtime;
    if (only !== undefined && only !== 'node' && only !== 'bun') {
      throw new UsageError(`--runtime is "${only}"; it takes node or bun.`);
    }
    const { runtimes: all } = await ctx.client().request<{ runtimes: RuntimeRow[] }>('GET', '/v1/runtimes');
    const chosen = only ? all.filter((r) => r.runtime === only) : all;
    const rows = chosen.map((r) => ({
      runtime: r.runtime,
      version: r.version,
      status: [r.default ? 'default' : '', r.end_of_life ? 'end of life' : ''].filter(Boolean).join(', '),
    }));
    printTable(ctx, rows, ['runtime', 'version', 'status'], chosen);
  },
});
