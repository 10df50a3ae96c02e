/**
 * Pure builders for the embedded cluster: argv arrays and the pg_hba.conf text.
 * Settings go on the postgres command line rather than into postgresql.conf so a changed
 * port or gateway takes effect on the next start without editing files initdb wrote.
 */

import type { HbaClient } from '../../network/addon-access.js';
import { assertAddonIdentifier } from './provisioning-sql.js';
import { shellQuote } from '../../executor/shell-quote.js';

export const ADMIN_ROLE = 'slipway_admin';

export interface ClusterLayout {
  /** The cluster's PGDATA, owned by the server user. */
  dataDir: string;
  /** Unix socket folder (Debian's default /var/run/postgresql belongs to the system cluster). */
  socketDir: string;
  /** pg_hba.conf slipway rewrites on every start. */
  hbaFile: string;
  /**
   * Where the server's archive_command leaves each finished WAL segment (server user, 0700);
   * the daemon ships them to the backup store from there (src/backups/postgresql/wal-shipper.ts).
   */
  walSpoolDir: string;
}

export function initdbArgv(initdb: string, dataDir: string, passwordFile: string): string[] {
  return [
    initdb,
    '--pgdata',
    dataDir,
    '--username',
    ADMIN_ROLE,
    '--pwfile',
    passwordFile,
    '--auth-local',
    'scram-sha-256',
    '--auth-host',
    'scram-sha-256',
    '--encoding',
    'UTF8',
    '--locale',
    'C.UTF-8',
  ];
}

export function postgresArgv(
  postgres: string,
  layout: ClusterLayout,
  listenAddresses: string[],
  port: number,
  settings: string[] = [],
): string[] {
  return [
    postgres,
    '-D',
    layout.dataDir,
    '-c',
    `listen_addresses=${listenAddresses.join(',')}`,
    '-c',
    `port=${port}`,
    '-c',
    `unix_socket_directories=${layout.socketDir}`,
    '-c',
    `hba_file=${layout.hbaFile}`,
    '-c',
    'password_encryption=scram-sha-256',
    // The log goes to the file the daemon gave as stderr; no collector process needed.
    '-c',
    'logging_collector=off',
    // Continuous archiving for point-in-time restores: every finished segment is copied to the
    // spool, and at least once a minute the current one is finished, so a restore can reach any
    // second up to about a minute ago even on a quiet server (a restore switches it at once).
    '-c',
    'wal_level=replica',
    '-c',
    'archive_mode=on',
    '-c',
    `archive_command=${archiveCommand(layout.walSpoolDir)}`,
    '-c',
    'archive_timeout=60',
    ...settings.flatMap((setting) => ['-c', setting]),
  ];
}

/**
 * The shell line PostgreSQL runs for each finished WAL segment (%p its path, %f its name). The
 * copy reaches the spool under its final name only once complete and on disk: PostgreSQL
 * recycles a segment as soon as this succeeds. A segment archived twice (a crash between the
 * copy and PostgreSQL's note of it) is copied again, same bytes.
 */
export function archiveCommand(spoolDir: string): string {
  const dir = spoolWord(spoolDir);
  return `cp %p ${dir}/.%f.part && sync ${dir}/.%f.part && mv -f ${dir}/.%f.part ${dir}/%f && sync ${dir}`;
}

function spoolWord(path: string): string {
  if (path.includes('%')) throw new Error(`The WAL spool folder ${path} contains a %, which archive_command would expand.`);
  return shellQuote(path);
}

export interface HbaAccess {
  /** Addresses the host itself listens on besides loopback (the bridge's gateway). */
  hostAddresses: string[];
  /** The subnet sandboxes get their addresses from; a client outside it is refused. */
  appSubnet: string;
  clients: HbaClient[];
}

/**
 * Password authentication (SCRAM) only. From loopback and the host's own addresses on the
 * bridge (the host reaches every database, as slipway's superuser does), and from each sandbox
 * address only to the databases of the add-ons linked to its app. Any other address of the
 * subnet has no line, so PostgreSQL refuses it before asking for a password. Between roles,
 * isolation also comes from REVOKE CONNECT ... FROM PUBLIC at provisioning time.
 */
export function hbaConf(access: HbaAccess): string {
  const host = access.hostAddresses
    .filter((a) => !a.startsWith('127.'))
    .map((a) => `host    all       all   ${checkIpv4(a)}/32  scram-sha-256`);
  const apps = [
    ...new Set(
      access.clients.map((c) => {
        if (!inSubnet(checkIpv4(c.address), access.appSubnet)) {
          throw new Error(`Refusing to open a PostgreSQL database to ${c.address}: it is not in the sandbox subnet ${access.appSubnet}.`);
        }
        return `host    ${checkName(c.database)}  ${checkName(c.role)}  ${c.address}/32  scram-sha-256`;
      }),
    ),
  ].sort();
  return [
    '# Written by slipway whenever a sandbox starts or stops or a link changes; edits are overwritten.',
    '# TYPE  DATABASE  USER  ADDRESS  METHOD',
    'local   all       all            scram-sha-256',
    // pg_basebackup, as slipway's superuser over the socket only ("all" does not cover replication).
    `local   replication  ${ADMIN_ROLE}   scram-sha-256`,
    'host    all       all   127.0.0.1/32  scram-sha-256',
    'host    all       all   ::1/128       scram-sha-256',
    ...host,
    ...apps,
    '',
  ].join('\n');
}

function inSubnet(address: string, cidr: string): boolean {
  const [network, bits] = cidr.split('/');
  const length = Number(bits);
  if (network === undefined || !Number.isInteger(length) || length < 0 || length > 32)
    throw new Error(`"${cidr}" is not an IPv4 subnet such as 10.77.0.0/16.`);
  const mask = length === 0 ? 0 : (0xffffffff << (32 - length)) >>> 0;
  return (toNumber(address) & mask) >>> 0 === (toNumber(checkIpv4(network)) & mask) >>> 0;
}

function toNumber(address: string): number {
  return address.split('.').reduce((n, part) => n * 256 + Number(part), 0);
}

/** Only slipway's own add-on identifiers reach pg_hba.conf: nothing there can be a keyword or a list. */
function checkName(name: string): string {
  assertAddonIdentifier(name);
  return name;
}

function checkIpv4(address: string): string {
  const parts = address.split('.');
  if (parts.length !== 4 || parts.some((p) => !/^(0|[1-9]\d{0,2})$/.test(p) || Number(p) > 255)) {
    throw new Error(`"${address}" is not an IPv4 address; refusing to write it to pg_hba.conf.`);
  }
  return address;
}
