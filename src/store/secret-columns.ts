import type { SecretPlace } from './secret-box.js';

/**
 * Every column of the store that holds a secret, with the columns naming the row's owner (the
 * additional data of its seal). A new secret column is added here and read and written through
 * `StoreSecrets` in its repository; `sealClearSecrets` and `rotateSecrets` then cover it.
 */
export const SECRET_COLUMNS = [
  { table: 'env_vars', columns: ['value'], owner: ['app_id', 'name'] },
  { table: 'published_config', columns: ['value'], owner: ['app_id', 'name'] },
  { table: 'addons', columns: ['config_json'], owner: ['org_id', 'id'] },
  { table: 'notification_webhooks', columns: ['url', 'secret'], owner: ['app_id', 'id'] },
  { table: 'drains', columns: ['url', 'username', 'password'], owner: ['app_id', 'id'] },
] as const;

export type SecretTable = (typeof SECRET_COLUMNS)[number]['table'];

export function placeOf(table: string, column: string, owner: readonly string[]): SecretPlace {
  return { table, column, owner };
}
