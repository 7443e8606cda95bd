// The pure logic of `stoker info` and `stoker doctor` (tools/commands/doctor_verdict.hpp):
// the verdict a user reads for given figures, and the parsing and text helpers.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "tools/commands/doctor_verdict.hpp"

namespace stoker::tools {
namespace {

bool any_contains(const std::vector<std::string>& lines, const std::string& needle) {
  for (const auto& l : lines)
    if (l.find(needle) != std::string::npos) return true;
  return false;
}

// The figures measured on the reference machine (2x H200, PCIe Gen5).
DoctorFigures reference_machine() {
  TransferFigures g;
  g.pinned_h2d = 55;
  g.pinned_d2h = 55;
  g.pageable_h2d = 7;
  g.pageable_d2h = 6;
  g.registered_h2d = 55;
  g.registered_d2h = 55;
  g.loaded_pinned_h2d = 24;
  g.loaded_pageable_h2d = 2.2;
  DoctorFigures f;
  f.gpus = {g, g};
  f.writer_threads = 30;
  f.all_gpus_h2d = 110;
  f.peers = {{0, 1, true, 389}, {1, 0, true, 389}};
  f.host_alloc_s_per_gib = 0.5;
  f.host_register_s_per_gib = 0.08;
  return f;
}

TEST(Median, TakesTheMiddleSampleOrTheMeanOfTheMiddleTwo) {
  EXPECT_EQ(median({3, 1, 2}), 2);
  EXPECT_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_EQ(median({7}), 7);
  EXPECT_FALSE(median({}).has_value());
}

TEST(DoctorVerdict, ReferenceMachineIsToldToFeedFromPinnedMemory) {
  const auto v = doctor_verdict(reference_machine());
  EXPECT_TRUE(
      any_contains(v, "pageable H2D is 7.9x slower than pinned here (7.0 GB/s vs 55.0 GB/s)"))
      << v.front();
  EXPECT_TRUE(any_contains(v, "under host memory load (30 writer threads) 25x (2.2 GB/s)"));
  EXPECT_TRUE(any_contains(v, "feed this machine from pinned memory (PinnedVec / PinnedPool)"));
  EXPECT_TRUE(any_contains(v, "pinned H2D drops to 24.0 GB/s under the same load (2.3x slower)"));
}

TEST(DoctorVerdict, ComparesRegisterWithAllocCost) {
  const auto v = doctor_verdict(reference_machine());
  EXPECT_TRUE(any_contains(v,
                           "cudaHostRegister costs 0.08 s/GiB against 0.50 s/GiB for "
                           "cudaHostAlloc (6.2x cheaper)"));
  EXPECT_TRUE(any_contains(v, "copies at 55.0 GB/s (100 % of cudaHostAlloc memory)"));
  // 0.5 s/GiB to allocate is more than a 7 GB/s pageable copy of a GiB (0.15 s).
  EXPECT_TRUE(any_contains(v,
                           "a fresh cudaHostAlloc per transfer (0.50 s/GiB) would cost more "
                           "than the pageable copy itself (0.15 s/GiB)"));

  auto f = reference_machine();
  f.host_register_s_per_gib = 0.7;
  EXPECT_TRUE(any_contains(doctor_verdict(f), "no less than cudaHostAlloc's 0.50 s/GiB"));
}

TEST(DoctorVerdict, SaysWhetherTheHostFeedsAllGpusAtOnce) {
  auto f = reference_machine();
  EXPECT_TRUE(any_contains(doctor_verdict(f),
                           "all 2 GPUs at once: 110.0 GB/s aggregate H2D "
                           "(100 % of 2 single-GPU links): the host feeds "
                           "every link at full rate"));
  f.all_gpus_h2d = 66;
  EXPECT_TRUE(any_contains(doctor_verdict(f), "only 60 % of 2 single-GPU links (110.0 GB/s)"));
}

TEST(DoctorVerdict, ReportsPeerLinksAndTheirAbsence) {
  auto f = reference_machine();
  EXPECT_TRUE(
      any_contains(doctor_verdict(f), "peer copies: 389.0 GB/s median over 2 direct links"));
  f.peers[1].direct = false;
  f.peers[1].gbps = 20;
  const auto v = doctor_verdict(f);
  EXPECT_TRUE(any_contains(v,
                           "GPU 1 -> GPU 0 has no peer access: copies go through host memory "
                           "at 20.0 GB/s"));
}

TEST(DoctorVerdict, OneGpuSaysThereIsNothingConcurrentToMeasure) {
  auto f = reference_machine();
  f.gpus.resize(1);
  f.all_gpus_h2d.reset();
  f.peers.clear();
  const auto v = doctor_verdict(f);
  EXPECT_TRUE(any_contains(v, "one GPU: no concurrent feeding or peer copies to measure"));
  EXPECT_FALSE(any_contains(v, "aggregate"));
}

TEST(DoctorVerdict, SaysWhetherBothDirectionsShareTheLink) {
  auto f = reference_machine();
  for (auto& g : f.gpus) {
    g.duplex_h2d = 46;
    g.duplex_d2h = 12;
  }
  EXPECT_TRUE(any_contains(doctor_verdict(f),
                           "H2D and D2H share the link: at once they move 46.0 GB/s + 12.0 GB/s "
                           "against 55.0 GB/s one way"));
  for (auto& g : f.gpus) g.duplex_d2h = 50;
  EXPECT_TRUE(any_contains(doctor_verdict(f),
                           "the link is full duplex: H2D and D2H at once move 46.0 GB/s + 50.0 "
                           "GB/s (H2D at 84 % of its one-way rate)"));
  for (auto& g : f.gpus) g.duplex_d2h.reset();
  EXPECT_FALSE(any_contains(doctor_verdict(f), "duplex"));
  EXPECT_FALSE(any_contains(doctor_verdict(f), "share the link"));
}

TEST(DoctorVerdict, FastPageablePathIsCalledClose) {
  auto f = reference_machine();
  for (auto& g : f.gpus) {
    g.pageable_h2d = 52;
    g.loaded_pageable_h2d = 50;
  }
  const auto v = doctor_verdict(f);
  EXPECT_TRUE(any_contains(v, "pageable H2D is as fast as pinned here"));
  EXPECT_TRUE(any_contains(v, "pageable and pinned are close here"));
  EXPECT_FALSE(any_contains(v, "feed this machine from pinned memory"));
}

TEST(DoctorVerdict, MissingFiguresLeaveTheirSentencesOut) {
  DoctorFigures f;
  f.gpus.resize(2);
  const auto v = doctor_verdict(f);
  EXPECT_FALSE(any_contains(v, "pageable"));
  EXPECT_FALSE(any_contains(v, "cudaHostRegister"));
  EXPECT_FALSE(any_contains(v, "peer copies"));
}

TEST(DoctorVerdict, SummarizesGpusByMedianPerFigure) {
  TransferFigures a, b, c;
  a.pinned_h2d = 50;
  b.pinned_h2d = 54;
  c.pinned_h2d = 10;
  b.pageable_h2d = 7;  // measured on one GPU only
  const auto s = summarize({a, b, c});
  EXPECT_EQ(s.pinned_h2d, 50);
  EXPECT_EQ(s.pageable_h2d, 7);
  EXPECT_FALSE(s.registered_h2d.has_value());
}

TEST(FormatRatio, KeepsOneDecimalBelowTen) {
  EXPECT_EQ(format_ratio(7.86), "7.9x");
  EXPECT_EQ(format_ratio(25.4), "25x");
}

TEST(FormatBytes, UsesBinaryUnits) {
  EXPECT_EQ(format_bytes(256u << 20), "256 MiB");
  EXPECT_EQ(format_bytes(std::uint64_t{1} << 30), "1.0 GiB");
  EXPECT_EQ(format_bytes(60 * 1024 * 1024 + 512 * 1024), "60.5 MiB");
  EXPECT_EQ(format_bytes(232448), "227.0 KiB");
  EXPECT_EQ(format_bytes(12), "12 B");
}

}  // namespace
}  // namespace stoker::tools
