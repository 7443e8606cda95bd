// `stoker prove`, `stoker verify` and `stoker keys generate` as a user runs
// them: exit statuses, one line on stderr for a failure, no output left
// behind on an error, outputs that are never inputs.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "test/tools/stoker_process.hpp"

namespace {

namespace fs = std::filesystem;
using stoker::test::has;
using stoker::test::lines;
using stoker::test::Outcome;
using stoker::test::run_shell;
using stoker::test::run_stoker;

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

class Groth16Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("stoker_groth16_cli_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  static std::string data(const std::string& name) {
    return std::string(STOKER_GROTH16_DATA_DIR) + "/" + name;
  }
  std::string prove_line(const std::string& circuit) const {
    return "prove --zkey " + data(circuit + ".zkey") + " --wtns " + data(circuit + ".wtns") +
           " --proof " + path("proof.json") + " --public " + path("public.json") + " --threads 2";
  }
  // Checks what prove_line(circuit) wrote against snarkjs's verifying key.
  std::string verify_line(const std::string& circuit) const {
    return "verify --vk " + data(circuit + "_verification_key.json") + " --proof " +
           path("proof.json") + " --public " + path("public.json");
  }
  // `stoker <args>` run in the test's directory, so that its paths can be
  // relative ones.
  Outcome run_here(const std::string& args) const {
    return run_shell("cd " + dir_.string() + " && " + STOKER_BINARY + " " + args);
  }
  // `stoker <args>` run in the test's directory with full/ a filesystem
  // of its own that is full, where full/old.json held "old" before: a
  // tmpfs mounted in a user namespace, so no root is needed. stdout says
  // what full/ holds afterwards and what full/old.json reads; the
  // command's own output goes to stderr. Where user namespaces are not
  // allowed, full_disks() is false.
  static bool full_disks() { return run_shell("unshare -rm true").status == 0; }
  Outcome run_with_full_disk(const std::string& args) const {
    fs::create_directories(dir_ / "full");
    return run_shell("cd " + dir_.string() +
                     " && exec unshare -rm sh -c 'mount -t tmpfs -o size=16k tmpfs full && "
                     "printf old > full/old.json && (cat /dev/zero > full/fill) 2>/dev/null; " +
                     STOKER_BINARY + " " + args +
                     " >&2; rc=$?; ls -A full; cat full/old.json; exit $rc'");
  }
  // The names in the test's directory, temporaries included.
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& e : fs::directory_iterator(dir_)) out.push_back(e.path().filename());
    std::sort(out.begin(), out.end());
    return out;
  }
  fs::path dir_;
};

TEST_F(Groth16Cli, ProvesASnarkjsCircuitAndVerifiesTheProof) {
  const auto proved = run_stoker(prove_line("bits"));
  ASSERT_EQ(proved.status, 0) << proved.both();
  EXPECT_TRUE(has(proved.out, "verified")) << proved.out;
  EXPECT_EQ(slurp(path("public.json")), slurp(data("bits_public.json")));
  const auto checked = run_stoker(verify_line("bits"));
  EXPECT_EQ(checked.status, 0) << checked.both();
  EXPECT_TRUE(has(checked.out, "valid")) << checked.out;
}

TEST_F(Groth16Cli, VerifyRefusesAProofForOtherPublicSignalsInOneLine) {
  std::ofstream(path("other.json")) << "[\n \"1\",\n \"2\"\n]";
  const auto r =
      run_stoker("verify --vk " + data("multiplier_verification_key.json") + " --proof " +
                 data("multiplier_proof.json") + " --public " + path("other.json"));
  EXPECT_EQ(r.status, 1) << r.both();
  EXPECT_TRUE(has(r.err, "stoker verify: the proof does not verify")) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
  const auto count =
      run_stoker("verify --vk " + data("multiplier_verification_key.json") + " --proof " +
                 data("multiplier_proof.json") + " --public " + data("nopublic_public.json"));
  EXPECT_EQ(count.status, 1) << count.both();
  EXPECT_TRUE(has(count.err, "0 public inputs given; the verifying key takes 2")) << count.err;
}

TEST_F(Groth16Cli, AWitnessOfAnotherCircuitFailsAndLeavesNoOutput) {
  const auto r =
      run_stoker("prove --zkey " + data("multiplier.zkey") + " --wtns " + data("bits.wtns") +
                 " --proof " + path("proof.json") + " --public " + path("public.json"));
  EXPECT_EQ(r.status, 1) << r.both();
  EXPECT_TRUE(has(r.err, "the witness holds 100, the key wants 26")) << r.err;
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_FALSE(fs::exists(path("proof.json")));
  EXPECT_FALSE(fs::exists(path("public.json")));
}

TEST_F(Groth16Cli, UsageErrorsExitWithTwo) {
  EXPECT_EQ(run_stoker("prove --zkey " + data("bits.zkey")).status, 2);
  EXPECT_EQ(run_stoker("prove --wtns " + data("bits.wtns")).status, 2);
  const auto same =
      run_stoker("prove --zkey " + data("bits.zkey") + " --wtns " + data("bits.wtns") +
                 " --proof " + path("p.json") + " --public " + path("p.json"));
  EXPECT_EQ(same.status, 2) << same.both();
  EXPECT_TRUE(has(same.err, "name the same file")) << same.err;
  fs::copy_file(data("bits.wtns"), path("w.wtns"));
  const auto onto_input =
      run_stoker("prove --zkey " + data("bits.zkey") + " --wtns " + path("w.wtns") + " --proof " +
                 path("w.wtns") + " --public " + path("p.json"));
  EXPECT_EQ(onto_input.status, 2) << onto_input.both();
  EXPECT_EQ(slurp(path("w.wtns")), slurp(data("bits.wtns")));
  EXPECT_EQ(run_stoker("prove --zkey a --params b").status, 2);
  EXPECT_EQ(run_stoker("verify --vk a --proof b").status, 2);
}

TEST_F(Groth16Cli, ToyBellmanKeyProvesAndVerifiesThroughItsFiles) {
  const auto made = run_stoker("keys generate --log-n 6 --seed 4 --public 2 --params " +
                               path("k.params") + " --witness " + path("k.bwit") + " --threads 2");
  ASSERT_EQ(made.status, 0) << made.both();
  EXPECT_TRUE(has(made.out, "testing only")) << made.out;
  const auto proved =
      run_stoker("prove --params " + path("k.params") + " --witness " + path("k.bwit") +
                 " --proof-bytes " + path("p.bin") + " --inputs " + path("in.bin") +
                 " --proof-json " + path("p.json") + " --threads 2");
  ASSERT_EQ(proved.status, 0) << proved.both();
  EXPECT_EQ(fs::file_size(path("p.bin")), 192u);
  EXPECT_EQ(fs::file_size(path("in.bin")), 64u);
  const auto checked = run_stoker("verify --params " + path("k.params") + " --proof-bytes " +
                                  path("p.bin") + " --inputs " + path("in.bin"));
  EXPECT_EQ(checked.status, 0) << checked.both();
  const auto as_json = run_stoker("verify --params " + path("k.params") + " --proof " +
                                  path("p.json") + " --inputs " + path("in.bin"));
  EXPECT_EQ(as_json.status, 0) << as_json.both();
  std::string inputs = slurp(path("in.bin"));
  inputs[0] = static_cast<char>(inputs[0] ^ 1);
  std::ofstream(path("bad.bin"), std::ios::binary) << inputs;
  const auto bad = run_stoker("verify --params " + path("k.params") + " --proof-bytes " +
                              path("p.bin") + " --inputs " + path("bad.bin"));
  EXPECT_EQ(bad.status, 1) << bad.both();
}

TEST_F(Groth16Cli, ToySnarkjsKeyProvesWithStoker) {
  const auto made = run_stoker("keys generate --log-n 5 --seed 2 --zkey " + path("k.zkey") +
                               " --wtns " + path("k.wtns") + " --vk " + path("vk.json"));
  ASSERT_EQ(made.status, 0) << made.both();
  const auto proved =
      run_stoker("prove --zkey " + path("k.zkey") + " --wtns " + path("k.wtns") + " --proof " +
                 path("proof.json") + " --public " + path("public.json"));
  ASSERT_EQ(proved.status, 0) << proved.both();
  const auto checked = run_stoker("verify --vk " + path("vk.json") + " --proof " +
                                  path("proof.json") + " --public " + path("public.json"));
  EXPECT_EQ(checked.status, 0) << checked.both();
}

// Where a GPU exists `stoker prove` runs the engine's groth16 workload;
// `--backend host` runs that path on the CPU's kernels, so it is checked
// here: proofs of both key formats verify, and a witness that does not
// satisfy the circuit fails as on the CPU prover, leaving nothing behind.
TEST_F(Groth16Cli, ProvesThroughTheEngineAsTheCpuProverDoes) {
  const auto proved = run_stoker(prove_line("bits") + " --backend host");
  ASSERT_EQ(proved.status, 0) << proved.both();
  EXPECT_TRUE(has(proved.out, "verified")) << proved.out;
  EXPECT_TRUE(has(proved.out, "on the engine's host backend")) << proved.out;
  EXPECT_EQ(slurp(path("public.json")), slurp(data("bits_public.json")));
  const auto checked = run_stoker(verify_line("bits"));
  EXPECT_EQ(checked.status, 0) << checked.both();

  ASSERT_EQ(run_stoker("keys generate --log-n 6 --seed 5 --public 3 --params " + path("k.params") +
                       " --witness " + path("k.bwit") + " --threads 2")
                .status,
            0);
  const auto bellman = run_stoker("prove --backend host --params " + path("k.params") +
                                  " --witness " + path("k.bwit") + " --proof-bytes " +
                                  path("p.bin") + " --inputs " + path("in.bin"));
  ASSERT_EQ(bellman.status, 0) << bellman.both();
  EXPECT_EQ(run_stoker("verify --params " + path("k.params") + " --proof-bytes " + path("p.bin") +
                       " --inputs " + path("in.bin"))
                .status,
            0);
  // A key point off the curve (the last B_G2 point's y, its lowest bit)
  // is the key's fault, found as the points reach the device: the error
  // names the key's file, not the witness's.
  {
    std::string params = slurp(path("k.params"));
    params.back() = static_cast<char>(params.back() ^ 1);
    std::ofstream(path("bad.params"), std::ios::binary) << params;
    const auto bad_key = run_stoker("prove --backend host --params " + path("bad.params") +
                                    " --witness " + path("k.bwit") + " --proof-bytes " +
                                    path("bad.bin"));
    EXPECT_EQ(bad_key.status, 1) << bad_key.both();
    EXPECT_TRUE(has(bad_key.err, path("bad.params"))) << bad_key.err;
    EXPECT_TRUE(has(bad_key.err, "is not on the curve")) << bad_key.err;
    EXPECT_FALSE(has(bad_key.err, "k.bwit")) << bad_key.err;
    EXPECT_EQ(lines(bad_key.err), 1) << bad_key.err;
    EXPECT_FALSE(fs::exists(path("bad.bin")));
  }

  std::string wtns = slurp(data("bits.wtns"));
  wtns[wtns.size() - 32] = static_cast<char>(wtns[wtns.size() - 32] ^ 1);  // the last wire's value
  std::ofstream(path("bad.wtns"), std::ios::binary) << wtns;
  for (const char* where : {"--backend host", "--cpu"}) {
    const auto bad = run_stoker("prove " + std::string(where) + " --zkey " + data("bits.zkey") +
                                " --wtns " + path("bad.wtns") + " --proof " + path("bad.json") +
                                " --public " + path("bad_public.json"));
    EXPECT_EQ(bad.status, 1) << where << ": " << bad.both();
    EXPECT_TRUE(has(bad.err, "the witness does not satisfy the key's circuit")) << bad.err;
    EXPECT_EQ(lines(bad.err), 1) << bad.err;
    EXPECT_FALSE(fs::exists(path("bad.json"))) << where;
    EXPECT_FALSE(fs::exists(path("bad_public.json"))) << where;
  }
  const auto both = run_stoker(prove_line("bits") + " --cpu --backend host");
  EXPECT_EQ(both.status, 2) << both.both();
}

// On the engine's path a key file's points are checked once: the first
// proof checks them and records the file's digest in the user's cache
// ($STOKER_CACHE_DIR), the next trusts them; --recheck-key checks again,
// --trust-key skips the checks and the digest, and a changed byte is a new
// file, checked again.
TEST_F(Groth16Cli, AKeyFileIsCheckedOncePerUser) {
  ASSERT_EQ(run_stoker("keys generate --log-n 6 --seed 9 --public 2 --params " + path("k.params") +
                       " --witness " + path("k.bwit") + " --threads 2")
                .status,
            0);
  const std::string cache = "STOKER_CACHE_DIR=" + path("cache") + " ";
  const auto prove = [&](const std::string& key, const std::string& extra) {
    return run_shell(cache + STOKER_BINARY + " prove --backend host --params " + path(key) +
                     " --witness " + path("k.bwit") + " --proof-bytes " + path("p.bin") + extra);
  };
  const auto first = prove("k.params", "");
  ASSERT_EQ(first.status, 0) << first.both();
  EXPECT_TRUE(has(first.out, "(checked; its digest taken in")) << first.out;
  EXPECT_TRUE(fs::exists(path("cache/checked-keys")));
  const auto second = prove("k.params", "");
  ASSERT_EQ(second.status, 0) << second.both();
  EXPECT_TRUE(has(second.out, "(checked before: its digest in")) << second.out;
  const auto recheck = prove("k.params", " --recheck-key");
  EXPECT_TRUE(has(recheck.out, "(checked; its digest taken in")) << recheck.out;
  const auto trusted = prove("k.params", " --trust-key");
  EXPECT_TRUE(has(trusted.out, "(trusted)")) << trusted.out;
  EXPECT_EQ(prove("k.params", " --trust-key --recheck-key").status, 2);

  // The CPU prover's read shares the record: the file checked above is
  // read with its points trusted, a copy under another name too.
  fs::copy_file(path("k.params"), path("copy.params"));
  const auto on_cpu = run_shell(cache + STOKER_BINARY + " prove --cpu --params " +
                                path("copy.params") + " --witness " + path("k.bwit") +
                                " --proof-bytes " + path("cpu.bin"));
  ASSERT_EQ(on_cpu.status, 0) << on_cpu.both();
  EXPECT_TRUE(has(on_cpu.out, "(points checked before: its digest in")) << on_cpu.out;
  const auto cpu_recheck = run_shell(cache + STOKER_BINARY + " prove --cpu --recheck-key --params " +
                                     path("copy.params") + " --witness " + path("k.bwit") +
                                     " --proof-bytes " + path("cpu.bin"));
  EXPECT_TRUE(has(cpu_recheck.out, "(points checked; its digest taken in")) << cpu_recheck.out;

  // The last B_G2 point's y, its lowest bit: off the curve, never recorded,
  // by the engine's path or the CPU's.
  std::string params = slurp(path("k.params"));
  params.back() = static_cast<char>(params.back() ^ 1);
  std::ofstream(path("bad.params"), std::ios::binary) << params;
  for (const char* where : {"", " --cpu", ""}) {
    const auto bad = run_shell(cache + STOKER_BINARY + " prove" + (*where ? where : " --backend host") +
                               " --params " + path("bad.params") + " --witness " + path("k.bwit") +
                               " --proof-bytes " + path("bad.bin"));
    EXPECT_EQ(bad.status, 1) << bad.both();
    EXPECT_TRUE(has(bad.err, "not on the curve")) << bad.err;
  }
}

// Two outputs that are one file are refused before the work, naming both
// options, however the paths spell it; nothing is written.
TEST_F(Groth16Cli, ProveRefusesOutputsThatAreOneFileSpelledTwoWays) {
  fs::create_directories(dir_ / "sub");
  fs::create_directory_symlink(dir_, dir_ / "here");
  const std::string zkey = " --zkey " + data("bits.zkey") + " --wtns " + data("bits.wtns");
  for (const char* twin : {"./x.json", "sub/../x.json", "here/x.json"}) {
    const auto r = run_here("prove" + zkey + " --proof x.json --public " + twin);
    EXPECT_EQ(r.status, 2) << twin << ": " << r.both();
    EXPECT_TRUE(
        has(r.err, "--proof x.json and --public " + std::string(twin) + " name the same file"))
        << r.err;
    EXPECT_FALSE(fs::exists(path("x.json"))) << twin;
  }
  ASSERT_EQ(run_stoker("keys generate --log-n 4 --seed 1 --params " + path("k.params") +
                       " --witness " + path("k.bwit"))
                .status,
            0);
  const auto bellman = run_here(
      "prove --params k.params --witness k.bwit --proof-bytes y.bin "
      "--inputs ./y.bin");
  EXPECT_EQ(bellman.status, 2) << bellman.both();
  EXPECT_TRUE(has(bellman.err, "--proof-bytes y.bin and --inputs ./y.bin name the same file"))
      << bellman.err;
  EXPECT_FALSE(fs::exists(path("y.bin")));
}

TEST_F(Groth16Cli, KeysGenerateRefusesOutputsThatAreOneFile) {
  for (const auto& [args, message] :
       {std::pair{"--params g_p --witness g_p", "--params g_p and --witness g_p"},
        {"--zkey g_k --wtns g_w --vk g_k", "--zkey g_k and --vk g_k"},
        {"--zkey g_k --wtns ./g_k", "--zkey g_k and --wtns ./g_k"}}) {
    const auto r = run_here("keys generate --log-n 3 --seed 1 " + std::string(args));
    EXPECT_EQ(r.status, 2) << args << ": " << r.both();
    EXPECT_TRUE(has(r.err, std::string(message) + " name the same file")) << r.err;
    EXPECT_EQ(lines(r.err), 1) << r.err;
    EXPECT_TRUE(names().empty()) << args << ": " << names()[0];
  }
}

// The circuit's 2^K - N - 1 constraints hold one per public input and at
// least one gate, beside N + 1 public rows: 2^(K-1) - 1 public inputs at
// most, and that many make a key that proves.
TEST_F(Groth16Cli, KeysGenerateTakesAsManyPublicInputsAsTheDomainHolds) {
  const auto over = run_stoker("keys generate --log-n 8 --seed 1 --public 128 --params " +
                               path("k.params") + " --witness " + path("k.bwit"));
  EXPECT_EQ(over.status, 2) << over.both();
  EXPECT_TRUE(has(over.err, "--public 128 leaves no room")) << over.err;
  EXPECT_TRUE(has(over.err, "at most 127 with --log-n 8")) << over.err;
  EXPECT_TRUE(names().empty());
  const auto most =
      run_stoker("keys generate --log-n 8 --seed 1 --public 127 --zkey " + path("k.zkey") +
                 " --wtns " + path("k.wtns") + " --vk " + path("vk.json"));
  ASSERT_EQ(most.status, 0) << most.both();
  EXPECT_TRUE(has(most.out, "127 public")) << most.out;
  const auto proved =
      run_stoker("prove --zkey " + path("k.zkey") + " --wtns " + path("k.wtns") + " --proof " +
                 path("proof.json") + " --public " + path("public.json"));
  ASSERT_EQ(proved.status, 0) << proved.both();
  const auto checked = run_stoker("verify --vk " + path("vk.json") + " --proof " +
                                  path("proof.json") + " --public " + path("public.json"));
  EXPECT_EQ(checked.status, 0) << checked.both();
  EXPECT_TRUE(has(run_stoker("keys generate --help").out, "at most 2^(K-1) - 1"));
}

// The second output on a full disk: the first, written fine, is not put
// in place either, and no temporary is left beside either.
TEST_F(Groth16Cli, ProveWritesAllItsOutputsOrNone) {
  if (!full_disks()) GTEST_SKIP() << "no user namespaces here to mount a full filesystem in";
  std::ofstream(path("pp.json")) << "old";
  const auto r = run_with_full_disk("prove --zkey " + data("bits.zkey") + " --wtns " +
                                    data("bits.wtns") + " --proof pp.json --public full/old.json");
  EXPECT_EQ(r.status, 1) << r.both();
  EXPECT_TRUE(has(r.err, "cannot write full/old.json: No space left on device")) << r.err;
  EXPECT_EQ(r.out, "fill\nold.json\nold") << "full/ holds a temporary or a new old.json";
  EXPECT_EQ(slurp(path("pp.json")), "old");
  EXPECT_EQ(names(), (std::vector<std::string>{"full", "pp.json"}));

  ASSERT_EQ(run_stoker("keys generate --log-n 4 --seed 1 --params " + path("k.params") +
                       " --witness " + path("k.bwit"))
                .status,
            0);
  std::ofstream(path("p.bin")) << "old";
  const auto bellman = run_with_full_disk(
      "prove --params k.params --witness k.bwit --proof-bytes p.bin --proof-json full/old.json");
  EXPECT_EQ(bellman.status, 1) << bellman.both();
  EXPECT_EQ(bellman.out, "fill\nold.json\nold");
  EXPECT_EQ(slurp(path("p.bin")), "old");
}

TEST_F(Groth16Cli, KeysGenerateWritesAllItsOutputsOrNone) {
  if (!full_disks()) GTEST_SKIP() << "no user namespaces here to mount a full filesystem in";
  std::ofstream(path("k.zkey")) << "old";
  std::ofstream(path("vk.json")) << "old";
  const auto r = run_with_full_disk(
      "keys generate --log-n 3 --seed 1 --zkey k.zkey --wtns full/k.wtns --vk vk.json");
  EXPECT_EQ(r.status, 1) << r.both();
  EXPECT_TRUE(has(r.err, "cannot write full/k.wtns: write failed: No space left on device"))
      << r.err;
  EXPECT_EQ(r.out, "fill\nold.json\nold") << "full/ holds a temporary or a witness";
  EXPECT_EQ(slurp(path("k.zkey")), "old");
  EXPECT_EQ(slurp(path("vk.json")), "old");
  EXPECT_EQ(names(), (std::vector<std::string>{"full", "k.zkey", "vk.json"}));

  std::ofstream(path("k.params")) << "old";
  const auto bellman = run_with_full_disk(
      "keys generate --log-n 3 --seed 1 --params k.params --witness full/k.bwit");
  EXPECT_EQ(bellman.status, 1) << bellman.both();
  EXPECT_EQ(bellman.out, "fill\nold.json\nold");
  EXPECT_EQ(slurp(path("k.params")), "old");
}

// Killed mid-write (SIGXFSZ, past the file size limit), keys generate
// leaves the old key whole and no temporary beside it.
TEST_F(Groth16Cli, KeysGenerateKilledMidWriteLeavesTheOldKey) {
  std::ofstream(path("k.zkey")) << "old";
  const auto r = run_shell("cd " + dir_.string() + " && ulimit -f 4 && exec " + STOKER_BINARY +
                           " keys generate --log-n 5 --seed 1 --zkey k.zkey --wtns k.wtns");
  EXPECT_EQ(r.signal, SIGXFSZ) << r.status << ": " << r.both();
  EXPECT_EQ(slurp(path("k.zkey")), "old");
  EXPECT_EQ(names(), std::vector<std::string>{"k.zkey"});
}

}  // namespace
