import { route } from '../route-spec.js';
import { arr, bool, int, named, nullable, obj, oneOf, str, time } from '../schema.js';
import { APP_PARAM } from './apps-routes.js';

export const Domain = named(
  'Domain',
  obj({
    fqdn: str('The name in ASCII (international names in punycode); *.<name> for a wildcard'),
    name: str('The name as people read it (Unicode)'),
    wildcard: bool('Routes every sub-domain that has no entry of its own'),
    favourite: bool('The address the CLI and console print for the application'),
    created_at: time(),
    certificate: nullable(
      obj(
        { source: oneOf(['acme', 'uploaded', 'internal', 'provisional']), not_after: time() },
        [],
        'The certificate the router serves for it',
      ),
    ),
    acme: nullable(
      obj(
        {
          state: oneOf(['pending', 'valid', 'invalid']),
          error: nullable(str()),
          failures: int('Orders failed in a row (0 after a success)'),
          retry_after: nullable(time('No new order before this time, after failed ones')),
        },
        [],
        'The last ACME order for it',
      ),
    ),
    verification: obj(
      {
        state: oneOf(['pending', 'verified']),
        record: str('The DNS TXT record that proves the domain: _slipway-challenge.<domain>'),
        token: nullable(str('What that record must hold')),
        verified_at: nullable(time()),
      },
      [],
      'Whether the domain is proven (with --require-domain-verification it is routed only then)',
    ),
  }),
);

const DOMAIN_PARAM = { ...APP_PARAM, fqdn: 'The domain, e.g. shop.example.com or *.example.com' };
const listing = {
  description: "The application's domains",
  schema: obj({
    default: str('<app_id>.<domain>, always routed'),
    favourite: str('The favourite domain, or the default one'),
    domains: arr(Domain),
  }),
};

export const domainRoutes = {
  list: route({
    route: 'GET /v1/apps/:app/domains',
    operationId: 'listDomains',
    tag: 'Domains',
    summary: "The application's domains: its default <app_id>.<domain> and its custom ones",
    params: APP_PARAM,
    success: { status: 200, response: listing },
    errors: [404],
  }),
  add: route({
    route: 'POST /v1/apps/:app/domains',
    operationId: 'addDomain',
    tag: 'Domains',
    summary: 'Route a domain (or a wildcard *.<domain>) to the application; it gets a certificate',
    params: APP_PARAM,
    body: obj({ fqdn: str('shop.example.com, *.example.com or an international name') }),
    success: { status: 201, response: { description: 'The domain as stored', schema: obj({ domain: Domain }) } },
    errors: [404, 409],
  }),
  remove: route({
    route: 'DELETE /v1/apps/:app/domains/:fqdn',
    operationId: 'removeDomain',
    tag: 'Domains',
    summary: 'Stop routing a domain to the application (its certificates go with it)',
    params: DOMAIN_PARAM,
    success: { status: 200, response: listing },
    errors: [404],
  }),
  setFavourite: route({
    route: 'PUT /v1/apps/:app/favourite-domain',
    operationId: 'setFavouriteDomain',
    tag: 'Domains',
    summary: 'Make one of the application’s domains the one the CLI and console print',
    params: APP_PARAM,
    body: obj({ fqdn: str() }),
    success: { status: 200, response: listing },
    errors: [404],
  }),
  clearFavourite: route({
    route: 'DELETE /v1/apps/:app/favourite-domain',
    operationId: 'clearFavouriteDomain',
    tag: 'Domains',
    summary: 'Print the default <app_id>.<domain> again',
    params: APP_PARAM,
    success: { status: 200, response: listing },
    errors: [404],
  }),
  setCertificate: route({
    route: 'PUT /v1/apps/:app/domains/:fqdn/certificate',
    operationId: 'setDomainCertificate',
    tag: 'Domains',
    summary: 'Serve an uploaded certificate for the domain (it takes precedence over ACME and the internal CA)',
    params: DOMAIN_PARAM,
    body: obj({ certificate: str('PEM: the certificate, then its chain'), private_key: str('PEM private key') }),
    success: { status: 200, response: { description: 'The domain', schema: obj({ domain: Domain }) } },
    errors: [404],
  }),
  removeCertificate: route({
    route: 'DELETE /v1/apps/:app/domains/:fqdn/certificate',
    operationId: 'removeDomainCertificate',
    tag: 'Domains',
    summary: 'Stop serving the uploaded certificate (ACME or the internal CA take over)',
    params: DOMAIN_PARAM,
    success: { status: 200, response: { description: 'The domain', schema: obj({ domain: Domain }) } },
    errors: [404],
  }),
};
