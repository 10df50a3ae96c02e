import { CronExpressionParser, type CronExpression } from 'cron-parser';

/**
 * The five standard cron fields, evaluated in UTC (docs/behaviour.md, Cron jobs). cron-parser
 * computes the times; the standard syntax is checked here first, because the parser also
 * takes extensions crontab does not know (seconds, L, W, #, ?, H) and its messages quote the
 * text, which the daemon read as root and never quotes back.
 */

interface FieldRule {
  name: string;
  min: number;
  max: number;
  names?: readonly string[];
}

const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];
const DAYS = ['sun', 'mon', 'tue', 'wed', 'thu', 'fri', 'sat'];

export const CRON_FIELDS: readonly FieldRule[] = [
  { name: 'minute', min: 0, max: 59 },
  { name: 'hour', min: 0, max: 23 },
  { name: 'day of month', min: 1, max: 31 },
  { name: 'month', min: 1, max: 12, names: MONTHS },
  { name: 'day of week', min: 0, max: 7, names: DAYS },
];

const ORDINAL = ['1st', '2nd', '3rd', '4th', '5th'];

/** Why a schedule is refused: names the field, never quotes it. */
export class ScheduleError extends Error {}

function value(text: string, rule: FieldRule, where: string): number {
  const named = rule.names?.indexOf(text.toLowerCase()) ?? -1;
  if (named >= 0) return rule.names === MONTHS ? named + 1 : named;
  if (!/^\d{1,2}$/.test(text)) {
    const names = rule.names ? ` or names (${rule.names[0]}, ${rule.names[1]}…)` : '';
    throw new ScheduleError(`${where} holds something other than numbers${names}, *, -, / and commas`);
  }
  const n = Number(text);
  if (n < rule.min || n > rule.max) throw new ScheduleError(`${where} has a value out of its range ${rule.min} to ${rule.max}`);
  return n;
}

/** Checks one field against crontab's syntax: `*`, values, ranges, lists and steps. */
function checkField(text: string, index: number): void {
  const rule = CRON_FIELDS[index]!;
  const where = `the ${rule.name} field (${ORDINAL[index]})`;
  for (const part of text.split(',')) {
    const [range, step, extra] = part.split('/');
    if (extra !== undefined) throw new ScheduleError(`${where} has more than one / in an element`);
    if (step !== undefined && (!/^\d{1,3}$/.test(step) || Number(step) === 0))
      throw new ScheduleError(`${where} has a step (after /) that is not a whole number from 1 up`);
    if (range === '*') continue;
    if (range === undefined || range === '') throw new ScheduleError(`${where} has an empty element`);
    const bounds = range.split('-');
    if (bounds.length > 2) throw new ScheduleError(`${where} has a range with more than one -`);
    const low = value(bounds[0]!, rule, where);
    if (bounds.length === 2 && value(bounds[1]!, rule, where) < low) throw new ScheduleError(`${where} has a range that runs backwards`);
  }
}

/** A checked schedule: five fields, single-spaced. */
export function parseSchedule(fields: readonly string[]): { schedule: string; expression: CronExpression } {
  if (fields.length !== 5) throw new ScheduleError(`a schedule has five fields, not ${fields.length}`);
  fields.forEach(checkField);
  const schedule = fields.join(' ');
  let expression: CronExpression;
  try {
    expression = CronExpressionParser.parse(schedule.toLowerCase(), { tz: 'UTC', currentDate: new Date(0) });
    expression.next();
  } catch {
    // Each field passed its own check: what is left is a combination no date matches (31 February).
    throw new ScheduleError('no date matches the schedule (a day of month the month never has?)');
  }
  return { schedule, expression };
}

function parsed(schedule: string, from: Date): CronExpression {
  return CronExpressionParser.parse(schedule.toLowerCase(), { tz: 'UTC', currentDate: from });
}

/** The first time after `after` (strictly) the schedule is due. */
export function nextTime(schedule: string, after: Date): Date {
  return parsed(schedule, after).next().toDate();
}

/**
 * The times in (`after`, `upTo`] the schedule is due, oldest first, at most `limit` of them
 * (with the count of all of them, so a long outage is told by its number, not listed).
 */
export function dueTimes(schedule: string, after: Date, upTo: Date, limit = 100): { times: Date[]; count: number } {
  const expression = parsed(schedule, after);
  const times: Date[] = [];
  let count = 0;
  for (;;) {
    const next = expression.next().toDate();
    if (next.getTime() > upTo.getTime()) break;
    count++;
    if (times.length < limit) times.push(next);
    // A schedule due every minute over a year's outage is half a million steps: stop counting there.
    if (count >= 100_000) break;
  }
  return { times, count };
}

/** The start of the minute holding `time` (UTC minutes are the schedules' resolution). */
export function minuteOf(time: Date | number): Date {
  const ms = typeof time === 'number' ? time : time.getTime();
  return new Date(ms - (ms % 60_000));
}
