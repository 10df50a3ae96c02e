import { route } from '../route-spec.js';
import { arr, obj, str } from '../schema.js';
import { SshKey } from '../schemas.js';

const keys = { description: 'Your keys after the change', schema: obj({ keys: arr(SshKey) }) };

export const sshKeyRoutes = {
  list: route({
    route: 'GET /v1/ssh-keys',
    operationId: 'listSshKeys',
    tag: 'SSH keys',
    summary: 'Your SSH public keys (they may git push to the applications of your organisations)',
    success: { status: 200, response: { description: 'Your keys', schema: obj({ keys: arr(SshKey) }) } },
    errors: [],
  }),
  add: route({
    route: 'POST /v1/ssh-keys',
    operationId: 'addSshKey',
    tag: 'SSH keys',
    summary: 'Register an SSH public key',
    body: obj({ public_key: str('The content of the .pub file'), label: str('Default: the key comment') }, ['label']),
    success: { status: 201, response: { description: 'The key', schema: obj({ key: SshKey }) } },
    errors: [409],
  }),
  remove: route({
    route: 'DELETE /v1/ssh-keys/:key',
    operationId: 'removeSshKey',
    tag: 'SSH keys',
    summary: 'Remove one of your SSH keys',
    params: { key: 'Key id, label or fingerprint' },
    success: { status: 200, response: keys },
    errors: [404],
  }),
};
