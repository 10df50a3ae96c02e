// Provides `stage`; only the `web` module enables it (see build.sbt).
addSbtPlugin("com.github.sbt" % "sbt-native-packager" % "1.11.7")
