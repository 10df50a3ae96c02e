import type { RouteSpec } from '../route-spec.js';
import { arr, int, named, nullable, obj, oneOf, str } from '../schema.js';
import { Member, Org, OrgWithRole } from '../schemas.js';

const ORG = { org: 'Organisation id or name' };
const counts = (what: string) => ({
  apps: int(`Applications ${what}`),
  addons: int(`Add-ons ${what}`),
  instances: int(`Instances over all its apps ${what}`),
  memory_bytes: int(`Instances × their flavour's memory, in bytes, ${what}`),
  workers: int(`Workers ${what}`),
  runs: int(`One-off runs open at once ${what}`),
  domains: int(`Custom domains ${what}`),
  cron_jobs: int(`Cron jobs over the serving releases of its apps ${what}`),
  drains: int(`Log drains ${what}`),
  drain_buffer_bytes: int(`Disk of its drains' buffers, in bytes (each drain reserves the daemon's --drain-buffer-size), ${what}`),
  webhooks: int(`Webhooks ${what}`),
  notify_emails: int(`E-mail notifications ${what}`),
  backups: int(`Manual backups kept ${what}`),
});
const limits = named('QuotaLimits', obj({ ...counts('allowed'), max_flavor: str('The biggest instance flavour allowed') }));
const OrgQuota = named(
  'OrgQuota',
  obj({
    org: str('The organisation name'),
    limits,
    defaults: limits,
    overridden: arr(str(), 'The quotas set for this organisation (the others are the defaults)'),
    usage: obj(
      {
        apps: int(),
        addons: int(),
        instances: int(),
        memory_bytes: int(),
        max_flavor: nullable(str('The biggest flavour its apps use')),
        workers: int(),
        runs: int(),
        domains: int(),
        cron_jobs: int(),
        drains: int(),
        drain_buffer_bytes: int(),
        webhooks: int(),
        notify_emails: int(),
        backups: int(),
      },
      [],
      'What the organisation uses now',
    ),
  }),
);
const quota = { description: 'Its quotas and use', schema: obj({ quota: OrgQuota }) };

const members = { description: 'The members after the change', schema: obj({ members: arr(Member) }) };

export const orgSpecs = {
  list: {
    operationId: 'listOrgs',
    tag: 'Organisations',
    summary: 'Organisations you belong to, with your role',
    success: { status: 200, response: { description: 'The organisations', schema: obj({ orgs: arr(OrgWithRole) }) } },
    errors: [],
  },
  create: {
    operationId: 'createOrg',
    tag: 'Organisations',
    summary: 'Create an organisation; you become its owner',
    body: obj({ name: str('1 to 63 letters, digits, spaces, ., _ or -') }),
    success: { status: 201, response: { description: 'The organisation', schema: obj({ org: OrgWithRole }) } },
    errors: [403, 409],
  },
  get: {
    operationId: 'getOrg',
    tag: 'Organisations',
    summary: 'One organisation with its members',
    params: ORG,
    success: { status: 200, response: { description: 'The organisation', schema: obj({ org: Org, members: arr(Member) }) } },
    errors: [404],
  },
  members: {
    operationId: 'listOrgMembers',
    tag: 'Organisations',
    summary: 'Members of an organisation and their roles (its members, or an administrator)',
    params: ORG,
    success: { status: 200, response: { description: 'The members', schema: obj({ members: arr(Member) }) } },
    errors: [404],
  },
  addMember: {
    operationId: 'addOrgMember',
    tag: 'Organisations',
    summary: "Add a user to an organisation or change a member's role (owners and administrators); the last owner stays owner",
    params: ORG,
    body: obj({ user: str('The user name'), role: oneOf(['member', 'owner'], 'Default member') }, ['role']),
    success: { status: 201, response: members },
    errors: [403, 404, 409],
  },
  removeMember: {
    operationId: 'removeOrgMember',
    tag: 'Organisations',
    summary: 'Remove a member (owners and administrators); never the last owner',
    params: { ...ORG, user: 'User name or id' },
    success: { status: 200, response: members },
    errors: [403, 404, 409],
  },
  getQuota: {
    operationId: 'getOrgQuota',
    tag: 'Organisations',
    summary: 'What an organisation uses and its quotas (its members, or an administrator)',
    params: ORG,
    success: { status: 200, response: quota },
    errors: [404],
  },
  setQuota: {
    operationId: 'setOrgQuota',
    tag: 'Organisations',
    summary: "Set an organisation's quotas (administrators); null puts a quota back to the daemon's default",
    params: ORG,
    body: obj(
      {
        apps: nullable(int()),
        addons: nullable(int()),
        instances: nullable(int()),
        memory: nullable(str('A size such as 64G, or bytes')),
        max_flavor: nullable(str('A flavour name')),
        workers: nullable(int()),
        runs: nullable(int()),
        domains: nullable(int()),
        cron_jobs: nullable(int()),
        drains: nullable(int()),
        drain_buffer: nullable(str('A size such as 256M, or bytes')),
        webhooks: nullable(int()),
        notify_emails: nullable(int()),
        backups: nullable(int()),
      },
      [
        'apps',
        'addons',
        'instances',
        'memory',
        'max_flavor',
        'workers',
        'runs',
        'domains',
        'cron_jobs',
        'drains',
        'drain_buffer',
        'webhooks',
        'notify_emails',
        'backups',
      ],
    ),
    success: { status: 200, response: quota },
    errors: [400, 403, 404],
  },
} satisfies Record<string, RouteSpec>;
