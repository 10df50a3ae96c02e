import { command } from '../../command.js';
import { printTable } from '../../output.js';
import type { TokenSummary } from '../../token-types.js';

export const tokensList = command({
  path: ['tokens', 'list'],
  summary: 'List your API tokens (never their value): when each expires, was last used, or was revoked',
  usage: 'tokens list [--all]',
  options: { all: { type: 'boolean', description: "Everyone's tokens, with their user (administrators)" } },
  args: { min: 0, max: 0 },
  examples: ['slipway tokens list', 'slipway tokens list --all --format json'],
  printsData: true,
  async run(ctx, _args, options) {
    const { tokens } = await ctx.client().request<{ tokens: TokenSummary[] }>('GET', `/v1/tokens${options.all ? '?all=1' : ''}`);
    const rows = tokens.map((t) => ({
      id: t.id,
      label: t.label,
      scope: t.scope,
      user: t.user_name ?? '',
      state: t.state,
      expires: t.expires_at ?? 'never',
      'last used': t.last_used_at ?? 'never',
    }));
    printTable(
      ctx,
      rows,
      options.all
        ? ['id', 'label', 'scope', 'user', 'state', 'expires', 'last used']
        : ['id', 'label', 'scope', 'state', 'expires', 'last used'],
      tokens,
    );
  },
});
