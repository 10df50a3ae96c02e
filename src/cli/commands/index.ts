import type { Command } from '../command.js';
import { login } from './login.js';
import { orgCreate } from './org/create.js';
import { orgList } from './org/list.js';
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
import { status } from './status.js';
import { logs } from './logs.js';
import { restart } from './restart.js';
import { stop } from './stop.js';

export const commands: Command[] = [
  server,
  login,
  userCreate,
  orgCreate,
  orgList,
  create,
  link,
  unlink,
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
  status,
  logs,
  restart,
  stop,
];
