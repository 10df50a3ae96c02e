import { execFileSync } from 'node:child_process';

/**
 * For tests: a bridge holding an address, standing in for the instance bridge's gateway so a
 * test can check servers really listen there. Needs root (CI runs as root).
 */
export function createTestBridge(name: string, cidr: string): { address: string; remove(): void } {
  removeLink(name);
  ip('link', 'add', name, 'type', 'bridge');
  ip('addr', 'add', cidr, 'dev', name);
  ip('link', 'set', name, 'up');
  return { address: cidr.split('/')[0]!, remove: () => removeLink(name) };
}

/**
 * For tests: a network namespace wired to a bridge by a veth pair with a default route via
 * the gateway, the way the instance backend places an app.
 */
export function createTestNamespace(
  name: string,
  bridge: string,
  cidr: string,
  gateway: string,
): { exec(argv: string[], env?: Record<string, string>): string; remove(): void } {
  const hostSide = `${name}h`;
  removeNamespace(name, hostSide);
  ip('netns', 'add', name);
  ip('link', 'add', hostSide, 'type', 'veth', 'peer', 'name', 'eth0', 'netns', name);
  ip('link', 'set', hostSide, 'master', bridge);
  ip('link', 'set', hostSide, 'up');
  ip('-n', name, 'addr', 'add', cidr, 'dev', 'eth0');
  ip('-n', name, 'link', 'set', 'eth0', 'up');
  ip('-n', name, 'link', 'set', 'lo', 'up');
  ip('-n', name, 'route', 'add', 'default', 'via', gateway);
  return {
    exec: (argv, env) =>
      execFileSync('ip', ['netns', 'exec', name, ...argv], {
        encoding: 'utf8',
        env: { PATH: '/usr/bin:/bin', ...env },
        timeout: 15_000,
      }),
    remove: () => removeNamespace(name, hostSide),
  };
}

function ip(...args: string[]): void {
  execFileSync('ip', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

function removeLink(name: string): void {
  try {
    execFileSync('ip', ['link', 'del', name], { stdio: 'ignore' });
  } catch {
    // not there
  }
}

function removeNamespace(name: string, hostSide: string): void {
  removeLink(hostSide);
  try {
    execFileSync('ip', ['netns', 'del', name], { stdio: 'ignore' });
  } catch {
    // not there
  }
}
