/**
 * Private registry credentials (SPEC §5, §2.2): NPM_TOKEN, CC_NPM_BASIC_AUTH, CC_NPM_REGISTRY.
 *
 * npm, pnpm, Yarn 1 and Bun read `.npmrc`: slipway writes the project's own .npmrc with its
 * lines kept and the credential lines added, scoped to the registry host:
 *   registry=https://<host>/
 *   //<host>/:_authToken=<NPM_TOKEN>
 *   //<host>/:_auth=<base64 of user:password>
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

export const BERRY_BUILD_RC = '.yarnrc.slipway-build.yml';

export interface RegistryAuthInput {
  env: Record<string, string>;
  manager: PackageManager;
  /** The default registry URL as npm's configuration gives it; asked only when needed. */
  defaultRegistry: () => Promise<string>;
  projectNpmrc?: string;
  projectYarnrcYml?: string;
}

export interface RegistryAuth {
  files: PlanFile[];
  /** Variables for the install command only (never secret). */
  installEnv: Record<string, string>;
  notes: string[];
}

export interface Registry {
  /** `https://host[:port][/path]/` */
  url: string;
  /** `//host[:port][/path]/`, the key npm scopes credentials with. */
  authKey: string;
}

/** A registry from CC_NPM_REGISTRY (a host, SPEC §2.2) or a full URL (npm's configuration). */
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
    throw new PlanError(`${source} is "${trimmed}", which is not a registry host.`, `${source} takes a host name without scheme, for example "registry.example.com".`);
  }
  if (parsed.username || parsed.password || parsed.search || parsed.hash) {
    throw new PlanError(`${source} must be a plain host (no credentials, query or fragment).`, 'Put credentials in NPM_TOKEN or CC_NPM_BASIC_AUTH instead.');
  }
  const pathname = parsed.pathname.endsWith('/') ? parsed.pathname : `${parsed.pathname}/`;
  const hostAndPath = `${parsed.host}${pathname}`;
  return { url: `${parsed.protocol}//${hostAndPath}`, authKey: `//${hostAndPath}` };
}

function checkSecretValue(name: string, value: string): void {
  // A newline would let a value write its own .npmrc lines; the value itself is never printed.
  if (/[\r\n]/.test(value)) throw new PlanError(`${name} contains a line break, which cannot be written to .npmrc.`, `Set ${name} again without line breaks.`);
}

function basicAuthParts(value: string): { user: string; password: string } {
  const colon = value.indexOf(':');
  if (colon <= 0 || colon === value.length - 1) {
    throw new PlanError('CC_NPM_BASIC_AUTH must have the form <user>:<password> (its value is not shown).', 'Set CC_NPM_BASIC_AUTH to <user>:<password>.');
  }
  return { user: value.slice(0, colon), password: value.slice(colon + 1) };
}

/** The lines of the project's .npmrc that set the default registry (`registry=...`). */
function setsDefaultRegistry(npmrc: string | undefined): boolean {
  return npmrc !== undefined && /^\s*registry\s*=/m.test(npmrc);
}

export function npmrcContent(projectNpmrc: string | undefined, registry: Registry, token: string | undefined, basic: string | undefined): string {
  const kept = projectNpmrc === undefined ? '' : projectNpmrc.endsWith('\n') || projectNpmrc === '' ? projectNpmrc : `${projectNpmrc}\n`;
  const lines = ['# Registry credentials added by slipway for the build; removed before the app starts.'];
  if (!setsDefaultRegistry(projectNpmrc)) lines.push(`registry=${registry.url}`);
  if (token !== undefined) lines.push(`${registry.authKey}:_authToken=${token}`);
  if (basic !== undefined) lines.push(`${registry.authKey}:_auth=${Buffer.from(basic, 'utf8').toString('base64')}`);
  return `${kept}${lines.join('\n')}\n`;
}

export function berryRcContent(projectYarnrc: string | undefined, registry: Registry, token: string | undefined, basic: string | undefined): string {
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
  const serverUrl = registry.url.replace(/\/$/, '');
  if (settings.npmRegistryServer === undefined) settings.npmRegistryServer = serverUrl;
  const registries = (typeof settings.npmRegistries === 'object' && settings.npmRegistries !== null ? settings.npmRegistries : {}) as Record<string, unknown>;
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
  const result: RegistryAuth = { files: [], installEnv: {}, notes: [] };
  if (token === undefined && basic === undefined) {
    if (customHost) result.notes.push('CC_NPM_REGISTRY is set but neither NPM_TOKEN nor CC_NPM_BASIC_AUTH is: no credentials to add, so no .npmrc is generated.');
    return result;
  }
  if (token !== undefined) checkSecretValue('NPM_TOKEN', token);
  if (basic !== undefined) {
    checkSecretValue('CC_NPM_BASIC_AUTH', basic);
    basicAuthParts(basic);
  }
  const registry = customHost ? registryFrom(customHost, 'CC_NPM_REGISTRY') : registryFrom(await input.defaultRegistry(), "npm's configured registry");
  const kinds = [token !== undefined ? 'NPM_TOKEN (_authToken)' : '', basic !== undefined ? 'CC_NPM_BASIC_AUTH (basic auth)' : ''].filter(Boolean).join(' and ');
  const where = customHost ? `CC_NPM_REGISTRY ${registry.authKey}` : `the default registry ${registry.authKey}`;

  if (manager === 'yarn-berry') {
    result.files.push({ path: BERRY_BUILD_RC, content: berryRcContent(input.projectYarnrcYml, registry, token, basic), secret: true });
    result.installEnv.YARN_RC_FILENAME = BERRY_BUILD_RC;
    result.notes.push(
      `Registry credentials from ${kinds} for ${where}: Yarn berry ignores .npmrc, so the build reads them from ${BERRY_BUILD_RC} ` +
        '(the project\'s .yarnrc.yml plus npmRegistries), selected with YARN_RC_FILENAME.',
    );
    return result;
  }
  result.files.push({ path: '.npmrc', content: npmrcContent(input.projectNpmrc, registry, token, basic), secret: true });
  if (manager === 'bun') {
    // Bun drops .npmrc credentials when the registry comes from the environment (verified with
    // Bun 1.3.1: no Authorization header), so an inherited registry variable is blanked and
    // Bun takes registry and credentials from .npmrc together.
    result.installEnv.npm_config_registry = '';
    result.installEnv.NPM_CONFIG_REGISTRY = '';
  } else if (!setsDefaultRegistry(input.projectNpmrc)) {
    // A registry set in the environment (npm_config_registry, e.g. the machine's) beats .npmrc
    // for npm, pnpm and Yarn 1: the install command names the registry the credentials are for.
    result.installEnv.npm_config_registry = registry.url;
    result.installEnv.NPM_CONFIG_REGISTRY = registry.url;
  }
  result.notes.push(
    `Registry credentials from ${kinds} for ${where}: written to .npmrc` +
      (input.projectNpmrc !== undefined ? " after the project's own .npmrc lines" : '') +
      (setsDefaultRegistry(input.projectNpmrc) ? " (the project's registry= line is kept as the default registry)" : '') +
      '.',
  );
  if (token !== undefined && basic !== undefined) result.notes.push('Both NPM_TOKEN and CC_NPM_BASIC_AUTH are set: npm sends the token when both are present.');
  return result;
}
