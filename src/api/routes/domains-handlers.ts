import { orgOfApp, quotasOf } from '../quotas.js';
import type { HttpRouter } from '../http-router.js';
import type { ApiContext, ApiRequest } from '../context.js';
import type { AppRow } from '../../store/apps.js';
import type { DomainRow } from '../../store/domains.js';
import { appForUser } from '../access.js';
import { appDomain } from '../platform.js';
import { NotFoundError, ValidationError } from '../../core/errors.js';
import { parseDomainName, readableDomain } from '../../domains/domain-name.js';
import { verificationRecordName } from '../../domains/domain-verifier.js';
import { checkRouterLoads, checkUploadedCertificate } from '../../certificates/uploaded-certificate.js';
import { domainRoutes } from './domains-routes.js';

function domainView(ctx: ApiRequest, row: DomainRow) {
  const order = ctx.deps.store.acme.order(row.fqdn);
  return {
    fqdn: row.fqdn,
    name: row.fqdn.startsWith('*.') ? `*.${readableDomain(row.fqdn.slice(2))}` : readableDomain(row.fqdn),
    wildcard: row.fqdn.startsWith('*.'),
    favourite: row.favourite === 1,
    created_at: row.created_at,
    certificate: ctx.deps.services?.domains?.served(row.fqdn) ?? null,
    acme: order ? { state: order.state, error: order.error, failures: order.failures, retry_after: order.retry_after } : null,
    verification: {
      state: row.verified_at === null ? ('pending' as const) : ('verified' as const),
      record: verificationRecordName(row.fqdn),
      token: row.verification_token,
      verified_at: row.verified_at,
    },
  };
}

function listing(ctx: ApiRequest, app: AppRow) {
  const fallback = appDomain(ctx.deps.endpoints, app.id);
  return {
    default: fallback,
    favourite: ctx.deps.store.domains.favourite(app.id) ?? fallback,
    domains: ctx.deps.store.domains.ofApp(app.id).map((row) => domainView(ctx, row)),
  };
}

/** One of the application's own domains, named as the user typed it (any spelling of it). */
function ownDomain(ctx: ApiRequest, app: AppRow, input: unknown): DomainRow {
  const { fqdn } = parseDomainName(input, ctx.deps.endpoints.domain);
  const row = ctx.deps.store.domains.byName(fqdn);
  if (!row || row.app_id !== app.id)
    throw new NotFoundError(`${fqdn} is not a domain of this application.`, 'List its domains with `slipway domain`.');
  return row;
}

async function edgeChanged(ctx: ApiRequest): Promise<void> {
  await ctx.deps.services?.domains?.changed();
}

/** Custom domains of an application, its favourite one, and certificates users upload. */
export function domainHandlers(router: HttpRouter<ApiContext>): void {
  router.handle(domainRoutes.list, (ctx) => listing(ctx, appForUser(ctx.deps.store, ctx.user, ctx.params.app)));

  router.handle(domainRoutes.add, async (ctx) => {
    const app = appForUser(ctx.deps.store, ctx.user, ctx.params.app);
    const { fqdn } = parseDomainName(ctx.body.fqdn, ctx.deps.endpoints.domain);
    quotasOf(ctx.deps).checkNewDomain(orgOfApp(ctx.deps, app));
    const row = ctx.deps.store.domains.add(app.id, fqdn, {
      pendingVerification: ctx.deps.services?.domains?.requireVerification ?? false,
    });
    await edgeChanged(ctx);
    return { domain: domainView(ctx, row) };
  });

  router.handle(domainRoutes.remove, async (ctx) => {
    const app = appForUser(ctx.deps.store, ctx.user, ctx.params.app);
    ctx.deps.store.domains.remove(app.id, ownDomain(ctx, app, ctx.params.fqdn).fqdn);
    await edgeChanged(ctx);
    return listing(ctx, app);
  });

  router.handle(domainRoutes.setFavourite, (ctx) => {
    const app = appForUser(ctx.deps.store, ctx.user, ctx.params.app);
    const row = ownDomain(ctx, app, ctx.body.fqdn);
    if (row.fqdn.startsWith('*.')) {
      throw new ValidationError(
        `${row.fqdn} is a wildcard: it is no address to print.`,
        'Add one name it covers (`slipway domain add www.example.com`) and make that the favourite.',
      );
    }
    if (row.verified_at === null) {
      throw new ValidationError(
        `${row.fqdn} waits for its DNS proof: it is not routed yet.`,
        `Publish the TXT record ${verificationRecordName(row.fqdn)} that \`slipway domain\` shows, then make it the favourite.`,
      );
    }
    ctx.deps.store.domains.setFavourite(app.id, row.fqdn);
    return listing(ctx, app);
  });

  router.handle(domainRoutes.clearFavourite, (ctx) => {
    const app = appForUser(ctx.deps.store, ctx.user, ctx.params.app);
    ctx.deps.store.domains.clearFavourite(app.id);
    return listing(ctx, app);
  });

  router.handle(domainRoutes.setCertificate, async (ctx) => {
    const app = appForUser(ctx.deps.store, ctx.user, ctx.params.app);
    const row = ownDomain(ctx, app, ctx.params.fqdn);
    const body = ctx.body;
    const checked = checkUploadedCertificate(row.fqdn, body.certificate, body.private_key);
    await checkRouterLoads(row.fqdn, checked);
    ctx.deps.store.certificates.put({
      fqdn: row.fqdn,
      source: 'uploaded',
      certificate_pem: checked.certificatePem,
      private_key_pem: checked.privateKeyPem,
      not_before: checked.notBefore.toISOString(),
      not_after: checked.notAfter.toISOString(),
    });
    await edgeChanged(ctx);
    return { domain: domainView(ctx, row) };
  });

  router.handle(domainRoutes.removeCertificate, async (ctx) => {
    const app = appForUser(ctx.deps.store, ctx.user, ctx.params.app);
    const row = ownDomain(ctx, app, ctx.params.fqdn);
    if (!ctx.deps.store.certificates.remove(row.fqdn, 'uploaded')) {
      throw new NotFoundError(
        `${row.fqdn} has no uploaded certificate.`,
        'Upload one with `slipway domain cert set <fqdn> --cert <file> --key <file>`.',
      );
    }
    await edgeChanged(ctx);
    return { domain: domainView(ctx, row) };
  });
}
