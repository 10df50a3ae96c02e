name := "scala-single"
version := "0.1.0"
scalaVersion := "2.13.18"

libraryDependencies += "com.typesafe" % "config" % "1.4.9"

enablePlugins(JavaAppPackaging)

// No scaladoc jar is needed to run the app; skipping it makes `stage` faster.
Compile / packageDoc / mappings := Seq()
