import { readFileSync } from 'node:fs';
import { runCaptured } from '../executor/run-captured.js';
import { describeExit, runCommand } from '../executor/run-command.js';
import {
  addonAccessScript,
  bridgeFamily,
  carriedElements,
  deleteTableArgs,
  replaceTableScript,
  sandboxElementArgs,
  type AddonEndpoint,
  type FirewallConfig,
} from './firewall-rules.js';
import { enableForwarding, forwardingIsSlipways, restoreForwarding, SYSTEM_FORWARDING, type ForwardingFiles } from './ip-forwarding.js';
import type { SandboxKind } from './network-events.js';
import { SYSTEM_TOOL_ENV } from '../executor/system-tools.js';

export const NFT = '/usr/sbin/nft';

/**
 * Deletes a slipway table another start left (its bridge retired with its last instance);
 * no table by that name is not an error.
 */
export async function deleteFirewallTable(table: string): Promise<void> {
  await runCommand({
    argv: [NFT, ...deleteTableArgs(table)],
    cwd: '/',
    env: SYSTEM_TOOL_ENV,
    timeoutMs: 10_000,
  });
}
const NFT_TIMEOUT_MS = 10_000;

export type FirewallOptions = Omit<FirewallConfig, 'forwardingEnabledBySlipway' | 'egress'> & {
  /** Where IPv4 forwarding is switched (tests point it at a file of their own). */
  forwarding?: ForwardingFiles;
  /** The operator's `--egress-allow` ranges: private or link-local ranges sandboxes may reach. */
  egressAllow?: readonly string[];
  /** Where the machine's DNS servers are listed (those on a blocked range stay reachable on port 53). */
  resolvConf?: string;
};

/** The IPv4 name servers of a resolv.conf; loopback ones are the host's own, out of a sandbox's reach anyway. */
export function nameserversOf(resolvConf: string): string[] {
  return resolvConf
    .split('\n')
    .map((line) => /^\s*nameserver\s+(\d{1,3}(?:\.\d{1,3}){3})\s*$/.exec(line)?.[1])
    .filter((address): address is string => address !== undefined && !address.startsWith('127.'));
}

/**
 * Applies slipway's nftables table and changes its sets. It knows addresses and ports only;
 * which app may reach what is decided in addon-access.ts.
 */
export class Firewall {
  private started = false;
  private guardsForwarding = false;
  private lastAddonAccess: string | undefined;

  constructor(private readonly options: FirewallOptions) {}

  get table(): string {
    return this.options.table;
  }

  /**
   * Creates the table in one transaction, replacing one of the same name an earlier daemon left
   * (its instances and their add-on access carried over: they serve on while this daemon adopts
   * them; builds are not, they ended with that daemon), then turns IPv4 forwarding on if it was
   * off (never before the guard is in place).
   */
  async start(): Promise<void> {
    const files = this.options.forwarding ?? SYSTEM_FORWARDING;
    this.guardsForwarding = forwardingIsSlipways(files);
    const listed = await runCaptured({
      argv: [NFT, '-j', 'list', 'table', 'inet', this.options.table],
      cwd: '/',
      env: SYSTEM_TOOL_ENV,
      timeoutMs: NFT_TIMEOUT_MS,
    }).catch(() => undefined);
    const carried = listed?.exitCode === 0 ? carriedElements(listed.stdout) : undefined;
    let resolvConf = '';
    try {
      resolvConf = readFileSync(this.options.resolvConf ?? '/etc/resolv.conf', 'utf8');
    } catch {
      // No resolver configured: names are not resolved from sandboxes either way.
    }
    const egress = { allow: this.options.egressAllow ?? [], nameservers: nameserversOf(resolvConf) };
    await this.nftScript(replaceTableScript({ ...this.options, egress, forwardingEnabledBySlipway: this.guardsForwarding }, carried));
    this.started = true;
    this.lastAddonAccess = undefined;
    enableForwarding(files);
  }

  /** Deletes the table; turns forwarding back off when slipway turned it on and no other slipway table is left. */
  async stop(): Promise<void> {
    if (!this.started) return;
    this.started = false;
    await this.nft(deleteTableArgs(this.options.table), 'delete the table');
    if (this.guardsForwarding && !(await this.otherTablesOfFamily())) restoreForwarding(this.options.forwarding ?? SYSTEM_FORWARDING);
  }

  async addSandbox(kind: SandboxKind, address: string): Promise<void> {
    this.requireStarted();
    await this.nft(sandboxElementArgs(this.options.table, kind, address, 'add'), `allow the ${kind} at ${address}`);
  }

  async removeSandbox(kind: SandboxKind, address: string): Promise<void> {
    if (!this.started) return; // the table and its sets are gone already
    await this.nft(sandboxElementArgs(this.options.table, kind, address, 'delete'), `forget the ${kind} at ${address}`, true);
  }

  /**
   * Replaces the (sandbox address, add-on port) pairs allowed in and the add-on servers' ports
   * only root may open from the host, in one transaction.
   */
  async setAddonAccess(endpoints: AddonEndpoint[], serverPorts: number[]): Promise<void> {
    this.requireStarted();
    const script = addonAccessScript(this.options.table, endpoints, serverPorts);
    if (script === this.lastAddonAccess) return;
    await this.nftScript(script);
    this.lastAddonAccess = script;
  }

  private requireStarted(): void {
    if (!this.started)
      throw new Error(
        `slipway's firewall table ${this.options.table} is not in place, so no sandbox may use the network. Restart the daemon.`,
      );
  }

  /** Tables of other daemons on this host (`slipway<n>` beside our `slipway<m>`). */
  private async otherTablesOfFamily(): Promise<boolean> {
    const family = bridgeFamily(this.options.table);
    const out: string[] = [];
    const r = await runCommand({
      argv: [NFT, 'list', 'tables', 'inet'],
      cwd: '/',
      env: SYSTEM_TOOL_ENV,
      timeoutMs: NFT_TIMEOUT_MS,
      onLine: (s, l) => s === 'out' && out.push(l),
    });
    // When in doubt, keep forwarding on: turning it off under another daemon would cut its sandboxes off.
    if (r.exitCode !== 0) return true;
    return out.some((l) => {
      const name = /^table inet (\S+)$/.exec(l.trim())?.[1];
      return name !== undefined && name !== this.options.table && new RegExp(`^${family}\\d+$`).test(name);
    });
  }

  private async nft(args: string[], what: string, tolerateMissing = false): Promise<void> {
    const err: string[] = [];
    const r = await runCommand({
      argv: [NFT, ...args],
      cwd: '/',
      env: SYSTEM_TOOL_ENV,
      timeoutMs: NFT_TIMEOUT_MS,
      onLine: (s, l) => s === 'err' && err.push(l),
    });
    if (r.exitCode === 0) return;
    const message = err.join(' ').trim();
    if (tolerateMissing && /No such file or directory/.test(message)) return;
    throw new Error(
      `Could not ${what} in nftables table ${this.options.table} (nft ${args.join(' ')}: ${message || describeExit(r)}). ` +
        'Check that nftables is installed (apt-get install nftables) and that the daemon runs as root.',
    );
  }

  private async nftScript(script: string): Promise<void> {
    let result: Awaited<ReturnType<typeof runCaptured>>;
    try {
      result = await runCaptured({ argv: [NFT, '-f', '-'], cwd: '/', env: SYSTEM_TOOL_ENV, input: script, timeoutMs: NFT_TIMEOUT_MS });
    } catch (error) {
      throw new Error(`Cannot run ${NFT}: ${(error as Error).message}. Install nftables (apt-get install nftables).`);
    }
    if (result.exitCode !== 0) {
      throw new Error(
        `nft refused slipway's rules for table ${this.options.table} (${describeExit(result)}): ${result.stderr.trim()}. Nothing was changed; check the kernel has nf_tables and the daemon runs as root.`,
      );
    }
  }
}
