import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

/**
 * A self-signed P-256 certificate for `names`, made with openssl in `dir` as `<file>.pem` and
 * `<file>.key`: what a user uploads, or what a test hands the router. Its subject is the first
 * name unless told (a test that tells certificates apart by their subject).
 */
export function selfSignedCertificate(
  dir: string,
  file: string,
  names: string[],
  options: { days?: number; subject?: string } = {},
): { cert: string; key: string } {
  const cert = join(dir, `${file}.pem`);
  const key = join(dir, `${file}.key`);
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-days',
      String(options.days ?? 2),
      '-subj',
      `/CN=${options.subject ?? names[0]}`,
      '-addext',
      `subjectAltName=${names.map((n) => `DNS:${n}`).join(',')}`,
      '-keyout',
      key,
      '-out',
      cert,
    ],
    { stdio: 'ignore' },
  );
  return { cert, key };
}
