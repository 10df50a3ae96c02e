/** sbt versions as written in project/build.properties: 1.10.7, 1.11.0-RC2, 2.0.0-M3. */
const SBT_VERSION = /^\d{1,3}\.\d{1,3}\.\d{1,3}(-[A-Za-z0-9]+(\.[A-Za-z0-9]+)*)?$/;

export function isSbtVersion(value: string): boolean {
  return SBT_VERSION.test(value);
}

/** A release without a pre-release suffix, eligible as the default. */
export function isStableSbtVersion(value: string): boolean {
  return /^\d+\.\d+\.\d+$/.test(value);
}
