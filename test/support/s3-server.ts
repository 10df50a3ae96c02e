import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CreateBucketCommand, S3Client } from '@aws-sdk/client-s3';
import { freePort } from './free-port.js';

/**
 * A real S3-compatible server for tests: SeaweedFS's `weed mini` (master, volume server, filer and
 * S3 gateway in one process) in a temporary folder, on free loopback ports, with one identity and
 * one bucket. scripts/setup.sh builds `weed` into GOPATH/bin.
 */
export interface TestS3Server {
  /** http://127.0.0.1:<port>, the S3 endpoint. */
  endpoint: string;
  /** The bucket made at start. */
  bucket: string;
  accessKeyId: string;
  secretAccessKey: string;
  /** Makes another bucket. */
  createBucket(name: string): Promise<void>;
  output(): string;
  stop(): Promise<void>;
}

/** Where setup.sh installs SeaweedFS; the reason when it is not there. */
export function seaweedfsBinary(): { weed: string } | { missing: string } {
  let gopath: string;
  try {
    gopath = execFileSync('go', ['env', 'GOPATH'], { encoding: 'utf8' }).trim();
  } catch {
    return { missing: 'Go is not installed, so SeaweedFS (weed) is not either (run scripts/setup.sh)' };
  }
  const weed = join(gopath, 'bin', 'weed');
  if (!existsSync(weed)) return { missing: `SeaweedFS (weed) is not installed in ${join(gopath, 'bin')} (run scripts/setup.sh)` };
  return { weed };
}

export async function startS3Server(options: { bucket?: string } = {}): Promise<TestS3Server> {
  const binary = seaweedfsBinary();
  if ('missing' in binary) throw new Error(binary.missing);
  const dir = mkdtempSync(join(tmpdir(), 'slipway-seaweedfs-'));
  const accessKeyId = 'slipwaytest';
  const secretAccessKey = 'slipway-test-secret-key-0123456789';
  const bucket = options.bucket ?? 'backups';
  writeFileSync(
    join(dir, 's3.json'),
    JSON.stringify({
      identities: [
        {
          name: 'slipway',
          credentials: [{ accessKey: accessKeyId, secretKey: secretAccessKey }],
          actions: ['Admin', 'Read', 'Write', 'List', 'Tagging'],
        },
      ],
    }),
    { mode: 0o600 },
  );
  const port: Record<string, number> = {};
  for (const name of ['master', 'masterGrpc', 'volume', 'volumeGrpc', 'filer', 'filerGrpc', 's3', 's3Grpc', 'admin', 'adminGrpc']) {
    port[name] = await freePort();
  }
  const args = [
    'mini',
    `-dir=${join(dir, 'data')}`,
    '-ip=127.0.0.1',
    '-ip.bind=127.0.0.1',
    `-master.port=${port.master}`,
    `-master.port.grpc=${port.masterGrpc}`,
    `-volume.port=${port.volume}`,
    `-volume.port.grpc=${port.volumeGrpc}`,
    `-filer.port=${port.filer}`,
    `-filer.port.grpc=${port.filerGrpc}`,
    `-s3.port=${port.s3}`,
    `-s3.port.grpc=${port.s3Grpc}`,
    `-admin.port=${port.admin}`,
    `-admin.port.grpc=${port.adminGrpc}`,
    // What the tests do not use stays off, so it takes no port a parallel test might want.
    '-admin.ui=false',
    '-admin.port.legacy=0',
    '-s3.port.iceberg=0',
    '-s3.port.lance=0',
    '-webdav=false',
    '-debug.port=0',
    '-master.telemetry=false',
    // A missing bucket must stay missing: the tests check how the store reports one.
    '-s3.autoCreateBucket=false',
    `-s3.config=${join(dir, 's3.json')}`,
    // Small volumes and few of them: the tests store megabytes, not gigabytes.
    '-master.volumeSizeLimitMB=64',
    '-volume.max=8',
  ];
  let log = '';
  // Its own process group, so stop() ends whatever it started.
  const child = spawn(binary.weed, args, { cwd: dir, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.on('data', (d) => (log += d));
  child.stderr!.on('data', (d) => (log += d));
  const stop = () => stopGroup(child).then(() => rmSync(dir, { recursive: true, force: true }));
  const endpoint = `http://127.0.0.1:${port.s3}`;
  const client = new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId, secretAccessKey },
    requestChecksumCalculation: 'WHEN_REQUIRED',
  });
  const createBucket = async (name: string) => {
    await client.send(new CreateBucketCommand({ Bucket: name }));
  };
  try {
    await waitForOutput(child, /All enabled components are running/, () => log);
    // The gateway answers once the filer has loaded the identities; until then it may refuse.
    const deadline = Date.now() + 30_000;
    for (;;) {
      try {
        await createBucket(bucket);
        break;
      } catch (e) {
        if (Date.now() > deadline) throw new Error(`SeaweedFS did not create the bucket ${bucket}: ${(e as Error).message}\n${log}`);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
    }
  } catch (e) {
    client.destroy();
    await stop();
    throw e;
  }
  return {
    endpoint,
    bucket,
    accessKeyId,
    secretAccessKey,
    createBucket,
    output: () => log,
    stop: async () => {
      client.destroy();
      await stop();
    },
  };
}

function waitForOutput(child: ChildProcess, pattern: RegExp, collected: () => string): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`SeaweedFS did not start within 60 s:\n${collected()}`)), 60_000);
    const check = () => {
      if (pattern.test(collected())) {
        clearTimeout(timer);
        child.off('exit', exited);
        resolve();
      }
    };
    const exited = (code: number | null) => {
      clearTimeout(timer);
      reject(new Error(`SeaweedFS exited with ${code}:\n${collected()}`));
    };
    child.stdout!.on('data', check);
    child.stderr!.on('data', check);
    child.once('exit', exited);
  });
}

/** Ends the server's process group: SIGTERM, then SIGKILL after 10 s. */
function stopGroup(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return resolve();
    const pid = child.pid;
    const signal = (name: NodeJS.Signals) => {
      try {
        process.kill(-pid, name);
      } catch {
        // Already gone.
      }
    };
    const killer = setTimeout(() => signal('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(killer);
      // Anything it left in its group goes too.
      signal('SIGKILL');
      resolve();
    });
    signal('SIGTERM');
  });
}
