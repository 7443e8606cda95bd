// The daemon's command-line clients as a user runs them against a real
// `stoker serve` on the host backend: `stoker keys load|list|evict
// --server` and `stoker prove --server`, their outputs checked by `stoker
// verify`, their exit statuses (0 done, 1 a failure, 2 a usage error) and
// one-line messages that name what went wrong.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fstream>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "daemon.hpp"
#include "test/tools/stoker_process.hpp"

namespace stoker::test {
namespace {

using json = nlohmann::json;

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

std::string server_of(const Daemon& d) {
  return "unix:" + d.socket().string();
}

std::string load_line(const Daemon& d, const std::string& name, const std::string& path,
                      const std::string& format = "zkey") {
  return "keys load --server " + server_of(d) + " --name " + name + " --path " + path +
         " --format " + format;
}

// `stoker prove --server` for the multiplier circuit, outputs in `dir`.
std::string prove_line(const Daemon& d, const fs::path& dir, const std::string& more = {}) {
  return "prove --server " + server_of(d) + " --key mult --wtns " + data_file("multiplier.wtns") +
         " --proof " + (dir / "proof.json").string() + " --public " +
         (dir / "public.json").string() + (more.empty() ? "" : " " + more);
}

Outcome verify_multiplier(const fs::path& dir) {
  return run_stoker("verify --vk " + data_file("multiplier_verification_key.json") + " --proof " +
                    (dir / "proof.json").string() + " --public " + (dir / "public.json").string());
}

// The proof's id in prove's line ("proof 0123... by unix:...").
std::string proof_id(const std::string& out) {
  std::smatch m;
  return std::regex_search(out, m, std::regex("^proof ([0-9a-f]+) by ")) ? m[1].str() : "";
}

TEST(ServeCli, KeysLoadListAndEvictRoundTrip) {
  ScratchDir dir;
  Daemon d(dir.path());
  ASSERT_TRUE(d.started()) << d.log();
  const std::string server = server_of(d);

  auto empty = run_stoker("keys list --server " + server);
  EXPECT_EQ(empty.status, 0) << empty.both();
  EXPECT_EQ(empty.out, "no keys on " + server + "\n");

  // A relative path is made absolute here, where it means what the user meant.
  // Resident: 91 G1 points (H, L, A, B_G1), B_G2's 26 G2 points and the
  // A and B matrices' rows in 3 slots, (91 + 3) * 96 + 26 * 192 = 14016
  // bytes.
  auto loaded = run_shell(std::string("cd ") + STOKER_GROTH16_DATA_DIR + " && " + STOKER_BINARY +
                          " " + load_line(d, "mult", "multiplier.zkey"));
  ASSERT_EQ(loaded.status, 0) << loaded.both();
  EXPECT_TRUE(has(loaded.out, "key 'mult' loaded on " + server +
                                  ": zkey, 2^4 points, 26 wires, "
                                  "2 public; 14016 bytes (13.7 KiB) resident on each of 1 device"))
      << loaded.out;
  EXPECT_TRUE(has(loaded.out, "(points checked)")) << loaded.out;
  EXPECT_EQ(lines(loaded.out), 1);
  auto again = run_stoker(load_line(d, "mult", data_file("multiplier.zkey")));
  EXPECT_EQ(again.status, 0) << again.both();
  EXPECT_TRUE(has(again.out, "key 'mult' was loaded already")) << again.out;

  auto table = run_stoker("keys list --server " + server);
  EXPECT_EQ(table.status, 0) << table.both();
  EXPECT_EQ(table.out,
            "NAME  STATE  FORMAT  LOG_N  WIRES  RESIDENT_BYTES_PER_DEVICE\n"
            "mult  ready  zkey    4      26     14016\n");
  auto listed = run_stoker("keys list --server " + server + " --json");
  ASSERT_EQ(listed.status, 0) << listed.both();
  const json keys = json::parse(listed.out)["keys"];
  ASSERT_EQ(keys.size(), 1u) << listed.out;
  EXPECT_EQ(keys[0]["path"], data_file("multiplier.zkey"));

  auto evicted = run_stoker("keys evict --server " + server + " --name mult");
  EXPECT_EQ(evicted.status, 0) << evicted.both();
  EXPECT_EQ(evicted.out,
            "key 'mult' evicted from " + server + ": 14016 bytes (13.7 KiB) freed on each device\n");
  EXPECT_EQ(run_stoker("keys list --server " + server).out, "no keys on " + server + "\n");
  auto twice = run_stoker("keys evict --server " + server + " --name mult");
  EXPECT_EQ(twice.status, 1) << twice.both();
  EXPECT_EQ(twice.err, "stoker keys evict: " + server + ": no key 'mult' (HTTP 404)\n");

  // Loaded again, the file's points were checked before: its digest is in
  // the daemon's record (under its state directory).
  auto reloaded = run_stoker(load_line(d, "mult", data_file("multiplier.zkey")));
  EXPECT_EQ(reloaded.status, 0) << reloaded.both();
  EXPECT_TRUE(has(reloaded.out, "(points checked before: its digest in")) << reloaded.out;
  EXPECT_TRUE(fs::exists(dir.path() / "checked-keys"));
}

TEST(ServeCli, ProvesWithTheWitnessSentOrByPathAndStokerVerifiesTheProof) {
  ScratchDir dir;
  Daemon d(dir.path());
  ASSERT_TRUE(d.started()) << d.log();
  ASSERT_EQ(run_stoker(load_line(d, "mult", data_file("multiplier.zkey"))).status, 0);

  auto sent = run_stoker(prove_line(d, dir.path()));
  ASSERT_EQ(sent.status, 0) << sent.both();
  EXPECT_TRUE(has(sent.out, "the witness sent")) << sent.out;
  EXPECT_EQ(lines(sent.out), 1);
  auto checked = verify_multiplier(dir.path());
  EXPECT_EQ(checked.status, 0) << checked.both();
  // Byte for byte what snarkjs wrote for this witness.
  EXPECT_EQ(slurp(dir.path() / "public.json"), slurp(data_file("multiplier_public.json")));

  fs::remove(dir.path() / "proof.json");
  fs::remove(dir.path() / "public.json");
  auto by_path = run_stoker(prove_line(d, dir.path(), "--witness-by path --priority critical"));
  ASSERT_EQ(by_path.status, 0) << by_path.both();
  EXPECT_TRUE(has(by_path.out, "the witness read there from its path")) << by_path.out;
  checked = verify_multiplier(dir.path());
  EXPECT_EQ(checked.status, 0) << checked.both();
  EXPECT_EQ(slurp(dir.path() / "public.json"), slurp(data_file("multiplier_public.json")));

  // The same idempotency key again: the first request's proof.
  auto first = run_stoker(prove_line(d, dir.path(), "--idempotency-key 'job 7/a'"));
  auto second = run_stoker(prove_line(d, dir.path(), "--idempotency-key 'job 7/a'"));
  ASSERT_EQ(first.status, 0) << first.both();
  ASSERT_EQ(second.status, 0) << second.both();
  EXPECT_NE(proof_id(first.out), "");
  EXPECT_EQ(proof_id(first.out), proof_id(second.out));
  EXPECT_NE(proof_id(first.out), proof_id(sent.out));
}

TEST(ServeCli, ProvesWithABellmanKeyAndStokerVerifiesTheProofBytes) {
  ScratchDir dir;
  Daemon d(dir.path());
  ASSERT_TRUE(d.started()) << d.log();
  const fs::path params = dir.path() / "toy.params", witness = dir.path() / "toy.bwit";
  auto made = run_stoker("keys generate --log-n 5 --seed 7 --params " + params.string() +
                         " --witness " + witness.string());
  ASSERT_EQ(made.status, 0) << made.both();
  auto loaded = run_stoker(load_line(d, "toy", params.string(), "bellman"));
  ASSERT_EQ(loaded.status, 0) << loaded.both();
  EXPECT_TRUE(has(loaded.out, "bellman, 2^5 points")) << loaded.out;

  const fs::path proof = dir.path() / "toy.proof", inputs = dir.path() / "toy.inputs";
  auto proved =
      run_stoker("prove --server " + server_of(d) + " --key toy --witness " + witness.string() +
                 " --proof-bytes " + proof.string() + " --inputs " + inputs.string());
  ASSERT_EQ(proved.status, 0) << proved.both();
  EXPECT_EQ(fs::file_size(proof), 192u);
  auto checked = run_stoker("verify --params " + params.string() + " --proof-bytes " +
                            proof.string() + " --inputs " + inputs.string());
  EXPECT_EQ(checked.status, 0) << checked.both();

  // A zkey witness for a bellman key is refused before anything is sent.
  auto wrong =
      run_stoker("prove --server " + server_of(d) + " --key toy --wtns " +
                 data_file("multiplier.wtns") + " --proof " + (dir.path() / "p.json").string() +
                 " --public " + (dir.path() / "q.json").string());
  EXPECT_EQ(wrong.status, 1) << wrong.both();
  EXPECT_TRUE(has(wrong.err, "key 'toy' on " + server_of(d) + " is a bellman key")) << wrong.err;
}

TEST(ServeCli, AnUnknownKeyOrAFailedProofExitsOneNamingItAndWritesNothing) {
  ScratchDir dir;
  Daemon d(dir.path());
  ASSERT_TRUE(d.started()) << d.log();
  auto unknown = run_stoker(prove_line(d, dir.path()));
  EXPECT_EQ(unknown.status, 1) << unknown.both();
  EXPECT_EQ(unknown.err,
            "stoker prove: " + server_of(d) + " has no key 'mult' (stoker keys load first)\n");

  ASSERT_EQ(run_stoker(load_line(d, "mult", data_file("multiplier.zkey"))).status, 0);
  auto failed =
      run_stoker("prove --server " + server_of(d) + " --key mult --wtns " + data_file("bits.wtns") +
                 " --proof " + (dir.path() / "proof.json").string() + " --public " +
                 (dir.path() / "public.json").string());
  EXPECT_EQ(failed.status, 1) << failed.both();
  EXPECT_TRUE(has(failed.err, "failed on " + server_of(d) + ": ")) << failed.err;
  EXPECT_TRUE(has(failed.err, "the witness holds 100, the key wants 26")) << failed.err;
  EXPECT_EQ(lines(failed.err), 1) << failed.err;

  auto outside = run_stoker(load_line(d, "host", "/etc/hostname"));
  EXPECT_EQ(outside.status, 1) << outside.both();
  EXPECT_TRUE(has(outside.err, "/etc/hostname is outside the directories this daemon may read"))
      << outside.err;
  EXPECT_FALSE(fs::exists(dir.path() / "proof.json"));
  EXPECT_FALSE(fs::exists(dir.path() / "public.json"));
}

TEST(ServeCli, AnUnreachableDaemonExitsOneNamingTheServer) {
  ScratchDir dir;
  const std::string server = "unix:" + (dir.path() / "nobody.sock").string();
  for (const std::string& line :
       {"keys list --server " + server, "keys evict --server " + server + " --name mult",
        "keys load --server " + server + " --name mult --path " + data_file("multiplier.zkey") +
            " --format zkey",
        "prove --server " + server + " --key mult --wtns " + data_file("multiplier.wtns") +
            " --proof " + (dir.path() / "proof.json").string() + " --public " +
            (dir.path() / "public.json").string()}) {
    auto r = run_stoker(line);
    EXPECT_EQ(r.status, 1) << line << "\n" << r.both();
    EXPECT_TRUE(has(r.err, server + ": cannot connect")) << r.err;
    EXPECT_EQ(lines(r.err), 1) << r.err;
  }
  EXPECT_FALSE(fs::exists(dir.path() / "proof.json"));
}

TEST(ServeCli, BadUsageExitsTwoBeforeAnythingIsSent) {
  ScratchDir dir;
  const std::string out = " --proof " + (dir.path() / "proof.json").string() + " --public " +
                          (dir.path() / "public.json").string();
  const std::string server = " --server unix:" + (dir.path() / "d.sock").string();
  const std::string wtns = " --wtns " + data_file("multiplier.wtns");
  const struct {
    std::string line, says;
  } cases[] = {
      {"prove" + server + " --key mult" + wtns + out + " --threads 2",
       "--threads does not go with --server"},
      {"prove" + server + " --key mult" + wtns + out + " --no-verify",
       "--no-verify does not go with --server"},
      {"prove" + server + " --key mult --zkey " + data_file("multiplier.zkey") + wtns + out,
       "--zkey does not go with --server"},
      {"prove" + server + wtns + out, "--server needs --key NAME"},
      {"prove --key mult --zkey " + data_file("multiplier.zkey") + wtns + out,
       "--key goes with --server"},
      {"prove" + server + " --key mult" + wtns + " --proof " + (dir.path() / "p.json").string(),
       "--wtns needs --public"},
      {"prove" + server + " --key mult" + wtns + out + " --priority urgent",
       "--priority: 'urgent' is not critical, high, normal or low"},
      {"prove" + server + " --key mult" + wtns + out + " --witness-by shm",
       "--witness-by: 'shm' is not body or path"},
      {"prove --server somewhere --key mult" + wtns + out,
       "--server 'somewhere' is not unix:PATH or http://HOST:PORT"},
      {"prove --server http://127.0.0.1:9 --key mult" + wtns + out,
       "--server http://127.0.0.1:9 needs --token-file"},
      {"prove" + server + " --key mult --wtns " + (dir.path() / "missing.wtns").string() + out,
       "missing.wtns: cannot read"},
      {"keys load" + server + " --path x.zkey --format zkey", "--name is required"},
      {"keys load" + server + " --name m --path x.zkey --format plonk",
       "--format: 'plonk' is not zkey or bellman"},
      {"keys list", "--server is required"},
      {"keys evict" + server, "--name is required"},
      {"keys list" + server + " --token-file " + (dir.path() / "none").string(),
       "--token-file " + (dir.path() / "none").string() + ": cannot be read"},
  };
  for (const auto& c : cases) {
    auto r = run_stoker(c.line);
    EXPECT_EQ(r.status, 2) << c.line << "\n" << r.both();
    EXPECT_TRUE(has(r.err, c.says)) << c.line << "\n" << r.err;
    EXPECT_EQ(lines(r.err), 1) << r.err;
  }
  EXPECT_FALSE(fs::exists(dir.path() / "proof.json"));
  // The toy-key generator beside the new verbs answers as before.
  auto generate = run_stoker("keys generate --seed 1 --zkey " + (dir.path() / "k.zkey").string());
  EXPECT_EQ(generate.status, 2);
  EXPECT_EQ(generate.err, "stoker keys generate: --log-n is required\n");
}

TEST(ServeCli, AnHttpServerTakesTheTokenFromTheTokenFile) {
  ScratchDir dir;
  const auto token = dir.path() / "token";
  std::ofstream(token) << "0123456789abcdef0123456789abcdef\n";
  ::chmod(token.c_str(), 0600);
  Daemon d(dir.path(), {"--listen", "127.0.0.1:0", "--token-file", token.string()});
  ASSERT_TRUE(d.started()) << d.log();
  const std::string log = d.log();
  const auto at = log.find("tcp:");
  ASSERT_NE(at, std::string::npos) << log;
  const std::string server = "http://" + log.substr(at + 4, log.find(';', at) - at - 4);
  auto listed = run_stoker("keys list --server " + server + " --token-file " + token.string());
  EXPECT_EQ(listed.status, 0) << listed.both();
  EXPECT_EQ(listed.out, "no keys on " + server + "\n");

  const auto wrong = dir.path() / "wrong";
  std::ofstream(wrong) << "not-the-token\n";
  auto refused = run_stoker("keys list --server " + server + " --token-file " + wrong.string());
  EXPECT_EQ(refused.status, 1) << refused.both();
  EXPECT_TRUE(has(refused.err, server + ": ")) << refused.err;
  EXPECT_TRUE(has(refused.err, "(HTTP 401)")) << refused.err;
}

// An interrupt while the proof waits in the daemon's queue cancels it
// there, writes nothing, and the command ends by the signal.
TEST(ServeCli, AnInterruptCancelsTheProofAtTheDaemon) {
  ScratchDir dir;
  // Slow kernels and one proof at a time: the client's proof waits behind
  // the one already running.
  Daemon d(dir.path(), {"--slowdown", "100", "--max-in-flight", "1"});
  ASSERT_TRUE(d.started()) << d.log();
  ASSERT_EQ(run_stoker(load_line(d, "bits", data_file("bits.zkey"))).status, 0);
  auto running = d.call("POST", "/v1/proofs",
                        json{{"key", "bits"}, {"witness", {{"path", data_file("bits.wtns")}}}});
  ASSERT_EQ(running.status, 202u) << running.text;

  const std::string err = (dir.path() / "prove.err").string();
  std::vector<std::string> args{STOKER_BINARY, "prove",
                                "--server",    server_of(d),
                                "--key",       "bits",
                                "--wtns",      data_file("bits.wtns"),
                                "--proof",     (dir.path() / "proof.json").string(),
                                "--public",    (dir.path() / "public.json").string()};
  const pid_t pid = ::fork();
  if (pid == 0) {
    (void)std::freopen(err.c_str(), "w", stderr);
    (void)std::freopen("/dev/null", "w", stdout);
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  ASSERT_GT(pid, 0);
  bool queued = false;
  for (int i = 0; i < 500 && !queued; ++i) {
    queued = d.call("GET", "/v1/status").body["queue"]["queued"]["normal"] == 1;
    if (!queued) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(queued) << d.call("GET", "/v1/status").text;
  ::kill(pid, SIGINT);
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT) << status << " " << slurp(err);
  EXPECT_TRUE(has(slurp(err), "stoker prove: interrupted (SIGINT): proof ")) << slurp(err);
  EXPECT_TRUE(has(slurp(err), " cancelled on " + server_of(d))) << slurp(err);
  EXPECT_FALSE(fs::exists(dir.path() / "proof.json"));
  auto metrics = d.call("GET", "/metrics");
  EXPECT_TRUE(has(metrics.text, "stoker_proofs_total{outcome=\"cancelled\"} 1")) << metrics.text;
  EXPECT_EQ(d.call("DELETE", "/v1/proofs/" + running.body["id"].get<std::string>()).status, 200u);
}

}  // namespace
}  // namespace stoker::test
