import { createHash } from 'node:crypto';

/**
 * Names that follow from an FS bucket's add-on id, so nothing else needs recording: its host
 * value (what `CC_FS_BUCKET=<path>:<host>` names, in the reference's form
 * `bucket-<uuid>-fsbucket`) and the unix group of the apps sharing it (`slb-` and 12 hex
 * digits, like the add-on servers' users).
 */
const UUID = /^addon_([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/;

function digest(addonId: string): string {
  return createHash('sha256').update(addonId).digest('hex');
}

export function bucketHost(addonId: string): string {
  const uuid = UUID.exec(addonId)?.[1] ?? digest(addonId).slice(0, 32);
  return `bucket-${uuid}-fsbucket`;
}

export function bucketGroupName(addonId: string): string {
  const uuid = UUID.exec(addonId)?.[1];
  return `slb-${uuid ? uuid.replace(/-/g, '').slice(0, 12) : digest(addonId).slice(0, 12)}`;
}
