import type { App } from '../api.js';
import { enc } from '../api.js';
import { h, replaceChildren } from '../dom.js';
import { every, type ViewContext } from '../view.js';

/** A drain as the API shows it (GET /v1/apps/:app/drains). */
interface Drain {
  id: string;
  type: string;
  url: string;
  with_access_logs: boolean;
  state: 'ok' | 'waiting' | 'failing' | 'disabled' | 'unknown';
  waiting: number;
  lag_seconds: number;
  dropped: number;
  last_error: string | null;
}

const REFRESH_MS = 5000;
/** Samples kept per drain while the page is open: five minutes at one per refresh. */
const SAMPLES = 60;
const SVG = 'http://www.w3.org/2000/svg';
const WIDTH = 240;
const HEIGHT = 40;
const BADGE: Record<Drain['state'], string> = {
  ok: 'state-ok',
  waiting: 'state-wip',
  failing: 'state-failed',
  disabled: '',
  unknown: '',
};

function lag(seconds: number): string {
  if (seconds < 1) return 'none';
  if (seconds < 120) return `${Math.round(seconds)} s`;
  if (seconds < 7200) return `${Math.round(seconds / 60)} min`;
  return `${Math.round(seconds / 3600)} h`;
}

/** The lines waiting over the last minutes, as bars: a drain falling behind is seen at a glance. */
function waitingChart(samples: readonly number[], drain: Drain): SVGSVGElement {
  const peak = Math.max(1, ...samples);
  const step = WIDTH / SAMPLES;
  const picture = document.createElementNS(SVG, 'svg');
  for (const [key, value] of Object.entries({
    viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
    width: '100%',
    height: HEIGHT,
    role: 'img',
    class: 'chart',
  }))
    picture.setAttribute(key, String(value));
  picture.setAttribute('aria-label', `Lines waiting over the last minutes: ${drain.waiting} now, at most ${Math.max(0, ...samples)}.`);
  samples.forEach((value, i) => {
    if (value <= 0) return;
    const height = Math.max(1, (value / peak) * (HEIGHT - 2));
    const bar = document.createElementNS(SVG, 'rect');
    const x = (SAMPLES - samples.length + i) * step;
    for (const [key, v] of Object.entries({
      x,
      y: HEIGHT - height,
      width: Math.max(1, step - 1),
      height,
      class: drain.state === 'failing' ? 'chart-bar-error' : 'chart-bar',
    }))
      bar.setAttribute(key, String(v));
    picture.append(bar);
  });
  return picture;
}

/**
 * The app's log drains (`slipway drain`): each one's state, lag, lines waiting and dropped, and
 * a small chart of the lines waiting while the page is open. Refreshed every few seconds.
 */
export function drainsCard(ctx: ViewContext, app: App): HTMLElement {
  const list = h('div', { class: 'drains' });
  const note = h('p', { class: 'meta', role: 'status' });
  const history = new Map<string, number[]>();
  const draw = (drains: Drain[]) => {
    if (drains.length === 0) {
      replaceChildren(list);
      note.textContent = 'No drains: add one with `slipway drain create <type> <url>`.';
      return;
    }
    note.textContent = '';
    for (const id of [...history.keys()]) if (!drains.some((d) => d.id === id)) history.delete(id);
    replaceChildren(
      list,
      ...drains.map((d) => {
        const samples = history.get(d.id) ?? [];
        samples.push(d.waiting);
        if (samples.length > SAMPLES) samples.shift();
        history.set(d.id, samples);
        return h(
          'figure',
          { class: 'chart-figure', 'data-drain': d.id },
          h(
            'figcaption',
            {},
            h('span', {}, `${d.type} `, h('code', {}, d.url), d.with_access_logs ? ' + access log' : ''),
            h('span', { class: `badge ${BADGE[d.state]}`, 'data-state': d.state }, d.state),
          ),
          waitingChart(samples, d),
          h(
            'p',
            { class: 'chart-scale meta' },
            `Lag ${lag(d.lag_seconds)} · ${d.waiting} waiting · ${d.dropped} dropped`,
            d.last_error ? ` · last error: ${d.last_error}` : '',
          ),
        );
      }),
    );
  };
  const refresh = async () => {
    try {
      const { drains } = await ctx.api.get<{ drains: Drain[] }>(`/v1/apps/${enc(app.id)}/drains`);
      if (!ctx.signal.aborted) draw(drains);
    } catch (error) {
      if (!ctx.signal.aborted) note.textContent = `The drains could not be read: ${(error as Error).message}`;
    }
  };
  void refresh();
  every(REFRESH_MS, ctx.signal, refresh);
  return h(
    'section',
    { class: 'card', id: 'drains', 'aria-labelledby': 'drains-title' },
    h('h2', { id: 'drains-title' }, 'Log drains'),
    list,
    note,
  );
}
