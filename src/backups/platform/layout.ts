/** Where each part of the platform sits inside a platform backup (and, restored, in the data folder). */

/** The store, from SQLite's online backup. */
export const STORE_FILE = 'slipway.db';
/** One `<app id>.bundle` per repository. */
export const REPOS_FOLDER = 'repos';
/** The add-ons' backup objects, under the keys they have in a backup store (a folder store). */
export const ADDONS_FOLDER = 'addons';
/** The key the store's secrets are sealed with (store/secrets-key-file.ts): restored beside the new data folder. */
export const SECRETS_KEY_FILE = 'secrets-key';
/** The embedded PostgreSQL cluster's superuser password: its restored copy has the same roles. */
export const PG_PASSWORD_FILE = 'postgresql-admin-password';
/** Each add-on server's superuser password, `<add-on id>.admin-password`: its restored copy has it. */
export const PG_SERVERS_FOLDER = 'postgresql-servers';
/**
 * Files and folders of the data folder copied as they are, at the same place: the internal CA
 * (with its provisional one), the SSH host key (users' known_hosts stay right) and the first
 * administrator's token file. Certificates and the ACME account live in the store.
 */
export const DATA_FOLDER_FILES = ['ca', 'ssh_host_ed25519_key', 'ssh_host_ed25519_key.pub', 'admin-token'] as const;
