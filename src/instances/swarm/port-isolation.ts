import { runCommand } from '../../executor/run-command.js';
import type { DockerApi } from './docker-api.js';
import { SYSTEM_TOOL_ENV } from '../../executor/system-tools.js';

async function capture(argv: string[]): Promise<string> {
  const out: string[] = [];
  const r = await runCommand({
    argv,
    cwd: '/',
    env: SYSTEM_TOOL_ENV,
    timeoutMs: 10_000,
    onLine: (stream, line) => stream === 'out' && out.push(line),
  });
  if (r.exitCode !== 0) throw new Error(`\`${argv.join(' ')}\` failed (exit ${r.exitCode}).`);
  return out.join('\n');
}

/**
 * Isolates a task's port on its node's bridge, as the local backend does for its sandboxes:
 * tasks talk to this machine (as the firewall allows), never to each other, whatever the
 * bridge-netfilter setting. The host side of the task's veth is found from inside the task's
 * network namespace (`eth0@if<index>`): no path of the task's file system is opened.
 * Returns false when the container is not on this node (another node's API is not this one).
 */
export async function isolateTaskPort(api: DockerApi, containerId: string): Promise<boolean> {
  let pid: number | undefined;
  try {
    pid = (await api.json<{ State?: { Pid?: number } }>({ path: `/containers/${containerId}/json`, what: 'inspect a container' })).State
      ?.Pid;
  } catch {
    return false;
  }
  if (!pid) throw new Error('The task has no process to isolate: it ended as it started.');
  const inside = await capture(['nsenter', `--target=${pid}`, '--net', '--', 'ip', '-o', 'link', 'show', 'dev', 'eth0']);
  const index = /^\d+:\s+eth0@if(\d+):/.exec(inside)?.[1];
  if (!index) throw new Error("Cannot find the host side of the task's network interface.");
  const host = await capture(['ip', '-o', 'link', 'show']);
  const name = new RegExp(`^${index}:\\s+([^:@\\s]+)`, 'm').exec(host)?.[1];
  if (!name) throw new Error("Cannot find the host side of the task's network interface.");
  await capture(['ip', 'link', 'set', 'dev', name, 'type', 'bridge_slave', 'isolated', 'on']);
  return true;
}
