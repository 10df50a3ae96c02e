import type { HttpRouter } from '../http-router.js';
import type { ApiContext } from '../context.js';
import { checkHandle } from '../../core/names.js';
import { requireString } from '../body.js';
import { requireAdmin } from '../access.js';
import { userSpecs } from './users-routes.js';

export function userRoutes(router: HttpRouter<ApiContext>): void {
  router.add('GET', '/v1/me', userSpecs.me, ({ user, token, deps }) => ({
    user: { id: user.id, name: user.name, admin: user.is_admin === 1 },
    orgs: deps.store.orgs.listForUser(user.id),
    token: { id: token.id, label: token.label, expires_at: token.expires_at },
  }));

  /** Administrators add users; each new user gets a first API token, shown once. */
  router.add('POST', '/v1/users', userSpecs.create, async ({ user, deps, body }) => {
    requireAdmin(user);
    const name = checkHandle('user name', requireString(await body(), 'name'));
    return deps.store.transaction(() => {
      const created = deps.store.users.create(name);
      const token = deps.store.users.issueToken(created.id, 'first token');
      return { user: { id: created.id, name: created.name }, token };
    });
  });
}
