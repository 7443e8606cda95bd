// `stoker serve` as its clients use it, on the host backend: a real daemon
// process, a real HTTP client over its Unix socket, snarkjs's keys and
// witnesses (test/engine/groth16/data), every proof checked with the
// pairing against the key's verifying key.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <thread>
#include <utility>

#include "daemon.hpp"
#include "engine/groth16/snarkjs_json.hpp"
#include "engine/groth16/verifier.hpp"
#include "engine/groth16/wtns_file.hpp"
#include "engine/groth16/zkey_file.hpp"

namespace stoker::test {
namespace {

using json = nlohmann::json;
namespace g16 = engine::groth16;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

json load_body(const std::string& name, const std::string& file) {
  return json{{"name", name}, {"path", data_file(file)}, {"format", "zkey"}};
}

// The proof and public inputs of a finished proof pass the pairing check of
// the key's verifying key.
::testing::AssertionResult verifies(const json& view, const std::string& zkey) {
  if (view.value("state", "") != "done")
    return ::testing::AssertionFailure() << "not done: " << view.dump();
  auto key = g16::read_zkey(data_file(zkey), g16::PointCheck::trusted);
  if (!key) return ::testing::AssertionFailure() << key.error().what();
  auto proof = g16::parse_proof_json(view.at("proof").dump(), "proof");
  if (!proof) return ::testing::AssertionFailure() << proof.error().what();
  auto inputs = g16::parse_public_json(view.at("public").dump(), "public");
  if (!inputs) return ::testing::AssertionFailure() << inputs.error().what();
  if (Error e = g16::verify(key->vk, *proof, *inputs))
    return ::testing::AssertionFailure() << e.what() << ": " << view.dump();
  return ::testing::AssertionSuccess();
}

// Whether a proof runs, asked of /v1/status for up to 5 s.
bool some_proof_runs(const Daemon& d) {
  for (int i = 0; i < 500; ++i) {
    if (d.call("GET", "/v1/status").body["queue"]["running"].get<int>() > 0) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// A connection of our own to the daemon's socket (-1: refused), for bytes
// a client would not send or for several requests on one connection.
int connect_to(const Daemon& d) {
  const int s = ::socket(AF_UNIX, SOCK_STREAM, 0);
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  std::snprintf(addr.sun_path, sizeof addr.sun_path, "%s", d.socket().c_str());
  if (s >= 0 && ::connect(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) return s;
  if (s >= 0) ::close(s);
  return -1;
}

json wait_done(const Daemon& d, const std::string& id) {
  for (int i = 0; i < 600; ++i) {
    auto r = d.call("GET", "/v1/proofs/" + id + "?wait_ms=1000");
    if (r.status != 200) return r.body;
    const std::string state = r.body.value("state", "");
    if (state == "done" || state == "failed" || state == "cancelled") return r.body;
  }
  return json{{"state", "timed out"}};
}

// The engine holds nothing: no job, budget, pinned block or device budget.
::testing::AssertionResult idle(const Daemon& d) {
  for (int i = 0; i < 100; ++i) {
    auto s = d.call("GET", "/v1/status");
    if (s.status == 200 && s.body["engine"]["idle"].get<bool>() &&
        s.body["host"]["budget_in_use_bytes"].get<std::size_t>() == 0 &&
        s.body["host"]["pinned_in_use_bytes"].get<std::size_t>() == 0)
      return ::testing::AssertionSuccess();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return ::testing::AssertionFailure() << "not idle: " << d.call("GET", "/v1/status").text;
}

TEST(Serve, LoadsAKeyProvesAndTheProofVerifies) {
  ScratchDir dir;
  Daemon d(dir.path());
  ASSERT_TRUE(d.started()) << d.log();
  EXPECT_EQ(d.call("GET", "/healthz").status, 200u);
  EXPECT_EQ(d.call("GET", "/readyz").status, 200u);

  auto loaded = d.call("POST", "/v1/keys", load_body("mult", "multiplier.zkey"));
  ASSERT_EQ(loaded.status, 201u) << loaded.text;
  EXPECT_EQ(loaded.body["state"], "ready");
  EXPECT_GT(loaded.body["resident_bytes_per_device"].get<std::size_t>(), 0u);
  // Loading the same key again is not a second load.
  auto again = d.call("POST", "/v1/keys", load_body("mult", "multiplier.zkey"));
  EXPECT_EQ(again.status, 200u) << again.text;
  auto keys = d.call("GET", "/v1/keys");
  ASSERT_EQ(keys.body["keys"].size(), 1u);
  EXPECT_EQ(keys.body["keys"][0]["name"], "mult");

  auto submitted = d.call("POST", "/v1/proofs",
                          json{{"key", "mult"}, {"witness", {{"path", data_file("multiplier.wtns")}}}});
  ASSERT_EQ(submitted.status, 202u) << submitted.text;
  const std::string id = submitted.body["id"];
  EXPECT_EQ(id.size(), 32u);
  const json done = wait_done(d, id);
  EXPECT_TRUE(verifies(done, "multiplier.zkey"));
  // public.json as snarkjs writes it for this witness.
  EXPECT_EQ(done["public"], json::parse(slurp(data_file("multiplier_public.json"))));
  for (const char* t : {"queue_wait", "key_load", "produce", "gpu", "total"})
    EXPECT_TRUE(done["timings_ms"].contains(t)) << t;
  // A key's second proof pays no load time.
  EXPECT_EQ(done["timings_ms"]["key_load"].get<double>(), 0.0);

  // The witness file as the body.
  auto body = d.call("POST", "/v1/proofs?key=mult&priority=high", slurp(data_file("multiplier.wtns")),
                     "application/octet-stream");
  ASSERT_EQ(body.status, 202u) << body.text;
  EXPECT_TRUE(verifies(wait_done(d, body.body["id"]), "multiplier.zkey"));
  EXPECT_TRUE(idle(d));

  auto metrics = d.call("GET", "/metrics");
  EXPECT_EQ(metrics.status, 200u);
  EXPECT_NE(metrics.text.find("stoker_proofs_total{outcome=\"done\"} 2"), std::string::npos)
      << metrics.text;

  auto evicted = d.call("DELETE", "/v1/keys/mult");
  EXPECT_EQ(evicted.status, 200u) << evicted.text;
  EXPECT_EQ(d.call("GET", "/v1/keys").body["keys"].size(), 0u);
  auto after = d.call("POST", "/v1/proofs",
                      json{{"key", "mult"}, {"witness", {{"path", data_file("multiplier.wtns")}}}});
  EXPECT_EQ(after.status, 404u) << after.text;
  EXPECT_EQ(d.stop(SIGTERM), 0) << d.log();
}

TEST(Serve, BadRequestsGetAJsonErrorWithTheirStatusAndTheDaemonGoesOn) {
  ScratchDir dir;
  Daemon d(dir.path(), {"--max-body-bytes", "4096", "--request-timeout-ms", "500"});
  ASSERT_TRUE(d.started()) << d.log();
  ASSERT_EQ(d.call("POST", "/v1/keys", load_body("mult", "multiplier.zkey")).status, 201u);
  struct Case {
    std::string method, target, body, type;
    unsigned status;
    std::string says;
  };
  const std::string wtns = data_file("multiplier.wtns");
  // A key whose A point 1 has an x of all ones (not below q): found as the
  // daemon reads the points onto the devices, named by section, index and
  // byte.
  std::string bad_key = (dir.path() / "bad.zkey").string();
  std::size_t bad_at = 0;
  {
    std::ifstream in(data_file("multiplier.zkey"), std::ios::binary);
    std::vector<char> b((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto u32 = [&](std::size_t at) {
      std::uint32_t v;
      std::memcpy(&v, b.data() + at, 4);
      return v;
    };
    std::size_t pos = 12;
    for (std::uint32_t k = 0; k < u32(8); ++k) {
      std::uint64_t size;
      std::memcpy(&size, b.data() + pos + 4, 8);
      if (u32(pos) == 5) bad_at = pos + 12 + 96;  // section 5 (A points), point 1
      pos += 12 + static_cast<std::size_t>(size);
    }
    ASSERT_NE(bad_at, 0u);
    std::fill(b.begin() + static_cast<long>(bad_at), b.begin() + static_cast<long>(bad_at) + 48,
              static_cast<char>(0xff));
    std::ofstream(bad_key, std::ios::binary).write(b.data(), static_cast<std::streamsize>(b.size()));
  }
  const std::vector<Case> cases{
      {"POST", "/v1/proofs", "{\"key\": \"mult\",", "application/json", 400, "malformed JSON"},
      {"POST", "/v1/proofs", "[1, 2]", "application/json", 400, "JSON object"},
      {"POST", "/v1/proofs", json{{"key", 7}}.dump(), "application/json", 400, "\"key\" must be a string"},
      {"POST", "/v1/proofs", json{{"key", "mult"}, {"witness", "x"}}.dump(), "application/json", 400,
       "\"witness\" must be an object"},
      {"POST", "/v1/proofs", json{{"key", "mult"}, {"priority", "urgent"}, {"witness", {{"path", wtns}}}}.dump(),
       "application/json", 400, "'urgent' is not critical, high, normal or low"},
      {"POST", "/v1/proofs", json{{"key", "nokey"}, {"witness", {{"path", wtns}}}}.dump(), "application/json",
       404, "no key 'nokey'"},
      {"POST", "/v1/proofs", json{{"key", "mult"}, {"witness", {{"path", "/etc/passwd"}}}}.dump(),
       "application/json", 403, "/etc/passwd is outside the directories"},
      {"POST", "/v1/keys", json{{"name", "k2"}, {"path", "/etc/hostname"}, {"format", "zkey"}}.dump(),
       "application/json", 403, "outside the directories"},
      {"POST", "/v1/keys", json{{"name", "k2"}, {"path", wtns}, {"format", "zkey"}}.dump(),
       "application/json", 400, "not a .zkey file"},
      {"POST", "/v1/keys", json{{"name", "k 2"}, {"path", wtns}, {"format", "zkey"}}.dump(),
       "application/json", 400, "key name 'k 2'"},
      {"POST", "/v1/keys", json{{"name", "bad"}, {"path", bad_key}, {"format", "zkey"}}.dump(),
       "application/json", 400, "(A points): point 1 (byte " + std::to_string(bad_at) + ")"},
      {"POST", "/v1/proofs", std::string(5000, 'x'), "application/json", 413, "larger than"},
      {"DELETE", "/v1/proofs/00000000000000000000000000000000", "", "application/json", 404, "no proof"},
      {"GET", "/v1/proofs/nope", "", "application/json", 404, "no proof"},
      {"DELETE", "/v1/keys/nokey", "", "application/json", 404, "no key"},
      {"PUT", "/v1/keys", "{}", "application/json", 405, "not allowed"},
      {"GET", "/v2/anything", "", "application/json", 404, "no endpoint"},
      {"POST", "/v1/shm", json{{"name", "/stoker-test-none"}, {"bytes", 10}}.dump(), "application/json", 404,
       "no shared-memory object"},
  };
  for (const auto& c : cases) {
    auto r = d.call(c.method, c.target, c.body, c.type);
    EXPECT_EQ(r.status, c.status) << c.method << " " << c.target << " " << c.body << ": " << r.text;
    ASSERT_TRUE(r.body.is_object()) << r.text;
    EXPECT_NE(r.body.value("error", "").find(c.says), std::string::npos)
        << c.target << ": " << r.text << " should say " << c.says;
  }
  // A header that never ends: 408 after the request timeout.
  {
    const int s = connect_to(d);
    ASSERT_GE(s, 0);
    const std::string partial = "GET /v1/status HTTP/1.1\r\nHost: x\r\nX-Slow: ";
    ASSERT_EQ(::write(s, partial.data(), partial.size()), static_cast<ssize_t>(partial.size()));
    std::string got;
    char buf[512];
    ssize_t n;
    while ((n = ::read(s, buf, sizeof buf)) > 0) got.append(buf, static_cast<std::size_t>(n));
    ::close(s);
    EXPECT_NE(got.find("408"), std::string::npos) << got;
    EXPECT_NE(got.find("did not arrive within 500 ms"), std::string::npos) << got;
  }
  // Still serving.
  auto ok = d.call("POST", "/v1/proofs",
                   json{{"key", "mult"}, {"witness", {{"path", data_file("multiplier.wtns")}}}});
  ASSERT_EQ(ok.status, 202u) << ok.text;
  EXPECT_TRUE(verifies(wait_done(d, ok.body["id"]), "multiplier.zkey"));
  EXPECT_TRUE(idle(d));
}

TEST(Serve, AnIdempotencyKeyGivesTheFirstRequestsId) {
  ScratchDir dir;
  Daemon d(dir.path());
  ASSERT_TRUE(d.started()) << d.log();
  ASSERT_EQ(d.call("POST", "/v1/keys", load_body("mult", "multiplier.zkey")).status, 201u);
  const json req{{"key", "mult"},
                 {"witness", {{"path", data_file("multiplier.wtns")}}},
                 {"idempotency_key", "client-7-job-42"}};
  auto first = d.call("POST", "/v1/proofs", req);
  ASSERT_EQ(first.status, 202u) << first.text;
  auto second = d.call("POST", "/v1/proofs", req);
  ASSERT_EQ(second.status, 200u) << second.text;
  EXPECT_EQ(second.body["id"], first.body["id"]);
  EXPECT_FALSE(second.body["created"].get<bool>());
  EXPECT_TRUE(verifies(wait_done(d, first.body["id"]), "multiplier.zkey"));
  auto third = d.call("POST", "/v1/proofs", req);
  EXPECT_EQ(third.body["id"], first.body["id"]);
  // A retry is answered before its witness is looked at: after a restart a
  // shared-memory region is not registered again yet, a file may be gone.
  json gone = req;
  gone["witness"] = {{"shm", {{"name", "/stoker-test-not-registered"}, {"offset", 0}, {"bytes", 10}}}};
  auto fourth = d.call("POST", "/v1/proofs", gone);
  EXPECT_EQ(fourth.status, 200u) << fourth.text;
  EXPECT_EQ(fourth.body["id"], first.body["id"]);
}

TEST(Serve, AResultGoesSoonAfterKeepResults) {
  ScratchDir dir;
  Daemon d(dir.path(), {"--keep-results", "1"});
  ASSERT_TRUE(d.started()) << d.log();
  ASSERT_EQ(d.call("POST", "/v1/keys", load_body("mult", "multiplier.zkey")).status, 201u);
  auto p = d.call("POST", "/v1/proofs",
                  json{{"key", "mult"}, {"witness", {{"path", data_file("multiplier.wtns")}}}});
  ASSERT_EQ(p.status, 202u) << p.text;
  const std::string id = p.body["id"];
  EXPECT_TRUE(verifies(wait_done(d, id), "multiplier.zkey"));
  // Kept 1 s, looked for every second: gone within about 2 s of its end.
  const auto ended = std::chrono::steady_clock::now();
  unsigned status = 200;
  while (status == 200 && std::chrono::steady_clock::now() - ended < std::chrono::seconds(10)) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    status = d.call("GET", "/v1/proofs/" + id).status;
  }
  EXPECT_EQ(status, 404u);
  EXPECT_LT(std::chrono::steady_clock::now() - ended, std::chrono::seconds(4));
}

TEST(Serve, SixtyFourClientsWithMixedPrioritiesAllGetProofsThatVerify) {
  ScratchDir dir;
  Daemon d(dir.path(), {"--host-devices", "2"});
  ASSERT_TRUE(d.started()) << d.log();
  ASSERT_EQ(d.call("POST", "/v1/keys", load_body("mult", "multiplier.zkey")).status, 201u);
  ASSERT_EQ(d.call("POST", "/v1/keys", load_body("bits", "bits.zkey")).status, 201u);
  const char* priorities[] = {"low", "normal", "high", "critical"};
  std::vector<json> results(64);
  std::vector<std::thread> clients;
  for (int c = 0; c < 64; ++c)
    clients.emplace_back([&, c] {
      auto client = serve::HttpClient::to("unix:" + d.socket().string()).value();
      const bool bits = c % 3 == 0;
      const json req{{"key", bits ? "bits" : "mult"},
                     {"priority", priorities[c % 4]},
                     {"witness", {{"path", data_file(bits ? "bits.wtns" : "multiplier.wtns")}}}};
      auto r = client.request("POST", "/v1/proofs", req.dump());
      if (!r || r->status != 202) {
        results[c] = json{{"state", "refused"}, {"why", r ? r->body : r.error().what()}};
        return;
      }
      const std::string id = json::parse(r->body)["id"];
      for (int i = 0; i < 300; ++i) {
        auto w = client.request("GET", "/v1/proofs/" + id + "?wait_ms=1000");
        if (!w) continue;
        results[c] = json::parse(w->body);
        const std::string state = results[c].value("state", "");
        if (state == "done" || state == "failed" || state == "cancelled") return;
      }
    });
  for (auto& t : clients) t.join();
  std::set<std::string> ids;
  for (int c = 0; c < 64; ++c) {
    EXPECT_TRUE(verifies(results[c], c % 3 == 0 ? "bits.zkey" : "multiplier.zkey")) << "client " << c;
    ids.insert(results[c].value("id", ""));
  }
  EXPECT_EQ(ids.size(), 64u);
  EXPECT_TRUE(idle(d));
  auto metrics = d.call("GET", "/metrics");
  EXPECT_NE(metrics.text.find("stoker_proofs_total{outcome=\"done\"} 64"), std::string::npos)
      << metrics.text;
}

// One proof at a time: a critical proof submitted behind three queued low
// ones runs right after the one already running, before them.
TEST(Serve, ACriticalProofOvertakesTheQueuedOnes) {
  ScratchDir dir;
  Daemon d(dir.path(), {"--slowdown", "50", "--max-in-flight", "1"});
  ASSERT_TRUE(d.started()) << d.log();
  ASSERT_EQ(d.call("POST", "/v1/keys", load_body("mult", "multiplier.zkey")).status, 201u);
  auto submit = [&](const char* priority) {
    auto r = d.call("POST", "/v1/proofs", json{{"key", "mult"}, {"priority", priority},
                                               {"witness", {{"path", data_file("multiplier.wtns")}}}});
    EXPECT_EQ(r.status, 202u) << r.text;
    return r.body.value("id", "");
  };
  std::vector<std::string> low;
  for (int i = 0; i < 4; ++i) low.push_back(submit("low"));
  const std::string critical = submit("critical");
  EXPECT_TRUE(verifies(wait_done(d, critical), "multiplier.zkey"));
  // At most the low proof that was already running has ended.
  int ended = 0;
  for (std::size_t i = 1; i < low.size(); ++i) {
    const json waiting = d.call("GET", "/v1/proofs/" + low[i]).body;
    ended += waiting["state"] == "done";
    // A proof not yet ended answers every stage's time so far.
    for (const char* stage : {"queue_wait", "key_load", "produce", "gpu", "total"})
      EXPECT_TRUE(waiting["timings_ms"].contains(stage) && waiting["timings_ms"][stage].is_number())
          << stage << " of " << waiting.dump();
  }
  EXPECT_EQ(ended, 0);
  for (const auto& id : low) EXPECT_TRUE(verifies(wait_done(d, id), "multiplier.zkey"));
}

TEST(Serve, CancellingAndEvictingMidRunGiveEveryByteBack) {
  ScratchDir dir;
  // Slow kernels and one proof at a time: the first proof is running while
  // the others wait, when they are cancelled.
  Daemon d(dir.path(), {"--slowdown", "100", "--max-in-flight", "1"});
  ASSERT_TRUE(d.started()) << d.log();
  ASSERT_EQ(d.call("POST", "/v1/keys", load_body("bits", "bits.zkey")).status, 201u);
  const json bits{{"key", "bits"}, {"witness", {{"path", data_file("bits.wtns")}}}};
  std::vector<std::string> ids;
  for (int i = 0; i < 4; ++i) {
    auto r = d.call("POST", "/v1/proofs", bits);
    ASSERT_EQ(r.status, 202u) << r.text;
    ids.push_back(r.body["id"]);
  }
  for (const auto& id : ids) {
    auto r = d.call("DELETE", "/v1/proofs/" + id);
    EXPECT_EQ(r.status, 200u) << r.text;
  }
  for (const auto& id : ids) EXPECT_EQ(wait_done(d, id)["state"], "cancelled") << id;
  EXPECT_TRUE(idle(d));
  EXPECT_EQ(d.call("DELETE", "/v1/proofs/" + ids[0]).status, 409u);

  // Eviction while a proof runs: it finishes, later requests get 409, then
  // the key is gone (404) and its device memory is free.
  auto running = d.call("POST", "/v1/proofs", bits);
  ASSERT_EQ(running.status, 202u);
  std::thread evictor([&] { EXPECT_EQ(d.call("DELETE", "/v1/keys/bits").status, 200u); });
  bool evicting = false;
  for (int i = 0; i < 200 && !evicting; ++i) {
    auto keys = d.call("GET", "/v1/keys");
    evicting = !keys.body["keys"].empty() && keys.body["keys"][0]["state"] == "evicting";
    if (!evicting) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(evicting);
  EXPECT_EQ(d.call("POST", "/v1/proofs", bits).status, 409u);
  evictor.join();
  EXPECT_TRUE(verifies(wait_done(d, running.body["id"]), "bits.zkey"));
  EXPECT_EQ(d.call("POST", "/v1/proofs", bits).status, 404u);
  EXPECT_TRUE(idle(d));
  auto status = d.call("GET", "/v1/status");
  for (const auto& dev : status.body["devices"]) {
    EXPECT_EQ(dev["budget_in_use_bytes"].get<std::size_t>(), 0u) << status.text;
    EXPECT_EQ(dev["resident_bytes"].get<std::size_t>(), 0u) << status.text;
  }
}

TEST(Serve, KilledMidRunAndRestartedEveryAcceptedProofCompletesOnce) {
  ScratchDir dir;
  std::vector<std::string> ids;
  {
    Daemon d(dir.path(), {"--slowdown", "200", "--max-in-flight", "1"});
    ASSERT_TRUE(d.started()) << d.log();
    ASSERT_EQ(d.call("POST", "/v1/keys", load_body("mult", "multiplier.zkey")).status, 201u);
    for (int i = 0; i < 8; ++i) {
      auto r = d.call("POST", "/v1/proofs",
                      json{{"key", "mult"}, {"witness", {{"path", data_file("multiplier.wtns")}}}});
      ASSERT_EQ(r.status, 202u) << r.text;
      ids.push_back(r.body["id"]);
    }
    // A body's copy too, which must survive the kill.
    auto r = d.call("POST", "/v1/proofs?key=mult", slurp(data_file("multiplier.wtns")),
                    "application/octet-stream");
    ASSERT_EQ(r.status, 202u) << r.text;
    ids.push_back(r.body["id"]);
    // Killed while a proof runs.
    EXPECT_TRUE(some_proof_runs(d));
    EXPECT_EQ(d.stop(SIGKILL), -1);
  }
  Daemon d(dir.path());
  ASSERT_TRUE(d.started()) << d.log();
  for (int i = 0; i < 200 && d.call("GET", "/readyz").status != 200; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(d.call("GET", "/v1/keys").body["keys"].size(), 1u);
  unsigned restarted = 0;
  for (const auto& id : ids) {
    const json end = wait_done(d, id);
    EXPECT_TRUE(verifies(end, "multiplier.zkey")) << id;
    // Ran to its end once: the proof that was running at the kill started twice.
    EXPECT_LE(end["attempts"].get<unsigned>(), 2u);
    restarted += end["attempts"].get<unsigned>() == 2;
  }
  EXPECT_EQ(restarted, 1u);
  auto metrics = d.call("GET", "/metrics");
  // This process ended every proof that had not ended before the kill, each once.
  const auto done_line = metrics.text.find("stoker_proofs_total{outcome=\"done\"} ");
  ASSERT_NE(done_line, std::string::npos);
  EXPECT_LE(std::stoul(metrics.text.substr(done_line + 36)), ids.size());
  EXPECT_TRUE(idle(d));
  EXPECT_EQ(d.stop(SIGTERM), 0);
}

TEST(Serve, WitnessesInSharedMemoryOfTheCallerOnly) {
  ScratchDir dir;
  Daemon d(dir.path());
  ASSERT_TRUE(d.started()) << d.log();
  ASSERT_EQ(d.call("POST", "/v1/keys", load_body("mult", "multiplier.zkey")).status, 201u);
  const std::string wtns = slurp(data_file("multiplier.wtns"));
  const std::string name = "/stoker-test-" + std::to_string(::getpid());
  const int fd = ::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::ftruncate(fd, 4096 + static_cast<off_t>(wtns.size())), 0);
  ASSERT_EQ(::pwrite(fd, wtns.data(), wtns.size(), 4096), static_cast<ssize_t>(wtns.size()));
  auto reg = d.call("POST", "/v1/shm", json{{"name", name}, {"bytes", 4096 + wtns.size()}});
  ASSERT_EQ(reg.status, 201u) << reg.text;
  auto p = d.call("POST", "/v1/proofs",
                  json{{"key", "mult"},
                       {"witness", {{"shm", {{"name", name}, {"offset", 4096}, {"bytes", wtns.size()}}}}}});
  ASSERT_EQ(p.status, 202u) << p.text;
  EXPECT_TRUE(verifies(wait_done(d, p.body["id"]), "multiplier.zkey"));
  // A region smaller than the request claims.
  auto past = d.call("POST", "/v1/proofs",
                     json{{"key", "mult"},
                          {"witness", {{"shm", {{"name", name}, {"offset", 4096}, {"bytes", wtns.size() + 1}}}}}});
  EXPECT_EQ(past.status, 400u) << past.text;
  EXPECT_NE(past.body.value("error", "").find("runs past region"), std::string::npos) << past.text;
  // More bytes registered than the object holds.
  const std::string other = name + "-b";
  const int fd2 = ::shm_open(other.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  ASSERT_GE(fd2, 0);
  ASSERT_EQ(::ftruncate(fd2, 100), 0);
  auto big = d.call("POST", "/v1/shm", json{{"name", other}, {"bytes", 1000}});
  EXPECT_EQ(big.status, 400u) << big.text;
  // Another user's object (root can make one for the test).
  if (::geteuid() == 0 && ::fchown(fd2, 65534, 65534) == 0) {
    auto foreign = d.call("POST", "/v1/shm", json{{"name", other}, {"bytes", 10}});
    EXPECT_EQ(foreign.status, 403u) << foreign.text;
    EXPECT_NE(foreign.body.value("error", "").find("belongs to uid 65534"), std::string::npos)
        << foreign.text;
  } else {
    // Only root can give an object to another user: said, not passed over.
    std::printf("[   NOTE   ] another user's object not tried: the test is not root\n");
    RecordProperty("foreign_object", "not tried: not root");
  }
  EXPECT_EQ(d.call("DELETE", "/v1/shm" + name).status, 200u);
  EXPECT_EQ(d.call("DELETE", "/v1/shm" + name).status, 404u);
  ::close(fd);
  ::close(fd2);
  ::shm_unlink(name.c_str());
  ::shm_unlink(other.c_str());
  EXPECT_TRUE(idle(d));
}

// GET /v1/status over TCP with the header given as written: the status
// of the answer, or -1.
int raw_tcp_status(int port, const std::string& header) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string reply;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    const std::string req = "GET /v1/status HTTP/1.1\r\nHost: localhost\r\n" + header +
                            "\r\nConnection: close\r\n\r\n";
    if (::write(fd, req.data(), req.size()) == static_cast<ssize_t>(req.size())) {
      char buf[256];
      ssize_t got = ::read(fd, buf, sizeof buf);
      if (got > 0) reply.assign(buf, static_cast<std::size_t>(got));
    }
  }
  ::close(fd);
  if (reply.rfind("HTTP/1.1 ", 0) != 0 || reply.size() < 12) return -1;
  return std::stoi(reply.substr(9, 3));
}

TEST(Serve, TcpNeedsATokenAndRefusesRequestsWithoutIt) {
  ScratchDir dir;
  const auto token_file = dir.path() / "token";
  {
    std::ofstream(token_file) << "0123456789abcdef0123456789abcdef\n";
    ::chmod(token_file.c_str(), 0600);
  }
  // Without a token file the daemon does not start on TCP.
  {
    Daemon d(dir.path(), {"--listen", "127.0.0.1:0"});
    EXPECT_FALSE(d.started());
  }
  Daemon d(dir.path(), {"--listen", "127.0.0.1:0", "--token-file", token_file.string()});
  ASSERT_TRUE(d.started()) << d.log();
  const std::string log = d.log();
  const auto at = log.find("tcp:");
  ASSERT_NE(at, std::string::npos) << log;
  const std::string where = log.substr(at + 4, log.find(';', at) - at - 4);  // HOST:PORT
  const std::string port = where.substr(where.rfind(':') + 1);
  auto anonymous = serve::HttpClient::to("http://127.0.0.1:" + port).value();
  auto r = anonymous.request("GET", "/v1/status");
  ASSERT_TRUE(r.ok()) << r.error().what();
  EXPECT_EQ(r->status, 401u);
  auto wrong = serve::HttpClient::to("http://127.0.0.1:" + port, "0123456789abcdef0123456789abcdeX").value();
  EXPECT_EQ(wrong.request("GET", "/v1/status")->status, 401u);
  auto right = serve::HttpClient::to("http://127.0.0.1:" + port, "0123456789abcdef0123456789abcdef").value();
  EXPECT_EQ(right.request("GET", "/v1/status")->status, 200u);
  // The scheme's name in any case (RFC 9110); the startup line names the host.
  EXPECT_EQ(raw_tcp_status(std::stoi(port),
                           "Authorization: bEaReR 0123456789abcdef0123456789abcdef"),
            200);
  EXPECT_EQ(where, "127.0.0.1:" + port);
}

TEST(Serve, RefusesToStartWithoutWhatItNeedsSayingWhat) {
  ScratchDir dir;
  const auto token = dir.path() / "token";
  std::ofstream(token) << "0123456789abcdef0123456789abcdef\n";
  ::chmod(token.c_str(), 0644);
  {
    Daemon d(dir.path(), {"--listen", "127.0.0.1:0", "--token-file", token.string()});
    EXPECT_FALSE(d.started());
    EXPECT_NE(d.log().find("can be read by other users"), std::string::npos) << d.log();
  }
  {
    Daemon d(dir.path(), {"--allow-dir", (dir.path() / "missing").string()});
    EXPECT_FALSE(d.started());
    EXPECT_NE(d.log().find("--allow-dir " + (dir.path() / "missing").string() + " is not a directory"),
              std::string::npos)
        << d.log();
  }
  // A second daemon on the same socket (another state directory): refused,
  // and the first keeps it.
  Daemon first(dir.path());
  ASSERT_TRUE(first.started()) << first.log();
  {
    ScratchDir other;
    // Its health check reaches the first daemon: wait for it to exit.
    Daemon second(other.path(), {}, first.socket());
    EXPECT_EQ(second.wait_exit(), 1);
    EXPECT_NE(second.log().find("another daemon is listening on it"), std::string::npos)
        << second.log();
  }
  // A second daemon on the same state directory (another socket): refused
  // before it reads the journal, which it would otherwise run a second time.
  {
    Daemon second(dir.path(), {}, dir.path() / "second.sock");
    EXPECT_EQ(second.wait_exit(), 1);
    EXPECT_NE(second.log().find("is in use by another stoker serve (pid "), std::string::npos)
        << second.log();
  }
  EXPECT_EQ(first.call("GET", "/healthz").status, 200u);
  // What the daemon writes is its user's alone.
  struct stat journal {};
  ASSERT_EQ(::stat((dir.path() / "journal.sqlite3").c_str(), &journal), 0);
  EXPECT_EQ(journal.st_mode & 0077, 0u);
  struct stat st {};
  ASSERT_EQ(::stat(first.socket().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0660u);
}

TEST(Serve, SigtermWithProofsQueuedExitsZeroAndTheyRunAfterTheRestart) {
  ScratchDir dir;
  std::vector<std::string> ids;
  {
    Daemon d(dir.path(), {"--slowdown", "200", "--max-in-flight", "1", "--drain-timeout", "30"});
    ASSERT_TRUE(d.started()) << d.log();
    ASSERT_EQ(d.call("POST", "/v1/keys", load_body("mult", "multiplier.zkey")).status, 201u);
    for (int i = 0; i < 4; ++i) {
      auto r = d.call("POST", "/v1/proofs",
                      json{{"key", "mult"}, {"witness", {{"path", data_file("multiplier.wtns")}}}});
      ASSERT_EQ(r.status, 202u);
      ids.push_back(r.body["id"]);
    }
    EXPECT_EQ(d.stop(SIGTERM), 0) << d.log();
  }
  Daemon d(dir.path());
  ASSERT_TRUE(d.started()) << d.log();
  for (const auto& id : ids) EXPECT_TRUE(verifies(wait_done(d, id), "multiplier.zkey"));
}

// A key read still going at SIGTERM ends before the daemon does: the engine
// is destroyed on the way out, and a worker that went on to upload the key
// would use it after that. The key is a FIFO, whose open() blocks the read
// until the test opens the other end.
// One HTTP/1.1 exchange on an open connection: the status and the body
// (read up to its Content-Length).
std::pair<unsigned, std::string> http_exchange(int s, const std::string& request) {
  if (::write(s, request.data(), request.size()) != static_cast<ssize_t>(request.size()))
    return {0, "write failed"};
  std::string got;
  char buf[4096];
  std::size_t head_end = std::string::npos, length = 0;
  while (head_end == std::string::npos || got.size() < head_end + 4 + length) {
    const ssize_t n = ::read(s, buf, sizeof buf);
    if (n <= 0) return {0, got};
    got.append(buf, static_cast<std::size_t>(n));
    if (head_end == std::string::npos && (head_end = got.find("\r\n\r\n")) != std::string::npos) {
      std::string head = got.substr(0, head_end);
      for (auto& c : head) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      const auto at = head.find("content-length:");
      length = at == std::string::npos ? 0 : std::stoul(head.substr(at + 15));
    }
  }
  const unsigned status = got.size() > 12 ? static_cast<unsigned>(std::stoul(got.substr(9, 3))) : 0;
  return {status, got.substr(head_end + 4, length)};
}

// SIGTERM: the listener closes, and a request on a connection already open
// is answered 503 with a JSON error while the running proof ends.
TEST(Serve, WhileDrainingNewWorkIsRefusedWith503) {
  ScratchDir dir;
  // Each of the running proof's steps slowed, so that it runs well past
  // the request below.
  Daemon d(dir.path(), {"--slowdown", "150", "--max-in-flight", "1", "--drain-timeout", "30"});
  ASSERT_TRUE(d.started()) << d.log();
  ASSERT_EQ(d.call("POST", "/v1/keys", load_body("mult", "multiplier.zkey")).status, 201u);
  const json proof{{"key", "mult"}, {"witness", {{"path", data_file("multiplier.wtns")}}}};
  for (int i = 0; i < 2; ++i) ASSERT_EQ(d.call("POST", "/v1/proofs", proof).status, 202u);
  const int s = connect_to(d);
  ASSERT_GE(s, 0);
  const auto health = http_exchange(s, "GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n");
  ASSERT_EQ(health.first, 200u) << health.second;
  ASSERT_EQ(::kill(d.pid(), SIGTERM), 0);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  const std::string body = proof.dump();
  const auto refused =
      http_exchange(s, "POST /v1/proofs HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                  "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body);
  ::close(s);
  EXPECT_EQ(refused.first, 503u) << refused.second;
  const json error = json::parse(refused.second, nullptr, false);
  ASSERT_TRUE(error.is_object()) << refused.second;
  EXPECT_NE(error.value("error", "").find("draining"), std::string::npos) << refused.second;
  EXPECT_EQ(d.wait_exit(), 0) << d.log();
}

// A running proof that outlasts --drain-timeout is queued again at the
// deadline (stopped at its next stage, or when its last one ends): the
// daemon exits 0, and after a restart it runs a second time and every
// accepted proof completes.
TEST(Serve, ADrainPastItsTimeoutRequeuesTheRunningProof) {
  ScratchDir dir;
  std::vector<std::string> ids;
  {
    Daemon d(dir.path(), {"--slowdown", "200", "--max-in-flight", "1", "--drain-timeout", "1"});
    ASSERT_TRUE(d.started()) << d.log();
    ASSERT_EQ(d.call("POST", "/v1/keys", load_body("mult", "multiplier.zkey")).status, 201u);
    for (int i = 0; i < 2; ++i) {
      auto r = d.call("POST", "/v1/proofs",
                      json{{"key", "mult"}, {"witness", {{"path", data_file("multiplier.wtns")}}}});
      ASSERT_EQ(r.status, 202u) << r.text;
      ids.push_back(r.body["id"]);
    }
    ASSERT_TRUE(some_proof_runs(d));
    EXPECT_EQ(d.stop(SIGTERM), 0) << d.log();
  }
  Daemon d(dir.path());
  ASSERT_TRUE(d.started()) << d.log();
  for (int i = 0; i < 200 && d.call("GET", "/readyz").status != 200; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::vector<unsigned> attempts;
  for (const auto& id : ids) {
    const json end = wait_done(d, id);
    EXPECT_TRUE(verifies(end, "multiplier.zkey")) << id << ": " << end.dump();
    attempts.push_back(end.value("attempts", 0u));
  }
  // The first started before the drain and again after the restart; the
  // second waited in the queue throughout.
  EXPECT_EQ(attempts, (std::vector<unsigned>{2, 1}));
  EXPECT_TRUE(idle(d));
}

TEST(Serve, SigtermWhileAKeyIsReadWaitsForTheReadThenExitsZero) {
  ScratchDir dir;
  const fs::path fifo = dir.path() / "slow.params";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  Daemon d(dir.path());
  ASSERT_TRUE(d.started()) << d.log();
  std::atomic<bool> answered{false};
  std::thread loader([&] {
    d.call("POST", "/v1/keys",
           json{{"name", "slow"}, {"path", fifo.string()}, {"format", "bellman"}});
    answered = true;
  });
  bool loading = false;
  for (int i = 0; i < 500 && !loading; ++i) {
    auto keys = d.call("GET", "/v1/keys");
    loading = !keys.body["keys"].empty() && keys.body["keys"][0]["state"] == "loading";
    if (!loading) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(loading);
  if (loading && ::kill(d.pid(), SIGTERM) == 0) {
    // The daemon closes its connections once drained, just before it tears
    // down; it must then still be there, waiting for the read.
    for (int i = 0; i < 600 && !answered; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    EXPECT_TRUE(answered.load());
    std::this_thread::sleep_for(std::chrono::seconds(2));
    siginfo_t info{};
    EXPECT_EQ(::waitid(P_PID, static_cast<id_t>(d.pid()), &info, WEXITED | WNOHANG | WNOWAIT), 0);
    EXPECT_EQ(info.si_pid, 0) << "exited while its worker was still reading the key: " << d.log();
    // The writer's end ends the read: the daemon exits, and cleanly.
    const int w = ::open(fifo.c_str(), O_WRONLY | O_NONBLOCK);
    EXPECT_GE(w, 0) << std::strerror(errno);
    if (w >= 0) {
      ::close(w);
      EXPECT_EQ(d.wait_exit(), 0) << d.log();
    }
  }
  d.stop(SIGKILL);  // only if a step above failed and it still runs
  loader.join();
}

}  // namespace
}  // namespace stoker::test
