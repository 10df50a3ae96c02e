/**
 * Private registry credentials: NPM_TOKEN, CC_NPM_BASIC_AUTH, CC_NPM_REGISTRY.
 *
 * The credentials go to one registry: CC_NPM_REGISTRY's host, or the default registry when it
 * is not set. They only say what to send to that host; which packages come from it stays the
 * project's choice (its own `registry=` or `@scope:registry=` lines), so a registry that holds
 * one scope is never asked for public packages.
 *
 * npm, pnpm, Yarn 1 and Bun read `.npmrc`. The project's own .npmrc is left exactly as
 * committed (the app reads it at run time too): the credentials go to a file of their own,
 *   //<host>/:_authToken=<NPM_TOKEN>
 *   //<host>/:_auth=<base64 of user:password>
 * read as the user configuration, which the project's file overrides setting by setting but
 * which adds what it does not set: `npm_config_userconfig` for npm, pnpm and Yarn 1,
 * `$XDG_CONFIG_HOME/.npmrc` for Bun (which ignores npm_config_userconfig and a relative
 * XDG_CONFIG_HOME; verified with npm 11.6.1, pnpm 10.34.9 and 12.21.0, Yarn 1.22.22, Bun 1.3.1).
 * Both name it by its absolute path (see user-config-dir.ts).
 * Yarn berry ignores .npmrc: it gets the same credentials as `npmRegistries` in a copy of the
 * project's .yarnrc.yml that only the build reads (YARN_RC_FILENAME), so the project's own
 * .yarnrc.yml (yarnPath, nodeLinker...) is untouched for the run phase.
 *
 * Both files are secret: the pipeline removes them before the release starts and never prints
 * them. No credential goes into plan.env, notes or warnings.
 */
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { PlanError, type PlanFile } from '../plan.js';
import type { PackageManager } from './detect-package-manager.js';
import { USER_CONFIG_DIR, userConfigDir } from './user-config-dir.js';

export const BERRY_BUILD_RC = '.yarnrc.slipway-build.yml';

/** The credentials file, in the folder read as the user configuration (see user-config-dir.ts). */
export const CREDENTIALS_NPMRC = `${USER_CONFIG_DIR}/.npmrc`;

export interface RegistryAuthInput {
  env: Record<string, string>;
  manager: PackageManager;
  /** The default registry URL as npm's configuration gives it; asked only when needed. */
  defaultRegistry: () => Promise<string>;
  projectNpmrc?: string;
  projectYarnrcYml?: string;
  /** The build folder's absolute path, where the build commands see it too. */
  buildDir: string;
}

export interface RegistryAuth {
  files: PlanFile[];
  /** Variables for the install command only (never secret). */
  installEnv: Record<string, string>;
  notes: string[];
  warnings: string[];
}

export interface Registry {
  /** `https://host[:port][/path]/` */
  url: string;
  /** `//host[:port][/path]/`, the key npm scopes credentials with. */
  authKey: string;
}

/** A registry from CC_NPM_REGISTRY (a host) or a full URL (npm's configuration). */
export function registryFrom(value: string, source: string): Registry {
  const trimmed = value.trim();
  if (trimmed === '' || /[\s#;]/.test(trimmed)) {
    throw new PlanError(
      `${source} is "${trimmed.replace(/[\r\n]/g, ' ')}", which is not a registry host.`,
      `${source} takes a host name without scheme, for example "registry.example.com" or "registry.example.com:4873".`,
    );
  }
  const withScheme = /^https?:\/\//i.test(trimmed) ? trimmed : `https://${trimmed}`;
  let parsed: URL;
  try {
    parsed = new URL(withScheme);
  } catch {
    throw new PlanError(
      `${source} is "${trimmed}", which is not a registry host.`,
      `${source} takes a host name without scheme, for example "registry.example.com".`,
    );
  }
  if (parsed.username || parsed.password || parsed.search || parsed.hash) {
    throw new PlanError(
      `${source} must be a plain host (no credentials, query or fragment).`,
      'Put credentials in NPM_TOKEN or CC_NPM_BASIC_AUTH instead.',
    );
  }
  const pathname = parsed.pathname.endsWith('/') ? parsed.pathname : `${parsed.pathname}/`;
  const hostAndPath = `${parsed.host}${pathname}`;
  return { url: `${parsed.protocol}//${hostAndPath}`, authKey: `//${hostAndPath}` };
}

function checkSecretValue(name: string, value: string): void {
  // A newline would let a value write its own .npmrc lines; the value itself is never printed.
  if (/[\r\n]/.test(value))
    throw new PlanError(`${name} contains a line break, which cannot be written to .npmrc.`, `Set ${name} again without line breaks.`);
}

function basicAuthParts(value: string): { user: string; password: string } {
  const colon = value.indexOf(':');
  if (colon <= 0 || colon === value.length - 1) {
    throw new PlanError(
      'CC_NPM_BASIC_AUTH must have the form <user>:<password> (its value is not shown).',
      'Set CC_NPM_BASIC_AUTH to <user>:<password>.',
    );
  }
  return { user: value.slice(0, colon), password: value.slice(colon + 1) };
}

/** The lines of the project's .npmrc that set the default registry (`registry=...`). */
function setsDefaultRegistry(npmrc: string | undefined): boolean {
  return npmrc !== undefined && /^\s*registry\s*=/m.test(npmrc);
}

/** The host (and port) of a registry URL, or undefined for a value that is not one (`${VAR}`). */
function hostOf(url: string): string | undefined {
  try {
    return new URL(url.trim().replace(/^["']|["']$/g, '')).host.toLowerCase();
  } catch {
    return undefined;
  }
}

/** Whether a `registry=` or `@scope:registry=` line of an .npmrc sends any package to the host. */
function npmrcRoutesTo(npmrc: string | undefined, host: string): boolean {
  if (npmrc === undefined) return false;
  return npmrc.split(/\r?\n/).some((line) => {
    const match = /^\s*(?:@[^:=\s]+:)?registry\s*=(.*)$/.exec(line);
    return match !== null && (hostOf(match[1]!) === host || match[1]!.includes('${'));
  });
}

/** Whether .yarnrc.yml's npmRegistryServer or a scope's sends any package to the host. */
function yarnrcRoutesTo(yarnrc: string | undefined, host: string): boolean {
  if (yarnrc === undefined) return false;
  return yarnrc.split(/\r?\n/).some((line) => {
    const match = /^\s*npmRegistryServer\s*:\s*(.*)$/.exec(line);
    return match !== null && (hostOf(match[1]!) === host || match[1]!.includes('${'));
  });
}

/**
 * The credentials file: the auth lines for the registry, and `registry=` when the credentials
 * are for the default registry and the project names none, so a manager reading only this
 * file (Bun) asks the registry the credentials are for.
 */
export function credentialsNpmrcContent(
  registry: Registry,
  token: string | undefined,
  basic: string | undefined,
  defaultRegistry: boolean,
): string {
  const lines = ['# Registry credentials added by slipway for the build; removed before the app starts.'];
  if (defaultRegistry) lines.push(`registry=${registry.url}`);
  if (token !== undefined) lines.push(`${registry.authKey}:_authToken=${token}`);
  if (basic !== undefined) lines.push(`${registry.authKey}:_auth=${Buffer.from(basic, 'utf8').toString('base64')}`);
  return `${lines.join('\n')}\n`;
}

export function berryRcContent(
  projectYarnrc: string | undefined,
  registry: Registry,
  token: string | undefined,
  basic: string | undefined,
  defaultRegistry: boolean,
): string {
  let settings: Record<string, unknown> = {};
  if (projectYarnrc !== undefined && projectYarnrc.trim() !== '') {
    let parsed: unknown;
    try {
      // Warnings (an unknown tag...) would be printed with the text around them: errors only.
      parsed = parseYaml(projectYarnrc, { logLevel: 'error' });
    } catch (error) {
      // The position and the parser's rule code, never the parser's message (it quotes the file).
      const e = error as Error & { code?: string; linePos?: Array<{ line: number; col: number }> };
      const at = e.linePos?.[0] ? ` at line ${e.linePos[0].line}, column ${e.linePos[0].col}` : '';
      const rule = e.code && /^[A-Z_]+$/.test(e.code) ? ` (${e.code.toLowerCase().replaceAll('_', ' ')})` : '';
      throw new PlanError(`.yarnrc.yml is not valid YAML${at}${rule}.`, `Fix .yarnrc.yml${at}, commit and push again.`);
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
      throw new PlanError('.yarnrc.yml must hold a mapping of settings.', 'Fix .yarnrc.yml, commit and push again.');
    }
    settings = parsed as Record<string, unknown>;
  }
  // Only credentials for the default registry make it the server: CC_NPM_REGISTRY's host serves
  // the scopes the project's own npmScopes send there.
  if (defaultRegistry && settings.npmRegistryServer === undefined) settings.npmRegistryServer = registry.url.replace(/\/$/, '');
  const registries = (
    typeof settings.npmRegistries === 'object' && settings.npmRegistries !== null ? settings.npmRegistries : {}
  ) as Record<string, unknown>;
  const entry: Record<string, unknown> = { npmAlwaysAuth: true };
  if (token !== undefined) entry.npmAuthToken = token;
  if (basic !== undefined) entry.npmAuthIdent = basic;
  registries[registry.authKey.replace(/\/$/, '')] = entry;
  settings.npmRegistries = registries;
  return `# Copy of .yarnrc.yml with registry credentials, read by the build only; removed before the app starts.\n${stringifyYaml(settings)}`;
}

export async function registryAuth(input: RegistryAuthInput): Promise<RegistryAuth> {
  const { env, manager } = input;
  const token = env.NPM_TOKEN === undefined || env.NPM_TOKEN === '' ? undefined : env.NPM_TOKEN;
  const basic = env.CC_NPM_BASIC_AUTH === undefined || env.CC_NPM_BASIC_AUTH === '' ? undefined : env.CC_NPM_BASIC_AUTH;
  const customHost = env.CC_NPM_REGISTRY?.trim() || undefined;
  const result: RegistryAuth = { files: [], installEnv: {}, notes: [], warnings: [] };
  if (token === undefined && basic === undefined) {
    if (customHost)
      result.notes.push(
        'CC_NPM_REGISTRY is set but neither NPM_TOKEN nor CC_NPM_BASIC_AUTH is: no credentials to add, so no .npmrc is generated.',
      );
    return result;
  }
  if (token !== undefined) checkSecretValue('NPM_TOKEN', token);
  if (basic !== undefined) {
    checkSecretValue('CC_NPM_BASIC_AUTH', basic);
    basicAuthParts(basic);
  }
  const registry = customHost
    ? registryFrom(customHost, 'CC_NPM_REGISTRY')
    : registryFrom(await input.defaultRegistry(), "npm's configured registry");
  const kinds = [token !== undefined ? 'NPM_TOKEN (_authToken)' : '', basic !== undefined ? 'CC_NPM_BASIC_AUTH (basic auth)' : '']
    .filter(Boolean)
    .join(' and ');
  const where = customHost ? `CC_NPM_REGISTRY ${registry.authKey}` : `the default registry ${registry.authKey}`;

  if (customHost) {
    const host = registry.authKey.slice(2).split('/')[0]!.toLowerCase();
    const routed = manager === 'yarn-berry' ? yarnrcRoutesTo(input.projectYarnrcYml, host) : npmrcRoutesTo(input.projectNpmrc, host);
    if (!routed) {
      const file = manager === 'yarn-berry' ? '.yarnrc.yml' : '.npmrc';
      const line =
        manager === 'yarn-berry'
          ? `npmScopes:\n  your-scope:\n    npmRegistryServer: "${registry.url}"`
          : `@your-scope:registry=${registry.url}`;
      result.warnings.push(
        `CC_NPM_REGISTRY says where the credentials go (${registry.authKey}), not where packages come from, and no registry setting of the project's ${file} names that host: ` +
          `every package is asked of the default registry. Add \`${line}\` to ${file} for the scope that registry holds, commit and push.`,
      );
    }
  }

  if (manager === 'yarn-berry') {
    result.files.push({
      path: BERRY_BUILD_RC,
      content: berryRcContent(input.projectYarnrcYml, registry, token, basic, !customHost),
      secret: true,
    });
    result.installEnv.YARN_RC_FILENAME = BERRY_BUILD_RC;
    result.notes.push(
      `Registry credentials from ${kinds} for ${where}: Yarn berry ignores .npmrc, so the build reads them from ${BERRY_BUILD_RC} ` +
        "(the project's .yarnrc.yml plus npmRegistries), selected with YARN_RC_FILENAME.",
    );
    return result;
  }
  const projectRegistry = setsDefaultRegistry(input.projectNpmrc);
  const forDefault = !customHost && !projectRegistry;
  result.files.push({ path: CREDENTIALS_NPMRC, content: credentialsNpmrcContent(registry, token, basic, forDefault), secret: true });
  const configDir = userConfigDir(input.buildDir);
  if (manager !== 'bun') result.installEnv.npm_config_userconfig = `${configDir}/.npmrc`;
  if (manager === 'bun' || manager === 'custom') result.installEnv.XDG_CONFIG_HOME = configDir;
  if (manager === 'bun' && !customHost) {
    // Bun drops .npmrc credentials for the default registry when that registry comes from the
    // environment (verified with Bun 1.3.1: no Authorization header), so an inherited registry
    // variable is blanked and Bun takes registry and credentials from the files together.
    result.installEnv.npm_config_registry = '';
    result.installEnv.NPM_CONFIG_REGISTRY = '';
  } else if (forDefault) {
    // A registry set in the environment (npm_config_registry, e.g. the machine's) beats .npmrc
    // for npm, pnpm and Yarn 1: the install command names the registry the credentials are for.
    result.installEnv.npm_config_registry = registry.url;
    result.installEnv.NPM_CONFIG_REGISTRY = registry.url;
  }
  result.notes.push(
    `Registry credentials from ${kinds} for ${where}: written to ${CREDENTIALS_NPMRC}, read as the user configuration ` +
      `(${manager === 'bun' ? 'XDG_CONFIG_HOME' : 'npm_config_userconfig'})` +
      (input.projectNpmrc !== undefined ? "; the project's own .npmrc is left as committed and wins where both set something" : '') +
      '.',
  );
  if (token !== undefined && basic !== undefined)
    result.notes.push('Both NPM_TOKEN and CC_NPM_BASIC_AUTH are set: npm sends the token when both are present.');
  return result;
}
