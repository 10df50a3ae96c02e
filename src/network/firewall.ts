import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { runCommand } from '../executor/run-command.js';
import { addonAccessScript, firewallRuleset, sandboxElementArgv, type AddonEndpoint, type FirewallConfig, type SandboxKind } from './firewall-rules.js';

export const NFT = '/usr/sbin/nft';
const IP_FORWARD = '/proc/sys/net/ipv4/ip_forward';
const SYSTEM_ENV = { PATH: '/usr/sbin:/usr/bin:/sbin:/bin', LC_ALL: 'C' };

export interface SandboxAddress {
  appId: string;
  kind: SandboxKind;
  address: string;
}

/** Which add-on endpoints the sandboxes now running may reach (their apps' linked add-ons). */
export type AddonAccessResolver = (sandboxes: SandboxAddress[]) => AddonEndpoint[];

/**
 * Applies slipway's nftables table and keeps its sets in step with the sandboxes: the instance
 * backend tells it when a sandbox gets an address and when it gives it back; a change of links
 * asks it to recompute which add-on endpoints each may reach.
 */
export class Firewall {
  private readonly sandboxes = new Map<string, SandboxAddress>();
  private enabledForwarding = false;
  private resolver: AddonAccessResolver = () => [];
  private started = false;

  constructor(private readonly config: Omit<FirewallConfig, 'forwardingEnabledBySlipway'>) {}

  get table(): string {
    return this.config.table;
  }

  /** Replaces a table of the same name left by a crashed daemon, and turns IPv4 forwarding on. */
  async start(): Promise<void> {
    // The sandboxes reach the package registries through the host: it has to forward for them.
    if (readFileSync(IP_FORWARD, 'utf8').trim() === '0') {
      writeFileSync(IP_FORWARD, '1');
      this.enabledForwarding = true;
    }
    await this.nft(['delete', 'table', 'inet', this.config.table], true);
    await this.nftScript(firewallRuleset({ ...this.config, forwardingEnabledBySlipway: this.enabledForwarding }));
    this.started = true;
  }

  /** Deletes the table; gives forwarding back as it was when no other slipway table remains. */
  async stop(): Promise<void> {
    if (!this.started) return;
    this.started = false;
    await this.nft(['delete', 'table', 'inet', this.config.table], true);
    if (this.enabledForwarding && !(await this.otherSlipwayTables())) writeFileSync(IP_FORWARD, '0');
  }

  setAddonAccessResolver(resolver: AddonAccessResolver): void {
    this.resolver = resolver;
  }

  async attached(event: SandboxAddress): Promise<void> {
    this.sandboxes.set(event.address, event);
    if (!this.started) return;
    await this.nft(sandboxElementArgv(NFT, this.config.table, event.kind, event.address, 'add').slice(1));
    await this.syncAddonAccess();
  }

  async detached(address: string): Promise<void> {
    const known = this.sandboxes.get(address);
    this.sandboxes.delete(address);
    if (!known || !this.started) return;
    await this.nft(sandboxElementArgv(NFT, this.config.table, known.kind, address, 'delete').slice(1), true);
    await this.syncAddonAccess();
  }

  /** Recomputes which sandbox may reach which add-on endpoint (after a link changed). */
  async syncAddonAccess(): Promise<void> {
    if (!this.started) return;
    await this.nftScript(addonAccessScript(this.config.table, this.resolver([...this.sandboxes.values()])));
  }

  private async otherSlipwayTables(): Promise<boolean> {
    const out: string[] = [];
    await runCommand({ argv: [NFT, 'list', 'tables'], cwd: '/', env: SYSTEM_ENV, timeoutMs: 10_000, onLine: (s, l) => s === 'out' && out.push(l) });
    return out.some((l) => /^table inet slipway\d+$/.test(l.trim()));
  }

  private async nft(args: string[], tolerant = false): Promise<void> {
    const err: string[] = [];
    const r = await runCommand({ argv: [NFT, ...args], cwd: '/', env: SYSTEM_ENV, timeoutMs: 10_000, onLine: (s, l) => s === 'err' && err.push(l) });
    if (r.exitCode !== 0 && !tolerant) throw new Error(`nft ${args.join(' ')} failed: ${err.join(' ')}. Check that nftables is installed (apt-get install nftables) and the daemon runs as root.`);
  }

  private nftScript(script: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const child = spawn(NFT, ['-f', '-'], { env: SYSTEM_ENV, stdio: ['pipe', 'ignore', 'pipe'] });
      let err = '';
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      child.once('error', (e) => reject(new Error(`Cannot run ${NFT}: ${e.message}. Install nftables (apt-get install nftables).`)));
      child.once('close', (code) => (code === 0 ? resolve() : reject(new Error(`nft refused slipway's rules (exit ${code}): ${err.trim()}`))));
      child.stdin.end(script);
    });
  }
}
