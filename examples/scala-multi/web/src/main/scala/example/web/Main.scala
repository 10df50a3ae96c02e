package example.web

import com.sun.net.httpserver.{HttpExchange, HttpServer}
import example.core.Greeting

import java.net.InetSocketAddress
import java.nio.charset.StandardCharsets

object Main {
  def main(args: Array[String]): Unit = {
    val port = Integer.parseInt(sys.props.getOrElse("http.port", "8080"))
    val server = HttpServer.create(new InetSocketAddress("0.0.0.0", port), 0)
    server.createContext("/", (exchange: HttpExchange) => {
      val who = Option(System.getenv("GREETING")).getOrElse("web")
      val body = s"""{"app":"scala-multi","module":"web","greeting":"${Greeting.forName(who).replace("\"", "'")}","httpPort":"$port"}"""
      val bytes = body.getBytes(StandardCharsets.UTF_8)
      exchange.getResponseHeaders.add("Content-Type", "application/json")
      exchange.sendResponseHeaders(200, bytes.length.toLong)
      exchange.getResponseBody.write(bytes)
      exchange.close()
    })
    server.start()
    println(s"scala-multi/web: listening on 0.0.0.0:$port")
  }
}
