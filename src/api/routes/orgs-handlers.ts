import type { HttpRouter } from '../http-router.js';
import type { ApiContext } from '../context.js';
import { checkDisplayName } from '../../core/names.js';
import { nonEmpty } from '../body.js';
import { orgForUser } from '../access.js';
import { ConflictError, ForbiddenError, NotFoundError, ValidationError } from '../../core/errors.js';
import type { Store } from '../../store/store.js';
import type { User } from '../../store/users.js';
import type { Org } from '../../store/orgs.js';
import { isId } from '../../core/names.js';
import { orgRoutes } from './orgs-routes.js';
import { requireAdmin } from '../access.js';
import { quotasOf } from '../quotas.js';
import type { ApiDependencies } from '../platform.js';
import { QUOTA_FLAGS, QUOTA_NAMES, parseQuotaValue, quotaBodyField } from '../../quotas/limits.js';
import type { OrgQuotaRow } from '../../store/org-quotas.js';

/**
 * The organisation whose members a user may see: theirs, or any for an administrator (who
 * may be asked to repair an organisation they do not belong to).
 */
function orgForMembers(store: Store, user: User, ref: unknown): Org {
  if (user.is_admin && typeof ref === 'string') {
    const org = isId(ref) ? store.orgs.byId(ref) : store.orgs.byName(ref);
    if (org) return org;
  }
  return orgForUser(store, user, ref);
}

/** Only the organisation's owners and administrators change who belongs to it. */
function orgToManage(store: Store, user: User, ref: unknown): Org {
  const org = orgForMembers(store, user, ref);
  if (!user.is_admin && store.orgs.roleOf(org.id, user.id) !== 'owner') {
    throw new ForbiddenError(
      `Only the owners of ${org.name} or an administrator can change its members.`,
      `\`slipway org members ${org.name}\` shows its owners.`,
    );
  }
  return org;
}

/** An organisation's limits, the defaults, which are its own, and its use. */
function quotaView(deps: ApiDependencies, org: Org) {
  const quotas = quotasOf(deps);
  const overrides = deps.store.orgQuotas.of(org.id);
  return {
    org: org.name,
    limits: quotas.limitsOf(org.id),
    defaults: quotas.defaults,
    overridden: QUOTA_NAMES.filter((name) => overrides[name] !== null),
    usage: quotas.usageOf(org.id),
  };
}

const bodyField = quotaBodyField;

/** The changes a body asks for: a value sets the quota, null puts it back to the default. */
function quotaChanges(input: Record<string, unknown>): Partial<OrgQuotaRow> {
  const changes: Record<string, unknown> = {};
  for (const name of QUOTA_NAMES) {
    const field = bodyField(name);
    if (!(field in input)) continue;
    const value = input[field];
    changes[name] = value === null || value === 'default' ? null : parseQuotaValue(name, value);
  }
  if (Object.keys(changes).length === 0) {
    throw new ValidationError('Nothing to change.', `Give one or more of: ${QUOTA_NAMES.map((n) => `--${QUOTA_FLAGS[n]}`).join(', ')}.`);
  }
  return changes as Partial<OrgQuotaRow>;
}

export function orgHandlers(router: HttpRouter<ApiContext>): void {
  router.handle(orgRoutes.list, ({ user, deps }) => ({ orgs: deps.store.orgs.listForUser(user.id) }));

  router.handle(orgRoutes.create, ({ user, deps, body }) => {
    const name = checkDisplayName('organisation', nonEmpty('name', body.name));
    quotasOf(deps).checkNewOrg(user);
    return deps.store.transaction(() => {
      const org = deps.store.orgs.create(name);
      deps.store.orgs.addMember(org.id, user.id, 'owner');
      return { org: { ...org, role: 'owner' } };
    });
  });

  router.handle(orgRoutes.get, ({ user, deps, params }) => {
    const org = orgForUser(deps.store, user, params.org);
    return { org, members: deps.store.orgs.members(org.id) };
  });

  router.handle(orgRoutes.members, ({ user, deps, params }) => {
    const org = orgForMembers(deps.store, user, params.org);
    return { members: deps.store.orgs.members(org.id) };
  });

  /** Adds a user, or changes the role of a member; the last owner cannot step down. */
  router.handle(orgRoutes.addMember, ({ user, deps, params, body }) => {
    const { store } = deps;
    const org = orgToManage(store, user, params.org);
    const name = nonEmpty('user', body.user);
    const role = body.role ?? 'member';
    const member = store.users.byName(name);
    if (!member) {
      throw new NotFoundError(
        `No user named ${JSON.stringify(name)}.`,
        'An administrator creates users with `slipway user create <name>`.',
      );
    }
    if (role === 'member' && store.orgs.roleOf(org.id, member.id) === 'owner' && store.orgs.ownerCount(org.id) === 1) {
      throw new ConflictError(
        `${member.name} is the last owner of ${org.name}.`,
        'Make another member owner first (`slipway org add-member <org> <user> --role owner`).',
      );
    }
    store.orgs.addMember(org.id, member.id, role);
    return { members: store.orgs.members(org.id) };
  });

  router.handle(orgRoutes.removeMember, ({ user, deps, params }) => {
    const { store } = deps;
    const org = orgToManage(store, user, params.org);
    const member = isId(params.user) ? store.users.byId(params.user) : store.users.byName(params.user);
    if (!member || !store.orgs.roleOf(org.id, member.id)) {
      throw new NotFoundError(
        `${JSON.stringify(params.user)} is not a member of ${org.name}.`,
        `\`slipway org members ${org.name}\` lists them.`,
      );
    }
    if (store.orgs.roleOf(org.id, member.id) === 'owner' && store.orgs.ownerCount(org.id) === 1) {
      throw new ConflictError(
        `${member.name} is the last owner of ${org.name}: nobody would be left to manage its members.`,
        'Make another member owner first (`slipway org add-member <org> <user> --role owner`).',
      );
    }
    store.orgs.removeMember(org.id, member.id);
    return { members: store.orgs.members(org.id) };
  });

  router.handle(orgRoutes.getQuota, ({ user, deps, params }) => ({
    quota: quotaView(deps, orgForMembers(deps.store, user, params.org)),
  }));

  /** Quotas bound what a tenant may take of the machine: the operator's call, not the owners'. */
  router.handle(orgRoutes.setQuota, ({ user, deps, params, body }) => {
    requireAdmin(user);
    const org = orgForMembers(deps.store, user, params.org);
    deps.store.orgQuotas.set(org.id, quotaChanges(body));
    return { quota: quotaView(deps, org) };
  });
}
