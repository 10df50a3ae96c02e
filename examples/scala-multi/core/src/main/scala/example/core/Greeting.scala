package example.core

/** Lives in its own module so the build really is multi-module. */
object Greeting {
  def forName(name: String): String = s"hello from the core module, $name"
}
