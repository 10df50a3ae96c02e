// A multi-module build whose root only aggregates: the staged script belongs to `web`, so a
// deploy sets SBT_DEPLOY_GOAL=web/stage, CC_SBT_TARGET_DIR=web and CC_SBT_TARGET_BIN=web.
ThisBuild / scalaVersion := "2.13.18"
ThisBuild / version := "0.1.0"

// No scaladoc jars are needed to run the app; skipping them makes the build faster.
lazy val noDocs = Compile / packageDoc / mappings := Seq()

lazy val root = (project in file("."))
  .aggregate(core, web)
  .settings(name := "scala-multi")

lazy val core = (project in file("core"))
  .settings(name := "core", noDocs)

lazy val web = (project in file("web"))
  .dependsOn(core)
  .enablePlugins(JavaAppPackaging)
  .settings(
    name := "web",
    noDocs,
  )
