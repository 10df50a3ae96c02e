import type { Scale } from '../api.js';
import { type Field, field, h, select } from '../dom.js';
import { describeFlavor, FLAVORS } from '../../../core/flavors.js';
import { formOf, MAX_INSTANCES, type ScaleField, type ScaleForm } from '../scale-request.js';

/** The scaling form's fields: read as typed, filled from the scaling saved, one error at a time. */
export interface ScalingFields {
  /** The fields' wrappers, in the form's order. */
  elements: HTMLElement[];
  read(): ScaleForm;
  load(scale: Scale): void;
  /** Marks `name` wrong with `message` and focuses it; every other field is cleared (none: all are). */
  showError(name?: ScaleField, message?: string): void;
}

const count = (id: string, min: number, required = false) =>
  h('input', { type: 'number', id, min, max: MAX_INSTANCES, step: 1, inputmode: 'numeric', required });

const flavorOptions = FLAVORS.map((f) => ({ value: f.name, label: describeFlavor(f) }));

/**
 * Instances, flavour and workers, each as a value and an optional "up to": an empty "up to"
 * (or "The same") keeps the value fixed, as the CLI's `--instances`, `--flavor` and `--workers`.
 */
export function scalingFields(): ScalingFields {
  const all: Record<ScaleField, Field<HTMLInputElement | HTMLSelectElement>> = {
    count: field(
      'Instance count',
      count('instance-count', 0, true),
      `From 1 to ${MAX_INSTANCES}; applies at once: new instances are health-checked before they receive traffic. With autoscaling, the fewest instances: 0 lets the app sleep when idle (its next request waits for it to start).`,
    ),
    upTo: field(
      'Autoscale up to',
      count('max-instances', 1),
      'The most instances the autoscaler starts when the load needs them (quotas count this); empty for a fixed count.',
    ),
    flavorFrom: field(
      'Flavour from',
      select(flavorOptions, { id: 'min-flavor' }),
      'The flavour of each instance; with an "up to", the smallest the autoscaler takes. Applies at the next deployment or restart.',
    ),
    flavorUpTo: field(
      'Flavour up to',
      select([{ value: '', label: 'The same (a fixed flavour)' }, ...flavorOptions], { id: 'max-flavor' }),
      "The largest flavour the autoscaler takes when an instance's memory or CPU needs it (quotas count this).",
    ),
    workersRun: field(
      'Workers run',
      select(
        [
          { value: 'beside', label: 'Beside each instance (the default)' },
          { value: 'apart', label: 'In worker instances of their own' },
        ],
        { id: 'workers-run' },
      ),
      'For an app with workers (CC_WORKER_COMMAND): beside each instance they follow its count; in instances of their own they scale on their own CPU. A move applies at the next deployment or restart.',
    ),
    workerCount: field(
      'Worker instances',
      count('worker-count', 1),
      `From 1 to ${MAX_INSTANCES}, each running all the workers; with an "up to", the fewest.`,
    ),
    workersUpTo: field(
      'Workers up to',
      count('max-workers', 1),
      'The most worker instances the autoscaler starts on their CPU (quotas count this); empty for a fixed number.',
    ),
  };
  const names = Object.keys(all) as ScaleField[];
  // The worker instances' counts only mean something when the workers run apart.
  const showWorkerCounts = () => {
    const apart = all.workersRun.control.value === 'apart';
    all.workerCount.wrapper.hidden = !apart;
    all.workersUpTo.wrapper.hidden = !apart;
  };
  all.workersRun.control.addEventListener('change', showWorkerCounts);

  return {
    elements: names.map((name) => all[name].wrapper),
    read: () => Object.fromEntries(names.map((name) => [name, all[name].control.value])) as unknown as ScaleForm,
    load(scale) {
      const values = formOf(scale);
      for (const name of names) all[name].control.value = values[name];
      showWorkerCounts();
    },
    showError(name, message) {
      for (const other of names) all[other].setError(other === name ? message : undefined);
      if (name) all[name].control.focus();
    },
  };
}
