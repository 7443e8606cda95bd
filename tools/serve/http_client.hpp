// A small blocking HTTP/1.1 client for the daemon: how `stoker prove
// --server`, `stoker keys ... --server` and the tests talk to `stoker serve`.
//
// A server is "unix:PATH" (the daemon's socket) or "http://HOST:PORT" (TCP,
// with a bearer token). Each request opens its own connection, so one
// client may be used from one thread at a time; make one per thread.
#pragma once

#include <chrono>
#include <string>

#include "common/error.hpp"

namespace stoker::serve {

struct ClientResponse {
  unsigned status = 0;
  std::string content_type;
  std::string body;
};

class HttpClient {
 public:
  // Errors: a server that is neither unix:PATH nor http://HOST:PORT.
  static Result<HttpClient> to(const std::string& server, std::string token = {});

  // Errors: the connection failed or broke, or no answer within `timeout`,
  // naming the server.
  Result<ClientResponse> request(const std::string& method, const std::string& target,
                                 const std::string& body = {},
                                 const std::string& content_type = "application/json",
                                 std::chrono::milliseconds timeout = std::chrono::minutes(10)) const;

  const std::string& server() const noexcept { return server_; }

 private:
  HttpClient() = default;
  std::string server_;
  std::string socket_path_;  // unix
  std::string host_, port_;  // tcp
  std::string token_;
};

}  // namespace stoker::serve
