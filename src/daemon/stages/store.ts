import { openStoreSecrets, rotateStoreSecrets, secretsKeyPath } from '../../store/secrets-key-file.js';
import { Store } from '../../store/store.js';
import { join } from 'node:path';
import type { Deployment } from '../../store/deployments.js';
import { bootstrapIfEmpty } from '../bootstrap.js';
import { lockDownDataFolder } from '../data-folder-modes.js';
import { INTERRUPTED_BY_RESTART } from '../resume-deployments.js';
import type { DaemonBase } from './stage.js';

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

/**
 * The store (one SQLite file) and the secrets key, the first user and token on a first start,
 * and what the last daemon left unfinished. Needs: the data folder. Provides: `store`,
 * `secrets`, `first` (whether this start made the admin, and its token file), `interrupted`
 * (deployments that were running, now CANCELLED) and `waiting` (queued ones, run once the apps serve).
 */
export function openStore({ options, log, stoppers, lifecycle }: DaemonBase) {
  const store = Store.open(join(options.dataDir, 'slipway.db'));
  stoppers.control('store', () => store.close());
  const secrets = startSecrets(store, options.dataDir, log);
  // SQLite creates -wal and -shm with the database's mode: make sure all three are root's alone.
  lockDownDataFolder(options.dataDir);
  const first = bootstrapIfEmpty(store, options.dataDir);
  // What the last daemon left unfinished: the deployment it was running ends CANCELLED (its
  // build sandbox and folder are swept below); those waiting their turn run once the apps serve.
  const unfinished = store.deployments.unfinished();
  const interrupted: Deployment[] = unfinished.filter((d) => d.phase !== 'queued');
  for (const d of interrupted) store.deployments.finish(d.id, 'CANCELLED', INTERRUPTED_BY_RESTART);
  if (interrupted.length) log(`Marked ${interrupted.length} deployment(s) interrupted by the restart CANCELLED.`);
  // From here on each deployment that ends, whoever ended it, is told on the lifecycle hub.
  store.deployments.onFinished((deployment) => lifecycle.publish('deployment finished', { deployment }));
  return { store, secrets, first, interrupted, waiting: unfinished.filter((d) => d.phase === 'queued') };
}
