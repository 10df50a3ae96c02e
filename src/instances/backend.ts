/**
 * The instance backend contract: start, stop and watch app instances.
 * The local backend runs each instance in its own network namespace; any other backend
 * implements the same interface and passes the same contract test suite.
 */

import type { SandboxIdentity } from '../sandbox/sandbox-identity.js';
import type { Sandbox } from '../sandbox/sandbox-host.js';

export type LogStream = 'out' | 'err' | 'system';

/** A background process beside each instance (CC_WORKER_COMMAND), never routed nor health-checked. */
export interface WorkerSpec {
  /** `worker`, `worker-1`...: marks its lines in the app's logs. */
  name: string;
  command: string[];
  restart: 'always' | 'on-failure' | 'no';
  restartDelayMs: number;
}

export interface InstanceSpec {
  appId: string;
  deploymentId: string;
  instanceId: string;
  instanceNumber: number;
  /** Folder holding the built release; the instance runs with it as working directory. */
  releaseDir: string;
  /** What the release's CC_PRE_RUN_HOOK wrote (ReleaseSpec.preRunLayer): seen read-only above the release folder. */
  preRunLayer?: string;
  /** Commands run once before `command`, each must exit 0 (e.g. npm prestart). */
  beforeStart: string[][];
  /** The long-running process, as argv. */
  command: string[];
  /** Background processes started beside it, stopped with it. */
  workers?: WorkerSpec[];
  /** Complete environment of the process (PATH included). */
  env: Record<string, string>;
  sandbox: SandboxIdentity;
  /** Called with each line the instance prints and each lifecycle message. */
  onLog(stream: LogStream, line: string): void;
  /** Called after the instance's state changed (crashed, restarting, running again...). */
  onStateChange?(state: InstanceState): void;
}

/** An instance's CPU time so far, and when it was read (ms since the epoch) when that was not now. */
export interface CpuReading {
  seconds: number;
  at?: number;
}

export type InstanceState = 'starting' | 'running' | 'restarting' | 'stopping' | 'stopped' | 'crashed';

export interface Instance {
  readonly id: string;
  readonly spec: InstanceSpec;
  /** Address the host reaches the instance's port 8080 on, e.g. `10.77.0.6`. */
  readonly address: string;
  readonly port: number;
  state(): InstanceState;
  /** Number of automatic restarts after crashes. */
  restarts(): number;
  /** Memory the instance's sandbox uses now, in bytes (undefined when not running). */
  memoryUsage(): number | undefined;
  /**
   * CPU time the instance used so far, in seconds, and when it was read if not now (a backend
   * that polls its figures); undefined when not running or not measured. The autoscaler turns
   * two readings into a rate. Optional: a backend without it is never scaled on CPU.
   */
  cpuTime?(): CpuReading | undefined;
  /**
   * CPU time its workers used so far (each worker's sandbox, summed over those running), as
   * `cpuTime`; undefined when none runs or it is not measured. Optional: the autoscaler judges
   * worker instances by it (src/serving/worker-pool.ts), and a backend without it never scales
   * them on CPU.
   */
  workerCpuTime?(): CpuReading | undefined;
  /**
   * The memory it needs now, in bytes: its use less the file cache the kernel may take back
   * (undefined when not running or not measured). Optional: the autoscaler judges a flavour by
   * it, else by `memoryUsage`.
   */
  memoryWorkingSet?(): number | undefined;
  /**
   * Gives the running instance another CPU share at once (its control group's cpu.shares or
   * cpu.weight), without a restart. Optional: the autoscaler then relies on the restart alone.
   */
  setCpuShare?(cpuShares: number, cpuWeight: number): void;
  /**
   * Set on an adopted instance that must not stay (why, e.g. it runs on the network of an
   * earlier start): the runtime replaces it at once, new instance first.
   */
  readonly outdated?: string;
  /** SIGTERM, wait up to graceMs, then SIGKILL; releases the namespace. */
  stop(graceMs?: number): Promise<void>;
}

/** A one-off command (`slipway run`) of a release: its environment, user and limits, never routed. */
export interface OneOffSpec {
  appId: string;
  deploymentId: string;
  releaseDir: string;
  /** As InstanceSpec.preRunLayer. */
  preRunLayer?: string;
  command: string[];
  env: Record<string, string>;
  sandbox: SandboxIdentity;
  /** The command's output as it comes. */
  onData(stream: 'out' | 'err', chunk: Buffer): void;
}

export interface InstanceBackend {
  start(spec: InstanceSpec): Promise<Instance>;
  /**
   * Runs a one-off command where the instances run (a backend that runs them elsewhere than
   * this machine's sandboxes); without it, one-off commands run in a local sandbox.
   */
  runOnce?(spec: OneOffSpec): Promise<Sandbox>;
  list(): Instance[];
  /** Stops every instance (`slipway system stop`). */
  stopAll(graceMs?: number): Promise<void>;
  /**
   * The daemon lets go of every instance, which goes on serving (SIGTERM, an upgrade): what it
   * holds of them (output readers, timers) is released, nothing is stopped.
   */
  detach(): Promise<void>;
  /**
   * At daemon start: the instances an earlier daemon left running. `claim` is asked about each
   * and returns the callbacks to go on with it (it is adopted as it runs), or undefined for an
   * orphan (an app deleted or redeployed meanwhile), which is stopped. Resolves with the adopted.
   */
  adoptAll(claim: (found: FoundInstance) => InstanceCallbacks | undefined): Promise<Instance[]>;
  /**
   * An app was deleted (its instances stopped, its release folders removed): what the backend
   * keeps of it elsewhere goes too (a swarm's release images, in the registry as well).
   */
  forgetApp?(appId: string): Promise<void>;
}

/** An instance an earlier daemon started, as found running. */
export interface FoundInstance {
  appId: string;
  deploymentId: string;
  instanceId: string;
  instanceNumber: number;
}

export type InstanceCallbacks = Pick<InstanceSpec, 'onLog' | 'onStateChange'>;
