import type { RouteSpec } from '../route-spec.js';
import { arr, obj, oneOf, str } from '../schema.js';
import { Member, Org, OrgWithRole } from '../schemas.js';

const ORG = { org: 'Organisation id or name' };
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
    errors: [409],
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
} satisfies Record<string, RouteSpec>;
