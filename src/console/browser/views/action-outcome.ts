import { ApiError, enc, type Deployment } from '../api.js';
import { h, replaceChildren } from '../dom.js';
import type { ViewContext } from '../view.js';

// The deployments an action starts are short; a second is often enough to show each phase.
const FOLLOW_MS = 1000;

export interface ActionOutcome {
  el: HTMLElement;
  /**
   * Runs an action. When it answers with a deployment, the box names it and follows its state
   * until it ends; otherwise it shows `done(answer)`. A refusal shows the API's message and hint.
   */
  run<T>(label: string, action: () => Promise<T>, done: (answer: T) => { message: string; deployment?: Deployment }): Promise<void>;
}

/**
 * The box under an application's actions that says what the last one did: the deployment it
 * started and how that ended, or why it was refused. It is a live region, so screen readers
 * hear each change, and `onShowLog` lets the page open the started deployment's log.
 */
export function actionOutcome(ctx: ViewContext, appId: string, onShowLog?: (deployment: Deployment) => void): ActionOutcome {
  const el = h('div', { class: 'outcome', role: 'status', 'aria-live': 'polite', hidden: true });
  let current = 0;

  const show = (kind: 'ok' | 'busy' | 'error', ...children: Array<Node | string | null>) => {
    el.hidden = false;
    el.dataset.kind = kind;
    replaceChildren(el, ...children);
  };

  const follow = async (run: number, label: string, deployment: Deployment) => {
    let d = deployment;
    for (;;) {
      if (run !== current || ctx.signal.aborted) return;
      const ended = d.state !== 'WIP';
      el.dataset.deployment = d.id;
      el.dataset.state = d.state;
      const logButton = onShowLog ? h('button', { type: 'button', class: 'link-button' }, 'Show its log') : null;
      logButton?.addEventListener('click', () => onShowLog!(d));
      show(
        ended ? (d.state === 'OK' ? 'ok' : 'error') : 'busy',
        h('p', {}, `${label}: deployment `, h('code', {}, d.id), ended ? ` ended ${d.state}.` : ` started (${d.phase ?? 'queued'}).`),
        d.message ? h('p', { class: 'message' }, d.message) : null,
        logButton,
      );
      if (ended) {
        ctx.announce(`${label}: deployment ${d.state}.`);
        return;
      }
      await new Promise((resolve) => window.setTimeout(resolve, FOLLOW_MS));
      try {
        d = (await ctx.api.get<{ deployment: Deployment }>(`/v1/apps/${enc(appId)}/deployments/${enc(d.id)}`)).deployment;
      } catch {
        /* asked again next round */
      }
    }
  };

  return {
    el,
    async run(label, action, done) {
      const run = ++current;
      delete el.dataset.deployment;
      delete el.dataset.state;
      show('busy', h('p', {}, `${label}…`));
      let answer: Awaited<ReturnType<typeof action>>;
      try {
        answer = await action();
      } catch (error) {
        if (run !== current) return;
        const hint = error instanceof ApiError ? error.hint : null;
        show('error', h('p', {}, `${label} refused: ${(error as Error).message}`), hint ? h('p', { class: 'hint' }, hint) : null);
        ctx.announce(`${label} refused.`);
        return;
      }
      if (run !== current) return;
      const outcome = done(answer);
      if (outcome.deployment) {
        ctx.announce(`${label}: deployment started.`);
        void follow(run, label, outcome.deployment);
      } else {
        show('ok', h('p', {}, outcome.message));
        ctx.announce(outcome.message);
      }
    },
  };
}
