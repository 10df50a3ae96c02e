import { command } from '../../command.js';
import { printObject } from '../../output.js';
import { parseTokenLifetime } from '../../token-lifetime.js';
import type { TokenSummary } from '../../token-types.js';
import { UsageError } from '../../errors.js';

export const tokensCreate = command({
  path: ['tokens', 'create'],
  summary: 'Create an API token for you (for CI or another machine); it is shown once',
  usage: 'tokens create [--label <label>] [--expires <lifetime>] [--scope read|deploy|full]',
  options: {
    label: {
      type: 'string',
      short: 'l',
      value: '<label>',
      description: 'A name to recognise it by in `slipway tokens list` (default: "token <date>")',
    },
    expires: {
      type: 'string',
      short: 'e',
      value: '<lifetime>',
      description: 'It stops working after 30s, 90m, 12h, 30d, 8w, 1y... (default: never; revoke it when done)',
    },
    scope: {
      type: 'string',
      value: 'read|deploy|full',
      description:
        'read: metadata only (no variable, credential, backup download nor run; drain and webhook URLs hidden); deploy: also deploys, restarts, rolls back, makes tokens; full: all you may (default: the scope of the token you use)',
    },
  },
  args: { min: 0, max: 0 },
  examples: [
    'slipway tokens create --label ci --expires 90d --scope deploy',
    'SLIPWAY_TOKEN=$(slipway tokens create --label deploy-bot --format json | jq -r .secret)',
  ],
  printsData: true,
  async run(ctx, _args, options) {
    const body: Record<string, unknown> = {};
    if (options.label !== undefined) body.label = options.label;
    if (options.expires !== undefined) body.expires_in = parseTokenLifetime(options.expires);
    if (options.scope !== undefined) {
      if (!['read', 'deploy', 'full'].includes(options.scope))
        throw new UsageError(`--scope is read, deploy or full, not ${JSON.stringify(options.scope)}.`);
      body.scope = options.scope;
    }
    const data = await ctx.client().request<{ token: TokenSummary; secret: string }>('POST', '/v1/tokens', body);
    printObject(
      ctx,
      {
        id: data.token.id,
        label: data.token.label,
        scope: data.token.scope,
        expires: data.token.expires_at ?? 'never',
        token: data.secret,
      },
      data,
    );
    if (ctx.format === 'human') ctx.err('Keep the token now: it is shown only once. `slipway tokens revoke <id>` ends it.\n');
  },
});
