import { colouredRuns } from '../../../shared/terminal-colours.js';
import { h } from '../dom.js';

/**
 * A log line as the console shows it: the colours the program wrote (Play, Spring, npm) as
 * classes of the stylesheet, other escape sequences dropped. Text only: nothing of the line
 * becomes markup.
 */
export function logText(line: string): Array<string | HTMLSpanElement> {
  return colouredRuns(line).map((run) => (run.classes.length === 0 ? run.text : h('span', { class: run.classes.join(' ') }, run.text)));
}
