import { command } from '../../command.js';
import type { TokenSummary } from '../../token-types.js';

export const tokensRevoke = command({
  path: ['tokens', 'revoke'],
  summary: 'Revoke an API token: it stops working at once (the last working administrator token is kept)',
  usage: 'tokens revoke <token>',
  args: { min: 1, max: 1 },
  arguments: [{ name: '<token>', description: 'The token id (`slipway tokens list`), or the label of one of yours' }],
  examples: ['slipway tokens revoke token_0b6f2c0e-5f0c-4c3e-9d8f-1a2b3c4d5e6f', 'slipway tokens revoke ci'],
  async run(ctx, [ref]) {
    const { token, was_current: current } = await ctx
      .client()
      .request<{ token: TokenSummary; was_current: boolean }>('DELETE', `/v1/tokens/${encodeURIComponent(ref)}`);
    ctx.err(`Revoked ${token.label} (${token.id}).\n`);
    if (current) ctx.err('It was the token this command used: log in with another one (`slipway login`).\n');
  },
});
