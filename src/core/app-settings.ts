import { ValidationError } from './errors.js';

/**
 * The platform's own per-application settings, with the reference service's names
 * (`slipway config set <name> <value>`). Each is a boolean for now.
 */
export const APP_SETTINGS = {
  'cancel-on-push': {
    default: false,
    description: 'A push cancels the deployment running for the application (and those waiting), so the newest commit deploys at once.',
  },
  'force-https': {
    default: false,
    description: 'The router answers plain-HTTP requests for the application with a 301 to the same address over HTTPS.',
  },
} as const;

export type AppSettingName = keyof typeof APP_SETTINGS;
export type AppSettings = Record<AppSettingName, boolean>;

export function checkSettingName(name: string): AppSettingName {
  if (!(name in APP_SETTINGS)) {
    throw new ValidationError(`Unknown setting ${JSON.stringify(name)}.`, `Settings: ${Object.keys(APP_SETTINGS).join(', ')}.`);
  }
  return name as AppSettingName;
}

export function parseSettingValue(name: AppSettingName, value: unknown): boolean {
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  throw new ValidationError(`${name} is true or false, not ${JSON.stringify(value)}.`, `For example: slipway config set ${name} true`);
}

/** Stored values over the defaults. */
export function settingsFrom(stored: Record<string, string>): AppSettings {
  const out = {} as AppSettings;
  for (const [name, spec] of Object.entries(APP_SETTINGS) as Array<[AppSettingName, (typeof APP_SETTINGS)[AppSettingName]]>) {
    out[name] = name in stored ? stored[name] === 'true' : spec.default;
  }
  return out;
}
