/** An add-on as the API describes it. */
export interface AddonSummary {
  id: string;
  name: string;
  provider: string;
  org_id: string;
  org_name: string | null;
  created_at: string;
  linked_apps: string[];
}

/** The API path of an add-on named on the command line, with --org when given. */
export function addonPath(ref: string, org: string | undefined, suffix = ''): string {
  return `/v1/addons/${encodeURIComponent(ref)}${suffix}${org ? `?org=${encodeURIComponent(org)}` : ''}`;
}
