import { ValidationError } from '../core/errors.js';
import { FLAVORS, flavorNamed } from '../core/flavors.js';
import { rangesOf, type ScalingColumns } from '../core/scaling-ranges.js';
import type { ScalingRanges } from '../store/apps.js';
import { checkInstanceCount } from './instance-count.js';

/** The fields of `PUT /v1/apps/:app/scale` that touch the count and flavour of instances. */
export interface ScalingFields {
  instances?: unknown;
  minInstances?: unknown;
  maxInstances?: unknown;
  flavor?: unknown;
  minFlavor?: unknown;
  maxFlavor?: unknown;
}

const rank = (name: string) => FLAVORS.findIndex((f) => f.name === name);
const clamp = (value: number, min: number, max: number) => Math.min(max, Math.max(min, value));

/**
 * The ranges and current values after a scale request, or undefined when it touches neither.
 * `instances` and `flavor` are fixed values (min = max); a bound given alone keeps the other;
 * the count and flavour now move inside the new range (the count at once, the flavour at the
 * next deployment or restart, as a flavour always did).
 */
export function scalingChange(
  app: ScalingColumns,
  body: ScalingFields,
): { ranges: ScalingRanges; current: { instances: number; flavor: string } } | undefined {
  const given = (['instances', 'minInstances', 'maxInstances', 'flavor', 'minFlavor', 'maxFlavor'] as const).filter(
    (key) => body[key] !== undefined,
  );
  if (given.length === 0) return undefined;
  const before = rangesOf(app);
  const count = body.instances === undefined ? undefined : checkInstanceCount(body.instances);
  // 0 is a minimum only: the app sleeps when idle and wakes on its next request (scale to zero).
  const minInstances =
    body.minInstances === undefined ? (count ?? before.minInstances) : checkInstanceCount(body.minInstances, { zero: true });
  const maxInstances = body.maxInstances === undefined ? (count ?? before.maxInstances) : checkInstanceCount(body.maxInstances);
  if (count !== undefined && (minInstances !== count || maxInstances !== count)) {
    throw new ValidationError(
      '--instances sets a fixed count; it cannot be given with a different --min-instances or --max-instances.',
      'Give --instances <n> for a fixed count, or --min-instances <n> --max-instances <m> for the autoscaler to choose.',
    );
  }
  if (minInstances > maxInstances) {
    throw new ValidationError(
      `The minimum of instances (${minInstances}) is over the maximum (${maxInstances}).`,
      'For example: slipway scale --min-instances 1 --max-instances 4',
    );
  }
  const flavor = body.flavor === undefined ? undefined : flavorNamed(body.flavor).name;
  const minFlavor = body.minFlavor === undefined ? (flavor ?? before.minFlavor) : flavorNamed(body.minFlavor).name;
  const maxFlavor = body.maxFlavor === undefined ? (flavor ?? before.maxFlavor) : flavorNamed(body.maxFlavor).name;
  if (flavor !== undefined && (minFlavor !== flavor || maxFlavor !== flavor)) {
    throw new ValidationError(
      '--flavor sets a fixed flavour; it cannot be given with a different --min-flavor or --max-flavor.',
      'Give --flavor <name> for a fixed flavour, or --min-flavor <name> --max-flavor <name> for a range.',
    );
  }
  if (rank(minFlavor) > rank(maxFlavor)) {
    throw new ValidationError(
      `The smallest flavour (${minFlavor}) is larger than the largest (${maxFlavor}).`,
      'For example: slipway scale --min-flavor nano --max-flavor S',
    );
  }
  const currentFlavor = flavor ?? FLAVORS[clamp(rank(before.flavor), rank(minFlavor), rank(maxFlavor))]!.name;
  return {
    ranges: { minInstances, maxInstances, minFlavor, maxFlavor },
    // The stored count is what serves when awake: never 0 (a sleep is recorded apart).
    current: { instances: count ?? clamp(before.instances, Math.max(1, minInstances), maxInstances), flavor: currentFlavor },
  };
}
