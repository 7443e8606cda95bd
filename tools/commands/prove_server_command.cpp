// `stoker prove --server`; see prove_server_command.hpp.
#include "tools/commands/prove_server_command.hpp"

#include <csignal>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "engine/groth16/proof.hpp"
#include "engine/groth16/snarkjs_json.hpp"
#include "tools/cli/input_file.hpp"
#include "tools/cli/output_file.hpp"
#include "tools/cli/signal_watch.hpp"
#include "tools/commands/daemon_client.hpp"
#include "tools/commands/proof_outputs.hpp"

namespace stoker::tools {
namespace {

namespace g16 = engine::groth16;
using json = nlohmann::json;

// How long one long poll may hold: the daemon answers as soon as the proof
// ends, so this only bounds how often an idle wait asks again.
constexpr int kWaitMs = 60'000;

// The proof to cancel when a signal comes, known once the daemon accepted
// it; whichever of the signal and the id comes second sends the cancel.
class Canceller {
 public:
  explicit Canceller(const DaemonClient& client) : client_(client) {}

  void signal(int signo) {
    std::string id;
    {
      std::lock_guard lock(mutex_);
      signo_ = signo;
      id = id_;
    }
    if (!id.empty()) cancel(id, signo);
  }
  void accepted(const std::string& id) {
    int signo = 0;
    {
      std::lock_guard lock(mutex_);
      id_ = id;
      signo = signo_;
    }
    if (signo != 0) cancel(id, signo);
  }

 private:
  void cancel(const std::string& id, int signo) {
    const char* name = signo == SIGINT ? "SIGINT" : signo == SIGTERM ? "SIGTERM" : "SIGHUP";
    auto r = client_.call("DELETE", "/v1/proofs/" + url_encode(id), {}, "application/json",
                          std::chrono::seconds(10));
    if (r)
      std::fprintf(stderr,
                   "stoker prove: interrupted (%s): proof %s cancelled on %s; waiting for it to "
                   "stop (interrupt again not to wait)\n",
                   name, id.c_str(), client_.server().c_str());
    else
      std::fprintf(stderr, "stoker prove: interrupted (%s): cancelling proof %s failed: %s\n", name,
                   id.c_str(), r.error().what().c_str());
  }

  const DaemonClient client_;  // its own: a client is used from one thread at a time
  std::mutex mutex_;
  std::string id_;
  int signo_ = 0;
};

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string timings(const json& view) {
  const json t = view.value("timings_ms", json::object());
  auto ms = [&](const char* name) {
    const auto it = t.find(name);
    return it != t.end() && it->is_number() ? it->get<double>() : 0.0;
  };
  char text[160];
  std::snprintf(text, sizeof text,
                "queued %.1f ms, key load %.1f ms, witness and producer %.1f ms, devices %.1f ms, "
                "%.1f ms in all",
                ms("queue_wait"), ms("key_load"), ms("produce"), ms("gpu"), ms("total"));
  return text;
}

}  // namespace

int prove_by_server(const CommandLine& cl, const ServerProveArgs& a) {
  const bool zkey_form = !a.wtns.empty() || !a.proof.empty() || !a.public_.empty();
  const bool bellman_form =
      !a.witness.empty() || !a.proof_bytes.empty() || !a.proof_json.empty() || !a.inputs.empty();
  if (a.key.empty())
    return cl.usage_error("--server needs --key NAME: a key the daemon holds (stoker keys load)");
  if (zkey_form && bellman_form)
    return cl.usage_error(
        "give a zkey key's witness and outputs (--wtns, --proof, --public) or a bellman key's "
        "(--witness, --proof-bytes, --proof-json, --inputs), not both");
  if (bellman_form) {
    if (a.witness.empty()) return cl.usage_error("--proof-bytes needs --witness");
    if (a.proof_bytes.empty()) return cl.usage_error("--witness needs --proof-bytes");
  } else {
    if (a.wtns.empty()) return cl.usage_error("--key needs a witness: --wtns (or --witness)");
    if (a.proof.empty()) return cl.usage_error("--wtns needs --proof");
    if (a.public_.empty()) return cl.usage_error("--wtns needs --public");
  }
  const std::string witness_option = bellman_form ? "--witness" : "--wtns";
  const std::string& witness = bellman_form ? a.witness : a.wtns;
  const bool by_path = a.witness_by == "path";
  // A witness sent as the body is read here; one sent by path is the
  // daemon's to read (it names the path when it cannot).
  if (!by_path)
    if (auto size = input_size(witness); !size) return cl.usage_error(size.error().what());
  auto outs = bellman_form ? check_outputs({{"--proof-bytes", a.proof_bytes},
                                            {"--proof-json", a.proof_json},
                                            {"--inputs", a.inputs}},
                                           {{witness_option, witness}})
                           : check_outputs({{"--proof", a.proof}, {"--public", a.public_}},
                                           {{"--wtns", a.wtns}});
  if (!outs) return cl.usage_error(outs.error().what());
  auto client = DaemonClient::connect(a.server, a.token_file);
  if (!client) return cl.usage_error(client.error().what());

  // The key first: a witness of the other format would only fail at the
  // daemon, with a message about the witness file's bytes.
  auto keys = client->call("GET", "/v1/keys", {}, "application/json", std::chrono::minutes(1));
  if (!keys) return cl.failure(keys.error().what());
  std::optional<json> key;
  for (const auto& k : keys->value("keys", json::array()))
    if (k.value("name", "") == a.key) key = k;
  if (!key)
    return cl.failure(client->server() + " has no key '" + a.key + "' (stoker keys load first)");
  const std::string format = key->value("format", "");
  if (format == "zkey" && bellman_form)
    return cl.failure("key '" + a.key + "' on " + client->server() +
                      " is a zkey key: its witness is --wtns, with --proof and --public");
  if (format == "bellman" && !bellman_form)
    return cl.failure("key '" + a.key + "' on " + client->server() +
                      " is a bellman key: its witness is --witness, with --proof-bytes");

  std::string body, target = "/v1/proofs", content_type = "application/json";
  if (by_path) {
    json req{
        {"key", a.key}, {"priority", a.priority}, {"witness", {{"path", absolute_path(witness)}}}};
    if (!a.idempotency_key.empty()) req["idempotency_key"] = a.idempotency_key;
    body = req.dump();
  } else {
    body = read_all(witness);
    if (body.empty())
      return cl.failure(witness_option + " " + witness + ": cannot read it, or it is empty");
    target += "?key=" + url_encode(a.key) + "&priority=" + a.priority;
    if (!a.idempotency_key.empty()) target += "&idempotency_key=" + url_encode(a.idempotency_key);
    content_type = "application/octet-stream";
  }

  Canceller canceller(*client);
  SignalWatch watch([&](int signo) { canceller.signal(signo); });
  auto submitted = client->call("POST", target, body, content_type);
  if (!submitted) return cl.failure(submitted.error().what());
  const std::string id = submitted->value("id", "");
  if (id.empty()) return cl.failure(client->server() + ": accepted the proof without an id");
  canceller.accepted(id);

  json view;
  std::string state;
  while (state != "done" && state != "failed" && state != "cancelled") {
    auto r =
        client->call("GET", "/v1/proofs/" + url_encode(id) + "?wait_ms=" + std::to_string(kWaitMs),
                     {}, "application/json", std::chrono::milliseconds(kWaitMs + 30'000));
    if (!r) {
      if (watch.taken()) break;
      return cl.failure(r.error().what() + "; proof " + id + " was accepted there");
    }
    view = std::move(*r);
    state = view.value("state", "");
    if (state.empty()) return cl.failure(client->server() + ": proof " + id + " has no state");
  }
  watch.end_as_taken();  // after an interrupt, nothing is written

  if (state != "done") {
    // The daemon names its jobs after the proof; said once is enough.
    std::string why = view.value("error", std::string("no reason given"));
    if (const std::string job = "proof " + id + ": "; why.rfind(job, 0) == 0)
      why.erase(0, job.size());
    return cl.failure("proof " + id + " " + state + " on " + client->server() + ": " + why);
  }
  const std::string source = client->server() + " proof " + id;
  auto proof = g16::parse_proof_json(view.value("proof", json::object()).dump(), source);
  if (!proof) return cl.failure(proof.error().what());
  auto inputs = g16::parse_public_json(view.value("public", json::array()).dump(), source);
  if (!inputs) return cl.failure(inputs.error().what());

  if (bellman_form) {
    if (Error e = write_bellman_proof_outputs(*outs, *proof, *inputs)) return cl.failure(e.what());
  } else {
    if (Error e = write_snarkjs_proof_outputs(*outs, *proof, *inputs)) return cl.failure(e.what());
  }
  std::string files;
  for (const auto& [option, file] : *outs) files += (files.empty() ? "" : ", ") + file.path();
  std::printf("proof %s by %s with key '%s' (%s), the witness %s: %s; %s written\n", id.c_str(),
              client->server().c_str(), a.key.c_str(), format.c_str(),
              by_path ? "read there from its path" : "sent", timings(view).c_str(), files.c_str());
  return 0;
}

}  // namespace stoker::tools
