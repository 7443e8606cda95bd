// HttpClient; see http_client.hpp.
#include "tools/serve/http_client.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/string_body.hpp>
#include <boost/beast/http/write.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/asio/steady_timer.hpp>

namespace stoker::serve {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;

Result<HttpClient> HttpClient::to(const std::string& server, std::string token) {
  HttpClient c;
  c.server_ = server;
  c.token_ = std::move(token);
  if (server.rfind("unix:", 0) == 0 && server.size() > 5) {
    c.socket_path_ = server.substr(5);
    return c;
  }
  if (server.rfind("http://", 0) == 0) {
    std::string rest = server.substr(7);
    if (!rest.empty() && rest.back() == '/') rest.pop_back();
    const auto colon = rest.rfind(':');
    if (colon != std::string::npos && colon > 0 && colon + 1 < rest.size()) {
      c.host_ = rest.substr(0, colon);
      c.port_ = rest.substr(colon + 1);
      return c;
    }
  }
  return Error{Errc::invalid_argument,
               "--server '" + server + "' is not unix:PATH or http://HOST:PORT"};
}

namespace {

template <typename Socket>
Result<ClientResponse> exchange(asio::io_context& io, Socket& socket, const std::string& server,
                                http::request<http::string_body>& req,
                                std::chrono::milliseconds timeout) {
  beast::error_code result;
  ClientResponse out;
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(std::uint64_t{1} << 32);
  asio::steady_timer timer(io, timeout);
  bool timed_out = false;
  timer.async_wait([&](beast::error_code ec) {
    if (ec) return;
    timed_out = true;
    beast::error_code ignored;
    socket.close(ignored);
  });
  http::async_write(socket, req, [&](beast::error_code ec, std::size_t) {
    if (ec) {
      result = ec;
      timer.cancel();
      return;
    }
    http::async_read(socket, buffer, parser, [&](beast::error_code ec2, std::size_t) {
      result = ec2;
      timer.cancel();
    });
  });
  io.run();
  if (timed_out)
    return Error{Errc::timed_out, server + ": no answer within " + std::to_string(timeout.count()) +
                                      " ms"};
  if (result) return Error{Errc::io_error, server + ": " + result.message()};
  auto res = parser.release();
  out.status = res.result_int();
  out.content_type = std::string(res[http::field::content_type]);
  out.body = std::move(res.body());
  return out;
}

}  // namespace

Result<ClientResponse> HttpClient::request(const std::string& method, const std::string& target,
                                           const std::string& body,
                                           const std::string& content_type,
                                           std::chrono::milliseconds timeout) const {
  http::request<http::string_body> req{http::string_to_verb(method), target, 11};
  req.set(http::field::host, host_.empty() ? "localhost" : host_);
  req.set(http::field::user_agent, "stoker");
  if (!token_.empty()) req.set(http::field::authorization, "Bearer " + token_);
  if (!body.empty() || method == "POST") {
    req.set(http::field::content_type, content_type);
    req.body() = body;
  }
  req.keep_alive(false);
  req.prepare_payload();
  asio::io_context io;
  beast::error_code ec;
  if (!socket_path_.empty()) {
    asio::local::stream_protocol::socket socket(io);
    socket.connect(asio::local::stream_protocol::endpoint(socket_path_), ec);
    if (ec) return Error{Errc::io_error, server_ + ": cannot connect: " + ec.message()};
    return exchange(io, socket, server_, req, timeout);
  }
  asio::ip::tcp::resolver resolver(io);
  const auto endpoints = resolver.resolve(host_, port_, ec);
  if (ec) return Error{Errc::io_error, server_ + ": " + ec.message()};
  asio::ip::tcp::socket socket(io);
  asio::connect(socket, endpoints, ec);
  if (ec) return Error{Errc::io_error, server_ + ": cannot connect: " + ec.message()};
  return exchange(io, socket, server_, req, timeout);
}

}  // namespace stoker::serve
