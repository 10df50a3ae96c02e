import { route } from '../route-spec.js';
import { arr, bool, int, nullable, obj, str } from '../schema.js';

export const systemRoutes = {
  status: route({
    route: 'GET /v1/system/status',
    operationId: 'getSystemStatus',
    tag: 'System',
    summary: "Administrators: the platform's state, with each app's disk use against its budget",
    success: {
      status: 200,
      response: {
        description: 'The state of the platform',
        schema: obj({
          apps: arr(
            obj({
              app_id: str(),
              app_name: str(),
              used_bytes: nullable(int("Bytes used in the app's filesystem; null before its first push")),
              budget_bytes: int('Its disk budget'),
            }),
            "Each app's disk use",
          ),
          min_free_bytes: nullable(int('The free space builds and backups leave on the disks below (--min-free-disk; 0: not checked)')),
          disks: arr(
            obj({
              label: str('What the disk holds'),
              path: str('The folder on it'),
              free_bytes: nullable(int('Bytes free on its filesystem; null when it cannot be read')),
            }),
            "The data folder's disk and a local backup folder's",
          ),
        }),
      },
    },
    errors: [403],
  }),
  stop: route({
    route: 'POST /v1/system/stop',
    operationId: 'stopSystem',
    tag: 'System',
    summary:
      'Administrators: drain and stop every app, worker, add-on server and the router, then stop the daemon (a plain SIGTERM stops the daemon alone and leaves them serving)',
    success: {
      status: 201,
      response: {
        description: 'What was stopped',
        schema: obj({
          apps: arr(str(), 'Names of the applications whose instances were stopped'),
          instances: int('Instances stopped'),
          addon_servers: arr(str(), 'Add-on providers whose servers were stopped'),
          router: str('What became of the router'),
        }),
      },
    },
    errors: [403, 503],
  }),
  backup: route({
    route: 'POST /v1/system/backup',
    operationId: 'backupSystem',
    tag: 'System',
    summary:
      "Administrators: write a whole-platform backup (store, repositories, CA, SSH host key, a fresh restore-tested backup of every add-on, the apps' kept releases) to the backup store, or into a folder of the daemon machine",
    body: obj(
      {
        to: str(
          "An absolute folder on the daemon's machine (the backup is a slipway-platform-<time> folder inside it); absent: the backup store add-on backups go to, under platform/",
        ),
      },
      ['to'],
    ),
    success: {
      status: 201,
      response: {
        description: 'What was written',
        schema: obj({
          path: str('The backup folder, or its name in the backup store; complete (its manifest is written last)'),
          name: str('The backup name (slipway-platform-<time>), for `slipway server --restore-from`'),
          place: str('Where it was written: the folder, or the store (bucket, prefix, encryption)'),
          created_at: str(),
          slipway_version: str(),
          repositories: int('Repositories bundled'),
          addons: arr(obj({ name: str(), provider: str(), backup_id: str() }), 'Add-ons whose fresh verified backup is inside'),
          files: int('Files listed in manifest.json with their SHA-256'),
          size_bytes: int('Bytes of the files listed (the release archives are counted apart)'),
          releases: int("The apps' kept releases inside, as archives"),
          releases_bytes: int('Bytes of those archives'),
          shared_releases: int('Of those, archives an earlier backup of the same place had written: named again, not copied'),
          encrypted: bool("Whether every file but the manifest is encrypted with the daemon's backup key (--backup-key-file)"),
          warning: nullable(str('Set when the backup is written in clear: what it exposes and how to encrypt it')),
        }),
      },
    },
    errors: [400, 403, 503],
  }),
  rotateSecretsKey: route({
    route: 'POST /v1/system/secrets-key/rotate',
    operationId: 'rotateSecretsKey',
    tag: 'System',
    summary:
      'Administrators: seal every secret of the store (variables, add-on credentials, webhook and drain URLs and secrets) with a new key, then replace the key file; the old key no longer reads the store',
    success: {
      status: 201,
      response: {
        description: 'The rotation, done',
        schema: obj({
          key_file: str("The secrets key file on the daemon's machine, now holding the new key"),
          old_key_id: str('Id of the key replaced (16 hex digits; not the key)'),
          new_key_id: str('Id of the new key'),
          resealed: int('Values sealed again with the new key'),
        }),
      },
    },
    errors: [403, 503],
  }),
};
