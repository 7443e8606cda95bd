// `stoker bench ntt_msm_h` as a user runs it, small, on the host backend:
// the verified job passes, the steady-state figures come out measured and
// the baseline says why it did not run (it is CUDA's own); bad options are
// usage errors.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

namespace {

struct Outcome {
  int status = -1;
  std::string out;  // stdout alone: where --json goes
};

// STOKER_BACKEND selects the engine's backend (engine/config.cpp).
Outcome run_on_host(const std::string& args) {
  Outcome r;
  const std::string cmd = "STOKER_BACKEND=host " + std::string(STOKER_BINARY) +
                          " bench ntt_msm_h " + args + " 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  for (std::size_t n; (n = fread(buf.data(), 1, buf.size(), p)) > 0;) r.out.append(buf.data(), n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

bool positive(const nlohmann::json& v) {
  return v.is_number() && v.get<double>() > 0;
}

TEST(BenchNttMsmH, HostBackendVerifiesThenReportsSteadyStateAndSkipsTheBaseline) {
  const Outcome r = run_on_host("--log-n 6 --partitions 2 --reps 1 --json");
  ASSERT_EQ(r.status, 0) << r.out;
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(j["backend"], "host");
  EXPECT_EQ(j["verified"]["log_n"], 6);
  EXPECT_EQ(j["verified"]["ok"], true);
  ASSERT_TRUE(j["steady"].is_array());
  ASSERT_EQ(j["steady"].size(), 1u) << r.out;
  const auto& s = j["steady"][0];
  EXPECT_EQ(s["log_n"], 6);
  EXPECT_EQ(s["partitions"], 2);
  EXPECT_TRUE(s["skipped"].is_null()) << s["skipped"];
  EXPECT_EQ(s["srs"]["points"], 63) << "n - 1 H-query points";
  EXPECT_EQ(s["srs"]["bytes"], 63 * 96);
  for (const char* k : {"generate_s", "load_s", "load_gbps"})
    EXPECT_TRUE(positive(s["srs"][k])) << k << ": " << s["srs"][k];
  for (const char* k : {"wall_ms", "bound_ms", "bound_fill_drain_ms", "wall_over_bound_fill_drain",
                        "partitions_per_s"})
    EXPECT_TRUE(positive(s[k])) << k << ": " << s[k];
  EXPECT_GE(s["bound_fill_drain_ms"].get<double>(), s["bound_ms"].get<double>());
  ASSERT_EQ(s["each_wall_ms"].size(), 1u) << "one timed job after the warm-up";
  for (const char* k : {"hpoly_ms", "msm_ms", "kernels_ms", "wall_per_device_ms"})
    EXPECT_TRUE(positive(s["per_partition"][k])) << k << ": " << s["per_partition"][k];
  EXPECT_TRUE(s["sppark"].is_null()) << "sppark was not measured at 2^6";
  EXPECT_EQ(j["baseline"]["skipped"], "needs a GPU");
}

TEST(BenchNttMsmH, BadOptionsAreUsageErrorsAndHelpNamesEveryOption) {
  for (const char* args : {"--log-n 1", "--log-n 29", "--log-n 6,x", "--reps 0", "--writers 0",
                           "--partitions 0", "--baseline-log-n 40", "--no-such-option"})
    EXPECT_EQ(run_on_host(args).status, 2) << args;
  const Outcome help = run_on_host("--help");
  EXPECT_EQ(help.status, 0);
  for (const char* option :
       {"--log-n", "--partitions", "--reps", "--writers", "--baseline-log-n",
        "--baseline-partitions", "--no-baseline", "--seed", "--json", "--trace"})
    EXPECT_NE(help.out.find(option), std::string::npos) << option;
}

}  // namespace
