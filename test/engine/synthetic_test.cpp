// The synthetic workload's producer: every word it writes is the word the
// verifier computes on its own, whatever the share's first word, length or
// alignment (the AVX-512 lanes, their aligned head and their tail included).
#include "engine/workloads/synthetic.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <span>
#include <vector>

namespace stoker::engine::workloads {
namespace {

TEST(SyntheticFill, EveryWordMatchesTheVerifiersAtAnyOffsetLengthAndAlignment) {
  constexpr std::size_t kWords = 4096;
  std::vector<std::uint32_t> storage(kWords + 64);
  for (std::size_t shift : {0u, 1u, 2u, 3u, 15u, 16u}) {  // 4-byte steps off a 64-byte line
    auto* base = reinterpret_cast<std::uint32_t*>(
                     (reinterpret_cast<std::uintptr_t>(storage.data()) + 63) / 64 * 64) +
                 shift;
    for (std::size_t first : {0u, 1u, 2u, 7u, 1000u, 12345u})
      for (std::size_t count : {0u, 1u, 2u, 3u, 15u, 16u, 17u, 33u, 1000u, 4001u}) {
        std::span<std::uint32_t> out(base, count);
        for (auto& w : out) w = 0xdeadbeef;
        synthetic_fill(9, 3, out, first);
        for (std::size_t i = 0; i < count; ++i)
          ASSERT_EQ(out[i], synthetic_input_word(9, 3, first + i))
              << "word " << i << " of " << count << " from " << first << ", shift " << shift;
      }
  }
}

TEST(SyntheticFill, PartitionsAndSeedsDrawDifferentWords) {
  std::vector<std::uint32_t> a(256), b(256), c(256);
  synthetic_fill(1, 0, a);
  synthetic_fill(1, 1, b);
  synthetic_fill(2, 0, c);
  EXPECT_NE(a, b);
  EXPECT_NE(a, c);
}


// The outputs a correct run leaves for partition p.
std::vector<std::uint32_t> expected_output(const SyntheticOptions& o, std::size_t p) {
  std::vector<std::uint32_t> in(o.input_bytes / 4), out(o.input_bytes / 16);
  synthetic_fill(o.seed, p, in);
  synthetic_cpu(in.data(), out.data(), out.size(), o.rounds);
  return out;
}

// verify checks every word of a small partition, not a sample: one wrong
// word anywhere fails it, and a right output passes with its checksum.
TEST(SyntheticJob, VerifyFindsAWrongWordAnywhereInASmallPartition) {
  SyntheticOptions o;
  o.partitions = 2;
  o.input_bytes = 256 << 10;
  o.rounds = 4;
  std::shared_ptr<SyntheticRun> run;
  auto job = make_synthetic_job(o, run);
  ASSERT_TRUE(job) << job.error().what();
  for (std::size_t p = 0; p < 2; ++p) {
    const auto want = expected_output(o, p);
    std::copy(want.begin(), want.end(), run->outputs[p].begin());
  }
  EXPECT_FALSE(job->verify(job->partitions[1], 1));
  EXPECT_NE(run->checksums[1], 0u);
  for (std::size_t word : {std::size_t{1}, std::size_t{4097}, run->outputs[1].size() - 1}) {
    run->outputs[1][word] ^= 1u;
    EXPECT_EQ(job->verify(job->partitions[1], 1), make_error_code(Errc::verification_failed))
        << "word " << word;
    run->outputs[1][word] ^= 1u;
  }
}

// A partition edited out of the kernels' shape (output a quarter of the
// input) is refused by the job's validate, naming both sizes.
TEST(SyntheticJob, ValidateRefusesAnOutputThatIsNotAQuarterOfTheInput) {
  SyntheticOptions o;
  o.partitions = 3;
  o.input_bytes = 64 << 10;
  std::shared_ptr<SyntheticRun> run;
  auto job = make_synthetic_job(o, run);
  ASSERT_TRUE(job) << job.error().what();
  EXPECT_FALSE(job->validate(job->partitions[2], 2));
  job->partitions[2].outputs[0].bytes = 32 << 10;
  const auto e = job->validate(job->partitions[2], 2);
  ASSERT_TRUE(e);
  EXPECT_NE(e.what().find("input 65536 bytes, output 32768"), std::string::npos) << e.what();
}
}  // namespace
}  // namespace stoker::engine::workloads
