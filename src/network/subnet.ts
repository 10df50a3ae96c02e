/**
 * IPv4 subnet arithmetic for the instance network: the first address is the host's gateway,
 * the others up to the one before broadcast are handed to instances.
 */
export interface Subnet {
  /** Network address as an unsigned 32-bit number. */
  network: number;
  prefixLength: number;
  /** Number of addresses in the subnet (including network and broadcast). */
  size: number;
}

const CIDR = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})\/(\d{1,2})$/;

export function parseSubnet(text: string): Subnet {
  const m = CIDR.exec(text);
  const parts = m ? m.slice(1, 5).map(Number) : [];
  const prefixLength = m ? Number(m[5]) : NaN;
  if (!m || parts.some((p) => p > 255) || !(prefixLength >= 8 && prefixLength <= 29)) {
    throw new Error(
      `Invalid instance subnet ${JSON.stringify(text)}: expected an IPv4 network in CIDR form with a prefix from /8 to /29, e.g. 10.77.0.0/16.`,
    );
  }
  const address = ((parts[0]! << 24) | (parts[1]! << 16) | (parts[2]! << 8) | parts[3]!) >>> 0;
  const size = 2 ** (32 - prefixLength);
  const network = (address - (address % size)) >>> 0;
  if (network !== address) {
    throw new Error(
      `Invalid instance subnet ${JSON.stringify(text)}: host bits are set; did you mean ${formatAddress(network)}/${prefixLength}?`,
    );
  }
  return { network, prefixLength, size };
}

export function formatAddress(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');
}

/** The address at `index` inside the subnet (0 = network address). */
export function addressAt(s: Subnet, index: number): string {
  if (!Number.isInteger(index) || index < 0 || index >= s.size) throw new RangeError(`index ${index} outside the subnet`);
  return formatAddress(s.network + index);
}

export function gatewayOf(s: Subnet): string {
  return addressAt(s, 1);
}

export function subnetToString(s: Subnet): string {
  return `${formatAddress(s.network)}/${s.prefixLength}`;
}

/** Whether an IPv4 address in dotted form lies inside the subnet. */
export function contains(s: Subnet, address: string): boolean {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(address);
  if (!m) return false;
  const n = ((Number(m[1]) << 24) | (Number(m[2]) << 16) | (Number(m[3]) << 8) | Number(m[4])) >>> 0;
  return n >= s.network && n < s.network + s.size;
}

/**
 * Hands out host indexes 2 .. size-2 (1 is the gateway, size-1 the broadcast address).
 * Allocation goes round-robin rather than lowest-free, so an address just released is not
 * given to the next instance at once while a router or a client may still point at it.
 */
export class AddressPool {
  private readonly used = new Set<number>();
  private next = 2;

  constructor(private readonly subnet: Subnet) {}

  get capacity(): number {
    return this.subnet.size - 3;
  }

  allocate(): number {
    const first = 2;
    const last = this.subnet.size - 2;
    const span = last - first + 1;
    for (let i = 0; i < span; i++) {
      const candidate = first + ((this.next - first + i) % span);
      if (!this.used.has(candidate)) {
        this.used.add(candidate);
        this.next = candidate + 1 > last ? first : candidate + 1;
        return candidate;
      }
    }
    throw new Error(
      `No free address left in ${subnetToString(this.subnet)} (${this.capacity} instances running). Stop instances or configure a larger subnet.`,
    );
  }

  release(index: number): void {
    this.used.delete(index);
  }

  /** Marks an address an adopted instance holds as taken. */
  reserve(index: number): void {
    this.used.add(index);
  }

  inUse(): number {
    return this.used.size;
  }
}
