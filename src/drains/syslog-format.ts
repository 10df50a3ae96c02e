import type { DrainRecord } from './drain-types.js';

/** RFC 5612's enterprise number for documentation: the structured data's id needs one. */
export const SD_ID = 'slipway@32473';
const FACILITY_USER = 1;
const FACILITY_LOCAL7 = 23;
const SEVERITY: Record<string, number> = { err: 3, system: 5, out: 6, access: 6 };

/** Printable US-ASCII without spaces, cut to the RFC's length for the field ('-' when empty). */
function header(value: string | undefined, max: number): string {
  const clean = (value ?? '').replace(/[^\x21-\x7e]/g, '_').slice(0, max);
  return clean === '' ? '-' : clean;
}

/** RFC 5424 §6.3.3: '"', '\' and ']' are escaped in parameter values. */
function param(value: string): string {
  return value.replace(/["\\\]]/g, (c) => `\\${c}`);
}

/**
 * One line as an RFC 5424 message: the app's name as APP-NAME, the instance as PROCID, the
 * stream as MSGID, and app, app id, instance and stream again in the structured data, where
 * receivers index them. Access records go to facility local7 like web servers' logs.
 */
export function syslogMessage(record: DrainRecord, hostname: string): string {
  const facility = record.stream === 'access' ? FACILITY_LOCAL7 : FACILITY_USER;
  const pri = facility * 8 + (SEVERITY[record.stream] ?? 6);
  const sd = [`app="${param(record.app)}"`, `app_id="${param(record.app_id)}"`];
  if (record.instance) sd.push(`instance="${param(record.instance)}"`);
  sd.push(`stream="${param(record.stream)}"`);
  const message = record.line.replace(/[\r\n]+/g, ' ');
  return `<${pri}>1 ${record.time} ${header(hostname, 255)} ${header(record.app, 48)} ${header(record.instance, 128)} ${header(record.stream, 32)} [${SD_ID} ${sd.join(' ')}] ${message}`;
}

/** RFC 6587 §3.4.1 octet counting: the message's length in bytes, a space, the message. */
export function octetCounted(message: string): string {
  return `${Buffer.byteLength(message)} ${message}`;
}
