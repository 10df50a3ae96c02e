import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { runChecked } from '../../executor/run-captured.js';
import { SYSTEM_TOOL_ENV } from '../../executor/system-tools.js';

/** Certificates outlive any bucket: the nodes' holders and the server keep them across restarts. */
const DAYS = '36500';

/** The openssl command lines, as arrays (tested as such): a CA, then a key and a certificate it signs. */
export function caArgv(dir: string): string[] {
  return [
    'openssl',
    'req',
    '-x509',
    '-newkey',
    'ed25519',
    '-nodes',
    '-keyout',
    join(dir, 'ca.key'),
    '-out',
    join(dir, 'ca.pem'),
    '-days',
    DAYS,
    '-subj',
    '/CN=slipway-buckets-ca',
  ];
}

export function requestArgv(dir: string, name: string): string[] {
  return [
    'openssl',
    'req',
    '-new',
    '-newkey',
    'ed25519',
    '-nodes',
    '-keyout',
    join(dir, `${name}.key`),
    '-out',
    join(dir, `${name}.csr`),
    '-subj',
    `/CN=${name}`,
  ];
}

export function signArgv(dir: string, name: string): string[] {
  return [
    'openssl',
    'x509',
    '-req',
    '-in',
    join(dir, `${name}.csr`),
    '-CA',
    join(dir, 'ca.pem'),
    '-CAkey',
    join(dir, 'ca.key'),
    '-CAcreateserial',
    '-out',
    join(dir, `${name}.pem`),
    '-days',
    DAYS,
  ];
}

export interface IssuedCertificate {
  cert: string;
  key: string;
  ca: string;
}

/**
 * The FS buckets' own certificate authority, in a root-only folder of the data folder: it signs
 * the server's certificate and one per bucket, whose name is the bucket's volume. The server
 * admits to a volume only the certificate of that name, and only what this CA signed.
 */
export class BucketCertificates {
  constructor(private readonly dir: string) {}

  /** The certificate of `name` (made once), with its key and the CA's certificate. */
  async issue(name: string): Promise<IssuedCertificate> {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const run = (argv: string[]) => runChecked(argv, { cwd: this.dir, env: SYSTEM_TOOL_ENV, timeoutMs: 30_000 });
    if (!existsSync(join(this.dir, 'ca.pem'))) await run(caArgv(this.dir));
    if (!existsSync(join(this.dir, `${name}.pem`))) {
      await run(requestArgv(this.dir, name));
      await run(signArgv(this.dir, name));
      rmSync(join(this.dir, `${name}.csr`), { force: true });
    }
    return {
      cert: readFileSync(join(this.dir, `${name}.pem`), 'utf8'),
      key: readFileSync(join(this.dir, `${name}.key`), 'utf8'),
      ca: readFileSync(join(this.dir, 'ca.pem'), 'utf8'),
    };
  }
}
