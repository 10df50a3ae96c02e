/** SPEC §8: the JVM of a Scala app gets the system property http.port=8080. */
export const HTTP_PORT = '8080';
export const HTTP_PORT_ARGUMENT = `-Dhttp.port=${HTTP_PORT}`;

/**
 * JAVA_OPTS for the run: the user's own options first, then http.port, so the property is set
 * even when the app is started by CC_RUN_COMMAND rather than by the staged script's arguments.
 */
export function javaOptsWithHttpPort(userJavaOpts: string | undefined): string {
  const own = (userJavaOpts ?? '').trim();
  if (/(^|\s)-Dhttp\.port=/.test(own)) {
    return own.replace(/(^|\s)-Dhttp\.port=\S*/g, `$1${HTTP_PORT_ARGUMENT}`);
  }
  return own === '' ? HTTP_PORT_ARGUMENT : `${own} ${HTTP_PORT_ARGUMENT}`;
}
