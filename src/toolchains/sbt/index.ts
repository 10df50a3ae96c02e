/** The sbt toolchain: the launcher jar, the repositories file sbt resolves from, and the JDKs to run it on. */
export { ensureSbtLauncher, launcherPath, launcherFetchArgv, type Log } from './launcher.js';
export { ensureSbtRepositoriesFile, sbtRepositoriesFileContent, repositoriesFilePath } from './repositories-file.js';
export { machineMavenRepository, discoverMavenRepository, chooseRepository, type MavenRepository } from './maven-repository.js';
export { listInstalledJdks, selectJdk, describeJdks, javaMajor, parseRequestedJava, type InstalledJdk, type JdkSearch } from './jdks.js';
export { isSbtVersion, isStableSbtVersion } from './sbt-version.js';
