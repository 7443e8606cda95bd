// DaemonClient; see daemon_client.hpp.
#include "tools/commands/daemon_client.hpp"

#include <filesystem>

#include "tools/serve/token_file.hpp"

namespace stoker::tools {

namespace {

// The start of a body that is not JSON, for a message: one line, short.
std::string excerpt(const std::string& body) {
  std::string out = body.substr(0, 120);
  for (char& c : out)
    if (c == '\n' || c == '\r') c = ' ';
  return out + (body.size() > out.size() ? "..." : "");
}

}  // namespace

Result<DaemonClient> DaemonClient::connect(const std::string& server,
                                           const std::string& token_file) {
  if (server.empty()) return Error{Errc::invalid_argument, "--server is required"};
  std::string token;
  const bool tcp = server.rfind("http://", 0) == 0;
  if (tcp && token_file.empty())
    return Error{
        Errc::invalid_argument,
        "--server " + server + " needs --token-file: the daemon wants a bearer token on TCP"};
  if (!token_file.empty()) {
    auto t = serve::read_token_file(token_file, serve::TokenUse::client);
    if (!t) return std::move(t).error();
    token = std::move(*t);
  }
  auto client = serve::HttpClient::to(server, std::move(token));
  if (!client) return std::move(client).error();
  return DaemonClient(std::move(*client));
}

Result<nlohmann::json> DaemonClient::call(const std::string& method, const std::string& target,
                                          const std::string& body, const std::string& content_type,
                                          std::chrono::milliseconds timeout) const {
  auto r = client_.request(method, target, body, content_type, timeout);
  if (!r) return std::move(r).error();
  auto json = nlohmann::json::parse(r->body, nullptr, false);
  const std::string status = "HTTP " + std::to_string(r->status);
  if (r->status >= 200 && r->status < 300) {
    if (json.is_discarded())
      return Error{Errc::io_error, server() + ": answered " + method + " " + target +
                                       " with a body that is not JSON: " + excerpt(r->body)};
    return json;
  }
  if (json.is_object() && json.contains("error") && json["error"].is_string())
    return Error{Errc::io_error,
                 server() + ": " + json["error"].get<std::string>() + " (" + status + ")"};
  return Error{Errc::io_error, server() + ": " + method + " " + target + ": " + status +
                                   (r->body.empty() ? "" : ": " + excerpt(r->body))};
}

std::string url_encode(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string out;
  for (const unsigned char c : text) {
    const bool plain = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                       c == '.' || c == '_' || c == '~' || c == '-';
    if (plain) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

std::string absolute_path(const std::string& path) {
  std::error_code ec;
  auto abs = std::filesystem::absolute(path, ec);
  return ec ? path : abs.string();
}

}  // namespace stoker::tools
