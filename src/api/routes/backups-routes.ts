import { route } from '../route-spec.js';
import { arr, int, mapOf, nullable, obj, oneOf, str, time } from '../schema.js';
import { Addon } from '../schemas.js';

const ADDON = { addon: 'Add-on id, or name (with ?org= when several of your organisations have one of that name)' };
const BACKUP = { ...ADDON, backup: 'Backup id (see the list of backups)' };
const ORG_OF_NAME = { org: { schema: str(), description: 'The organisation of an add-on given by name' } };

export const AddonBackup = obj({
  id: str(),
  addon_id: str(),
  kind: oneOf(['scheduled', 'manual', 'safety']),
  created_at: time(),
  finished_at: time('From this time on, a restore to a point in time (PostgreSQL) can start from this backup'),
  size_bytes: int(),
  verification: oneOf(['pending', 'verified', 'failed']),
  verification_detail: str('What the restore test found, or why it failed'),
  verified_at: nullable(time()),
  counts: mapOf(int(), 'What the restore test compares: rows per table (PostgreSQL), `keys` (Redis)'),
});

const Schedule = obj({ at: str('HH:MM, the machine local time'), keep_days: int() });

export const backupRoutes = {
  list: route({
    route: 'GET /v1/addons/:addon/backups',
    operationId: 'listAddonBackups',
    tag: 'Backups',
    summary: "The add-on's backups, failed verifications first, then newest first; with the restore window",
    params: ADDON,
    query: ORG_OF_NAME,
    success: {
      status: 200,
      response: {
        description: 'The backups',
        schema: obj({ backups: arr(AddonBackup), window: nullable(obj({ from: time(), to: time() })), schedule: Schedule }),
      },
    },
    errors: [404, 409, 501],
  }),
  create: route({
    route: 'POST /v1/addons/:addon/backups',
    operationId: 'createAddonBackup',
    tag: 'Backups',
    summary: 'Take a backup now; answers once it is stored (its restore test follows)',
    params: ADDON,
    query: ORG_OF_NAME,
    success: { status: 201, response: { description: 'The backup', schema: obj({ backup: AddonBackup }) } },
    errors: [403, 404, 409, 501],
  }),
  verify: route({
    route: 'POST /v1/addons/:addon/backups/:backup/verify',
    operationId: 'verifyAddonBackup',
    tag: 'Backups',
    summary: 'Restore-test a backup now; answers with its verification once done',
    params: BACKUP,
    query: ORG_OF_NAME,
    success: { status: 201, response: { description: 'The backup', schema: obj({ backup: AddonBackup }) } },
    errors: [404, 409, 501],
  }),
  download: route({
    route: 'GET /v1/addons/:addon/backups/:backup/dump',
    operationId: 'downloadAddonBackup',
    tag: 'Backups',
    summary: 'A portable dump of the backup (PostgreSQL: pg_dump custom format, for pg_restore; Redis: the RDB file)',
    params: BACKUP,
    query: ORG_OF_NAME,
    success: { status: 200, response: { description: 'The dump', schema: str(), text: 'application/octet-stream' } },
    errors: [404, 409, 501],
  }),
  restore: route({
    route: 'POST /v1/addons/:addon/restore',
    operationId: 'restoreAddon',
    tag: 'Backups',
    summary:
      'Restore the add-on to a backup or a time: in place (safety backup first), or into a new add-on with `as`; `as` alone forks the add-on as it is now',
    params: ADDON,
    query: ORG_OF_NAME,
    body: obj(
      {
        backup: str('A backup id'),
        to: time('A time inside the restore window (RFC 3339); PostgreSQL only, a Redis add-on restores to a backup'),
        as: str('Name of a new add-on of the same organisation to restore into; the source is untouched'),
      },
      ['backup', 'to', 'as'],
    ),
    success: {
      status: 201,
      response: { description: 'The add-on restored', schema: obj({ addon: Addon, safety_backup: nullable(str()) }) },
    },
    errors: [403, 404, 409, 501],
  }),
  schedule: route({
    route: 'POST /v1/addons/:addon/backup-schedule',
    operationId: 'setAddonBackupSchedule',
    tag: 'Backups',
    summary: "Show or change when the add-on's daily backup runs and how many days backups are kept",
    params: ADDON,
    query: ORG_OF_NAME,
    body: obj({ at: str('HH:MM, the machine local time'), keep_days: int() }, ['at', 'keep_days']),
    success: { status: 201, response: { description: 'The schedule', schema: obj({ schedule: Schedule }) } },
    errors: [404],
  }),
};
