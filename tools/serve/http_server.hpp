// HttpServer: HTTP/1.1 on a Unix domain socket (and, with a bearer token,
// on TCP), on the caller's Asio executor with Boost.Beast.
//
// The Unix socket is the access control: it is created with mode 0660, so
// its group decides who may talk to the daemon, and each connection carries
// its peer's uid, gid and pid (SO_PEERCRED) for the handler's own checks
// (a shared-memory object must belong to the caller). TCP needs a token:
// every request carries `Authorization: Bearer <token>` or gets 401.
//
// What a client can get wrong is answered, never waited for forever: a
// request whose header and body have not arrived within request_timeout
// gets 408 and the connection closes; a body over max_body_bytes gets 413,
// a header over max_header_bytes 431, anything unparsable 400, each with a
// JSON body {"error": "..."}. An idle keep-alive connection closes after
// request_timeout.
//
// Handlers run on the server's executor and answer by calling `respond`
// exactly once, from any thread and at any later time (a long poll answers
// when its proof ends); the connection reads its next request after that.
#pragma once

#include <sys/types.h>

#include <boost/asio/any_io_executor.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/message.hpp>
#include <chrono>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "common/error.hpp"

namespace stoker::serve {

using HttpRequest = boost::beast::http::request<boost::beast::http::string_body>;
using HttpResponse = boost::beast::http::response<boost::beast::http::string_body>;

// Who is on the other end of a connection.
struct Peer {
  bool unix_socket = true;
  // Unix sockets: the peer's credentials when it connected (SO_PEERCRED).
  std::optional<uid_t> uid;
  std::optional<gid_t> gid;
  std::optional<pid_t> pid;
  std::string address;  // "unix:PATH" or "HOST:PORT"
};

using Respond = std::function<void(HttpResponse)>;
using RequestHandler = std::function<void(HttpRequest, const Peer&, Respond)>;

struct HttpServerOptions {
  std::string socket_path;             // empty: no Unix socket
  unsigned socket_mode = 0660;
  std::string listen;                  // "HOST:PORT" for TCP; empty: none
  std::string token;                   // required with `listen`
  std::size_t max_body_bytes = std::size_t{256} << 20;
  std::size_t max_header_bytes = 16 << 10;
  std::chrono::milliseconds request_timeout{30'000};
  std::size_t max_connections = 4096;  // more are closed at once
};

// A JSON error response: {"error": message}, status `status`.
HttpResponse json_error(unsigned status, const std::string& message, unsigned version = 11);
// A JSON response with `body` (already JSON text).
HttpResponse json_response(unsigned status, std::string body, unsigned version = 11);

class HttpServer {
 public:
  // Binds and starts accepting. Errors: a socket path in use by a live
  // daemon (another answers on it) or not a socket, a directory that does
  // not exist, TCP without a token, an address that cannot be bound; each
  // names the path or address.
  static Result<std::unique_ptr<HttpServer>> start(boost::asio::any_io_executor executor,
                                                   HttpServerOptions options,
                                                   RequestHandler handler);
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Stops accepting new connections and removes the socket file; the open
  // connections go on (a draining daemon still answers them, with 503).
  // Call on the server's executor.
  void stop_accepting();
  // Closes every connection (at exit). Call on the server's executor.
  void close_connections();
  std::size_t connections() const noexcept;
  // The TCP port bound (useful with port 0), 0 without TCP.
  unsigned short tcp_port() const noexcept;

  struct State;

 private:
  explicit HttpServer(std::shared_ptr<State> state);
  std::shared_ptr<State> state_;
};

}  // namespace stoker::serve
