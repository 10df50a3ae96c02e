import { DEFAULT_INSTANCE_FLAVOR, flavorNamed } from './flavors.js';

/** What an app's record says of its scaling (the store's columns, structurally). */
export interface ScalingColumns {
  instances?: number;
  flavor?: string;
  min_instances?: number | null;
  max_instances?: number | null;
  min_flavor?: string | null;
  max_flavor?: string | null;
  /** 1: the minimum is 0 (the column min_instances checks 1 to 40 and then holds 1). */
  scale_to_zero?: number;
  /** The range of worker instances and their count (null: no range; workers beside each instance). */
  min_workers?: number | null;
  max_workers?: number | null;
  worker_instances?: number | null;
}

/** An app's worker instances: their range and the count now, when it has a range of workers of its own. */
export interface WorkerRange {
  count: number;
  min: number;
  max: number;
}

/**
 * The app's range of worker instances, or undefined when it has none: its workers then run beside
 * each of its instances (the reference's way). Quotas count the maximum, as for instances.
 */
export function workerRangeOf(app: ScalingColumns): WorkerRange | undefined {
  if (app.max_workers === null || app.max_workers === undefined) return undefined;
  const max = app.max_workers;
  const min = Math.min(max, app.min_workers ?? max);
  return { count: Math.min(max, Math.max(min, app.worker_instances ?? min)), min, max };
}

export interface InstanceRanges {
  /** The count serving now (the autoscaler moves it inside the range). */
  instances: number;
  minInstances: number;
  maxInstances: number;
  /** The flavour of its instances now. */
  flavor: string;
  minFlavor: string;
  maxFlavor: string;
}

/**
 * An app's ranges: a bound never set is the current value (a fixed count or flavour, as before
 * ranges existed). Quotas count the maxima: they are what the autoscaler may reach.
 */
export function rangesOf(app: ScalingColumns): InstanceRanges {
  const instances = app.instances ?? 1;
  const flavor = flavorNamed(app.flavor ?? DEFAULT_INSTANCE_FLAVOR).name;
  return {
    instances,
    minInstances: app.scale_to_zero ? 0 : (app.min_instances ?? instances),
    maxInstances: app.max_instances ?? instances,
    flavor,
    minFlavor: app.min_flavor ?? flavor,
    maxFlavor: app.max_flavor ?? flavor,
  };
}

/** Whether the autoscaler has anything to choose for the app (a range of counts or flavours). */
export function autoscales(app: ScalingColumns): boolean {
  const r = rangesOf(app);
  return r.minInstances < r.maxInstances || r.minFlavor !== r.maxFlavor;
}

/** The cause of an autoscaling decision's record in the app's activity (it is no deployment: no deployment.* event). */
export const AUTOSCALING_CAUSE = 'autoscaling';
