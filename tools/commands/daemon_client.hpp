// DaemonClient: how the commands that speak to `stoker serve` (`stoker keys
// load|list|evict`, `stoker prove --server`) reach it, so that all of them
// take the same --server and --token-file and report the daemon alike.
//
// - A server is "unix:PATH" (the daemon's socket, whose permissions are its
//   access control) or "http://HOST:PORT" (TCP, where the daemon wants a
//   bearer token: the first line of --token-file).
// - call() answers the daemon's JSON body for a 2xx status. Anything else
//   is an error that names the server and says what the daemon said
//   ("unix:/run/stoker.sock: no key 'x' (HTTP 404)"); a daemon that cannot
//   be reached is named the same way. The commands print it and exit 1.
// - Paths handed to the daemon are absolute (it refuses relative ones, as
//   its working directory is not the client's): absolute_path() makes them
//   so against the client's working directory.
//
// Blocking, one connection per call; use an object from one thread at a
// time.
#pragma once

#include <chrono>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "common/error.hpp"
#include "tools/serve/http_client.hpp"

namespace stoker::tools {

// What --server and --token-file say, for the help texts.
inline constexpr const char* kServerOptionsHelp =
    "  --server S       the daemon: unix:PATH (its socket) or http://HOST:PORT\n"
    "  --token-file F   for an http:// server: the file whose first line is the daemon's\n"
    "                   bearer token (as `stoker serve --token-file` reads it)\n";

class DaemonClient {
 public:
  // Errors (the command line's: exit 2): a server that is neither
  // unix:PATH nor http://HOST:PORT, an http:// server without a token
  // file, a token file that cannot be read or whose first line is empty.
  static Result<DaemonClient> connect(const std::string& server, const std::string& token_file);

  // `method` `target` with `body`; the daemon's JSON for a 2xx status,
  // otherwise an error naming the server.
  Result<nlohmann::json> call(const std::string& method, const std::string& target,
                              const std::string& body = {},
                              const std::string& content_type = "application/json",
                              std::chrono::milliseconds timeout = std::chrono::hours(1)) const;

  const std::string& server() const noexcept { return client_.server(); }

 private:
  explicit DaemonClient(serve::HttpClient c) : client_(std::move(c)) {}
  serve::HttpClient client_;
};

// `text` with every byte but [A-Za-z0-9._~-] percent-encoded: for a key
// name or an idempotency key in a request's path or query.
std::string url_encode(std::string_view text);

// `path` made absolute against the working directory (not resolved: the
// daemon resolves links itself when it checks its allowed directories).
std::string absolute_path(const std::string& path);

}  // namespace stoker::tools
