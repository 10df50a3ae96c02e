/**
 * The behaviour every InstanceBackend must show, as a reusable node:test suite, run by
 * test/contracts/instance-backend.test.ts against the fake backend and by instance-backend-local
 * and instance-backend-swarm.test.ts against the others (the unit suite leaves those two out). The
 * first part needs only the interface (start, answer HTTP, list, stop, stopAll, lifecycle
 * messages); the second starts real processes of a tiny Node HTTP server and checks what they
 * see (environment, user, working folder, signals, beforeStart, restarts). A backend that cannot
 * run here (not root, a binary missing) or runs no process has those tests skipped, each with
 * the reason printed: never a silent pass.
 */
import { describe, test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, chmodSync, rmSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import http from 'node:http';
import type { Instance, InstanceBackend, InstanceSpec, LogStream } from '../../src/instances/backend.js';
import type { SandboxIdentity } from '../../src/sandbox/sandbox-identity.js';
import { waitUntil } from '../support/wait.js';

/** Node as installed by Debian's package: readable and executable by any user. */
export const CONTRACT_NODE = '/usr/bin/node';

const SERVER_APP = `
const http = require('node:http');
const server = http.createServer((req, res) => {
  res.setHeader('content-type', 'application/json');
  res.setHeader('connection', 'close');
  res.end(JSON.stringify({
    instance: process.env.INSTANCE_ID,
    greeting: process.env.GREETING,
    envKeys: Object.keys(process.env).sort(),
    uid: process.getuid(),
    gid: process.getgid(),
    groups: process.getgroups(),
    cwd: process.cwd(),
  }));
});
server.listen(8080, '0.0.0.0', () => {
  console.log('listening on 8080 as ' + process.env.INSTANCE_ID);
  console.error('ready on stderr');
});
process.on('SIGTERM', () => {
  console.log('got SIGTERM, shutting down');
  process.exit(0);
});
`;

const CRASHING_APP = `
console.log('crashing app booting');
setTimeout(() => { console.error('crashing app gives up'); process.exit(3); }, 200);
`;

const STUBBORN_APP = `
process.on('SIGTERM', () => console.log('ignoring SIGTERM'));
setInterval(() => {}, 1000);
console.log('stubborn app up');
`;

export interface LogRecord {
  stream: LogStream;
  line: string;
}

/** A release folder under /tmp the unprivileged app user can read. */
export function writeContractRelease(files: Record<string, string>): string {
  const dir = realpathSync(mkdtempSync(join(tmpdir(), 'slipway-contract-')));
  chmodSync(dir, 0o755);
  for (const [name, content] of Object.entries(files)) {
    writeFileSync(join(dir, name), content);
    chmodSync(join(dir, name), 0o644);
  }
  return dir;
}

let counter = 0;
let contractSandbox: SandboxIdentity | undefined;

/** The sandbox every contract instance runs in (the backend's test names the user). */
export function setContractSandbox(sandbox: SandboxIdentity): void {
  contractSandbox = sandbox;
}

export function contractSpec(
  releaseDir: string,
  overrides: Partial<InstanceSpec> & { script?: string; extraEnv?: Record<string, string> } = {},
): { spec: InstanceSpec; logs: LogRecord[] } {
  const { script, extraEnv, ...specOverrides } = overrides;
  const logs: LogRecord[] = [];
  const n = counter++;
  // Long on purpose: backends must cope with ids longer than kernel object names.
  const instanceId = overrides.instanceId ?? `contract-app-0123456789abcdef-deployment-0123456789abcdef-instance-${n}`;
  const spec: InstanceSpec = {
    appId: 'contract-app',
    deploymentId: 'contract-deployment',
    instanceId,
    instanceNumber: n,
    releaseDir,
    beforeStart: [],
    command: [CONTRACT_NODE, script ?? 'server.cjs'],
    // The platform always sets HOME (OCI runtimes add one when it is missing).
    env: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: releaseDir, INSTANCE_ID: instanceId, GREETING: `hello ${n}`, ...extraEnv },
    onLog: (stream, line) => logs.push({ stream, line }),
    sandbox: contractSandbox ?? missingSandbox(),
    ...specOverrides,
  };
  return { spec, logs };
}

function missingSandbox(): never {
  throw new Error('Call setContractSandbox() with the user and limits of the contract instances first.');
}

export function httpGetJson(address: string, port: number): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: address, port, path: '/', agent: false, timeout: 2000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => {
        try {
          resolve(JSON.parse(body) as Record<string, unknown>);
        } catch (e) {
          reject(e as Error);
        }
      });
    });
    req.on('timeout', () => req.destroy(new Error('request timed out')));
    req.on('error', reject);
  });
}

/** The status of GET / at the instance (any answer counts: the fake answers plain text). */
export function httpStatus(address: string, port: number, timeoutMs = 2000): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.get({ host: address, port, path: '/', agent: false, timeout: timeoutMs }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('timeout', () => req.destroy(new Error('request timed out')));
    req.on('error', reject);
  });
}

function hasLine(logs: LogRecord[], stream: LogStream, pattern: RegExp): boolean {
  return logs.some((l) => l.stream === stream && pattern.test(l.line));
}

/** A backend the contract runs against. */
export interface ContractSubject {
  name: string;
  make(): Promise<{ backend: InstanceBackend; cleanup(): Promise<void> }>;
  /** Why it cannot run on this machine (not root, a binary missing); undefined when it can. */
  missing?: string;
  /**
   * Why it runs no real process, when it does not (the fake): the process tests are left out,
   * not skipped, since a skip says this machine lacks something (and fails a CI run).
   */
  runsNoProcess?: string;
  /**
   * A second backend on the same machine, as the next daemon's after this one's `detach()`: the
   * adoption test starts instances, detaches, and adopts them with it. Its cleanup stops what it
   * holds and leaves the rest to the first backend's.
   */
  reopen?(): Promise<{ backend: InstanceBackend; cleanup(): Promise<void> }>;
  /** Why the adoption test means nothing for the subject, when it has no `reopen`. */
  cannotAdopt?: string;
}

/** Declares a suite unless `leftOut` says why it means nothing for the subject. */
function describeUnless(leftOut: string | undefined, name: string, suite: () => void): void {
  if (leftOut === undefined) describe(name, suite);
}

export function runInstanceBackendContract(subject: ContractSubject): void {
  const { name } = subject;
  describe(`instance backend contract: ${name}`, { skip: subject.missing ? `${name}: ${subject.missing}` : false }, () => {
    let backend: InstanceBackend;
    let cleanup: () => Promise<void>;
    let releaseDir: string;

    before(async () => {
      ({ backend, cleanup } = await subject.make());
      releaseDir = writeContractRelease({ 'server.cjs': SERVER_APP, 'crash.cjs': CRASHING_APP, 'stubborn.cjs': STUBBORN_APP });
    });

    after(async () => {
      await backend?.stopAll(2000);
      await cleanup?.();
      if (releaseDir) rmSync(releaseDir, { recursive: true, force: true });
    });

    test('a started instance is running, listed and answers HTTP at its address and port', async () => {
      const s = contractSpec(releaseDir);
      const inst = await backend.start(s.spec);
      try {
        assert.equal(inst.id, s.spec.instanceId);
        assert.equal(inst.spec, s.spec);
        assert.equal(await waitUntil('the instance to answer', () => httpStatus(inst.address, inst.port), 10_000), 200);
        assert.equal(inst.state(), 'running');
        assert.ok(backend.list().some((i) => i.id === inst.id));
        assert.ok(hasLine(s.logs, 'system', /started/), JSON.stringify(s.logs));
      } finally {
        await inst.stop(2000);
      }
    });

    test('stop ends the instance: logged, stopped, unlisted, nothing answers any more', async () => {
      const s = contractSpec(releaseDir);
      const inst = await backend.start(s.spec);
      await waitUntil('the instance to answer', () => httpStatus(inst.address, inst.port), 10_000);
      await inst.stop(5000);
      assert.equal(inst.state(), 'stopped');
      assert.ok(hasLine(s.logs, 'system', /stopping/), JSON.stringify(s.logs));
      assert.ok(hasLine(s.logs, 'system', /stopped/), JSON.stringify(s.logs));
      assert.equal(inst.restarts(), 0, 'a requested stop is not a crash');
      assert.ok(!backend.list().some((i) => i.id === inst.id));
      // A live instance answers within milliseconds; a freed address refuses the connection or
      // leaves it unanswered, so half a second tells them apart without the full request timeout.
      await assert.rejects(httpStatus(inst.address, inst.port, 500), 'nothing answers at the address after stop');
    });

    test('stopAll stops every instance', async () => {
      const started = await Promise.all([backend.start(contractSpec(releaseDir).spec), backend.start(contractSpec(releaseDir).spec)]);
      await backend.stopAll(2000);
      assert.deepEqual(backend.list(), []);
      for (const i of started) assert.equal(i.state(), 'stopped');
    });

    describeUnless(subject.runsNoProcess, 'with real processes', () => {
      test('two instances listen on 0.0.0.0:8080 at once, each reachable at its own address', async () => {
        const a = contractSpec(releaseDir);
        const b = contractSpec(releaseDir);
        const [ia, ib] = await Promise.all([backend.start(a.spec), backend.start(b.spec)]);
        try {
          assert.equal(ia.port, 8080);
          assert.equal(ib.port, 8080);
          assert.notEqual(ia.address, ib.address);
          assert.equal(ia.id, a.spec.instanceId);
          const ra = await waitUntil('instance A to answer', () => httpGetJson(ia.address, ia.port), 10_000);
          const rb = await waitUntil('instance B to answer', () => httpGetJson(ib.address, ib.port), 10_000);
          assert.equal(ra.instance, a.spec.instanceId);
          assert.equal(rb.instance, b.spec.instanceId);
          assert.equal(ia.state(), 'running');
          const ids = backend.list().map((i) => i.id);
          assert.ok(ids.includes(ia.id) && ids.includes(ib.id));
        } finally {
          await Promise.all([ia.stop(2000), ib.stop(2000)]);
        }
      });

      test('the app gets exactly its env, its release dir as cwd, and runs as a non-root user', async () => {
        const s = contractSpec(releaseDir, { extraEnv: { SECRET_LOOKING: 'x=y; $(nothing) "quoted"' } });
        const inst = await backend.start(s.spec);
        try {
          const r = await waitUntil('the instance to answer', () => httpGetJson(inst.address, inst.port), 10_000);
          assert.equal(r.greeting, s.spec.env.GREETING);
          assert.deepEqual(r.envKeys, Object.keys(s.spec.env).sort(), 'env must be exactly spec.env');
          assert.equal(r.cwd, releaseDir);
          assert.notEqual(r.uid, 0, 'must not run as root');
          assert.notEqual(r.gid, 0, 'must not run with group root');
          assert.ok(!(r.groups as number[]).includes(0), `supplementary groups ${JSON.stringify(r.groups)} include root`);
        } finally {
          await inst.stop(2000);
        }
      });

      test('stdout and stderr lines and lifecycle messages reach onLog', async () => {
        const s = contractSpec(releaseDir);
        const inst = await backend.start(s.spec);
        try {
          await waitUntil('stdout line', () => hasLine(s.logs, 'out', new RegExp(`^listening on 8080 as ${s.spec.instanceId}$`)), 10_000);
          await waitUntil('stderr line', () => hasLine(s.logs, 'err', /^ready on stderr$/), 10_000);
          assert.ok(hasLine(s.logs, 'system', /started/), JSON.stringify(s.logs));
        } finally {
          await inst.stop(2000);
        }
      });

      test('beforeStart commands run first, in the release dir, and a failing one fails start', async () => {
        const ok = contractSpec(releaseDir, {
          beforeStart: [[CONTRACT_NODE, '-e', "console.log('before start in ' + process.cwd() + ' as ' + process.getuid())"]],
        });
        const inst = await backend.start(ok.spec);
        try {
          await waitUntil('server output', () => hasLine(ok.logs, 'out', /^listening on 8080/), 10_000);
          const before = ok.logs.findIndex((l) => l.line.startsWith('before start in '));
          const served = ok.logs.findIndex((l) => l.line.startsWith('listening on 8080'));
          assert.ok(before >= 0 && before < served, JSON.stringify(ok.logs));
          assert.match(ok.logs[before]!.line, new RegExp(`^before start in ${releaseDir} as [1-9]\\d*$`));
        } finally {
          await inst.stop(2000);
        }

        const failing = contractSpec(releaseDir, {
          beforeStart: [[CONTRACT_NODE, '-e', "console.error('prestart broke'); process.exit(4)"]],
        });
        await assert.rejects(backend.start(failing.spec), /exited with code 4/);
        assert.ok(hasLine(failing.logs, 'err', /^prestart broke$/));
        assert.ok(!hasLine(failing.logs, 'out', /^listening on 8080/), 'the command must not run after a failed beforeStart');
        assert.ok(!backend.list().some((i) => i.id === failing.spec.instanceId));
      });

      test('a crashing app is restarted automatically and the restart is logged', async () => {
        const s = contractSpec(releaseDir, { script: 'crash.cjs' });
        const inst = await backend.start(s.spec);
        try {
          await waitUntil('a restart', () => inst.restarts() >= 1, 15_000);
          await waitUntil('the second boot', () => s.logs.filter((l) => l.line === 'crashing app booting').length >= 2, 15_000);
          assert.ok(hasLine(s.logs, 'err', /^crashing app gives up$/));
          assert.ok(hasLine(s.logs, 'system', /crash.*(code 3)/i), JSON.stringify(s.logs));
          assert.ok(hasLine(s.logs, 'system', /restart/i), JSON.stringify(s.logs));
        } finally {
          await inst.stop(2000);
        }
        assert.equal(inst.state(), 'stopped');
      });

      test('stop sends SIGTERM and captures what the app logs then', async () => {
        const s = contractSpec(releaseDir);
        const inst: Instance = await backend.start(s.spec);
        await waitUntil('the instance to answer', () => httpGetJson(inst.address, inst.port), 10_000);
        await inst.stop(5000);
        assert.ok(hasLine(s.logs, 'out', /^got SIGTERM, shutting down$/), JSON.stringify(s.logs));
      });

      describeUnless(subject.reopen ? undefined : (subject.cannotAdopt ?? 'no reopen()'), 'across a daemon restart', () => {
        test('after detach the instances go on; the next backend adopts the claimed one as it runs and stops the orphan', async () => {
          const kept = contractSpec(releaseDir);
          const orphan = contractSpec(releaseDir);
          const [a, b] = await Promise.all([backend.start(kept.spec), backend.start(orphan.spec)]);
          await waitUntil(
            'both instances to answer',
            async () => (await httpStatus(a.address, a.port)) && httpStatus(b.address, b.port),
            10_000,
          );
          await backend.detach();
          assert.deepEqual(backend.list(), [], 'the backend let go of its instances');
          assert.equal(a.state(), 'running', 'detach stops nothing');
          assert.equal((await httpGetJson(a.address, a.port)).instance, kept.spec.instanceId, 'it answers while nothing holds it');
          const next = await subject.reopen!();
          try {
            const logs: LogRecord[] = [];
            const states: string[] = [];
            const claimed: string[] = [];
            const adopted = await next.backend.adoptAll((found) => {
              claimed.push(found.instanceId);
              if (found.instanceId !== kept.spec.instanceId) return undefined;
              assert.deepEqual(
                [found.appId, found.deploymentId, found.instanceNumber],
                [kept.spec.appId, kept.spec.deploymentId, kept.spec.instanceNumber],
              );
              return { onLog: (stream, line) => logs.push({ stream, line }), onStateChange: (state) => states.push(state) };
            });
            assert.deepEqual(claimed.sort(), [kept.spec.instanceId, orphan.spec.instanceId].sort(), 'each found instance is asked about');
            assert.deepEqual(
              adopted.map((i) => i.id),
              [kept.spec.instanceId],
            );
            const inst = adopted[0]!;
            assert.equal(inst.state(), 'running');
            assert.equal(inst.address, a.address, 'adopted where it runs');
            assert.equal(inst.restarts(), 0);
            assert.equal(inst.spec.env.INSTANCE_ID, kept.spec.instanceId);
            assert.deepEqual(
              next.backend.list().map((i) => i.id),
              [kept.spec.instanceId],
            );
            assert.equal((await httpGetJson(inst.address, inst.port)).instance, kept.spec.instanceId);
            assert.ok(!hasLine(logs, 'out', /^listening on 8080/), 'not started again');
            await waitUntil(
              'the orphan to stop',
              async () => ((await httpStatus(b.address, b.port).catch(() => 0)) === 0 ? true : undefined),
              10_000,
            );
            // What the adopted instance prints from now on reaches the new callbacks.
            await inst.stop(5000);
            assert.equal(inst.state(), 'stopped');
            assert.ok(hasLine(logs, 'out', /^got SIGTERM, shutting down$/), JSON.stringify(logs));
            assert.ok(states.includes('stopped'), JSON.stringify(states));
            assert.deepEqual(next.backend.list(), []);
          } finally {
            await next.cleanup();
          }
        });
      });

      test('an app ignoring SIGTERM is killed after the grace period', async () => {
        const s = contractSpec(releaseDir, { script: 'stubborn.cjs' });
        const inst = await backend.start(s.spec);
        await waitUntil('the app to run', () => hasLine(s.logs, 'out', /^stubborn app up$/), 10_000);
        const t0 = Date.now();
        await inst.stop(500);
        const took = Date.now() - t0;
        assert.ok(took >= 450 && took < 5000, `stop took ${took} ms`);
        assert.ok(hasLine(s.logs, 'out', /^ignoring SIGTERM$/), JSON.stringify(s.logs));
        assert.ok(hasLine(s.logs, 'system', /kill/i), JSON.stringify(s.logs));
        assert.ok(!backend.list().some((i) => i.id === inst.id));
      });
    });
  });
}
