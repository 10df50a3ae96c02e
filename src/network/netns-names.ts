/**
 * Names of the kernel objects of a sandbox's network (an instance's, a build's), and the checks
 * every outside value passes before it reaches an `ip` command. Interface names are limited to
 * 15 bytes by Linux (IFNAMSIZ 16 with the NUL), and instance ids can be far longer, so the names derive from
 * the sandbox's address slot, never from its id: `<prefix>-<slot>` for the namespace and
 * `<prefix>-<slot>h` for the host end of its veth pair (the inner end is `eth0` inside the
 * namespace, where it cannot clash with anything).
 */

export const IFNAME_MAX = 15;
/** Slot numbers go up to 2^24 - 3 for a /8: at most 8 digits. */
const MAX_SLOT_DIGITS = 8;
const PREFIX = /^[a-z][a-z0-9]{0,4}$/;
const BRIDGE = /^[a-zA-Z][a-zA-Z0-9_-]{0,14}$/;

export const INNER_INTERFACE = 'eth0';

export function validatePrefix(prefix: string): string {
  if (!PREFIX.test(prefix)) {
    throw new Error(
      `Invalid namespace prefix ${JSON.stringify(prefix)}: use 1 to 5 lower-case letters or digits, starting with a letter (e.g. "slw"), so that "<prefix>-<slot>h" fits Linux's ${IFNAME_MAX}-character interface names.`,
    );
  }
  return prefix;
}

export function validateBridgeName(name: string): string {
  if (!BRIDGE.test(name)) {
    throw new Error(
      `Invalid bridge name ${JSON.stringify(name)}: use 1 to ${IFNAME_MAX} letters, digits, '_' or '-', starting with a letter (e.g. "slipway0").`,
    );
  }
  return name;
}

export interface InstanceNetNames {
  namespace: string;
  hostVeth: string;
}

export function namesForSlot(prefix: string, slot: number): InstanceNetNames {
  validatePrefix(prefix);
  if (!Number.isInteger(slot) || slot < 0 || String(slot).length > MAX_SLOT_DIGITS) {
    throw new RangeError(`invalid address slot ${slot}`);
  }
  const namespace = `${prefix}-${slot}`;
  const hostVeth = `${namespace}h`;
  if (hostVeth.length > IFNAME_MAX) throw new RangeError(`interface name ${hostVeth} exceeds ${IFNAME_MAX} characters`);
  return { namespace, hostVeth };
}

/** Recognises a namespace this prefix created (to clean up after a crash); returns its slot. */
export function slotOfNamespace(prefix: string, name: string): number | undefined {
  const m = new RegExp(`^${validatePrefix(prefix)}-(\\d{1,${MAX_SLOT_DIGITS}})$`).exec(name);
  return m ? Number(m[1]) : undefined;
}

/** Recognises a host-side veth this prefix created. */
export function slotOfHostVeth(prefix: string, name: string): number | undefined {
  const m = new RegExp(`^${validatePrefix(prefix)}-(\\d{1,${MAX_SLOT_DIGITS}})h$`).exec(name);
  return m ? Number(m[1]) : undefined;
}
