import { readFile } from 'node:fs/promises';
import { command } from '../../command.js';
import { APP_OPTIONS, resolveAppOption } from '../../app-options.js';
import { UsageError, CliError } from '../../errors.js';
import type { DomainView } from './list.js';

async function readPem(path: unknown, flag: string): Promise<string> {
  if (typeof path !== 'string' || path === '') throw new UsageError(`${flag} <file> is required.`);
  try {
    return await readFile(path, 'utf8');
  } catch (error) {
    throw new CliError(`Cannot read ${flag} ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}.`);
  }
}

export const domainCertSet = command({
  path: ['domain', 'cert', 'set'],
  summary: 'Serve your own certificate for a domain (PEM files; it takes precedence over ACME and the internal CA)',
  usage: 'domain cert set <fqdn> --cert <file> --key <file> [--app <app>]',
  options: {
    ...APP_OPTIONS,
    cert: { type: 'string', value: '<file>', description: 'PEM certificate, followed by its chain' },
    key: { type: 'string', value: '<file>', description: 'PEM private key of the certificate' },
  },
  args: { min: 1, max: 1 },
  arguments: [{ name: '<fqdn>', description: 'One of the domains `slipway domain` lists' }],
  examples: ['slipway domain cert set shop.example.com --cert fullchain.pem --key privkey.pem'],
  async run(ctx, [fqdn], options) {
    const certificate = await readPem(options.cert, '--cert');
    const privateKey = await readPem(options.key, '--key');
    const app = await resolveAppOption(ctx, options);
    const { domain } = await ctx
      .client()
      .request<{ domain: DomainView }>('PUT', `/v1/apps/${app.id}/domains/${encodeURIComponent(fqdn)}/certificate`, {
        certificate,
        private_key: privateKey,
      });
    ctx.err(
      `${domain.fqdn} is now served with your certificate${domain.certificate ? ` (valid until ${domain.certificate.not_after})` : ''}.\n`,
    );
  },
});

export const domainCertRm = command({
  path: ['domain', 'cert', 'rm'],
  summary: 'Stop serving your certificate for a domain (ACME or the internal CA take over)',
  usage: 'domain cert rm <fqdn> [--app <app>]',
  options: { ...APP_OPTIONS },
  args: { min: 1, max: 1 },
  arguments: [{ name: '<fqdn>', description: 'A domain with an uploaded certificate' }],
  examples: ['slipway domain cert rm shop.example.com'],
  async run(ctx, [fqdn], options) {
    const app = await resolveAppOption(ctx, options);
    await ctx.client().request('DELETE', `/v1/apps/${app.id}/domains/${encodeURIComponent(fqdn)}/certificate`);
    ctx.err(`${fqdn} no longer uses your certificate.\n`);
  },
});
