import { CliError } from './errors.js';
import { parseEnvFile } from './env-file-parse.js';

export async function readAll(stream: NodeJS.ReadableStream): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk));
  return Buffer.concat(chunks).toString('utf8');
}

/** `[{"name","value"}]` from JSON input, checked for shape before anything is sent. */
export function parseJsonVariables(text: string): Array<{ name: string; value: string }> {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new CliError(`Standard input is not valid JSON: ${(error as Error).message}.`, 'Give [{"name": "...", "value": "..."}].');
  }
  if (!Array.isArray(data) || !data.every((e) => e && typeof e.name === 'string' && typeof e.value === 'string')) {
    throw new CliError('Standard input must be a JSON array of {"name": "...", "value": "..."} objects.');
  }
  return data.map((e: { name: string; value: string }) => ({ name: e.name, value: e.value }));
}

/** NAME="value" lines as `slipway env` and the reference tool write them (see env-file-parse.ts). */
export function parseDotenvVariables(text: string): Array<{ name: string; value: string }> {
  return parseEnvFile(text).variables;
}
