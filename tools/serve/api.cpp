// The daemon's HTTP API; see api.hpp.
#include "tools/serve/api.hpp"

#include <boost/beast/http/field.hpp>
#include <boost/beast/http/verb.hpp>
#include <charconv>
#include <map>
#include <string_view>

namespace stoker::serve {

namespace http = boost::beast::http;
using json = nlohmann::json;

namespace {

std::string percent_decode(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() + 0 && i + 2 <= s.size() - 1) {
      unsigned v = 0;
      const auto [p, ec] = std::from_chars(s.data() + i + 1, s.data() + i + 3, v, 16);
      if (ec == std::errc() && p == s.data() + i + 3) {
        out += static_cast<char>(v);
        i += 2;
        continue;
      }
    }
    out += s[i] == '+' ? ' ' : s[i];
  }
  return out;
}

struct Target {
  std::string path;
  std::map<std::string, std::string> query;
};

Target split_target(std::string_view target) {
  Target t;
  const auto q = target.find('?');
  t.path = std::string(target.substr(0, q));
  if (q == std::string_view::npos) return t;
  std::string_view rest = target.substr(q + 1);
  while (!rest.empty()) {
    const auto amp = rest.find('&');
    const std::string_view pair = rest.substr(0, amp);
    const auto eq = pair.find('=');
    t.query[percent_decode(pair.substr(0, eq))] =
        eq == std::string_view::npos ? "" : percent_decode(pair.substr(eq + 1));
    if (amp == std::string_view::npos) break;
    rest = rest.substr(amp + 1);
  }
  return t;
}

// "/v1/keys/NAME" -> "NAME" when the path starts with `prefix`.
std::optional<std::string> tail(const std::string& path, std::string_view prefix) {
  if (path.size() <= prefix.size() || path.compare(0, prefix.size(), prefix) != 0) return {};
  return percent_decode(std::string_view(path).substr(prefix.size()));
}

template <typename T>
HttpResponse from(const Answer<T>& a, unsigned ok_status = 200) {
  if (!a) return json_error(a.refusal.status, a.refusal.message);
  return json_response(ok_status, a.value->dump());
}

// The named member of a JSON object as a string; a refusal names it.
Answer<std::string> string_member(const json& body, const char* name, bool required = true) {
  const auto it = body.find(name);
  if (it == body.end()) {
    if (required) return Refusal{400, std::string("the body has no \"") + name + "\""};
    return std::string();
  }
  if (!it->is_string()) return Refusal{400, std::string("\"") + name + "\" must be a string"};
  return it->get<std::string>();
}

Answer<std::uint64_t> count_member(const json& body, const char* name) {
  const auto it = body.find(name);
  if (it == body.end()) return Refusal{400, std::string("the body has no \"") + name + "\""};
  if (!it->is_number_unsigned() && !(it->is_number_integer() && it->get<std::int64_t>() >= 0))
    return Refusal{400, std::string("\"") + name + "\" must be a non-negative integer"};
  return it->get<std::uint64_t>();
}

// The body as a JSON object, whatever Content-Type says (curl -d sends
// application/x-www-form-urlencoded).
Answer<json> parse_object(const HttpRequest& req) {
  json body = json::parse(req.body(), nullptr, false);
  if (body.is_discarded()) return Refusal{400, "malformed JSON in the request body"};
  if (!body.is_object()) return Refusal{400, "the request body must be a JSON object"};
  return body;
}

Answer<Priority> priority_of(const std::string& text) {
  if (text.empty()) return Priority::normal;
  if (auto p = priority_from(text)) return *p;
  return Refusal{400, "priority '" + text + "' is not critical, high, normal or low"};
}

Answer<ProofRequest> proof_request(const HttpRequest& req, const Target& t) {
  ProofRequest r;
  const auto type = req[http::field::content_type];
  if (type.find("application/octet-stream") != std::string_view::npos) {
    const auto key = t.query.find("key");
    if (key == t.query.end() || key->second.empty())
      return Refusal{400, "a witness in the body needs ?key=NAME"};
    r.key = key->second;
    auto p = priority_of(t.query.count("priority") ? t.query.at("priority") : "");
    if (!p) return p.refusal;
    r.priority = *p.value;
    if (t.query.count("idempotency_key")) r.idempotency_key = t.query.at("idempotency_key");
    r.witness.body = req.body();
    return r;
  }
  auto body = parse_object(req);
  if (!body) return body.refusal;
  const json& b = *body.value;
  auto key = string_member(b, "key");
  if (!key) return key.refusal;
  r.key = *key.value;
  auto prio = string_member(b, "priority", false);
  if (!prio) return prio.refusal;
  auto p = priority_of(*prio.value);
  if (!p) return p.refusal;
  r.priority = *p.value;
  auto idem = string_member(b, "idempotency_key", false);
  if (!idem) return idem.refusal;
  r.idempotency_key = *idem.value;
  const auto w = b.find("witness");
  if (w == b.end() || !w->is_object())
    return Refusal{400, "\"witness\" must be an object: {\"path\": P} or {\"shm\": {...}}"};
  if (w->contains("path") == w->contains("shm"))
    return Refusal{400, "\"witness\" needs exactly one of \"path\" and \"shm\""};
  if (w->contains("path")) {
    auto path = string_member(*w, "path");
    if (!path) return path.refusal;
    r.witness.path = *path.value;
  } else {
    const json& shm = w->at("shm");
    if (!shm.is_object())
      return Refusal{400, "\"shm\" must be an object {\"name\", \"offset\", \"bytes\"}"};
    auto name = string_member(shm, "name");
    if (!name) return name.refusal;
    auto offset = shm.contains("offset") ? count_member(shm, "offset") : Answer<std::uint64_t>(0);
    if (!offset) return offset.refusal;
    auto bytes = count_member(shm, "bytes");
    if (!bytes) return bytes.refusal;
    r.witness.shm_name = *name.value;
    r.witness.shm_offset = *offset.value;
    r.witness.shm_bytes = *bytes.value;
  }
  return r;
}

std::string shm_name_of(std::string name) {
  if (name.empty() || name[0] != '/') name.insert(name.begin(), '/');
  return name;
}

class Api {
 public:
  Api(ProofService& s, Metrics& m, ApiOptions o) : service_(s), metrics_(m), options_(o) {}

  void operator()(HttpRequest req, const Peer& peer, Respond respond) {
    const Target t = split_target(req.target());
    const auto verb = req.method();
    const bool mutating = verb == http::verb::post || verb == http::verb::delete_;
    if (t.path == "/healthz") {
      if (verb != http::verb::get) return respond(not_allowed("GET"));
      return respond(json_response(200, json{{"status", "ok"}}.dump()));
    }
    if (t.path == "/readyz") {
      if (verb != http::verb::get) return respond(not_allowed("GET"));
      if (service_.draining()) return respond(json_error(503, "draining"));
      if (!service_.ready()) return respond(json_error(503, "loading the journal's keys"));
      return respond(json_response(200, json{{"ready", true}}.dump()));
    }
    if (t.path == "/metrics") {
      if (verb != http::verb::get) return respond(not_allowed("GET"));
      service_.refresh_gauges();
      HttpResponse res{http::status::ok, 11};
      res.set(http::field::content_type, metrics_content_type);
      res.body() = metrics_.render();
      res.prepare_payload();
      return respond(std::move(res));
    }
    if (mutating && service_.draining() && t.path.rfind("/v1/shm", 0) != 0)
      return respond(json_error(503, "the daemon is draining: it takes no new work"));
    if (t.path == "/v1/status") {
      if (verb != http::verb::get) return respond(not_allowed("GET"));
      return respond(json_response(200, service_.status().dump()));
    }
    if (t.path == "/v1/keys") {
      if (verb == http::verb::get) return respond(json_response(200, service_.keys().dump()));
      if (verb != http::verb::post) return respond(not_allowed("GET, POST"));
      auto body = parse_object(req);
      if (!body) return respond(json_error(body.refusal.status, body.refusal.message));
      auto name = string_member(*body.value, "name");
      auto path = string_member(*body.value, "path");
      auto format = string_member(*body.value, "format");
      for (const auto* a : {&name, &path, &format})
        if (!*a) return respond(json_error(a->refusal.status, a->refusal.message));
      return service_.load_key(*name.value, *path.value, *format.value,
                               [respond](Answer<json> a) {
                                 const bool created = a && a.value->value("created", false);
                                 respond(from(a, created ? 201 : 200));
                               });
    }
    if (auto name = tail(t.path, "/v1/keys/")) {
      if (verb != http::verb::delete_) return respond(not_allowed("DELETE"));
      return service_.evict_key(*name, [respond](Answer<json> a) { respond(from(a)); });
    }
    if (t.path == "/v1/proofs") {
      if (verb != http::verb::post) return respond(not_allowed("POST"));
      auto r = proof_request(req, t);
      if (!r) return respond(json_error(r.refusal.status, r.refusal.message));
      auto s = service_.submit(std::move(*r.value), peer.uid);
      if (!s) return respond(json_error(s.refusal.status, s.refusal.message));
      return respond(json_response(
          s.value->created ? 202 : 200,
          json{{"id", s.value->id}, {"created", s.value->created}}.dump()));
    }
    if (auto id = tail(t.path, "/v1/proofs/")) {
      if (verb == http::verb::delete_) return respond(from(service_.cancel(*id)));
      if (verb != http::verb::get) return respond(not_allowed("GET, DELETE"));
      const auto w = t.query.find("wait_ms");
      if (w == t.query.end()) return respond(from(service_.proof(*id)));
      long long ms = 0;
      const auto [p, ec] = std::from_chars(w->second.data(), w->second.data() + w->second.size(), ms);
      if (ec != std::errc() || p != w->second.data() + w->second.size() || ms < 0)
        return respond(json_error(400, "wait_ms '" + w->second + "' is not a number of milliseconds"));
      const auto wait = std::min(std::chrono::milliseconds(ms), options_.max_wait);
      return service_.wait_for(*id, wait, [respond](Answer<json> a) { respond(from(a)); });
    }
    if (t.path == "/v1/shm") {
      if (verb != http::verb::post) return respond(not_allowed("POST"));
      if (service_.draining()) return respond(json_error(503, "the daemon is draining"));
      auto body = parse_object(req);
      if (!body) return respond(json_error(body.refusal.status, body.refusal.message));
      auto name = string_member(*body.value, "name");
      if (!name) return respond(json_error(name.refusal.status, name.refusal.message));
      auto bytes = count_member(*body.value, "bytes");
      if (!bytes) return respond(json_error(bytes.refusal.status, bytes.refusal.message));
      return respond(from(service_.register_shm(*name.value, *bytes.value, peer.uid), 201));
    }
    if (auto name = tail(t.path, "/v1/shm/")) {
      if (verb != http::verb::delete_) return respond(not_allowed("DELETE"));
      return respond(from(service_.unregister_shm(shm_name_of(*name), peer.uid)));
    }
    return respond(json_error(404, "no endpoint " + t.path));
  }

 private:
  static HttpResponse not_allowed(const char* allow) {
    auto res = json_error(405, std::string("method not allowed here; allowed: ") + allow);
    res.set(http::field::allow, allow);
    return res;
  }

  ProofService& service_;
  Metrics& metrics_;
  ApiOptions options_;
};

}  // namespace

RequestHandler make_api(ProofService& service, Metrics& metrics, ApiOptions options) {
  auto api = std::make_shared<Api>(service, metrics, options);
  return [api](HttpRequest req, const Peer& peer, Respond respond) {
    (*api)(std::move(req), peer, std::move(respond));
  };
}

}  // namespace stoker::serve
