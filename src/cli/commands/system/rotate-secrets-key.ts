import { command } from '../../command.js';

interface RotationReport {
  key_file: string;
  old_key_id: string;
  new_key_id: string;
  resealed: number;
}

export const systemRotateSecretsKey = command({
  path: ['system', 'rotate-secrets-key'],
  summary:
    "Administrators: seal the store's secrets (variables, add-on credentials, webhook and drain URLs and secrets) with a new key and replace the key file",
  usage: 'system rotate-secrets-key',
  options: {},
  args: { min: 0, max: 0 },
  examples: ['slipway system rotate-secrets-key', 'slipway system rotate-secrets-key --format json'],
  printsData: true,
  async run(ctx) {
    const report = await ctx.client().request<RotationReport>('POST', '/v1/system/secrets-key/rotate');
    if (ctx.format === 'json') {
      ctx.out(JSON.stringify(report, null, 2) + '\n');
      return;
    }
    ctx.out(`${report.new_key_id}\n`);
    ctx.err(
      `Sealed ${report.resealed} value(s) with the new key (id ${report.new_key_id}, was ${report.old_key_id}) in ${report.key_file}.\n` +
        'The old key no longer reads the store: replace any copy of the key file you keep, and take a new platform backup.\n',
    );
  },
});
