// HttpServer; see http_server.hpp.
#include "tools/serve/http_server.hpp"

#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/string.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/write.hpp>
#include <cerrno>
#include <cstring>
#include <nlohmann/json.hpp>
#include <set>
#include <utility>

namespace stoker::serve {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using local_stream = asio::local::stream_protocol;
using tcp = asio::ip::tcp;

HttpResponse json_response(unsigned status, std::string body, unsigned version) {
  HttpResponse res{static_cast<http::status>(status), version};
  res.set(http::field::server, "stoker");
  res.set(http::field::content_type, "application/json");
  res.body() = std::move(body);
  if (!res.body().empty() && res.body().back() != '\n') res.body() += '\n';
  res.prepare_payload();
  return res;
}

HttpResponse json_error(unsigned status, const std::string& message, unsigned version) {
  return json_response(status, nlohmann::json{{"error", message}}.dump(), version);
}

namespace {

// Constant-time comparison, so that the token's bytes cannot be found one
// at a time from response times.
bool same_secret(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const std::size_t n = std::max(a.size(), b.size());
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? a[i] : 0, y = i < b.size() ? b[i] : 0;
    diff |= x ^ y;
  }
  return diff == 0;
}

class SessionBase {
 public:
  virtual ~SessionBase() = default;
  virtual void close() = 0;
};

}  // namespace

struct HttpServer::State : std::enable_shared_from_this<HttpServer::State> {
  asio::any_io_executor executor;
  HttpServerOptions options;
  RequestHandler handler;
  std::optional<local_stream::acceptor> unix_acceptor;
  std::optional<tcp::acceptor> tcp_acceptor;
  std::set<SessionBase*> sessions;
  bool accepting = true;

  void accept_unix();
  void accept_tcp();
};

namespace {

template <typename Socket>
class Session : public SessionBase, public std::enable_shared_from_this<Session<Socket>> {
 public:
  Session(std::shared_ptr<HttpServer::State> server, Socket socket, Peer peer)
      : server_(std::move(server)),
        socket_(std::move(socket)),
        timer_(socket_.get_executor()),
        peer_(std::move(peer)) {}

  void start() {
    server_->sessions.insert(this);
    read();
  }
  ~Session() override {
    if (server_) server_->sessions.erase(this);
  }
  void close() override {
    beast::error_code ignored;
    timer_.cancel();
    socket_.shutdown(Socket::shutdown_both, ignored);
    socket_.close(ignored);
  }

 private:
  void read() {
    parser_.emplace();
    parser_->body_limit(server_->options.max_body_bytes);
    parser_->header_limit(static_cast<std::uint32_t>(server_->options.max_header_bytes));
    timed_out_ = false;
    timer_.expires_after(server_->options.request_timeout);
    timer_.async_wait([self = this->shared_from_this()](beast::error_code ec) {
      if (ec) return;
      self->timed_out_ = true;
      beast::error_code ignored;
      self->socket_.cancel(ignored);
    });
    http::async_read(socket_, buffer_, *parser_,
                     [self = this->shared_from_this()](beast::error_code ec, std::size_t) {
                       self->on_read(ec);
                     });
  }

  void on_read(beast::error_code ec) {
    timer_.cancel();
    const unsigned version = parser_->get().version() ? parser_->get().version() : 11;
    if (timed_out_) {
      // A request begun and never finished is told so; an idle keep-alive
      // connection just closes.
      if (parser_->got_some() || buffer_.size() > 0)
        return fail(json_error(408, "the request did not arrive within " +
                                        std::to_string(server_->options.request_timeout.count()) +
                                        " ms"));
      return close();
    }
    if (ec == http::error::end_of_stream || ec == asio::error::eof ||
        ec == asio::error::connection_reset || ec == asio::error::operation_aborted)
      return close();
    if (ec == http::error::body_limit)
      return fail(json_error(413, "the request body is larger than this daemon's limit of " +
                                      std::to_string(server_->options.max_body_bytes) + " bytes",
                             version));
    if (ec == http::error::header_limit)
      return fail(json_error(431, "the request header is larger than " +
                                      std::to_string(server_->options.max_header_bytes) + " bytes",
                             version));
    if (ec) {
      if (ec.category() == make_error_code(http::error::bad_target).category() ||
          parser_->got_some())
        return fail(json_error(400, "malformed HTTP request: " + ec.message(), version));
      return close();
    }
    HttpRequest req = parser_->release();
    if (!peer_.unix_socket && !authorized(req))
      return respond(json_error(401, "this TCP listener needs 'Authorization: Bearer <token>'",
                                req.version()),
                     req.keep_alive());
    const bool keep_alive = req.keep_alive();
    const unsigned req_version = req.version();
    // The answer may come later (a long poll): the session lives until then.
    auto ex = socket_.get_executor();
    server_->handler(std::move(req), peer_,
                     [self = this->shared_from_this(), ex, keep_alive,
                      req_version](HttpResponse res) mutable {
                       asio::post(ex, [self, res = std::move(res), keep_alive, req_version]() mutable {
                         res.version(req_version);
                         self->respond(std::move(res), keep_alive);
                       });
                     });
  }

  bool authorized(const HttpRequest& req) const {
    const auto it = req.find(http::field::authorization);
    if (it == req.end()) return false;
    const std::string_view value = it->value();
    // The scheme's name is case-insensitive (RFC 9110, 11.1).
    constexpr std::string_view scheme = "bearer ";
    if (value.size() < scheme.size() || !beast::iequals(value.substr(0, scheme.size()), scheme))
      return false;
    return same_secret(value.substr(scheme.size()), server_->options.token);
  }

  void respond(HttpResponse res, bool keep_alive) {
    res.keep_alive(keep_alive);
    if (!res.has_content_length() && !res.chunked()) res.prepare_payload();
    auto msg = std::make_shared<HttpResponse>(std::move(res));
    http::async_write(socket_, *msg,
                      [self = this->shared_from_this(), msg](beast::error_code ec, std::size_t) {
                        if (ec || !msg->keep_alive()) return self->close_after_write();
                        self->read();
                      });
  }

  // An error that ends the connection: the response, then close.
  void fail(HttpResponse res) { respond(std::move(res), false); }

  void close_after_write() {
    beast::error_code ignored;
    socket_.shutdown(Socket::shutdown_send, ignored);
    close();
  }

  std::shared_ptr<HttpServer::State> server_;
  Socket socket_;
  asio::steady_timer timer_;
  Peer peer_;
  beast::flat_buffer buffer_;
  std::optional<http::request_parser<http::string_body>> parser_;
  bool timed_out_ = false;
};

Peer unix_peer(local_stream::socket& s, const std::string& path) {
  Peer p;
  p.unix_socket = true;
  p.address = "unix:" + path;
  ucred cred{};
  socklen_t len = sizeof cred;
  if (::getsockopt(s.native_handle(), SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0) {
    p.uid = cred.uid;
    p.gid = cred.gid;
    p.pid = cred.pid;
  }
  return p;
}

// A socket file left by a daemon that died can be replaced; one that a live
// daemon answers on, or a path that is not a socket, cannot.
Error clear_stale_socket(const std::string& path, asio::any_io_executor ex) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return {};
  if (!S_ISSOCK(st.st_mode))
    return Error{Errc::invalid_argument, "--socket " + path + " exists and is not a socket"};
  local_stream::socket probe(ex);
  beast::error_code ec;
  probe.connect(local_stream::endpoint(path), ec);
  if (!ec)
    return Error{Errc::invalid_argument,
                 "--socket " + path + ": another daemon is listening on it"};
  if (::unlink(path.c_str()) != 0)
    return Error{Errc::io_error, "--socket " + path + ": cannot remove the stale socket: " +
                                     std::strerror(errno)};
  return {};
}

Result<tcp::endpoint> parse_listen(const std::string& text) {
  const auto colon = text.rfind(':');
  if (colon == std::string::npos || colon + 1 == text.size())
    return Error{Errc::invalid_argument, "--listen '" + text + "' is not HOST:PORT"};
  std::string host = text.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  unsigned long port = 0;
  try {
    std::size_t used = 0;
    port = std::stoul(text.substr(colon + 1), &used);
    if (used != text.size() - colon - 1 || port > 65535) throw std::out_of_range("port");
  } catch (const std::exception&) {
    return Error{Errc::invalid_argument, "--listen '" + text + "': the port is not 0..65535"};
  }
  beast::error_code ec;
  const auto address = asio::ip::make_address(host.empty() ? "127.0.0.1" : host, ec);
  if (ec)
    return Error{Errc::invalid_argument,
                 "--listen '" + text + "': '" + host + "' is not an IP address"};
  return tcp::endpoint(address, static_cast<unsigned short>(port));
}

}  // namespace

void HttpServer::State::accept_unix() {
  unix_acceptor->async_accept([self = shared_from_this()](beast::error_code ec,
                                                           local_stream::socket socket) {
    if (!self->accepting || !self->unix_acceptor->is_open()) return;
    if (!ec) {
      if (self->sessions.size() >= self->options.max_connections) {
        beast::error_code ignored;
        socket.close(ignored);
      } else {
        auto peer = unix_peer(socket, self->options.socket_path);
        std::make_shared<Session<local_stream::socket>>(self, std::move(socket), std::move(peer))
            ->start();
      }
    }
    self->accept_unix();
  });
}

void HttpServer::State::accept_tcp() {
  tcp_acceptor->async_accept([self = shared_from_this()](beast::error_code ec, tcp::socket socket) {
    if (!self->accepting || !self->tcp_acceptor->is_open()) return;
    if (!ec) {
      if (self->sessions.size() >= self->options.max_connections) {
        beast::error_code ignored;
        socket.close(ignored);
      } else {
        Peer peer;
        peer.unix_socket = false;
        beast::error_code e2;
        const auto remote = socket.remote_endpoint(e2);
        if (!e2) peer.address = remote.address().to_string() + ":" + std::to_string(remote.port());
        std::make_shared<Session<tcp::socket>>(self, std::move(socket), std::move(peer))->start();
      }
    }
    self->accept_tcp();
  });
}

Result<std::unique_ptr<HttpServer>> HttpServer::start(asio::any_io_executor executor,
                                                      HttpServerOptions options,
                                                      RequestHandler handler) {
  if (options.socket_path.empty() && options.listen.empty())
    return Error{Errc::invalid_argument, "the daemon needs --socket PATH or --listen HOST:PORT"};
  if (!options.listen.empty() && options.token.empty())
    return Error{Errc::invalid_argument,
                 "--listen " + options.listen + " needs --token-file: TCP has no other access control"};
  auto state = std::make_shared<State>();
  state->executor = executor;
  state->handler = std::move(handler);
  if (!options.socket_path.empty()) {
    if (options.socket_path.size() >= sizeof(sockaddr_un{}.sun_path))
      return Error{Errc::invalid_argument, "--socket " + options.socket_path + " is longer than " +
                                               std::to_string(sizeof(sockaddr_un{}.sun_path) - 1) +
                                               " bytes, the most a Unix socket path may be"};
    if (auto e = clear_stale_socket(options.socket_path, executor)) return e;
    local_stream::acceptor acceptor(executor);
    beast::error_code ec;
    acceptor.open(local_stream(), ec);
    // The socket is created with the umask's mode; bind it unreadable to
    // others first, then set the mode asked for, so that it is never open
    // wider than that.
    const mode_t old_mask = ::umask(0177);
    if (!ec) acceptor.bind(local_stream::endpoint(options.socket_path), ec);
    ::umask(old_mask);
    if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (ec)
      return Error{Errc::io_error, "--socket " + options.socket_path + ": " + ec.message()};
    if (::chmod(options.socket_path.c_str(), options.socket_mode) != 0)
      return Error{Errc::io_error,
                   "--socket " + options.socket_path + ": chmod: " + std::strerror(errno)};
    state->unix_acceptor.emplace(std::move(acceptor));
  }
  if (!options.listen.empty()) {
    auto endpoint = parse_listen(options.listen);
    if (!endpoint) return std::move(endpoint).error();
    tcp::acceptor acceptor(executor);
    beast::error_code ec;
    acceptor.open(endpoint->protocol(), ec);
    if (!ec) acceptor.set_option(asio::socket_base::reuse_address(true), ec);
    if (!ec) acceptor.bind(*endpoint, ec);
    if (!ec) acceptor.listen(asio::socket_base::max_listen_connections, ec);
    if (ec) {
      if (!options.socket_path.empty()) ::unlink(options.socket_path.c_str());
      return Error{Errc::io_error, "--listen " + options.listen + ": " + ec.message()};
    }
    state->tcp_acceptor.emplace(std::move(acceptor));
  }
  state->options = std::move(options);
  if (state->unix_acceptor) state->accept_unix();
  if (state->tcp_acceptor) state->accept_tcp();
  return std::unique_ptr<HttpServer>(new HttpServer(std::move(state)));
}

HttpServer::HttpServer(std::shared_ptr<State> state) : state_(std::move(state)) {}

HttpServer::~HttpServer() {
  // The acceptors' and sessions' handlers hold the state; closing them lets
  // those handlers end.
  stop_accepting();
  close_connections();
}

void HttpServer::stop_accepting() {
  if (!state_->accepting) return;
  state_->accepting = false;
  beast::error_code ignored;
  if (state_->unix_acceptor) {
    state_->unix_acceptor->close(ignored);
    ::unlink(state_->options.socket_path.c_str());
  }
  if (state_->tcp_acceptor) state_->tcp_acceptor->close(ignored);
}

void HttpServer::close_connections() {
  const auto sessions = state_->sessions;
  for (auto* s : sessions) s->close();
}

std::size_t HttpServer::connections() const noexcept { return state_->sessions.size(); }

unsigned short HttpServer::tcp_port() const noexcept {
  if (!state_->tcp_acceptor) return 0;
  beast::error_code ec;
  const auto ep = state_->tcp_acceptor->local_endpoint(ec);
  return ec ? 0 : ep.port();
}

}  // namespace stoker::serve
