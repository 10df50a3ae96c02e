/** Variables whose values are secrets whatever their content. */
const SECRET_NAMES = /(TOKEN|PASSWORD|SECRET|PRIVATE_KEY|BASIC_AUTH|_KEY$|_URI$|_URL$)/;

/** Values of the variables that must never reach a log. */
export function secretValues(env: Record<string, string>): string[] {
  const values: string[] = [];
  for (const [name, value] of Object.entries(env)) {
    if (!SECRET_NAMES.test(name) || value.length < 4) continue;
    values.push(value);
    // Basic auth is also written base64-encoded into .npmrc; hide that form too.
    if (name === 'CC_NPM_BASIC_AUTH') {
      values.push(Buffer.from(value).toString('base64'));
      // Tools may echo the password part alone (e.g. a URL with user:password).
      const password = value.slice(value.indexOf(':') + 1);
      if (value.includes(':') && password.length >= 4) values.push(password);
    }
    // A URL's password part can be echoed alone by tools.
    const password = /^[a-z]+:\/\/[^:/@]*:([^@]+)@/i.exec(value)?.[1];
    if (password && password.length >= 4) values.push(password);
    // Multi-line values (private keys) are printed line by line; a key pasted on one line with
    // literal "\n" separators is written out with real line breaks (build-ssh-key.ts).
    for (const line of value.split(/\r?\n|\\n/)) if (line.trim().length >= 16) values.push(line.trim());
  }
  return [...new Set(values)].sort((a, b) => b.length - a.length);
}

/** Replaces every secret value in a line by a marker. */
export function makeRedactor(secrets: string[]): (line: string) => string {
  if (secrets.length === 0) return (line) => line;
  return (line) => {
    let out = line;
    for (const secret of secrets) if (out.includes(secret)) out = out.split(secret).join('[redacted]');
    return out;
  };
}
