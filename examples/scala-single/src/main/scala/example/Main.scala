package example

import com.sun.net.httpserver.{HttpExchange, HttpServer}
import com.typesafe.config.ConfigFactory

import java.net.InetSocketAddress
import java.nio.charset.StandardCharsets

/** A tiny HTTP server using only the JDK, so the build stays small and fast. */
object Main {
  def main(args: Array[String]): Unit = {
    val port = Integer.parseInt(sys.props.getOrElse("http.port", "8080"))
    val config = ConfigFactory.load()
    val server = HttpServer.create(new InetSocketAddress("0.0.0.0", port), 0)

    server.createContext("/", (exchange: HttpExchange) => {
      val body =
        s"""{"app":"scala-single","greetingEnv":${quote(System.getenv("GREETING"))},""" +
          s""""greetingHocon":${quote(config.getString("greeting"))},"httpPort":${quote(sys.props.get("http.port").orNull)}}"""
      val bytes = body.getBytes(StandardCharsets.UTF_8)
      exchange.getResponseHeaders.add("Content-Type", "application/json")
      exchange.sendResponseHeaders(200, bytes.length.toLong)
      exchange.getResponseBody.write(bytes)
      exchange.close()
    })

    sys.addShutdownHook {
      System.err.println("scala-single: stopping")
      server.stop(0)
    }
    server.start()
    // The heap the JVM sized itself to: the flavour's memory tells it (it cannot see the limit).
    println(s"scala-single: listening on 0.0.0.0:$port, max heap ${Runtime.getRuntime.maxMemory / 1048576} MiB")
  }

  /** A JSON string literal, or null when the value is missing. */
  private def quote(value: String): String =
    if (value == null) "null"
    else "\"" + value.flatMap {
      case '"'  => "\\\""
      case '\\' => "\\\\"
      case c if c < ' ' => f"\\u${c.toInt}%04x"
      case c => c.toString
    } + "\""
}
