import type { HttpRouter } from '../http-router.js';
import type { ApiContext } from '../context.js';
import { checkDisplayName } from '../../core/names.js';
import { requireString } from '../body.js';
import { orgForUser } from '../access.js';
import { NotFoundError } from '../../core/errors.js';

export function orgRoutes(router: HttpRouter<ApiContext>): void {
  router.add('GET', '/v1/orgs', ({ user, deps }) => ({ orgs: deps.store.orgs.listForUser(user.id) }));

  router.add('POST', '/v1/orgs', async ({ user, deps, body }) => {
    const name = checkDisplayName('organisation', requireString(await body(), 'name'));
    return deps.store.transaction(() => {
      const org = deps.store.orgs.create(name);
      deps.store.orgs.addMember(org.id, user.id, 'owner');
      return { org: { ...org, role: 'owner' } };
    });
  });

  router.add('GET', '/v1/orgs/:org', ({ user, deps, params }) => {
    const org = orgForUser(deps.store, user, params.org);
    return { org, members: deps.store.orgs.members(org.id) };
  });

  router.add('POST', '/v1/orgs/:org/members', async ({ user, deps, params, body }) => {
    const org = orgForUser(deps.store, user, params.org);
    const name = requireString(await body(), 'user');
    const member = deps.store.users.byName(name);
    if (!member) {
      throw new NotFoundError(`No user named ${JSON.stringify(name)}.`, 'An administrator creates users with `slipway user create <name>`.');
    }
    deps.store.orgs.addMember(org.id, member.id, 'member');
    return { members: deps.store.orgs.members(org.id) };
  });
}
