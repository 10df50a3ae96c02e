import type { AppRow } from '../store/apps.js';
import type { InstanceSandbox } from '../instances/backend.js';

/**
 * Who an app's processes run as and what they may use: the app's own unix user, the limits of
 * its flavour (its build flavour for builds), the shared folders they read.
 */
export interface SandboxPolicy {
  instance(app: AppRow): Promise<InstanceSandbox>;
  build(app: AppRow): Promise<InstanceSandbox>;
}
