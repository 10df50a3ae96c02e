import { enc, type LogEntry } from '../api.js';
import { logText } from './log-text.js';
import { h, replaceChildren } from '../dom.js';
import type { Route } from '../routes.js';
import type { ViewContext } from '../view.js';
import { appFrame } from './app-frame.js';

/** Stored lines shown when the page opens. */
const TAIL_LINES = 200;
/** Lines kept on the page: a chatty app must not grow the tab's memory without end. */
const MAX_LINES = 5000;

function timeOf(entry: LogEntry): string {
  return entry.time ? entry.time.slice(11, 19) : '';
}

/**
 * The application's output (what `slipway logs` shows): the last lines, then new ones live as
 * the instances write them. It scrolls along while the reader is at the bottom.
 */
export async function appLogsView(ctx: ViewContext, route: Extract<Route, { page: 'app-logs' }>): Promise<void> {
  const { app, body } = await appFrame(ctx, route.app, 'app-logs');
  const liveBadge = h('span', { class: 'badge live', hidden: true }, 'Live');
  const lines = h('pre', { class: 'log tall', role: 'log', 'aria-labelledby': 'runtime-log-title', tabindex: 0, 'data-live': 'false' });
  const end = h('p', { class: 'log-end', role: 'status' });
  const reconnect = h('button', { type: 'button', class: 'secondary', hidden: true }, 'Follow again');
  replaceChildren(
    body,
    h(
      'section',
      { class: 'card', 'aria-labelledby': 'runtime-log-title' },
      h('div', { class: 'section-head' }, h('h2', { id: 'runtime-log-title' }, 'Application output'), liveBadge),
      h('p', { class: 'help' }, `The last ${TAIL_LINES} lines the instances, workers and the platform wrote, then new ones as they come.`),
      lines,
      end,
      reconnect,
    ),
  );

  const append = (entry: LogEntry) => {
    const atBottom = lines.scrollHeight - lines.scrollTop - lines.clientHeight < 8;
    const cls = entry.stream === 'err' || entry.stream === 'stderr' ? 'line stderr' : entry.stream === 'system' ? 'line system' : 'line';
    lines.append(h('span', { class: cls }, h('span', { class: 'time' }, timeOf(entry)), ' ', ...logText(entry.line ?? ''), '\n'));
    while (lines.childElementCount > MAX_LINES) lines.firstElementChild!.remove();
    if (atBottom) lines.scrollTop = lines.scrollHeight;
  };

  const follow = () => {
    lines.replaceChildren();
    lines.dataset.live = 'true';
    liveBadge.hidden = false;
    reconnect.hidden = true;
    end.textContent = 'Following: new lines appear as they are written.';
    ctx.api
      .stream(`/v1/apps/${enc(app.id)}/logs?follow=1&lines=${TAIL_LINES}`, append, ctx.signal)
      .then(() => 'The daemon closed the log stream.')
      .catch((error: Error) => `The log stopped: ${error.message}`)
      .then((why) => {
        if (ctx.signal.aborted) return;
        lines.dataset.live = 'false';
        liveBadge.hidden = true;
        end.textContent = why;
        reconnect.hidden = false;
      });
  };
  reconnect.addEventListener('click', () => {
    follow();
    lines.focus();
  });
  follow();
}
