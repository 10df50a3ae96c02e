import type { HttpRouter } from '../http-router.js';
import type { ApiContext } from '../context.js';
import { requireString, optionalString } from '../body.js';
import { parsePublicKey } from '../../core/ssh-public-key.js';
import { checkDisplayName } from '../../core/names.js';
import { NotFoundError } from '../../core/errors.js';
import { sshKeySpecs } from './ssh-keys-routes.js';

function keyView(key: { id: string; label: string; algorithm: string; fingerprint: string; created_at: string }) {
  return { id: key.id, label: key.label, algorithm: key.algorithm, fingerprint: key.fingerprint, created_at: key.created_at };
}

export function sshKeyRoutes(router: HttpRouter<ApiContext>): void {
  router.add('GET', '/v1/ssh-keys', sshKeySpecs.list, ({ user, deps }) => ({ keys: deps.store.sshKeys.listForUser(user.id).map(keyView) }));

  router.add('POST', '/v1/ssh-keys', sshKeySpecs.add, async ({ user, deps, body }) => {
    const input = await body();
    const parsed = parsePublicKey(requireString(input, 'public_key', 'Send the content of your .pub file.'));
    const label = checkDisplayName(
      'key',
      optionalString(input, 'label') || parsed.comment.replace(/[^\p{L}\p{N} ._-]/gu, '-').slice(0, 63) || parsed.fingerprint.slice(7, 19),
    );
    const key = deps.store.sshKeys.add(user.id, {
      label,
      algorithm: parsed.algorithm,
      fingerprint: parsed.fingerprint,
      publicKey: parsed.openssh,
    });
    return { key: keyView(key) };
  });

  router.add('DELETE', '/v1/ssh-keys/:key', sshKeySpecs.remove, ({ user, deps, params }) => {
    if (!deps.store.sshKeys.remove(user.id, params.key!)) {
      throw new NotFoundError(
        `You have no SSH key ${JSON.stringify(params.key)}.`,
        '`slipway ssh-keys list` shows ids, labels and fingerprints.',
      );
    }
    return { keys: deps.store.sshKeys.listForUser(user.id).map(keyView) };
  });
}
