/** docs/behaviour.md, Runtimes: the JVM of a Scala app gets the system property http.port=8080. */
export const HTTP_PORT = '8080';
export const HTTP_PORT_ARGUMENT = `-Dhttp.port=${HTTP_PORT}`;

/**
 * Variables the plan adds for http.port. The staged script always gets `-Dhttp.port=8080` as an
 * argument; JAVA_OPTS carries it too (for CC_RUN_COMMAND) unless the user set JAVA_OPTS, which
 * is then left alone: plan variables are printed, and a user's JAVA_OPTS may hold a password.
 */
export function httpPortVariables(userEnv: Record<string, string | undefined>): Record<string, string> {
  return userEnv.JAVA_OPTS === undefined ? { JAVA_OPTS: HTTP_PORT_ARGUMENT } : {};
}
