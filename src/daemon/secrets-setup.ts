import { openStoreSecrets, rotateStoreSecrets, secretsKeyPath } from '../store/secrets-key-file.js';
import type { Store } from '../store/store.js';

/**
 * Gives the store its secrets key (beside the data folder, docs/security.md) before anything
 * reads it; a key missing or not the store's stops the start here, saying so. Returns the
 * rotation `slipway system rotate-secrets-key` asks for.
 */
export function startSecrets(
  store: Store,
  dataDir: string,
  log: (line: string) => void,
): { keyFile: string; rotate(): Promise<{ keyFile: string; oldKeyId: string; newKeyId: string; resealed: number }> } {
  const keyFile = secretsKeyPath(dataDir);
  const opened = openStoreSecrets(store, keyFile);
  if (opened.created) {
    log(`Secrets of the store are sealed with a new key in ${keyFile} (mode 0600); keep a copy apart from the data folder's backups.`);
  }
  if (opened.sealed > 0) log(`Sealed ${opened.sealed} secret value(s) the store held in clear.`);
  return {
    keyFile,
    rotate: async () => ({ keyFile, ...rotateStoreSecrets(store, keyFile) }),
  };
}
