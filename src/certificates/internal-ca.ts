import { existsSync, mkdirSync, readFileSync, writeFileSync, chmodSync, renameSync } from 'node:fs';
import { webcrypto, randomBytes, X509Certificate } from 'node:crypto';
import { join } from 'node:path';
import * as x509 from '@peculiar/x509';
import { NAME_CONSTRAINTS_OID, nameConstraintsValue } from './name-constraints.js';

const EC = { name: 'ECDSA', namedCurve: 'P-256' } as const;
const SIGNING = { name: 'ECDSA', hash: 'SHA-256' } as const;
const DAY_MS = 86_400_000;

x509.cryptoProvider.set(webcrypto as unknown as Crypto);

export interface IssuedCertificate {
  names: string[];
  certificatePem: string;
  privateKeyPem: string;
  notAfter: Date;
}

function pem(label: string, der: ArrayBuffer): string {
  const body = Buffer.from(der).toString('base64').replace(/.{64}/g, '$&\n');
  return `-----BEGIN ${label}-----\n${body}${body.endsWith('\n') ? '' : '\n'}-----END ${label}-----\n`;
}

function serial(): string {
  // Positive 16-byte serial: the first bit clear.
  const bytes = randomBytes(16);
  bytes[0]! &= 0x7f;
  return bytes.toString('hex');
}

/**
 * The certificate authority slipway creates on its first start, so HTTPS works without internet:
 * it signs `*.<domain>` (every `<app_id>.<domain>`). Clients trust it by its certificate file
 * (`slipway server` prints where it is); its key is root's alone (0600). That CA is
 * name-constrained to the platform's domain (`permittedDomain`): even a certificate it were made
 * to sign for another name is refused by clients. The same class, without constraint, is the
 * provisional issuer of custom names, which nobody is asked to trust.
 */
export class InternalCa {
  private constructor(
    readonly certificatePath: string,
    private readonly certificatePem: string,
    private readonly key: CryptoKey,
    private readonly subject: string,
    /** Where a CA without the wanted constraint was moved to when this one replaced it. */
    readonly retiredTo: string | undefined,
  ) {}

  static async openOrCreate(
    folder: string,
    label: string,
    options: { permittedDomain?: string; commonName?: string } = {},
  ): Promise<InternalCa> {
    mkdirSync(folder, { recursive: true, mode: 0o700 });
    const keyPath = join(folder, 'ca.key');
    const certificatePath = join(folder, 'ca.pem');
    let retiredTo: string | undefined;
    const constraint = options.permittedDomain === undefined ? undefined : nameConstraintsValue(options.permittedDomain);
    if (
      constraint &&
      existsSync(keyPath) &&
      existsSync(certificatePath) &&
      !hasConstraint(readFileSync(certificatePath, 'utf8'), constraint)
    ) {
      // Upgrade (a CA made before the constraint) or a new --domain: a new constrained CA takes
      // its place. The old one is kept beside it, never used again: internal certificates are
      // issued at each start, so nothing it signed is served after this start.
      retiredTo = join(folder, `retired-${new Date().toISOString().replace(/[:.]/g, '-')}`);
      mkdirSync(retiredTo, { mode: 0o700 });
      renameSync(keyPath, join(retiredTo, 'ca.key'));
      renameSync(certificatePath, join(retiredTo, 'ca.pem'));
    }
    if (!existsSync(keyPath) || !existsSync(certificatePath)) {
      const keys = (await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify'])) as CryptoKeyPair;
      const now = Date.now();
      const cert = await x509.X509CertificateGenerator.createSelfSigned({
        serialNumber: serial(),
        name: `CN=${options.commonName ?? `slipway internal CA (${label})`}`,
        notBefore: new Date(now - DAY_MS),
        notAfter: new Date(now + 10 * 365 * DAY_MS),
        keys,
        signingAlgorithm: SIGNING,
        extensions: [
          new x509.BasicConstraintsExtension(true, 0, true),
          new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
          await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
          ...(constraint ? [new x509.Extension(NAME_CONSTRAINTS_OID, true, new Uint8Array(constraint))] : []),
        ],
      });
      writeFileSync(keyPath, pem('PRIVATE KEY', await webcrypto.subtle.exportKey('pkcs8', keys.privateKey)), { mode: 0o600 });
      writeFileSync(certificatePath, cert.toString('pem') + '\n', { mode: 0o644 });
    }
    chmodSync(keyPath, 0o600);
    const keyPem = readFileSync(keyPath, 'utf8');
    const der = Buffer.from(keyPem.replace(/-----[^-]+-----|\s/g, ''), 'base64');
    const key = await webcrypto.subtle.importKey('pkcs8', der, EC, false, ['sign']);
    const certificatePem = readFileSync(certificatePath, 'utf8');
    return new InternalCa(
      certificatePath,
      certificatePem,
      key,
      new X509Certificate(certificatePem).subject.replace(/\n/g, ', '),
      retiredTo,
    );
  }

  /** A server certificate for these names (wildcards allowed), valid for a year. */
  async issue(names: readonly string[]): Promise<IssuedCertificate> {
    const keys = (await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify'])) as CryptoKeyPair;
    const now = Date.now();
    const notAfter = new Date(now + 365 * DAY_MS);
    const caCert = new x509.X509Certificate(this.certificatePem);
    const cert = await x509.X509CertificateGenerator.create({
      serialNumber: serial(),
      subject: `CN=${names[0]}`,
      issuer: caCert.subject,
      notBefore: new Date(now - DAY_MS),
      notAfter,
      publicKey: keys.publicKey,
      signingKey: this.key,
      signingAlgorithm: SIGNING,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
        new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.serverAuth]),
        new x509.SubjectAlternativeNameExtension(names.map((value) => ({ type: 'dns' as const, value }))),
        await x509.AuthorityKeyIdentifierExtension.create(caCert.publicKey),
      ],
    });
    return {
      names: [...names],
      certificatePem: `${cert.toString('pem')}\n${this.certificatePem.trim()}\n`,
      privateKeyPem: pem('PRIVATE KEY', await webcrypto.subtle.exportKey('pkcs8', keys.privateKey)),
      notAfter,
    };
  }

  /** The CA's name, as it appears as the issuer of what it signs. */
  name(): string {
    return this.subject;
  }
}

/** Whether a CA certificate carries exactly this name constraint. */
function hasConstraint(certificatePem: string, constraint: Buffer): boolean {
  try {
    const extension = new x509.X509Certificate(certificatePem).getExtension(NAME_CONSTRAINTS_OID);
    return extension !== null && Buffer.from(extension.value).equals(constraint);
  } catch {
    return false;
  }
}
