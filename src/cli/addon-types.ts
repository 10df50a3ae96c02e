import type { AddonView } from '../shared/api-types.js';

/** An add-on as the API describes it (one shape for the API, the CLI and the console). */
export type AddonSummary = AddonView;

/** The API path of an add-on named on the command line, with --org when given. */
export function addonPath(ref: string, org: string | undefined, suffix = ''): string {
  return `/v1/addons/${encodeURIComponent(ref)}${suffix}${org ? `?org=${encodeURIComponent(org)}` : ''}`;
}
