import { command } from '../../command.js';
import { printTable } from '../../output.js';

export const addonProviders = command({
  path: ['addon', 'providers'],
  summary: 'List the kinds of add-on this platform can create',
  usage: 'addon providers',
  args: { min: 0, max: 0 },
  examples: ['slipway addon providers'],
  printsData: true,
  async run(ctx) {
    const { providers } = await ctx
      .client()
      .request<{ providers: Array<{ name: string; description: string; plans?: Array<{ name: string; limits?: string }> }> }>(
        'GET',
        '/v1/addon-providers',
      );
    printTable(
      ctx,
      providers.map((p) => ({
        ...p,
        plan: (p.plans ?? []).map((plan) => plan.name).join(', '),
        limits: (p.plans ?? []).map((plan) => plan.limits ?? '').join('; '),
      })),
      ['name', 'description', 'plan', 'limits'],
      providers,
    );
  },
});
