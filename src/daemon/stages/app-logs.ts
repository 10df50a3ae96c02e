import { join } from 'node:path';
import { LogHub } from '../../logs/log-hub.js';
import type { DaemonBase } from './stage.js';

/**
 * The apps' and deployments' logs: files with rotation and live followers. Needs: the base.
 * Provides: `logs`, and `tellApps`, a line in the system stream of each app named.
 */
export function appLogs({ options, lifecycle, log }: DaemonBase) {
  const logs = new LogHub(join(options.dataDir, 'logs'), { limits: options.logLimits, warn: log });
  void logs.restrictExistingFiles();
  // A deleted app's logs go, and those of its deployments.
  lifecycle.on('app removing', ({ appId, deploymentIds }) => logs.remove([appId, ...deploymentIds]));
  const tellApps = (appIds: Iterable<string>, line: string) => {
    for (const appId of appIds) logs.append(appId, 'system', line);
  };
  return { logs, tellApps };
}
