/**
 * The certificates HAProxy serves, changed in place through the runtime API (`set ssl cert` +
 * `commit`, so open connections stay) and kept in step with their files: one PEM per
 * certificate under certs/ and the crt-list, the default certificate first.
 */
import { readFileSync } from 'node:fs';
import { readFile, unlink, writeFile } from 'node:fs/promises';
import { runEngineTool as run } from '../engine-process.js';
import { selfSignedCertificateArgv } from '../self-signed-argv.js';
import { CertificateRefused, crtListLine, type CertificateRefusal, type PreparedCertificate } from './certificates.js';
import type { HaproxyPaths } from './config.js';
import { expectAnswer, runtimeCommand } from './runtime-api.js';
import { writeFileAtomically, type RouterState } from './router-state.js';
import { crtListFiles } from './stats.js';

const DEFAULT_CERT_NAME = 'slipway-default.invalid';

export class CertificateStore {
  private certificates = new Map<string, PreparedCertificate>();

  constructor(
    private readonly paths: HaproxyPaths,
    private readonly log: (line: string) => void,
  ) {}

  get size(): number {
    return this.certificates.size;
  }

  /** None served (a fresh start, or an adoption that failed half-way). */
  reset(): void {
    this.certificates = new Map();
  }

  /** The certificates a previous daemon's state names, their PEM read from their files. */
  load(certificates: RouterState['certificates']): void {
    this.certificates = new Map();
    for (const { file, names } of certificates) {
      // Only files of its own certificate folder: the state is root's, but a path is never taken on trust.
      if (!file.startsWith(`${this.paths.certDir}/`) || file.slice(this.paths.certDir.length + 1).includes('/')) continue;
      let pem = '';
      try {
        pem = readFileSync(file, 'utf8');
      } catch {
        // Missing: reconcile() loads nothing for it, and the next applyCertificates() writes it again.
      }
      this.certificates.set(file, { file, names, pem });
    }
  }

  toState(): RouterState['certificates'] {
    return [...this.certificates.values()].map((c) => ({ file: c.file, names: c.names }));
  }

  /**
   * Serves exactly these certificates (new and renewed ones loaded, others removed) and writes
   * the crt-list. One HAProxy refuses is left out (a refused one's file stays, so its names keep
   * what they had); the refusals are returned, `refusedBefore` first.
   */
  async apply(certs: readonly PreparedCertificate[], refusedBefore: readonly CertificateRefusal[]): Promise<CertificateRefusal[]> {
    const refused = [...refusedBefore];
    const wanted = new Map(certs.map((c) => [c.file, c]));
    for (const cert of wanted.values()) {
      const current = this.certificates.get(cert.file);
      if (current?.pem === cert.pem) continue;
      try {
        await this.loadCertificate(cert, current === undefined);
        this.certificates.set(cert.file, cert);
      } catch (error) {
        // A refusal by HAProxy itself: the others go on. Anything else (the socket gone) stops the change.
        if (!(error instanceof CertificateRefused)) throw error;
        refused.push({ file: cert.file, names: cert.names, reason: error.message });
      }
    }
    // A refused certificate's names keep what they had: its file is not removed.
    const kept = new Set(refused.map((r) => r.file).filter((file): file is string => file !== undefined));
    for (const file of [...this.certificates.keys()]) {
      if (wanted.has(file) || kept.has(file)) continue;
      await this.unloadCertificate(file);
      this.certificates.delete(file);
    }
    await this.writeList();
    return refused;
  }

  /** Loads what HAProxy's crt-list lacks, removes what it has beyond these, and writes the crt-list. */
  async reconcile(): Promise<void> {
    const listed = new Set(crtListFiles(await runtimeCommand(this.paths.adminSocket, `show ssl crt-list ${this.paths.certList}`)));
    for (const cert of [...this.certificates.values()]) {
      if (listed.has(cert.file) || !cert.pem) continue;
      // One certificate HAProxy refuses now keeps neither the others nor the routes from coming back.
      await this.loadCertificate(cert, true).catch((error: Error) => {
        if (!(error instanceof CertificateRefused)) throw error;
        this.certificates.delete(cert.file);
        this.log(`${error.message} It is left out until the platform applies its certificates again.`);
      });
    }
    for (const file of listed) {
      if (file !== this.paths.defaultCert && !this.certificates.has(file)) await this.unloadCertificate(file);
    }
    await this.writeList();
  }

  async writeList(): Promise<void> {
    const lines = [this.paths.defaultCert, ...[...this.certificates.values()].map(crtListLine)];
    await writeFileAtomically(this.paths.certList, lines.join('\n') + '\n');
  }

  /** Loads a certificate into HAProxy (new, or renewed in place) and writes its file; `isNew`: add it to the crt-list too. */
  private async loadCertificate(cert: PreparedCertificate, isNew: boolean): Promise<void> {
    const socket = this.paths.adminSocket;
    if (isNew) await expectAnswer(socket, `new ssl cert ${cert.file}`, /New empty certificate store|already exists/);
    const set = await runtimeCommand(socket, `set ssl cert ${cert.file}`, cert.pem);
    if (!/Transaction (created|updated)/.test(set)) {
      await runtimeCommand(socket, `abort ssl cert ${cert.file}`).catch(() => '');
      if (isNew) await runtimeCommand(socket, `del ssl cert ${cert.file}`).catch(() => '');
      throw new CertificateRefused(
        `HAProxy refused the certificate for ${cert.names.join(', ')}: ${set.split('\n')[0]}. The certificates served before stay in force.`,
      );
    }
    await expectAnswer(socket, `commit ssl cert ${cert.file}`, /Success/);
    await writeFileAtomically(cert.file, cert.pem);
    if (!isNew) return;
    const listed = await runtimeCommand(socket, `add ssl crt-list ${this.paths.certList}`, crtListLine(cert));
    if (!/Success/.test(listed)) {
      // Nothing half-done: a store no crt-list line uses would stay loaded and be written back.
      await runtimeCommand(socket, `del ssl cert ${cert.file}`).catch(() => '');
      await unlink(cert.file).catch(() => undefined);
      throw new CertificateRefused(`HAProxy did not list the certificate for ${cert.names.join(', ')}: ${listed.split('\n')[0]}.`);
    }
  }

  private async unloadCertificate(file: string): Promise<void> {
    await expectAnswer(this.paths.adminSocket, `del ssl crt-list ${this.paths.certList} ${file}`, /deleted|Success/i);
    await runtimeCommand(this.paths.adminSocket, `del ssl cert ${file}`);
    await unlink(file).catch(() => undefined);
  }
}

/** A self-signed certificate for names nobody has a certificate for (clients see a warning, never another app's certificate). */
export async function makeDefaultCertificate(path: string): Promise<void> {
  const key = `${path}.key.tmp`;
  const cert = `${path}.crt.tmp`;
  const result = await run(selfSignedCertificateArgv({ subject: DEFAULT_CERT_NAME, days: 3650, keyFile: key, certFile: cert }));
  if (result.code !== 0) throw new Error(`Could not make the router's default certificate with openssl: ${result.output.trim()}`);
  const pem = (await readFile(cert, 'utf8')) + (await readFile(key, 'utf8'));
  await writeFile(path, pem, { mode: 0o600 });
  await unlink(key);
  await unlink(cert);
}
