/**
 * HAProxy's runtime API over its admin unix socket (mode 0600, in the router's work folder):
 * one connection per command, which HAProxy closes after answering. A payload (map entries,
 * a certificate) follows the command as `<<` and ends with an empty line.
 */
import { connect } from 'node:net';

export class RuntimeApiError extends Error {}

export function runtimeCommand(socketPath: string, command: string, payload?: string, timeoutMs = 10_000): Promise<string> {
  if (/[\n\r;]/.test(command))
    return Promise.reject(new RuntimeApiError(`Refusing a runtime API command with a line break or ";": ${JSON.stringify(command)}`));
  if (payload !== undefined && /\n\s*\n/.test(payload.trim())) {
    return Promise.reject(new RuntimeApiError('Refusing a runtime API payload with an empty line (it would end the payload early).'));
  }
  const text = payload === undefined ? `${command}\n` : `${command} <<\n${payload.trim()}\n\n`;
  return new Promise((resolve, reject) => {
    const socket = connect(socketPath);
    let answer = '';
    const timer = setTimeout(
      () =>
        socket.destroy(new RuntimeApiError(`HAProxy did not answer "${command.split(' ').slice(0, 3).join(' ')}" within ${timeoutMs} ms.`)),
      timeoutMs,
    );
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    socket.on('end', () => {
      clearTimeout(timer);
      resolve(answer.trim());
    });
    socket.write(text);
  });
}

/** Runs a command whose success HAProxy reports with a known phrase; anything else is an error naming the command. */
export async function expectAnswer(socketPath: string, command: string, success: RegExp, payload?: string): Promise<string> {
  const answer = await runtimeCommand(socketPath, command, payload);
  if (!success.test(answer)) {
    throw new RuntimeApiError(
      `HAProxy refused "${command.split(' ').slice(0, 4).join(' ')}": ${answer.split('\n').slice(0, 3).join(' ') || 'no answer'}`,
    );
  }
  return answer;
}
