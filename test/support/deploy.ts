import { cpSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { request } from 'node:http';
import type { TestDaemon } from './daemon.js';
import { waitUntil } from './wait.js';

export const EXAMPLES = fileURLToPath(new URL('../../examples/', import.meta.url));

export interface TestApp {
  id: string;
  dir: string;
  host: string;
  /** Environment for git so it pushes over SSH with the test key. */
  gitEnv: NodeJS.ProcessEnv;
}

/** A user key registered with the daemon, for git over SSH. */
export async function registerSshKey(daemon: TestDaemon, token?: string): Promise<{ keyPath: string; gitEnv: NodeJS.ProcessEnv }> {
  const dir = mkdtempSync(join(tmpdir(), 'slipway-key-'));
  const keyPath = join(dir, 'id_ed25519');
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-f', keyPath]);
  const added = await daemon.cli(['ssh-keys', 'add', `${keyPath}.pub`], { token });
  if (added.code !== 0) throw new Error(`ssh-keys add failed: ${added.stderr}`);
  return {
    keyPath,
    gitEnv: {
      ...process.env,
      GIT_SSH_COMMAND: `ssh -i ${keyPath} -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR`,
      GIT_AUTHOR_NAME: 'Test',
      GIT_AUTHOR_EMAIL: 'test@example.invalid',
      GIT_COMMITTER_NAME: 'Test',
      GIT_COMMITTER_EMAIL: 'test@example.invalid',
    },
  };
}

/** Copies an example into a fresh git repository with one commit on master. */
export function checkoutExample(example: string): string {
  return checkoutFolder(join(EXAMPLES, example), example);
}

/** Test-only apps (test/fixtures/<name>, where name may name a subfolder), checked out like an example. */
export function checkoutFixture(name: string): string {
  return checkoutFolder(fileURLToPath(new URL(`../fixtures/${name}/`, import.meta.url)), name.replaceAll('/', '-'));
}

function checkoutFolder(source: string, label: string): string {
  const dir = mkdtempSync(join(tmpdir(), `slipway-${label}-`));
  cpSync(source, dir, { recursive: true });
  execFileSync('git', ['init', '-q', '-b', 'master'], { cwd: dir });
  commitAll(dir, 'first');
  return dir;
}

export function commitAll(dir: string, message: string): string {
  const env = {
    ...process.env,
    GIT_AUTHOR_NAME: 'Test',
    GIT_AUTHOR_EMAIL: 't@example.invalid',
    GIT_COMMITTER_NAME: 'Test',
    GIT_COMMITTER_EMAIL: 't@example.invalid',
  };
  execFileSync('git', ['add', '-A'], { cwd: dir, env });
  execFileSync('git', ['commit', '-q', '--allow-empty', '-m', message], { cwd: dir, env });
  return execFileSync('git', ['rev-parse', 'HEAD'], { cwd: dir, encoding: 'utf8' }).trim();
}

/** Writes a file and commits it: a new release of the app. */
export function newRelease(dir: string, name: string): string {
  writeFileSync(join(dir, 'RELEASE'), `${name}\n`);
  return commitAll(dir, `release ${name}`);
}

/** Creates an app for an example folder (linked through .slipway.json) and sets variables. */
export async function createApp(
  daemon: TestDaemon,
  dir: string,
  name: string,
  env: Record<string, string> = {},
  type = 'node',
): Promise<string> {
  const created = await daemon.cli(['create', '--type', type, name, '--region', 'par', '--org', 'default'], { cwd: dir });
  if (created.code !== 0) throw new Error(`create failed: ${created.stderr}`);
  for (const [k, v] of Object.entries(env)) {
    const set = await daemon.cli(['env', 'set', k, v], { cwd: dir });
    if (set.code !== 0) throw new Error(`env set ${k} failed: ${set.stderr}`);
  }
  return created.stdout.trim();
}

/**
 * `git push` to the app's URL; resolves with git's exit code (null when it was killed, at the
 * timeout too) and its output, stdout then stderr. The test goes on meanwhile: it may watch
 * the deployment the push started, in a browser or the daemon's output.
 */
export function gitPush(
  dir: string,
  url: string,
  gitEnv: NodeJS.ProcessEnv,
  refspec = 'master',
): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', ['push', url, refspec], { cwd: dir, env: gitEnv, timeout: 300_000 });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (text: string) => (stdout += text));
    child.stderr.setEncoding('utf8').on('data', (text: string) => (stderr += text));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, output: `${stdout}${stderr}` }));
  });
}

export interface RoutedResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: string;
}

/** A GET through the router, with the app's Host header, on a fresh connection. */
export function getThroughRouter(
  daemon: TestDaemon,
  host: string,
  path = '/',
  headers: Record<string, string> = {},
  timeoutMs = 15_000,
): Promise<RoutedResponse> {
  return requestThroughRouter(daemon, host, { path, headers, timeoutMs });
}

/** A request through the daemon's router to `host`, on a fresh connection (`connection: close`), with its body if any. */
export function requestThroughRouter(
  daemon: TestDaemon,
  host: string,
  o: { method?: 'GET' | 'POST'; path?: string; body?: string; headers?: Record<string, string>; timeoutMs?: number } = {},
): Promise<RoutedResponse> {
  const body = o.body ?? '';
  const length: Record<string, string> = o.method === 'POST' ? { 'content-length': String(Buffer.byteLength(body)) } : {};
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port: daemon.routerPort,
        path: o.path ?? '/',
        method: o.method ?? 'GET',
        headers: { host, connection: 'close', ...length, ...o.headers },
        agent: false,
        timeout: o.timeoutMs ?? 15_000,
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (text += d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(body);
  });
}

/** Waits for the deployment of a commit to end; returns its final record. */
export function waitForDeploymentOf(
  daemon: TestDaemon,
  appId: string,
  commit: string,
  timeoutMs = 600_000,
): Promise<{ id: string; state: string; message: string | null }> {
  // Polled through the API from this process, as a user's script would, rather than with a CLI
  // process per look: a build of a minute is looked at a few hundred times, and a CLI process
  // each time cost the whole suite minutes of processor time.
  return waitUntil(
    `the deployment of ${commit} to end`,
    async () => {
      const response = await fetch(`${daemon.apiUrl}/v1/apps/${appId}/deployments?limit=20`, {
        headers: { authorization: `Bearer ${daemon.adminToken}` },
      });
      if (!response.ok) return undefined;
      const { deployments } = (await response.json()) as {
        deployments: Array<{ id: string; commit: string; state: string; message: string | null }>;
      };
      const found = deployments.find((d) => d.commit === commit);
      return found && found.state !== 'WIP' ? found : undefined;
    },
    timeoutMs,
  ).then(async (deployment) => {
    await deploymentLogEnded(daemon, appId, deployment.id);
    return deployment;
  });
}

/**
 * Follows a deployment's log to its end through the API. The record says OK or FAIL before the
 * deployment's last steps ran (CC_RUN_SUCCEEDED_HOOK or CC_RUN_FAILED_HOOK, the releases beyond
 * the kept count leaving): its log ends after them, and a test reading the deployment then sees
 * all it did.
 */
async function deploymentLogEnded(daemon: TestDaemon, appId: string, deploymentId: string): Promise<void> {
  const response = await fetch(`${daemon.apiUrl}/v1/apps/${appId}/deployments/${encodeURIComponent(deploymentId)}/logs?follow=1&lines=1`, {
    headers: { authorization: `Bearer ${daemon.adminToken}` },
    signal: AbortSignal.timeout(600_000),
  });
  await response.text();
}

/** The deployment log as plain lines. */
export async function deploymentLog(daemon: TestDaemon, appId: string, deploymentId: string): Promise<string[]> {
  const logs = await daemon.cli(['logs', '--app', appId, '--deployment-id', deploymentId]);
  return logs.stdout.split('\n');
}

/** Pushes an example checkout and waits for its deployment. */
export async function pushAndWait(
  daemon: TestDaemon,
  dir: string,
  appId: string,
  gitEnv: NodeJS.ProcessEnv,
): Promise<{ id: string; state: string; push: string; commit: string }> {
  const commit = execFileSync('git', ['rev-parse', 'HEAD'], { cwd: dir, encoding: 'utf8' }).trim();
  const url = `git+ssh://git@127.0.0.1:${daemon.sshPort}/${appId}.git`;
  const push = await gitPush(dir, url, gitEnv);
  if (push.code !== 0) throw new Error(`git push failed:\n${push.output}`);
  const deployment = await waitForDeploymentOf(daemon, appId, commit);
  if (deployment.state === 'OK') return { ...deployment, push: push.output, commit };
  // The push says only that it was queued: a failed deployment's own log says why, and an
  // assertion quoting `push` then shows it.
  const log = (await deploymentLog(daemon, appId, deployment.id)).slice(-40).join('\n');
  return { ...deployment, push: `${push.output}\n--- the deployment's log, its last lines:\n${log}`, commit };
}
