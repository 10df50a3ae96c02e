import { route } from '../route-spec.js';
import { bool, obj, nullable, str, time, arr } from '../schema.js';
import { OrgWithRole } from '../schemas.js';

export const userRoutes = {
  me: route({
    route: 'GET /v1/me',
    operationId: 'getMe',
    tag: 'Users',
    summary: 'The authenticated user, their organisations and the token in use',
    success: {
      status: 200,
      response: {
        description: 'Who the token belongs to',
        schema: obj({
          user: obj({ id: str(), name: str(), admin: bool() }),
          orgs: arr(OrgWithRole),
          token: obj({ id: str(), label: str(), expires_at: nullable(time()) }),
        }),
      },
    },
    errors: [],
  }),
  create: route({
    route: 'POST /v1/users',
    operationId: 'createUser',
    tag: 'Users',
    summary: 'Create a user and their first API token (administrators); the token is shown once',
    body: obj({ name: str('Lower-case letters, digits, - and _') }),
    success: {
      status: 201,
      response: {
        description: 'The user and their first token',
        schema: obj({ user: obj({ id: str(), name: str() }), token: str('slw_...') }),
      },
    },
    errors: [403, 409],
  }),
};
