import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';

/**
 * Sandboxes reach the package registries through the host, so the host must forward IPv4.
 * When it did not before slipway, slipway turns it on and leaves a marker in /run (gone at
 * reboot, like the setting itself): every slipway table made while the marker exists drops
 * forwarded traffic that touches no slipway bridge, and the last daemon to stop turns it off.
 * A daemon killed with -9 leaves the marker, so the next one still knows.
 */
export interface ForwardingFiles {
  /** `/proc/sys/net/ipv4/ip_forward`. */
  sysctl: string;
  /** Exists while forwarding is on because slipway turned it on. */
  marker: string;
}

export const SYSTEM_FORWARDING: ForwardingFiles = {
  sysctl: '/proc/sys/net/ipv4/ip_forward',
  marker: '/run/slipway-ip-forward',
};

/** Whether forwarding is off now or was turned on by slipway: then the table must guard it. */
export function forwardingIsSlipways(files: ForwardingFiles): boolean {
  return readFileSync(files.sysctl, 'utf8').trim() === '0' || existsSync(files.marker);
}

/** Turns forwarding on, marking it as slipway's first when it was off. */
export function enableForwarding(files: ForwardingFiles): void {
  if (readFileSync(files.sysctl, 'utf8').trim() !== '0') return;
  // The marker first: a crash between the two writes still leaves a guarded host.
  writeFileSync(files.marker, 'IPv4 forwarding was off before slipway turned it on; the last slipway daemon to stop turns it off.\n', {
    mode: 0o644,
  });
  writeFileSync(files.sysctl, '1');
}

/** Turns forwarding back off, as it was before slipway (call only when slipway turned it on). */
export function restoreForwarding(files: ForwardingFiles): void {
  writeFileSync(files.sysctl, '0');
  rmSync(files.marker, { force: true });
}
