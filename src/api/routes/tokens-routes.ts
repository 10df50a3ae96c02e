import { route } from '../route-spec.js';
import { arr, bool, int, obj, oneOf, str } from '../schema.js';
import { Token } from '../schemas.js';

/** The longest life a token can be given: ten years, in seconds. */
export const MAX_TOKEN_LIFETIME_SECONDS = 10 * 365 * 24 * 3600;

const TOKEN = { token: 'The token id, or the label of one of your tokens' };

export const tokenRoutes = {
  list: route({
    route: 'GET /v1/tokens',
    operationId: 'listTokens',
    tag: 'Tokens',
    summary: "Your API tokens (never their value); ?all=1 lists everyone's (administrators)",
    query: { all: { schema: oneOf(['0', '1']), description: "1: every user's tokens, with their user name (administrators)" } },
    success: { status: 200, response: { description: 'The tokens', schema: obj({ tokens: arr(Token) }) } },
    errors: [403],
  }),
  create: route({
    route: 'POST /v1/tokens',
    operationId: 'createToken',
    tag: 'Tokens',
    summary: 'Create an API token for yourself; its value (secret) is shown once',
    body: obj(
      {
        label: str('A name to recognise it by (default "token <date>")'),
        expires_in: int('Seconds until it stops working, 1 to ten years (default: never)', {
          minimum: 1,
          maximum: MAX_TOKEN_LIFETIME_SECONDS,
        }),
        scope: oneOf(['read', 'deploy', 'full'], 'What it may do (default: the scope of the token making it, never more)'),
      },
      ['label', 'expires_in', 'scope'],
    ),
    success: {
      status: 201,
      response: {
        description: 'The token and its value',
        schema: obj({ token: Token, secret: str('slw_...: send it as Authorization: Bearer <secret>') }),
      },
    },
    errors: [403],
  }),
  revoke: route({
    route: 'DELETE /v1/tokens/:token',
    operationId: 'revokeToken',
    tag: 'Tokens',
    summary: 'Revoke a token (yours, or any for an administrator); the last working administrator token is kept',
    params: TOKEN,
    success: {
      status: 200,
      response: {
        description: 'The revoked token',
        schema: obj({ token: Token, was_current: bool('Whether the request used this token') }),
      },
    },
    errors: [404, 409],
  }),
};
