import { execFileSync } from 'node:child_process';

/**
 * For tests: a bridge holding an address, standing in for the instance bridge's gateway so a
 * test can check servers really listen there. Needs root (CI runs as root).
 */
export function createTestBridge(name: string, cidr: string): { address: string; remove(): void } {
  removeLink(name);
  execFileSync('ip', ['link', 'add', name, 'type', 'bridge']);
  execFileSync('ip', ['addr', 'add', cidr, 'dev', name]);
  execFileSync('ip', ['link', 'set', name, 'up']);
  return { address: cidr.split('/')[0]!, remove: () => removeLink(name) };
}

function removeLink(name: string): void {
  try {
    execFileSync('ip', ['link', 'del', name], { stdio: 'ignore' });
  } catch {
    // not there
  }
}
