/**
 * The address ranges the daemon's own clients (webhooks, drains, SMTP, the S3 backup store,
 * ACME, the DNS resolver) never reach unless the operator opens them with `--egress-allow`:
 * everything the IANA special-purpose registries mark as not globally reachable, but the
 * documentation ranges (nothing answers there on the internet, so nothing hides behind them;
 * tests and examples use them as stand-ins for public hosts). Pure and tested as data.
 *
 * IPv6 forms that carry an IPv4 address (`::ffff:a.b.c.d`, NAT64 `64:ff9b::/96`, 6to4
 * `2002::/16`, the deprecated `::a.b.c.d`) are judged by the IPv4 address they carry: a
 * connection to them reaches that address in the end.
 */
import { isIP } from 'node:net';

export type RangeKind = 'loopback' | 'private' | 'carrier-grade NAT' | 'link-local' | 'unique local' | 'multicast' | 'reserved';

export interface Cidr {
  family: 4 | 6;
  /** The network's first address as a number (32 or 128 bits). */
  start: bigint;
  bits: number;
  text: string;
}

interface Range {
  cidr: Cidr;
  kind: RangeKind;
}

/** What each kind means to the reader of a refusal. */
const KIND_WORDS: Record<RangeKind, string> = {
  loopback: 'a loopback address',
  private: 'a private address',
  'carrier-grade NAT': 'a carrier-grade NAT address (an operator network, RFC 6598)',
  'link-local': 'a link-local address (cloud metadata services answer there)',
  'unique local': 'a unique local IPv6 address (a private network)',
  multicast: 'a multicast address',
  reserved: 'a reserved address',
};

export function describeKind(kind: RangeKind): string {
  return KIND_WORDS[kind];
}

/** The 4 or 16 bytes of an address as one number, or undefined for what is not an address. */
export function addressNumber(address: string): { family: 4 | 6; value: bigint } | undefined {
  const family = isIP(address);
  if (family === 4) return { family, value: address.split('.').reduce((n, part) => (n << 8n) | BigInt(Number(part)), 0n) };
  if (family !== 6) return undefined;
  let text = address.replace(/%.*$/, '');
  // A dotted IPv4 tail (`::ffff:10.0.0.1`) becomes two groups.
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (tail) {
    const v4 = addressNumber(tail[1]!)!.value;
    text = `${text.slice(0, -tail[1]!.length)}${(v4 >> 16n).toString(16)}:${(v4 & 0xffffn).toString(16)}`;
  }
  const [head, rest] = text.split('::') as [string, string | undefined];
  const groups = (part: string | undefined) => (part ? part.split(':') : []);
  const left = groups(head);
  const right = groups(rest);
  const all = rest === undefined ? left : [...left, ...Array<string>(8 - left.length - right.length).fill('0'), ...right];
  return { family: 6, value: all.reduce((n, group) => (n << 16n) | BigInt(Number.parseInt(group, 16)), 0n) };
}

/** `a.b.c.d/n` or `x::/n`, starting its network, else an Error saying what to write instead. */
export function parseCidr(text: string): Cidr {
  const [address = '', bitsText, extra] = text.split('/');
  const parsed = addressNumber(address);
  const width = parsed?.family === 4 ? 32 : 128;
  const bits = Number(bitsText);
  if (!parsed || extra !== undefined || !/^\d{1,3}$/.test(bitsText ?? '') || bits > width) {
    throw new Error(`Not an address range: ${JSON.stringify(text)}; expected e.g. 192.168.233.0/24 or fd00:1::/64.`);
  }
  const host = (1n << BigInt(width - bits)) - 1n;
  if ((parsed.value & host) !== 0n) {
    const start = formatAddress(parsed.family, parsed.value & ~host);
    throw new Error(`${text} is not the start of a /${bits} range: use ${start}/${bits}.`);
  }
  return { family: parsed.family, start: parsed.value, bits, text };
}

function formatAddress(family: 4 | 6, value: bigint): string {
  if (family === 4) return [24n, 16n, 8n, 0n].map((shift) => String((value >> shift) & 0xffn)).join('.');
  const groups = [...Array(8).keys()].map((i) => ((value >> BigInt(112 - i * 16)) & 0xffffn).toString(16));
  return groups.join(':').replace(/(^|:)0(:0)+(:|$)/, '::');
}

export function inCidr(address: { family: 4 | 6; value: bigint }, cidr: Cidr): boolean {
  if (address.family !== cidr.family) return false;
  const width = cidr.family === 4 ? 32 : 128;
  return address.value >> BigInt(width - cidr.bits) === cidr.start >> BigInt(width - cidr.bits);
}

const range = (text: string, kind: RangeKind): Range => ({ cidr: parseCidr(text), kind });

/** Most specific first: the first match names the kind. */
export const REFUSED_RANGES: readonly Range[] = [
  range('0.0.0.0/8', 'reserved'),
  range('10.0.0.0/8', 'private'),
  range('100.64.0.0/10', 'carrier-grade NAT'),
  range('127.0.0.0/8', 'loopback'),
  range('169.254.0.0/16', 'link-local'),
  range('172.16.0.0/12', 'private'),
  range('192.0.0.0/24', 'reserved'),
  range('192.88.99.0/24', 'reserved'),
  range('192.168.0.0/16', 'private'),
  range('198.18.0.0/15', 'reserved'),
  range('224.0.0.0/4', 'multicast'),
  range('240.0.0.0/4', 'reserved'),
  range('::1/128', 'loopback'),
  range('::/8', 'reserved'),
  range('64:ff9b:1::/48', 'reserved'),
  range('100::/64', 'reserved'),
  range('2001::/23', 'reserved'),
  range('fc00::/7', 'unique local'),
  range('fe80::/10', 'link-local'),
  range('fec0::/10', 'private'),
  range('ff00::/8', 'multicast'),
];

/** IPv6 prefixes whose connections end at an IPv4 address they carry, and where it sits. */
const CARRIERS: ReadonlyArray<{ cidr: Cidr; shift: bigint }> = [
  { cidr: parseCidr('::ffff:0:0/96'), shift: 0n },
  { cidr: parseCidr('64:ff9b::/96'), shift: 0n },
  { cidr: parseCidr('2002::/16'), shift: 80n },
  { cidr: parseCidr('::/96'), shift: 0n },
];

/** The IPv4 address an IPv6 address carries (mapped, NAT64, 6to4, compatible), if any. */
export function carriedIpv4(address: string): string | undefined {
  const parsed = addressNumber(address);
  if (parsed?.family !== 6) return undefined;
  const carrier = CARRIERS.find((c) => inCidr(parsed, c.cidr));
  if (!carrier) return undefined;
  const v4 = (parsed.value >> carrier.shift) & 0xffffffffn;
  // `::` and `::1` are themselves, not 0.0.0.0 and 0.0.0.1.
  if (carrier.cidr.text === '::/96' && v4 < 0x1000000n) return undefined;
  return formatAddress(4, v4);
}

/** The address a connection really reaches: an IPv4 address carried in IPv6 is that IPv4 address. */
export function effectiveAddress(address: string): string {
  return carriedIpv4(address) ?? address.replace(/%.*$/, '');
}

/** The refused range an address falls in, or undefined for a public address. */
export function refusedRangeOf(address: string): { kind: RangeKind; cidr: string } | undefined {
  const parsed = addressNumber(effectiveAddress(address));
  if (!parsed) return { kind: 'reserved', cidr: address };
  const found = REFUSED_RANGES.find((r) => inCidr(parsed, r.cidr));
  return found ? { kind: found.kind, cidr: found.cidr.text } : undefined;
}

/** Whether an address lies in one of the ranges. */
export function inAnyCidr(address: string, cidrs: readonly Cidr[]): boolean {
  const parsed = addressNumber(effectiveAddress(address));
  return parsed !== undefined && cidrs.some((c) => inCidr(parsed, c));
}

/** The one-address range naming exactly this address, for a refusal's hint. */
export function singleAddressCidr(address: string): string {
  const plain = effectiveAddress(address);
  return `${plain}/${isIP(plain) === 4 ? 32 : 128}`;
}
