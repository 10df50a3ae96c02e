import { FixableError } from '../core/errors.js';
import type { DeploymentPhase } from '../store/deployments.js';

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
