// Provides the `stage` task that slipway runs: it writes target/universal/stage/bin/<name>.
addSbtPlugin("com.github.sbt" % "sbt-native-packager" % "1.11.7")
