/**
 * A DeployRunner that runs nothing: it records each step (the sandboxed commands as argv
 * arrays, the folders made the app's own, the trees handed over) and answers each command with
 * what the test scripted for it, its output lines included. No root, no sandbox.
 */
import { mkdir } from 'node:fs/promises';
import type { DeployRunner, SandboxedStep } from '../../../src/pipeline/deploy-runner.js';
import type { SandboxedRunResult } from '../../../src/sandbox/run-sandboxed.js';

/** How a scripted command ends; what it prints comes first. */
export interface ScriptedResult {
  out?: string[];
  err?: string[];
  exitCode?: number | null;
  signal?: string | null;
  outOfMemory?: boolean;
  /** Runs while the command "runs" (after its output): a test cancels the deployment here. */
  during?: (step: SandboxedStep) => void | Promise<void>;
}

export interface RecordedStep {
  id: string;
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  hostname: string;
}

export class FakeDeployRunner implements DeployRunner {
  /** Every sandboxed command, in the order it ran. */
  readonly steps: RecordedStep[] = [];
  /** Folders made the app's own, and trees handed over to it, in order. */
  readonly owned: string[] = [];
  readonly handedOver: string[] = [];
  /** Scripted answers, newest first; a command none matches succeeds silently. */
  private readonly scripts: { matches: (argv: string[]) => boolean; result: ScriptedResult }[] = [];

  /** What the next commands whose argv `matches` do; a later script overrides an earlier one. */
  script(matches: (argv: string[]) => boolean, result: ScriptedResult): this {
    this.scripts.unshift({ matches, result });
    return this;
  }

  async execute(step: SandboxedStep): Promise<SandboxedRunResult> {
    this.steps.push({ id: step.id, argv: step.spec.args, cwd: step.spec.cwd, env: step.spec.env, hostname: step.spec.hostname });
    if (step.signal?.aborted) return ended({ exitCode: null, aborted: true });
    const scripted = this.scripts.find((s) => s.matches(step.spec.args))?.result ?? {};
    for (const line of scripted.out ?? []) step.onLine('out', line);
    for (const line of scripted.err ?? []) step.onLine('err', line);
    await scripted.during?.(step);
    // A cancellation while it ran kills the sandbox, as runSandboxed reports it.
    if (step.signal?.aborted) return ended({ exitCode: null, signal: 'SIGKILL', aborted: true });
    return ended({
      exitCode: scripted.exitCode === undefined ? 0 : scripted.exitCode,
      signal: scripted.signal ?? null,
      outOfMemory: scripted.outOfMemory,
    });
  }

  async ownFolder(path: string): Promise<void> {
    this.owned.push(path);
    await mkdir(path, { recursive: true, mode: 0o700 });
  }

  async handOver(path: string): Promise<{ exitCode: number; signal: null; durationMs: number; timedOut: boolean; aborted: boolean }> {
    this.handedOver.push(path);
    return { exitCode: 0, signal: null, durationMs: 0, timedOut: false, aborted: false };
  }
}

function ended(exit: Partial<SandboxedRunResult>): SandboxedRunResult {
  return { exitCode: 0, signal: null, durationMs: 1, timedOut: false, aborted: false, outOfMemory: false, ...exit };
}
