/**
 * The scaling page's form read into the body of `PUT /v1/apps/:app/scale`, with only what
 * differs from the scaling saved, or the first field that is wrong and what to type instead.
 * An empty "up to" (or the same value) means a fixed count or flavour, as `--instances`,
 * `--flavor` and `--workers` do; a larger one a range the autoscaler chooses in.
 */
import type { Scale } from './api.js';
import { FLAVORS } from '../../core/flavors.js';

export const MAX_INSTANCES = 40;
/** What the API takes in `workers` to run the workers beside each instance again (`--workers default`). */
export const WORKERS_BESIDE = 'default';

/** The form's fields as typed. */
export interface ScaleForm {
  count: string;
  /** The most instances; '' for a fixed count. */
  upTo: string;
  flavorFrom: string;
  /** The largest flavour; '' for a fixed flavour (the same as `flavorFrom`). */
  flavorUpTo: string;
  /** Where the workers run: beside each instance (the default), or in worker instances of their own. */
  workersRun: 'beside' | 'apart';
  workerCount: string;
  /** The most worker instances; '' for a fixed number. */
  workersUpTo: string;
}

export type ScaleField = keyof ScaleForm;

export interface ScaleBody {
  instances?: number;
  minInstances?: number;
  maxInstances?: number;
  flavor?: string;
  minFlavor?: string;
  maxFlavor?: string;
  workers?: number | typeof WORKERS_BESIDE;
  minWorkers?: number;
  maxWorkers?: number;
}

export type ScaleRequest = { ok: true; body: ScaleBody } | { ok: false; field: ScaleField; message: string };

class Refusal extends Error {
  constructor(
    readonly field: ScaleField,
    message: string,
  ) {
    super(message);
  }
}

const WHOLE = /^\d+$/;
const rank = (name: string) => FLAVORS.findIndex((f) => f.name === name);

/** The form's values for the scaling saved: an "up to" stays empty while the value is fixed. */
export function formOf(scale: Scale): ScaleForm {
  return {
    count: String(scale.min_instances),
    upTo: scale.min_instances === scale.max_instances ? '' : String(scale.max_instances),
    flavorFrom: scale.min_flavor,
    flavorUpTo: scale.min_flavor === scale.max_flavor ? '' : scale.max_flavor,
    workersRun: scale.workers ? 'apart' : 'beside',
    workerCount: String(scale.workers?.min ?? 1),
    workersUpTo: scale.workers && scale.workers.min !== scale.workers.max ? String(scale.workers.max) : '',
  };
}

/** The change the form asks for against `saved`; an empty body when it asks for none. */
export function scaleRequest(form: ScaleForm, saved: Scale): ScaleRequest {
  try {
    return { ok: true, body: { ...instancesChange(form, saved), ...flavorChange(form, saved), ...workersChange(form, saved) } };
  } catch (error) {
    if (!(error instanceof Refusal)) throw error;
    return { ok: false, field: error.field, message: error.message };
  }
}

function instancesChange(form: ScaleForm, saved: Scale): ScaleBody {
  const raw = form.count.trim();
  const rawMax = form.upTo.trim();
  // 0 is a minimum only (scale to zero): it needs a larger "up to".
  const lowest = WHOLE.test(rawMax) && Number(rawMax) > 0 ? 0 : 1;
  const wanted = Number(raw);
  if (!WHOLE.test(raw) || wanted < lowest || wanted > MAX_INSTANCES) {
    throw new Refusal(
      'count',
      `The instance count is a whole number from ${lowest} to ${MAX_INSTANCES} (0 with an "up to" of 1 or more: the app sleeps when idle).`,
    );
  }
  if (rawMax !== '' && (!WHOLE.test(rawMax) || Number(rawMax) > MAX_INSTANCES)) {
    throw new Refusal('upTo', `The most instances is a whole number up to ${MAX_INSTANCES}, or empty for a fixed count.`);
  }
  const most = rawMax === '' ? wanted : Number(rawMax);
  if (most < wanted) {
    throw new Refusal(
      'upTo',
      `"Autoscale up to" (${most}) is under the instance count (${wanted}): give ${wanted} or more for the autoscaler to choose, or leave it empty for a fixed count.`,
    );
  }
  if (most > wanted) {
    return wanted === saved.min_instances && most === saved.max_instances ? {} : { minInstances: wanted, maxInstances: most };
  }
  return wanted === saved.instances && saved.min_instances === saved.max_instances ? {} : { instances: wanted };
}

function flavorChange(form: ScaleForm, saved: Scale): ScaleBody {
  const from = form.flavorFrom;
  const upTo = form.flavorUpTo === '' ? from : form.flavorUpTo;
  if (rank(from) < 0) throw new Refusal('flavorFrom', `Choose a flavour: ${FLAVORS.map((f) => f.name).join(', ')}.`);
  if (rank(upTo) < 0) throw new Refusal('flavorUpTo', `Choose a flavour: ${FLAVORS.map((f) => f.name).join(', ')}.`);
  if (rank(upTo) < rank(from)) {
    throw new Refusal(
      'flavorUpTo',
      `"Flavour from" (${from}) is larger than "Flavour up to" (${upTo}): choose an "up to" of ${from} or larger, or "The same" for a fixed flavour.`,
    );
  }
  if (from === upTo) {
    const fixedAlready = saved.min_flavor === from && saved.max_flavor === from && saved.flavor === from;
    return fixedAlready ? {} : { flavor: from };
  }
  return from === saved.min_flavor && upTo === saved.max_flavor ? {} : { minFlavor: from, maxFlavor: upTo };
}

function workersChange(form: ScaleForm, saved: Scale): ScaleBody {
  if (form.workersRun === 'beside') return saved.workers ? { workers: WORKERS_BESIDE } : {};
  const raw = form.workerCount.trim();
  const rawMax = form.workersUpTo.trim();
  const fewest = Number(raw);
  if (!WHOLE.test(raw) || fewest < 1 || fewest > MAX_INSTANCES) {
    throw new Refusal('workerCount', `The number of worker instances is a whole number from 1 to ${MAX_INSTANCES}.`);
  }
  if (rawMax !== '' && (!WHOLE.test(rawMax) || Number(rawMax) > MAX_INSTANCES)) {
    throw new Refusal('workersUpTo', `The most worker instances is a whole number up to ${MAX_INSTANCES}, or empty for a fixed number.`);
  }
  const most = rawMax === '' ? fewest : Number(rawMax);
  if (most < fewest) {
    throw new Refusal(
      'workersUpTo',
      `"Workers up to" (${most}) is under the number of worker instances (${fewest}): give ${fewest} or more for the autoscaler to choose, or leave it empty for a fixed number.`,
    );
  }
  if (saved.workers?.min === fewest && saved.workers.max === most) return {};
  return most === fewest ? { workers: fewest } : { minWorkers: fewest, maxWorkers: most };
}
