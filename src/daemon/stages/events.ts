import type { Lifecycle } from '../lifecycle.js';
import type { Store } from '../../store/store.js';
import type { Deployment } from '../../store/deployments.js';
import type { AppRow } from '../../store/apps.js';
import type { PlatformEventType } from '../../core/platform-events.js';
import { PlatformEvents } from '../../notifications/platform-event-hub.js';
import { AUTOSCALING_CAUSE } from '../../core/scaling-ranges.js';
import type { AppliedDecision } from '../../autoscaling/autoscaler.js';

/**
 * A liveness replacement and an autoscaling decision are recorded as deployment rows (the app's
 * activity); they are told as instance.replaced and scaling.up/down instead.
 */
const isReplacement = (d: Deployment) => /stopped answering/.test(d.cause) || d.cause === AUTOSCALING_CAUSE;

const FINISHED: Record<string, PlatformEventType> = {
  OK: 'deployment.succeeded',
  FAIL: 'deployment.failed',
  CANCELLED: 'deployment.cancelled',
};

/**
 * The platform's event hub, fed with what the lifecycle hub tells: deployments starting and
 * ending, instances crashing and being replaced, the autoscaler's decisions. Cron runs, drains and backups publish to it
 * themselves.
 */
export function platformEvents(store: Store): {
  events: PlatformEvents;
  deploymentStarted(app: AppRow, deployment: Deployment): void;
  deploymentFinished(deployment: Deployment): void;
  instanceCrashed(appId: string): void;
  instanceReplaced(appId: string): void;
  scaled(decision: AppliedDecision): void;
} {
  const events = new PlatformEvents();
  const appName = (appId: string) => store.apps.byId(appId)?.name ?? appId;
  return {
    events,
    deploymentFinished(d) {
      const type = FINISHED[d.state];
      if (!type || isReplacement(d)) return;
      const how =
        d.state === 'OK' ? 'succeeded' : d.state === 'FAIL' ? `failed${d.phase ? ` in the ${d.phase} phase` : ''}` : 'was cancelled';
      events.publish({
        type,
        appId: d.app_id,
        summary: `Deployment ${d.id} of ${appName(d.app_id)} ${how}${d.message ? `: ${d.message}` : ''}`,
        details: {
          deployment_id: d.id,
          commit: d.commit_sha,
          cause: d.cause,
          state: d.state,
          phase: d.phase,
          message: d.message,
          user_id: d.user_id,
        },
      });
    },
    deploymentStarted(app, d) {
      if (isReplacement(d)) return;
      events.publish({
        type: 'deployment.started',
        appId: app.id,
        summary: `Deployment ${d.id} of ${app.name} started (commit ${d.commit_sha.slice(0, 12)}, ${d.cause})`,
        details: { deployment_id: d.id, commit: d.commit_sha, cause: d.cause, user_id: d.user_id },
      });
    },
    instanceCrashed(appId) {
      events.publish({
        type: 'instance.crashed',
        appId,
        summary: `An instance of ${appName(appId)} crashed and is being restarted`,
        details: {},
      });
    },
    instanceReplaced(appId) {
      events.publish({
        type: 'instance.replaced',
        appId,
        summary: `An instance of ${appName(appId)} stopped answering its health check and was replaced`,
        details: {},
      });
    },
    scaled(d) {
      const flavor = d.flavor ? `${d.flavor.from} → ${d.flavor.to}` : undefined;
      const how = flavor
        ? `scaled ${d.direction}: ${flavor}`
        : `scaled ${d.direction === 'up' ? 'out' : 'in'}: ${d.from} → ${d.to} ${d.target === 'workers' ? 'workers' : 'instances'}`;
      events.publish({
        type: d.direction === 'up' ? 'scaling.up' : 'scaling.down',
        appId: d.appId,
        at: d.at,
        summary: `${appName(d.appId)} ${how}: ${d.reason}${d.outcome === 'failed' ? ' (failed)' : ''}`,
        details: {
          from: d.from,
          to: d.to,
          ...(d.flavor ? { from_flavor: d.flavor.from, to_flavor: d.flavor.to } : {}),
          reason: d.reason,
          outcome: d.outcome,
          ...(d.target === 'workers' ? { target: 'workers' } : {}),
        },
      });
    },
  };
}

/**
 * What people are told about (webhooks, e-mail): deployments, instances, cron runs, drains.
 * Needs: `store`. Provides: `told`, the event hub and what the store and the pipeline tell it.
 */
export function events({ store, lifecycle }: { store: Store; lifecycle: Lifecycle }) {
  const told = platformEvents(store);
  lifecycle.on('deployment started', ({ app, deployment }) => told.deploymentStarted(app, deployment));
  lifecycle.on('deployment finished', ({ deployment }) => told.deploymentFinished(deployment));
  lifecycle.on('instance restarted', ({ appId }) => told.instanceCrashed(appId));
  lifecycle.on('instance replaced', ({ appId }) => told.instanceReplaced(appId));
  lifecycle.on('app scaled', ({ decision }) => told.scaled(decision));
  return { told };
}
