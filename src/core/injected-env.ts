/** What the platform tells every process of an app, as the reference service does. */
export interface InjectedEnvInput {
  appId: string;
  appName: string;
  deploymentId: string;
  commit: string;
  instanceId: string;
  instanceNumber: number;
  instanceType: 'build' | 'production';
  appHome: string;
  /**
   * The addresses the app should trust for X-Forwarded-*: the one the router reaches instances
   * from, then the operator's `--trusted-proxy` ranges (their values reach the app unchanged).
   */
  reverseProxyIps: readonly string[];
}

export function injectedEnv(input: InjectedEnvInput): Record<string, string> {
  return {
    PORT: '8080',
    APP_ID: input.appId,
    APP_HOME: input.appHome,
    INSTANCE_ID: input.instanceId,
    INSTANCE_NUMBER: String(input.instanceNumber),
    INSTANCE_TYPE: input.instanceType,
    CC_DEPLOYMENT_ID: input.deploymentId,
    COMMIT_ID: input.commit,
    CC_COMMIT_ID: input.commit,
    CC_APP_NAME: input.appName,
    CC_REVERSE_PROXY_IPS: input.reverseProxyIps.join(','),
  };
}

/** The build's SSH key (pipeline/build-ssh-key.ts). */
export const SSH_KEY_VARIABLE = 'CC_SSH_PRIVATE_KEY';

/** Variables read by the platform to set the build up, never handed to the app's processes. */
const BUILD_ONLY_VARIABLES = new Set([SSH_KEY_VARIABLE]);

/** The app's variables without those only the platform reads (the SSH key). */
export function withoutBuildOnlyVariables(env: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(env).filter(([name]) => !BUILD_ONLY_VARIABLES.has(name)));
}

/** Directories every process finds its tools in, after the app's own toolchain. */
export const SYSTEM_PATH = ['/usr/local/bin', '/usr/bin', '/bin'];

/**
 * The complete environment of a build or run process: the app's variables, then the plan's,
 * then what the platform injects (which the user cannot override, so ids stay truthful),
 * with PATH led by the toolchain.
 */
export function composeEnv(layers: {
  app: Record<string, string>;
  plan: Record<string, string>;
  injected: Record<string, string>;
  toolPath: string[];
  home: string;
}): Record<string, string> {
  const path = [...layers.toolPath, ...SYSTEM_PATH].join(':');
  return {
    LANG: 'C.UTF-8',
    ...layers.app,
    ...layers.plan,
    ...layers.injected,
    HOME: layers.home,
    PATH: path,
  };
}
