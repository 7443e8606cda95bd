// What a stoker command says when host memory or threads run out: under an
// address-space limit (ulimit -v) every command names what it needed, how
// many bytes, and the limit, in one line on stderr with exit status 1, never
// "out of memory (std::bad_alloc)"; a thread the system refuses is named,
// and never hangs the command. Inputs are sparse files, so the sizes cost no
// disk. An address-space limit does not work under a sanitizer, which
// reserves terabytes of address space: these tests skip there.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "test/tools/stoker_process.hpp"

namespace {

namespace fs = std::filesystem;
using stoker::test::has;
using stoker::test::lines;
using stoker::test::Outcome;
using stoker::test::run_shell;

// 2000000 KiB, as `ulimit -v` counts.
constexpr const char* kLimit = "ulimit -v 2000000; ";
const std::string kLimitSays =
    "; the address-space limit (ulimit -v) is 2048000000 bytes (1.9 GiB)";

class CliMemory : public ::testing::Test {
 protected:
  void SetUp() override {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
    GTEST_SKIP() << "an address-space limit does not work under a sanitizer";
#endif
    dir_ = fs::temp_directory_path() /
           ("stoker_memory_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override {
    fs::remove_all(dir_);
  }

  std::string path(const std::string& name) const {
    return (dir_ / name).string();
  }
  // A file of `bytes` zeros that takes no disk.
  std::string sparse(const std::string& name, std::uintmax_t bytes) const {
    std::ofstream(path(name)).close();
    fs::resize_file(path(name), bytes);
    return path(name);
  }
  // `stoker <args>` under the limit `ulimit` ("ulimit -v N; ").
  static Outcome stoker(const std::string& args, const std::string& ulimit = kLimit) {
    return run_shell(ulimit + "exec " + std::string(STOKER_BINARY) + " " + args);
  }
  // A failure in words: exit status 1, one line on stderr that is `line`.
  static void expect_says(const Outcome& r, const std::string& line) {
    EXPECT_EQ(r.status, 1) << r.both();
    EXPECT_EQ(r.err, line + "\n") << r.both();
    EXPECT_EQ(lines(r.err), 1) << r.err;
    EXPECT_FALSE(has(r.err, "bad_alloc")) << r.err;
  }

  fs::path dir_;
};

// The toy SRS the run generates is checked against the limit before it is
// allocated (it was "ntt_msm_h: out of host memory while building the job").
TEST_F(CliMemory, RunNamesTheToySrsItsSizeAndTheLimit) {
  expect_says(stoker("run --backend host --workers 2 --staging-threads 1 --no-progress "
                     "--workload ntt_msm_h --log-n 28"),
              "stoker run: the toy SRS of 2^28 - 1 points needs 25769803680 bytes (24.0 GiB) of "
              "host memory" +
                  kLimitSays);
}

// The groth16 workload's largest toy key, refused before its circuit is made.
TEST_F(CliMemory, RunNamesTheToyKeyItsSizeAndTheLimit) {
  expect_says(stoker("run --backend host --workers 2 --staging-threads 1 --no-progress "
                     "--workload groth16 --log-n 26"),
              "stoker run: a toy key of 2^26 points with its circuit needs 73018640704 bytes "
              "(68.0 GiB) of host memory" +
                  kLimitSays);
}

// The caller's memory and one partition's pinned blocks must fit the host's
// limit together, or no partition can run: refused before the job starts,
// not when the pinned pool's allocation fails mid-job.
TEST_F(CliMemory, RunRefusesAJobWhosePartitionCannotFitBesideItsOutputs) {
  expect_says(stoker("run --backend host --workers 2 --staging-threads 1 --no-progress "
                     "--workload hpoly --log-n 24 --partitions 2"),
              "stoker run: hpoly: 2 partitions of 536872096 bytes of caller memory each, and a "
              "partition's 1610612736 bytes of pinned host memory, need 2684356928 bytes (2.5 "
              "GiB)" +
                  kLimitSays);
}

// Every size is checked before the first runs (it was "stoker bench ntt:
// out of memory (std::bad_alloc)").
TEST_F(CliMemory, BenchNttAndHpolyNameTheSizeAndTheNeed) {
  expect_says(
      stoker("bench ntt --cpu --log-n 10,31 --reps 1"),
      "stoker bench ntt: 2^31 needs 171798691840 bytes (160.0 GiB) of host memory" + kLimitSays);
  expect_says(
      stoker("bench hpoly --cpu --log-n 28 --reps 1"),
      "stoker bench hpoly: 2^28 needs 90194313216 bytes (84.0 GiB) of host memory" + kLimitSays);
}

TEST_F(CliMemory, BenchAllocNamesTheCycleAndTheLimit) {
  const auto r = stoker("bench alloc --backend host --sizes-mib 4000 --reps 1 --seconds 0.01");
  expect_says(r,
              "stoker bench alloc: cycle of 4000 MiB: a pinned allocation needs 4194304000 "
              "bytes (3.9 GiB) of host memory" +
                  kLimitSays);
}

TEST_F(CliMemory, BenchNttMsmHSkipsASizeNamingTheLimit) {
  const auto r = stoker(
      "bench ntt_msm_h --backend host --workers 2 --staging-threads 1 --log-n 23 --no-baseline "
      "--reps 1");
  EXPECT_EQ(r.status, 1) << r.both();
  EXPECT_TRUE(has(r.err,
                  "stoker bench ntt_msm_h: 2^23 skipped: the SRS with a partition's pinned "
                  "inputs and each host device's copies needs "))
      << r.err;
  EXPECT_TRUE(has(r.err, "of host memory" + kLimitSays + "\n")) << r.err;
}

// The sizes come from the files, checked against the limit before anything
// is read (it was "stoker ntt: out of memory (std::bad_alloc)").
TEST_F(CliMemory, NttAndHpolyNameTheTransformItsSizeAndTheLimit) {
  const std::string in = sparse("in.fr", std::uintmax_t{32} << 27);
  expect_says(stoker("ntt --cpu --log-n 27 --in " + in + " --out " + path("out.fr")),
              "stoker ntt: the NTT of 2^27 elements needs 8589934592 bytes (8.0 GiB) of host "
              "memory" +
                  kLimitSays);
  const std::uintmax_t bytes = std::uintmax_t{32} << 26;
  expect_says(stoker("hpoly --cpu --a " + sparse("a.fr", bytes) + " --b " + sparse("b.fr", bytes) +
                     " --c " + sparse("c.fr", bytes) + " --out " + path("h.fr")),
              "stoker hpoly: the H polynomial of 2^26 elements needs 16106127360 bytes (15.0 GiB) "
              "of host memory" +
                  kLimitSays);
  EXPECT_FALSE(fs::exists(path("out.fr")));
  EXPECT_FALSE(fs::exists(path("h.fr")));
}

// 2^24 points whose first 4096 are the point at infinity (so that the check
// of the first points passes), then zeros: the memory for all of them is
// checked before the rest is read (it was "16777216 points and scalars do
// not fit in host memory", without the need or the limit).
TEST_F(CliMemory, MsmNamesThePointsTheNeedAndTheLimit) {
  std::string head;
  for (int i = 0; i < 4096; ++i) head += '\x40' + std::string(95, '\0');
  std::ofstream(path("p.g1"), std::ios::binary) << head;
  fs::resize_file(path("p.g1"), std::uintmax_t{96} << 24);
  const std::string scalars = sparse("s.fr", std::uintmax_t{32} << 24);
  expect_says(stoker("msm --cpu --points " + path("p.g1") + " --scalars " + scalars + " --out " +
                         path("m.g1"),
                     "ulimit -v 1000000; "),
              "stoker msm: the MSM of 16777216 points needs 2147483648 bytes (2.0 GiB) of host "
              "memory; the address-space limit (ulimit -v) is 1024000000 bytes (976.6 MiB)");
}

// It was "12884901792 bytes of points do not fit in host memory".
TEST_F(CliMemory, SrsGenerateNamesTheSrsTheNeedAndTheLimit) {
  expect_says(stoker("srs generate --cpu --log-n 27 --seed 1 --out " + path("s.g1")),
              "stoker srs generate: the toy SRS of 2^27 - 1 points needs 14495514528 bytes (13.5 "
              "GiB) of host memory" +
                  kLimitSays);
}

// The key and its circuit are checked before either is made (it was
// "stoker keys: out of memory (std::bad_alloc)"): the largest key, 2^26,
// and one that a few hundred MiB refuse.
TEST_F(CliMemory, KeysGenerateNamesTheKeyTheNeedAndTheLimit) {
  expect_says(stoker("keys generate --cpu --log-n 26 --seed 1 --zkey " + path("k.zkey") +
                     " --wtns " + path("k.wtns")),
              "stoker keys generate: a toy key of 2^26 points with its circuit needs 73018640704 "
              "bytes (68.0 GiB) of host memory" +
                  kLimitSays);
  expect_says(stoker("keys generate --cpu --log-n 18 --seed 1 --params " + path("k.params") +
                         " --witness " + path("k.bwit"),
                     "ulimit -v 250000; "),
              "stoker keys generate: a toy key of 2^18 points with its circuit needs 285477088 "
              "bytes (272.3 MiB) of host memory; the address-space limit (ulimit -v) is 256000000 "
              "bytes (244.1 MiB)");
}

// A file of gigabytes is no 192-byte proof: refused from its size, before
// memory is taken for it (it was "stoker verify: out of memory
// (std::bad_alloc)").
TEST_F(CliMemory, VerifyRefusesAHugeProofFileFromItsSize) {
  const std::string data = STOKER_GROTH16_DATA_DIR;
  const std::string big = sparse("big.bin", 3000000000);
  expect_says(stoker("verify --vk " + data + "/bits_verification_key.json --proof-bytes " + big +
                     " --public " + data + "/bits_public.json"),
              "stoker verify: " + big + ": 3000000000 bytes; a proof has 192");
}

// Under limits that leave room for a few threads or for some of the
// engine's, the run ends in words (a thread it could not start, memory it
// could not get), never hangs: at 300000 KiB it hung forever, the staging
// pool's set-up joining threads that never returned.
TEST_F(CliMemory, StressUnderAMemoryLimitEndsInWordsAndNeverHangs) {
  for (const char* kib : {"300000", "400000", "500000", "600000"}) {
    const auto r = run_shell(std::string("ulimit -v ") + kib + "; exec timeout 60 " +
                             STOKER_BINARY + " stress --backend host --duration 1 --quiet");
    EXPECT_NE(r.status, 124) << "hung under ulimit -v " << kib;
    EXPECT_EQ(r.signal, 0) << "ulimit -v " << kib << ": " << r.both();
    if (r.status == 0) continue;
    EXPECT_EQ(r.status, 1) << r.both();
    EXPECT_FALSE(has(r.err, "invariant violation")) << r.err;
    EXPECT_TRUE(has(r.err, "could not start") || has(r.err, "the system refused") ||
                has(r.err, "Resource temporarily unavailable"))
        << "ulimit -v " << kib << ": " << r.err;
  }
}

}  // namespace
