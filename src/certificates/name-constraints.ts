/**
 * The DER value of a critical X.509 NameConstraints extension (RFC 5280 4.2.1.10) that permits
 * one DNS domain and its sub-domains, and excludes every IP address: what a CA clients are told
 * to trust may sign, whatever it is asked to. Written by hand: the certificate library has no
 * class for it, and the structure is three nested sequences.
 */
export const NAME_CONSTRAINTS_OID = '2.5.29.30';

function der(tag: number, content: Buffer): Buffer {
  const length = content.length;
  const header =
    length < 0x80
      ? Buffer.from([tag, length])
      : length < 0x100
        ? Buffer.from([tag, 0x81, length])
        : Buffer.from([tag, 0x82, length >> 8, length & 0xff]);
  return Buffer.concat([header, content]);
}

export function nameConstraintsValue(domain: string): Buffer {
  const subtree = (generalName: Buffer) => der(0x30, generalName);
  // GeneralName dNSName [2] IA5String; iPAddress [7] OCTET STRING (address then mask: all zero = every address).
  const permitted = der(0xa0, subtree(der(0x82, Buffer.from(domain, 'ascii'))));
  const excluded = der(0xa1, Buffer.concat([subtree(der(0x87, Buffer.alloc(8))), subtree(der(0x87, Buffer.alloc(32)))]));
  return der(0x30, Buffer.concat([permitted, excluded]));
}
