import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { selfSignedCertificateArgv } from '../../src/router/self-signed-argv.js';

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
  const [openssl, ...args] = selfSignedCertificateArgv({
    subject: options.subject ?? names[0]!,
    names,
    days: options.days ?? 2,
    keyFile: key,
    certFile: cert,
  });
  execFileSync(openssl!, args, { stdio: 'ignore' });
  return { cert, key };
}
