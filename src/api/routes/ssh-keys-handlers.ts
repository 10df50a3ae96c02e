import type { HttpRouter } from '../http-router.js';
import type { ApiContext } from '../context.js';
import { nonEmpty } from '../body.js';
import { parsePublicKey } from '../../core/ssh-public-key.js';
import { checkDisplayName } from '../../core/names.js';
import { NotFoundError } from '../../core/errors.js';
import { sshKeyRoutes } from './ssh-keys-routes.js';

function keyView(key: { id: string; label: string; algorithm: string; fingerprint: string; created_at: string }) {
  return { id: key.id, label: key.label, algorithm: key.algorithm, fingerprint: key.fingerprint, created_at: key.created_at };
}

export function sshKeyHandlers(router: HttpRouter<ApiContext>): void {
  router.handle(sshKeyRoutes.list, ({ user, deps }) => ({ keys: deps.store.sshKeys.listForUser(user.id).map(keyView) }));

  router.handle(sshKeyRoutes.add, ({ user, deps, body }) => {
    const parsed = parsePublicKey(nonEmpty('public_key', body.public_key, 'Send the content of your .pub file.'));
    const label = checkDisplayName(
      'key',
      body.label || parsed.comment.replace(/[^\p{L}\p{N} ._-]/gu, '-').slice(0, 63) || parsed.fingerprint.slice(7, 19),
    );
    const key = deps.store.sshKeys.add(user.id, {
      label,
      algorithm: parsed.algorithm,
      fingerprint: parsed.fingerprint,
      publicKey: parsed.openssh,
    });
    return { key: keyView(key) };
  });

  router.handle(sshKeyRoutes.remove, ({ user, deps, params }) => {
    if (!deps.store.sshKeys.remove(user.id, params.key)) {
      throw new NotFoundError(
        `You have no SSH key ${JSON.stringify(params.key)}.`,
        '`slipway ssh-keys list` shows ids, labels and fingerprints.',
      );
    }
    return { keys: deps.store.sshKeys.listForUser(user.id).map(keyView) };
  });
}
