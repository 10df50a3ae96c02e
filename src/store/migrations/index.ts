import * as m001 from './001-control-plane.js';
import * as m002 from './002-deployments.js';
import * as m003 from './003-addons.js';
import * as m004 from './004-app-users.js';
import * as m005 from './005-flavors.js';
import * as m006 from './006-tokens.js';
import * as m007 from './007-kept-releases.js';
import * as m008 from './008-app-config.js';
import * as m009 from './009-instance-count.js';
import * as m010 from './010-domains.js';
import * as m011 from './011-notifications.js';
import * as m012 from './012-drains.js';
import * as m013 from './013-cron-runs.js';
import * as m014 from './014-tenant-domains.js';
import * as m015 from './015-token-scopes.js';
import * as m016 from './016-addon-backups.js';
import * as m017 from './017-app-disk-budget.js';
import * as m018 from './018-org-quotas.js';
import * as m019 from './019-tenant-bounds.js';
import * as m020 from './020-backup-object-sums.js';
import * as m021 from './021-scaling-ranges.js';
import * as m022 from './022-scaling-flavors.js';
import * as m023 from './023-scale-to-zero.js';
import * as m024 from './024-worker-ranges.js';

/** Versioned schema changes, applied in order; never edit one that has shipped, add a new one. */
export const migrations: ReadonlyArray<{ version: number; name: string; sql: string }> = [
  { version: 1, name: 'control-plane', sql: m001.sql },
  { version: 2, name: 'deployments', sql: m002.sql },
  { version: 3, name: 'addons', sql: m003.sql },
  { version: 4, name: 'app-users', sql: m004.sql },
  { version: 5, name: 'flavors', sql: m005.sql },
  { version: 6, name: 'tokens', sql: m006.sql },
  { version: 7, name: 'kept-releases', sql: m007.sql },
  { version: 8, name: 'app-config', sql: m008.sql },
  { version: 9, name: 'instance-count', sql: m009.sql },
  { version: 10, name: 'domains', sql: m010.sql },
  { version: 11, name: 'notifications', sql: m011.sql },
  { version: 12, name: 'drains', sql: m012.sql },
  { version: 13, name: 'cron-runs', sql: m013.sql },
  { version: 14, name: 'tenant-domains', sql: m014.sql },
  { version: 15, name: 'token-scopes', sql: m015.sql },
  { version: 16, name: 'addon-backups', sql: m016.sql },
  { version: 17, name: 'app-disk-budget', sql: m017.sql },
  { version: 18, name: 'org-quotas', sql: m018.sql },
  { version: 19, name: 'tenant-bounds', sql: m019.sql },
  { version: 20, name: 'backup-object-sums', sql: m020.sql },
  { version: 21, name: 'scaling-ranges', sql: m021.sql },
  { version: 22, name: 'scaling-flavors', sql: m022.sql },
  { version: 23, name: 'scale-to-zero', sql: m023.sql },
  { version: 24, name: 'worker-ranges', sql: m024.sql },
];
