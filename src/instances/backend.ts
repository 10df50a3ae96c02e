/**
 * The instance backend contract: start, stop and watch app instances.
 * The local backend runs each instance in its own network namespace; any other backend
 * implements the same interface and passes the same contract test suite.
 */

export type LogStream = 'out' | 'err' | 'system';

export interface InstanceSpec {
  appId: string;
  deploymentId: string;
  instanceId: string;
  instanceNumber: number;
  /** Folder holding the built release; the instance runs with it as working directory. */
  releaseDir: string;
  /** Commands run once before `command`, each must exit 0 (e.g. npm prestart). */
  beforeStart: string[][];
  /** The long-running process, as argv. */
  command: string[];
  /** Complete environment of the process (PATH included). */
  env: Record<string, string>;
  /** Called with each line the instance prints and each lifecycle message. */
  onLog(stream: LogStream, line: string): void;
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
  /** SIGTERM, wait up to graceMs, then SIGKILL; releases the namespace. */
  stop(graceMs?: number): Promise<void>;
}

export interface InstanceBackend {
  start(spec: InstanceSpec): Promise<Instance>;
  list(): Instance[];
  /** Stops every instance (daemon shutdown). */
  stopAll(graceMs?: number): Promise<void>;
}
