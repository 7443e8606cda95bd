// What the stoker binary tells a user: a failure is one line on stderr,
// and --json output on stdout, where there is any, says "ok"; counts read
// as English; a failed check says its likely cause; --version answers.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "test/tools/stoker_process.hpp"

namespace {

namespace fs = std::filesystem;
using stoker::test::has;
using stoker::test::lines;
using stoker::test::run_stoker;

nlohmann::json parse(const std::string& text) {
  try {
    return nlohmann::json::parse(text);
  } catch (const std::exception& e) {
    ADD_FAILURE() << e.what() << ": " << text;
    return nlohmann::json();
  }
}

class CliReports : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("stoker_reports_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

// A size no host can allocate makes the benchmark's first measurement fail.
TEST_F(CliReports, BenchAllocTellsAFailureOnStderrAndInItsJson) {
  const std::string bench =
      "bench alloc --backend host --sizes-mib 1000000000 --reps 1 --threads 1 --seconds 0.01 "
      "--h2d-mib 1";
  const auto json = run_stoker(bench + " --json");
  EXPECT_EQ(json.status, 1) << json.both();
  EXPECT_TRUE(has(json.err, "stoker bench alloc: cycle of 1000000000 MiB: ")) << json.both();
  EXPECT_EQ(lines(json.err), 1) << json.err;
  EXPECT_EQ(parse(json.out).value("ok", true), false) << json.out;
  const auto text = run_stoker(bench);
  EXPECT_EQ(text.status, 1) << text.both();
  EXPECT_TRUE(has(text.err, "stoker bench alloc: cycle of 1000000000 MiB: ")) << text.both();
  const auto ok = run_stoker(
      "bench alloc --backend host --quick --sizes-mib 1 --seconds 0.01 --threads 2 "
      "--json");
  EXPECT_EQ(ok.status, 0) << ok.both();
  EXPECT_EQ(parse(ok.out).value("ok", false), true) << ok.out;
}

TEST_F(CliReports, DoctorWithoutAGpuTellsItOnStderrAndInItsJson) {
  const auto info = parse(run_stoker("info --json").out);
  if (info.value("backend", "") == "cuda")
    GTEST_SKIP() << "this machine has a GPU: doctor measures it";
  const auto r = run_stoker("doctor --quick --json");
  EXPECT_EQ(r.status, 1) << r.both();
  EXPECT_TRUE(has(r.err, "stoker doctor: no CUDA device visible")) << r.both();
  EXPECT_EQ(lines(r.err), 1) << r.err;
  EXPECT_EQ(parse(r.out).value("ok", true), false) << r.out;
}

// An SRS made with one seed, checked with another's secret: the job fails
// verification; the one line on stderr names the likely cause, and the
// JSON report says "ok": false.
TEST_F(CliReports, RunWithAnotherSeedsSrsFailsNamingTheSeedAndSaysSoInItsJson) {
  ASSERT_EQ(run_stoker("srs generate --cpu --log-n 6 --seed 1 --out " + path("s.g1")).status, 0);
  const std::string job =
      "run --backend host --log-n 6 --partitions 1 --no-progress --verify --srs " + path("s.g1");
  const auto good = run_stoker(job + " --srs-seed 1 --json");
  EXPECT_EQ(good.status, 0) << good.both();
  EXPECT_EQ(parse(good.out).value("ok", false), true) << good.out;
  const auto bad = run_stoker(job + " --srs-seed 2 --json");
  EXPECT_EQ(bad.status, 1) << bad.both();
  EXPECT_EQ(lines(bad.err), 1) << bad.err;
  EXPECT_TRUE(has(bad.err, "failed verification")) << bad.err;
  EXPECT_TRUE(has(bad.err, "the check takes the SRS's secret from --srs-seed, here 2: was " +
                               path("s.g1") + " made by `stoker srs generate` with that seed?"))
      << bad.err;
  EXPECT_EQ(parse(bad.out).value("ok", true), false) << bad.out;
}

// A larger SRS than the job's size verifies a different point; the claim
// says what was checked rather than the claim of an SRS of the job's size.
TEST_F(CliReports, RunOverALargerSrsSaysWhatItsCheckChecked) {
  ASSERT_EQ(run_stoker("srs generate --cpu --log-n 6 --seed 1 --out " + path("s.g1")).status, 0);
  const std::string job = "run --backend host --partitions 1 --no-progress --verify --srs " +
                          path("s.g1") + " --srs-seed 1";
  const auto larger = run_stoker(job + " --log-n 4");
  EXPECT_EQ(larger.status, 0) << larger.both();
  EXPECT_TRUE(has(larger.out, "verified: every point equals [h(t) (t^64 - 1) / d] G"))
      << larger.out;
  EXPECT_FALSE(has(larger.out, "[(A(t)B(t) - C(t)) / d] G")) << larger.out;
  const auto exact = run_stoker(job + " --log-n 6");
  EXPECT_EQ(exact.status, 0) << exact.both();
  EXPECT_TRUE(has(exact.out, "verified: every point equals [(A(t)B(t) - C(t)) / d] G"))
      << exact.out;
}

TEST_F(CliReports, CountsOfOneAreSingular) {
  const auto srs = run_stoker("srs generate --cpu --log-n 1 --seed 1 --out " + path("one.g1"));
  EXPECT_EQ(srs.status, 0) << srs.both();
  EXPECT_TRUE(has(srs.out, "for 2^1: 1 point, 96 bytes")) << srs.out;
  std::ofstream(path("none.fr"));
  const auto msm = run_stoker("msm --cpu --points " + path("one.g1") + " --scalars " +
                              path("none.fr") + " --out " + path("sum.g1"));
  EXPECT_EQ(msm.status, 1) << msm.both();
  EXPECT_TRUE(has(msm.err, "holds 1 point but " + path("none.fr") + " holds 0 scalars")) << msm.err;
}

TEST(CliVersion, VersionAnswersWithTheProjectsVersion) {
  for (const char* arg : {"--version", "version"}) {
    const auto r = run_stoker(arg);
    EXPECT_EQ(r.status, 0) << arg << ": " << r.both();
    EXPECT_EQ(r.out.rfind("stoker ", 0), 0u) << r.out;
    ASSERT_GT(r.out.size(), 8u) << r.out;
    EXPECT_TRUE(r.out[7] >= '0' && r.out[7] <= '9') << r.out;
  }
  EXPECT_TRUE(has(run_stoker("--help").out, "'stoker --version'"));
}

}  // namespace
