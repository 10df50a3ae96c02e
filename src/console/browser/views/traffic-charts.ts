import type { TrafficMinute } from '../api.js';
import { h, replaceChildren } from '../dom.js';

const SVG = 'http://www.w3.org/2000/svg';
const WIDTH = 240;
const HEIGHT = 64;

function svg<K extends keyof SVGElementTagNameMap>(tag: K, attrs: Record<string, string | number>): SVGElementTagNameMap[K] {
  const el = document.createElementNS(SVG, tag);
  for (const [key, value] of Object.entries(attrs)) el.setAttribute(key, String(value));
  return el;
}

interface Series {
  key: 'requests' | 'errors' | 'p95';
  title: string;
  unit: string;
  value(m: TrafficMinute): number | null;
}

const SERIES: readonly Series[] = [
  { key: 'requests', title: 'Requests per minute', unit: 'requests', value: (m) => m.requests },
  { key: 'errors', title: '5xx answers per minute', unit: '5xx', value: (m) => m.errors },
  { key: 'p95', title: 'p95 latency', unit: 'ms', value: (m) => m.p95_ms },
];

function formatValue(value: number, unit: string): string {
  if (unit === 'ms') return value >= 1000 ? `${(value / 1000).toFixed(2)} s` : `${value < 10 ? value.toFixed(1) : Math.round(value)} ms`;
  return `${value} ${unit}`;
}

/**
 * One small chart: bars for counts, a line for latency, drawn as inline SVG by the console
 * itself (nothing fetched). The figure's label and caption say the same in words: the last
 * minute and the hour's peak, so a screen reader gets what the eye gets.
 */
function chart(series: Series, minutes: readonly TrafficMinute[]): HTMLElement {
  const values = minutes.map(series.value);
  const known = values.filter((v): v is number => v !== null);
  const peak = known.length ? Math.max(...known) : 0;
  const last = values.at(-1) ?? null;
  const total = series.unit === 'ms' ? null : known.reduce((a, b) => a + b, 0);
  const scale = peak > 0 ? (HEIGHT - 4) / peak : 0;
  const step = WIDTH / Math.max(1, minutes.length);
  const summary = `${series.title}, last hour: ${last === null ? 'no requests in the last minute' : `${formatValue(last, series.unit)} in the last minute`}, peak ${formatValue(peak, series.unit)}${total === null ? '' : `, ${total} in all`}.`;
  const picture = svg('svg', {
    viewBox: `0 0 ${WIDTH} ${HEIGHT}`,
    width: '100%',
    height: HEIGHT,
    role: 'img',
    'aria-label': summary,
    preserveAspectRatio: 'none',
    class: `chart chart-${series.key}`,
  });
  picture.append(svg('line', { x1: 0, y1: HEIGHT - 0.5, x2: WIDTH, y2: HEIGHT - 0.5, class: 'chart-axis' }));
  if (series.unit === 'ms') {
    const points = values.map((v, i) => (v === null ? null : `${(i + 0.5) * step},${HEIGHT - 2 - v * scale}`));
    // Minutes without requests break the line: no latency was measured then.
    let run: string[] = [];
    const flush = () => {
      if (run.length === 1)
        picture.append(svg('circle', { cx: run[0]!.split(',')[0]!, cy: run[0]!.split(',')[1]!, r: 1.5, class: 'chart-mark' }));
      else if (run.length > 1) picture.append(svg('polyline', { points: run.join(' '), class: 'chart-line' }));
      run = [];
    };
    for (const point of points) {
      if (point === null) flush();
      else run.push(point);
    }
    flush();
  } else {
    values.forEach((v, i) => {
      if (!v) return;
      const height = Math.max(1, v * scale);
      picture.append(
        svg('rect', {
          x: i * step + 0.5,
          y: HEIGHT - height,
          width: Math.max(1, step - 1),
          height,
          class: `chart-bar${series.key === 'errors' ? ' chart-bar-error' : ''}`,
        }),
      );
    });
  }
  return h(
    'figure',
    { class: 'chart-figure', 'data-chart': series.key, 'data-last': last ?? '', 'data-peak': peak, 'data-total': total ?? '' },
    h(
      'figcaption',
      {},
      h('span', { class: 'chart-title' }, series.title),
      h('span', { class: 'chart-value' }, last === null ? '—' : formatValue(last, series.unit)),
    ),
    picture,
    h('p', { class: 'chart-scale meta' }, `peak ${formatValue(peak, series.unit)} · 60 min ago → now`),
  );
}

/** Draws the three charts of the last hour into `into`. */
export function drawTrafficCharts(into: HTMLElement, minutes: readonly TrafficMinute[]): void {
  replaceChildren(into, ...SERIES.map((s) => chart(s, minutes)));
}
