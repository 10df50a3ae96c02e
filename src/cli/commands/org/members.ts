import { command, type CommandContext } from '../../command.js';
import { printTable } from '../../output.js';
import { UsageError } from '../../errors.js';

type Members = Array<{ user_id: string; name: string; role: string }>;

/** The organisation named, else the user's only one. */
export async function orgOrOnly(ctx: CommandContext, org: string | undefined): Promise<string> {
  if (org) return org;
  const { orgs } = await ctx.client().request<{ orgs: Array<{ name: string }> }>('GET', '/v1/orgs');
  if (orgs.length !== 1)
    throw new UsageError(`Name the organisation: you belong to ${orgs.length} (${orgs.map((o) => o.name).join(', ')}).`);
  return orgs[0]!.name;
}

export const orgMembers = command({
  path: ['org', 'members'],
  summary: 'List the members of an organisation and their roles',
  usage: 'org members [<org>]',
  args: { min: 0, max: 1 },
  arguments: [{ name: '[<org>]', description: 'The organisation, id or name (default: your only one)' }],
  examples: ['slipway org members acme', 'slipway org members --format json'],
  printsData: true,
  async run(ctx, [org]) {
    const name = await orgOrOnly(ctx, org);
    const { members } = await ctx.client().request<{ members: Members }>('GET', `/v1/orgs/${encodeURIComponent(name)}/members`);
    printTable(ctx, members, ['name', 'role', 'user_id']);
  },
});

export const orgAddMember = command({
  path: ['org', 'add-member'],
  summary: "Add a user to an organisation, or change a member's role (owners and administrators)",
  usage: 'org add-member <org> <user> [--role member|owner]',
  options: {
    role: {
      type: 'string',
      short: 'r',
      value: 'member|owner',
      choices: ['member', 'owner'],
      description: 'member (default) uses its apps and add-ons; owner also manages its members',
    },
  },
  args: { min: 2, max: 2 },
  arguments: [
    { name: '<org>', description: 'The organisation, id or name' },
    { name: '<user>', description: 'The user name (`slipway user create` makes users)' },
  ],
  examples: ['slipway org add-member acme alice', 'slipway org add-member acme bob --role owner'],
  async run(ctx, [org, user], options) {
    const body: Record<string, unknown> = { user };
    if (options.role !== undefined) body.role = options.role;
    const { members } = await ctx.client().request<{ members: Members }>('POST', `/v1/orgs/${encodeURIComponent(org)}/members`, body);
    const added = members.find((m) => m.name === user);
    ctx.err(`${user} is ${added?.role === 'owner' ? 'an owner' : 'a member'} of ${org}.\n`);
  },
});

export const orgRemoveMember = command({
  path: ['org', 'remove-member'],
  summary: 'Remove a user from an organisation (owners and administrators; never its last owner)',
  usage: 'org remove-member <org> <user>',
  args: { min: 2, max: 2 },
  arguments: [
    { name: '<org>', description: 'The organisation, id or name' },
    { name: '<user>', description: 'The member: user name or id' },
  ],
  examples: ['slipway org remove-member acme alice'],
  async run(ctx, [org, user]) {
    await ctx.client().request('DELETE', `/v1/orgs/${encodeURIComponent(org)}/members/${encodeURIComponent(user)}`);
    ctx.err(`${user} no longer belongs to ${org}.\n`);
  },
});
