import { createHash } from 'node:crypto';
import ssh2 from 'ssh2';
import { ValidationError } from './errors.js';

export interface ParsedPublicKey {
  algorithm: string;
  /** `SHA256:<base64>` as `ssh-keygen -lf` prints it. */
  fingerprint: string;
  /** The key in authorized_keys form, without its comment. */
  openssh: string;
  comment: string;
}

export function fingerprintOf(blob: Buffer): string {
  return `SHA256:${createHash('sha256').update(blob).digest('base64').replace(/=+$/, '')}`;
}

/** Parses one OpenSSH public key line; private keys and garbage are refused. */
export function parsePublicKey(text: string): ParsedPublicKey {
  const line =
    text
      .trim()
      .split('\n')
      .find((l) => l.trim() !== '' && !l.startsWith('#')) ?? '';
  if (/PRIVATE KEY/.test(text)) {
    throw new ValidationError(
      'This is a private key.',
      'Give the public key (the .pub file), e.g. ~/.ssh/id_ed25519.pub; keep the private key secret.',
    );
  }
  const parsed = ssh2.utils.parseKey(line);
  if (parsed instanceof Error || Array.isArray(parsed) || parsed.isPrivateKey()) {
    throw new ValidationError(
      'Not an OpenSSH public key.',
      'Give a line like "ssh-ed25519 AAAA... you@host" (the .pub file made by `ssh-keygen -t ed25519`).',
    );
  }
  const blob = parsed.getPublicSSH();
  const parts = line.split(/\s+/);
  return {
    algorithm: parsed.type,
    fingerprint: fingerprintOf(blob),
    openssh: `${parsed.type} ${blob.toString('base64')}`,
    comment: parts.slice(2).join(' '),
  };
}
