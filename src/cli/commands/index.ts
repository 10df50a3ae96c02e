import type { Command } from '../command.js';
import { login } from './login.js';
import { orgCreate } from './org/create.js';
import { systemStop } from './system/stop.js';
import { systemBackup } from './system/backup.js';
import { systemStatus } from './system/status.js';
import { systemRotateSecretsKey } from './system/rotate-secrets-key.js';
import { orgList } from './org/list.js';
import { orgAddMember, orgMembers, orgRemoveMember } from './org/members.js';
import { orgQuota, orgQuotaSet } from './org/quota.js';
import { tokensCreate } from './tokens/create.js';
import { tokensList } from './tokens/list.js';
import { tokensRevoke } from './tokens/revoke.js';
import { completion } from './completion.js';
import { userCreate } from './user/create.js';
import { create } from './create.js';
import { link } from './link.js';
import { unlink } from './unlink.js';
import { applications } from './applications.js';
import { envList } from './env/list.js';
import { envSet } from './env/set.js';
import { envRm } from './env/rm.js';
import { envImport } from './env/import.js';
import { sshKeysAdd } from './ssh-keys/add.js';
import { sshKeysList } from './ssh-keys/list.js';
import { sshKeysRm } from './ssh-keys/rm.js';
import { server } from './server.js';
import { deploy } from './deploy.js';
import { activity } from './activity.js';
import { cron } from './cron.js';
import { status } from './status.js';
import { logs } from './logs.js';
import { accesslogs } from './accesslogs.js';
import { restart } from './restart.js';
import { stop } from './stop.js';
import { deleteApp } from './delete.js';
import { rollback } from './rollback.js';
import { plan } from './plan.js';
import { run } from './run.js';
import { scale } from './scale.js';
import { cancelDeploy } from './cancel-deploy.js';
import { configGet, configList, configSet } from './config/list.js';
import { addonCreate } from './addon/create.js';
import { addonList } from './addon/list.js';
import { addonEnv } from './addon/env.js';
import { addonInfo } from './addon/info.js';
import { addonDelete } from './addon/delete.js';
import { addonProviders } from './addon/providers.js';
import { addonBackups } from './addon/backups.js';
import { addonBackup } from './addon/backup.js';
import { addonBackupVerify } from './addon/backup-verify.js';
import { addonBackupDownload } from './addon/backup-download.js';
import { addonRestore } from './addon/restore.js';
import { addonBackupSchedule } from './addon/backup-schedule.js';
import { serviceList } from './service/list.js';
import { serviceLinkAddon } from './service/link-addon.js';
import { serviceUnlinkAddon } from './service/unlink-addon.js';
import { serviceLinkApp } from './service/link-app.js';
import { serviceUnlinkApp } from './service/unlink-app.js';
import { publishedConfigList } from './published-config/list.js';
import { publishedConfigSet } from './published-config/set.js';
import { publishedConfigRm } from './published-config/rm.js';
import { runtimes } from './runtimes.js';
import { logout } from './logout.js';
import { whoami } from './whoami.js';
import { open } from './open.js';
import { consoleCommand } from './console.js';
import { makeDefault } from './make-default.js';
import { publishedConfigImport } from './published-config/import.js';
import { domainList } from './domain/list.js';
import { domainAdd } from './domain/add.js';
import { domainRm } from './domain/rm.js';
import { domainFavouriteSet, domainFavouriteRm } from './domain/favourite.js';
import { domainCertSet, domainCertRm } from './domain/cert.js';
import { drainList } from './drain/list.js';
import { drainCreate } from './drain/create.js';
import { drainRemove } from './drain/remove.js';
import { drainEnable, drainDisable } from './drain/enable.js';
import { webhooksList } from './webhooks/list.js';
import { webhooksAdd } from './webhooks/add.js';
import { webhooksRemove } from './webhooks/remove.js';
import { webhooksDeliveries } from './webhooks/deliveries.js';
import { notifyEmailList } from './notify-email/list.js';
import { notifyEmailAdd } from './notify-email/add.js';
import { notifyEmailRemove } from './notify-email/remove.js';
import { notifyEmailDeliveries } from './notify-email/deliveries.js';
import { notifyEmailAddress } from './notify-email/address.js';

export const commands: Command[] = [
  server,
  login,
  logout,
  whoami,
  userCreate,
  tokensCreate,
  tokensList,
  tokensRevoke,
  orgCreate,
  systemStop,
  systemBackup,
  systemStatus,
  systemRotateSecretsKey,
  orgList,
  orgMembers,
  orgAddMember,
  orgRemoveMember,
  orgQuota,
  orgQuotaSet,
  create,
  link,
  unlink,
  makeDefault,
  applications,
  envList,
  envSet,
  envRm,
  envImport,
  sshKeysAdd,
  sshKeysList,
  sshKeysRm,
  deploy,
  activity,
  cron,
  status,
  open,
  consoleCommand,
  logs,
  accesslogs,
  restart,
  stop,
  deleteApp,
  rollback,
  plan,
  run,
  scale,
  cancelDeploy,
  configList,
  configGet,
  configSet,
  addonCreate,
  addonList,
  addonEnv,
  addonInfo,
  addonDelete,
  addonProviders,
  addonBackups,
  addonBackup,
  addonBackupVerify,
  addonBackupDownload,
  addonRestore,
  addonBackupSchedule,
  serviceList,
  serviceLinkAddon,
  serviceUnlinkAddon,
  serviceLinkApp,
  serviceUnlinkApp,
  publishedConfigList,
  publishedConfigSet,
  publishedConfigRm,
  publishedConfigImport,
  domainList,
  domainAdd,
  domainRm,
  domainFavouriteSet,
  domainFavouriteRm,
  domainCertSet,
  domainCertRm,
  drainList,
  drainCreate,
  drainRemove,
  drainEnable,
  drainDisable,
  webhooksList,
  webhooksAdd,
  webhooksRemove,
  webhooksDeliveries,
  notifyEmailList,
  notifyEmailAdd,
  notifyEmailRemove,
  notifyEmailDeliveries,
  notifyEmailAddress,
  runtimes,
  completion,
];
