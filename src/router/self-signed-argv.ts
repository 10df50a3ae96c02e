/**
 * openssl's argv for a self-signed P-256 certificate and its unencrypted key: the router's
 * default certificate, and what the tests upload or hand the router.
 */
export function selfSignedCertificateArgv(o: {
  subject: string;
  /** Subject alternative names (DNS); none for a certificate no client should accept. */
  names?: string[];
  days: number;
  keyFile: string;
  certFile: string;
}): string[] {
  const altNames = o.names?.length ? ['-addext', `subjectAltName=${o.names.map((n) => `DNS:${n}`).join(',')}`] : [];
  return [
    'openssl',
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:P-256',
    '-nodes',
    '-days',
    String(o.days),
    '-subj',
    `/CN=${o.subject}`,
    ...altNames,
    '-keyout',
    o.keyFile,
    '-out',
    o.certFile,
  ];
}
