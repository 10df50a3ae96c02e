import type { HttpRouter } from '../http-router.js';
import type { ApiContext } from '../context.js';
import { checkHandle } from '../../core/names.js';
import { nonEmpty } from '../body.js';
import { requireAdmin } from '../access.js';
import { userRoutes } from './users-routes.js';

export function userHandlers(router: HttpRouter<ApiContext>): void {
  router.handle(userRoutes.me, ({ user, token, deps }) => ({
    user: { id: user.id, name: user.name, admin: user.is_admin === 1 },
    orgs: deps.store.orgs.listForUser(user.id),
    token: { id: token.id, label: token.label, expires_at: token.expires_at },
  }));

  /** Administrators add users; each new user gets a first API token, shown once. */
  router.handle(userRoutes.create, ({ user, deps, body }) => {
    requireAdmin(user);
    const name = checkHandle('user name', nonEmpty('name', body.name));
    return deps.store.transaction(() => {
      const created = deps.store.users.create(name);
      const token = deps.store.users.issueToken(created.id, 'first token');
      return { user: { id: created.id, name: created.name }, token };
    });
  });
}
