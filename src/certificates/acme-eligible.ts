/**
 * Top-level domains no public CA issues for (RFC 6761, RFC 6762, RFC 8375 and common private
 * ones): such names, and wildcards (HTTP-01 cannot prove them), get the internal CA's certificate.
 */
const PRIVATE_TLDS = new Set([
  'test',
  'example',
  'invalid',
  'localhost',
  'local',
  'internal',
  'lan',
  'home',
  'corp',
  'intranet',
  'onion',
  'alt',
]);

export function canUseAcme(fqdn: string): boolean {
  if (fqdn.startsWith('*.')) return false;
  if (fqdn.endsWith('.home.arpa')) return false;
  return !PRIVATE_TLDS.has(fqdn.slice(fqdn.lastIndexOf('.') + 1));
}
