import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runEngineTool } from '../engine-process.js';

/**
 * Has HAProxy itself load a certificate (chain then key, as `prepareCertificate` makes it) from a
 * throw-away configuration (`haproxy -c`, about 0.2 s): what it refuses here it would refuse
 * when the router is given it. Returns HAProxy's reason, without the file's path, or undefined
 * when it loads (or when HAProxy is not installed: the other checks stand alone then). The
 * folder holding the key is root's (0700) and removed at once.
 */
export async function haproxyRefusal(
  pem: string,
  binary = existsSync('/usr/sbin/haproxy') ? '/usr/sbin/haproxy' : 'haproxy',
): Promise<string | undefined> {
  const dir = await mkdtemp(join(tmpdir(), 'slipway-cert-check-'));
  try {
    const file = join(dir, 'certificate.pem');
    await writeFile(file, pem, { mode: 0o600 });
    const config = join(dir, 'check.cfg');
    await writeFile(
      config,
      [
        'defaults',
        '  mode http',
        '  timeout client 1s',
        '  timeout server 1s',
        '  timeout connect 1s',
        'frontend check',
        `  bind 127.0.0.1:1 ssl crt ${file}`,
        '',
      ].join('\n'),
    );
    const result = await runEngineTool([binary, '-c', '-f', config]);
    if (result.missing || result.code === 0) return undefined;
    const alert = result.output.split('\n').find((line) => /unable to|error|cannot|failed/i.test(line) && line.includes(file)) ?? '';
    const reason = alert
      .replace(/^.*?' in section 'frontend' : /, '')
      .replaceAll(` '${file}'`, '')
      .replaceAll(file, 'the file')
      .trim()
      .replace(/\.$/, '');
    return reason || 'HAProxy cannot load it';
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
