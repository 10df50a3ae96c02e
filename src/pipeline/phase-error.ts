import type { DeploymentPhase } from '../store/deployments.js';

/**
 * A deployment failure tagged with the phase that broke (receive, build, release, run,
 * healthcheck), so the log and the deployment record say which one it was.
 */
export class PhaseError extends Error {
  constructor(readonly phase: DeploymentPhase, message: string, readonly hint?: string) {
    super(message);
    this.name = 'PhaseError';
  }
}
