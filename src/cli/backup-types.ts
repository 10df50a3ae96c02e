/** A backup as the API describes it (GET /v1/addons/:addon/backups). */
export type { AddonBackupView as BackupSummary } from '../shared/api-types.js';
export { humanSize } from '../shared/human-size.js';
