// `stoker bench prove` as a user runs it, small, on the host backend: whole
// proofs of the PoRep shape, each checked with the pairing, the figures
// measured and the shape's densities as the circuit made them; bad sizes
// and options are usage errors that say what fits.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "test/tools/stoker_process.hpp"

namespace {

using stoker::test::Outcome;

// STOKER_BACKEND selects the engine's backend (engine/config.cpp).
Outcome bench_prove(const std::string& args) {
  return stoker::test::run_stoker("bench prove " + args, "STOKER_BACKEND=host");
}

bool positive(const nlohmann::json& v) {
  return v.is_number() && v.get<double>() > 0;
}

TEST(BenchProve, PorepShapeProofsAreCheckedAndTimedStepByStep) {
  const Outcome r = bench_prove("--log-n 10 --partitions 2 --reps 1 --json");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  const auto j = nlohmann::json::parse(r.out, nullptr, false);
  ASSERT_FALSE(j.is_discarded()) << r.out;
  EXPECT_EQ(j["ok"], true);
  EXPECT_EQ(j["backend"], "host");
  EXPECT_EQ(j["shape"], "porep");
  EXPECT_EQ(j["format"], "bellman");
  ASSERT_EQ(j["rows"].size(), 1u) << r.out;
  const auto& row = j["rows"][0];
  EXPECT_EQ(row["log_n"], 10);
  EXPECT_EQ(row["public"], 328);
  EXPECT_EQ(row["verified"], true);
  EXPECT_EQ(row["a_density"], 1.0) << "A over every wire";
  EXPECT_GT(row["b_density"].get<double>(), 0.0);
  EXPECT_LT(row["b_density"].get<double>(), 0.5);
  EXPECT_NEAR(row["witness_zeros"].get<double>(), 0.4, 0.1);
  EXPECT_NEAR(row["witness_ones"].get<double>(), 0.5, 0.1);
  for (const char* k : {"key_make_s", "key_mib", "per_proof_ms", "bound_ms", "busy", "finish_ms"})
    EXPECT_TRUE(positive(row[k])) << k << ": " << row[k];
  for (const char* step : {"h", "msm_h", "msm_l", "msm_a", "msm_b_g1", "msm_b_g2"})
    EXPECT_TRUE(positive(row["kernel_steps_ms"][step])) << step << " in " << row.dump();
}

TEST(BenchProve, SnarkjsKeysOfTheToyShapeProveAndTheTablePrints) {
  const Outcome r = bench_prove("--shape toy --format zkey --log-n 6 --partitions 2 --reps 1");
  ASSERT_EQ(r.status, 0) << r.out << r.err;
  for (const char* text : {"toy shape", "zkey", "proof ms", "bound", "supraseal", "msm_b_g2"})
    EXPECT_NE(r.out.find(text), std::string::npos) << text << " in\n" << r.out;
}

TEST(BenchProve, SizesThatCannotHoldTheShapeAreUsageErrors) {
  const Outcome small = bench_prove("--log-n 8");
  EXPECT_EQ(small.status, 2) << small.out << small.err;
  EXPECT_NE(small.err.find("take --log-n 10 or more, or --shape toy"), std::string::npos)
      << small.err;
  EXPECT_EQ(bench_prove("--log-n 27").status, 2);
  EXPECT_EQ(bench_prove("--shape square").status, 2);
  EXPECT_EQ(bench_prove("--partitions 0").status, 2);
}

}  // namespace
