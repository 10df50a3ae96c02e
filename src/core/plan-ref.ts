/**
 * Where `slipway plan` sends a commit never pushed, to plan it before the first push: the
 * receiver queues deployments for master only, so a commit here is stored and never deployed.
 * The CLI and the receiver both name it.
 */
export const PLAN_REF = 'refs/slipway/plan';
