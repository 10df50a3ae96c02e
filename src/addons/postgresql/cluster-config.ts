/**
 * Pure builders for the embedded cluster: argv arrays and the pg_hba.conf text.
 * Settings go on the postgres command line rather than into postgresql.conf so a changed
 * port or gateway takes effect on the next start without editing files initdb wrote.
 */

export const ADMIN_ROLE = 'slipway_admin';

export interface ClusterLayout {
  /** The cluster's PGDATA, owned by the server user. */
  dataDir: string;
  /** Unix socket folder (Debian's default /var/run/postgresql belongs to the system cluster). */
  socketDir: string;
  /** pg_hba.conf slipway rewrites on every start. */
  hbaFile: string;
}

export function initdbArgv(initdb: string, dataDir: string, passwordFile: string): string[] {
  return [
    initdb,
    '--pgdata', dataDir,
    '--username', ADMIN_ROLE,
    '--pwfile', passwordFile,
    '--auth-local', 'scram-sha-256',
    '--auth-host', 'scram-sha-256',
    '--encoding', 'UTF8',
    '--locale', 'C.UTF-8',
  ];
}

export function postgresArgv(
  postgres: string,
  layout: ClusterLayout,
  listenAddresses: string[],
  port: number,
): string[] {
  return [
    postgres,
    '-D', layout.dataDir,
    '-c', `listen_addresses=${listenAddresses.join(',')}`,
    '-c', `port=${port}`,
    '-c', `unix_socket_directories=${layout.socketDir}`,
    '-c', `hba_file=${layout.hbaFile}`,
    '-c', 'password_encryption=scram-sha-256',
    // The log goes to the file the daemon gave as stderr; no collector process needed.
    '-c', 'logging_collector=off',
  ];
}

/**
 * Password authentication only, from loopback and the app subnet. `sameuser` would not help:
 * per-database isolation comes from REVOKE CONNECT ... FROM PUBLIC at provisioning time.
 */
export function hbaConf(appSubnet: string): string {
  return [
    '# Written by slipway on every start of the embedded cluster; edits are overwritten.',
    '# TYPE  DATABASE  USER  ADDRESS  METHOD',
    'local   all       all            scram-sha-256',
    'host    all       all   127.0.0.1/32  scram-sha-256',
    'host    all       all   ::1/128       scram-sha-256',
    `host    all       all   ${appSubnet}  scram-sha-256`,
    '',
  ].join('\n');
}
