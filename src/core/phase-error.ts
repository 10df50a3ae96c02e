import { FixableError } from './errors.js';

/** Where a deployment is: waiting, one of its phases, or finished. */
export type DeploymentPhase = 'queued' | 'receive' | 'build' | 'release' | 'run' | 'healthcheck' | 'done';

/**
 * A deployment failure tagged with the phase that broke (receive, build, release, run,
 * healthcheck), so the log and the deployment record say which one it was.
 */
export class PhaseError extends FixableError {
  constructor(
    readonly phase: DeploymentPhase,
    message: string,
    hint?: string,
  ) {
    super(message, hint);
  }
}

/** Thrown where a cancelled deployment stops (its phase's sandbox was killed, or it was between two). */
export class DeploymentCancelled extends Error {}

/** How a failed deployment is told: the phase blamed, the message and hint with secrets hidden. */
export interface DeploymentFailure {
  phase: DeploymentPhase;
  message: string;
  /** The deploy log's lines: `==> [build] Build failed: …`, then `Hint: …` when there is one. */
  lines: string[];
}

/**
 * A PhaseError names its own phase; anything else is blamed on the phase the deployment was in.
 * `redact` hides the app's secrets, which a command's error may quote.
 */
export function describeFailure(error: unknown, current: DeploymentPhase | null, redact: (text: string) => string): DeploymentFailure {
  const phase = error instanceof PhaseError ? error.phase : (current ?? 'build');
  const message = redact((error as Error).message);
  const title = phase === 'healthcheck' ? 'Health check' : phase[0]!.toUpperCase() + phase.slice(1);
  const lines = [`==> [${phase}] ${title} failed: ${message}`];
  if (error instanceof FixableError && error.hint) lines.push(`Hint: ${redact(error.hint)}`);
  return { phase, message, lines };
}
