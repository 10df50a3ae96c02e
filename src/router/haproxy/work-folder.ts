/**
 * A fresh start's work folder: everything HAProxy reads lives there, root's alone (it holds
 * private keys); nothing of an earlier run is kept but the default certificate.
 */
import { existsSync } from 'node:fs';
import { mkdir, readdir, rm, unlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { noInstancePage, unknownHostPage, upstreamFailedPage } from '../pages.js';
import { makeDefaultCertificate } from './certificate-store.js';
import { type HaproxyPaths, holdScript } from './config.js';

/** Removes the socket, the state, the record of deaths and the certificates; writes the pages, empty maps and the default certificate. */
export async function clearEarlierRun(paths: HaproxyPaths): Promise<void> {
  await unlink(paths.adminSocket).catch(() => undefined);
  for (const file of [paths.state, paths.exits, paths.holderPid, paths.haproxyPid]) await rm(file, { force: true });
  // The platform applies its certificates again after a start: none is left from an earlier run.
  await rm(paths.certDir, { recursive: true, force: true });
  await mkdir(paths.certDir, { mode: 0o700 });
  await mkdir(paths.pagesDir, { recursive: true, mode: 0o700 });
  await writeFile(join(paths.pagesDir, '404.html'), unknownHostPage());
  for (const [status, reason, body] of [
    [503, 'Service Unavailable', noInstancePage()],
    [502, 'Bad Gateway', upstreamFailedPage(502)],
    [504, 'Gateway Timeout', upstreamFailedPage(504)],
  ] as const) {
    const extra = status === 503 ? 'retry-after: 5\r\n' : '';
    const head = `HTTP/1.1 ${status} ${reason}\r\ncontent-type: text/html; charset=utf-8\r\ncache-control: no-store\r\n${extra}content-length: ${Buffer.byteLength(body)}\r\n\r\n`;
    await writeFile(join(paths.pagesDir, `${status}.http`), head + body);
  }
  for (const map of [paths.hostsMap, paths.wildcardMap, paths.forceHttpsMap, paths.holdMap]) await writeFile(map, '', { mode: 0o600 });
  await writeHoldFiles(paths);
  if (!existsSync(paths.defaultCert)) await makeDefaultCertificate(paths.defaultCert);
}

/**
 * The hold action's script, and its map when missing: written before every configuration check,
 * so a router adopted from a version without holds finds them at its reload.
 */
export async function writeHoldFiles(paths: HaproxyPaths): Promise<void> {
  await writeFile(paths.holdScript, holdScript(paths.holdMap), { mode: 0o600 });
  if (!existsSync(paths.holdMap)) await writeFile(paths.holdMap, '', { mode: 0o600 });
}

/** Files an atomic write left half-way (`*.tmp`). */
export async function removeTemporaryFiles(workDir: string): Promise<void> {
  for (const entry of await readdir(workDir)) {
    if (entry.endsWith('.tmp')) await unlink(join(workDir, entry)).catch(() => undefined);
  }
}
