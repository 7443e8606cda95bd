// The steps of the GPU's bucket sums by batched affine additions
// (detail/accumulate_batch_affine.cuh), run on the host over plain memory,
// for G1 and G2: every thread's lanes, then each head added to its bucket
// as the join levels do, give each bucket the plain sum of its entries'
// points, at lane lengths and batches around run boundaries, with zero
// digits between and after the runs (the window sorts' and the whole
// sort's layouts), runs that cross many lanes and threads, repeated points
// (P + P), opposites (P - P) and infinity. Each bucket is written once, by
// its run's owner, and each lane leaves a head exactly where its first run
// began before it. The GPU suite compares the kernel with the CPU.
#include "kernels/detail/accumulate_batch_affine.cuh"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <random>
#include <vector>

#include "kernels/g1.cuh"
#include "kernels/g2.cuh"
#include "msm_cpu_test_util.hpp"

namespace stoker::kernels::gpu::detail {
namespace {

using test::same_point;
constexpr std::uint32_t kNone = ~std::uint32_t{0};

// Sorted entries: keys (kNone for a zero digit) and values (point index,
// sign in bit 31).
struct Entries {
  std::vector<std::uint32_t> keys, values;
};

template <typename Affine>
struct Outcome {
  using Xyzz = test::XyzzOf<Affine>;
  std::map<std::uint32_t, Xyzz> buckets;
  std::map<std::uint32_t, int> writes;
  std::vector<std::uint32_t> head_keys;
  std::vector<Affine> heads;
};

template <typename Affine>
struct HostLanes {
  using Field = kernels::detail::FieldOf<Affine>;
  using Xyzz = test::XyzzOf<Affine>;
  const Entries& e;
  const std::vector<Affine>& points;
  std::vector<Affine>& accs;  // [j * threads + t], as on the GPU
  std::vector<Field>& prefixes;
  Outcome<Affine>& out;
  std::size_t threads, t;

  std::size_t slot(unsigned j) const { return std::size_t{j} * threads + t; }
  std::uint32_t key(std::size_t i) const { return e.keys.at(i); }
  std::uint32_t value(std::size_t i) const { return e.values.at(i); }
  Affine point(std::uint32_t v) const {
    const Affine p = points.at(v & 0x7fffffffu);
    return v >> 31 ? neg(p) : p;
  }
  Field point_x(std::uint32_t v) const { return point(v).x; }
  Affine acc(unsigned j) const { return accs.at(slot(j)); }
  Field acc_x(unsigned j) const { return accs.at(slot(j)).x; }
  void set_acc(unsigned j, const Affine& p) { accs.at(slot(j)) = p; }
  Field prefix(unsigned j) const { return prefixes.at(slot(j)); }
  void set_prefix(unsigned j, const Field& f) { prefixes.at(slot(j)) = f; }
  void bucket(std::uint32_t key, const Xyzz& sum) {
    out.buckets[key] = sum;
    ++out.writes[key];
  }
  void head(std::size_t lane, std::uint32_t key, const Affine& sum) {
    out.head_keys.at(lane) = key;
    out.heads.at(lane) = sum;
  }
  void no_head(std::size_t lane) { out.head_keys.at(lane) = kNone; }
};

// Every thread's lanes, as the kernel's threads would run them.
template <typename Affine>
Outcome<Affine> run_lanes(const Entries& e, const std::vector<Affine>& points, unsigned lane,
                          unsigned batch, std::uint32_t hi) {
  const std::size_t count = e.keys.size();
  const std::size_t lanes = (count + lane - 1) / lane;
  const std::size_t threads = (lanes + batch - 1) / batch;
  std::vector<Affine> accs(threads * batch);
  std::vector<kernels::detail::FieldOf<Affine>> prefixes(threads * batch);
  Outcome<Affine> out;
  // A head slot nobody writes stays a value no key has.
  out.head_keys.assign(lanes, kNone - 1);
  out.heads.assign(lanes, Affine::infinity());
  for (std::size_t t = 0; t < threads; ++t) {
    HostLanes<Affine> mem{e, points, accs, prefixes, out, threads, t};
    accumulate_batch_affine<Affine>(mem, count, lane, batch, t, hi);
  }
  return out;
}

// Checks the outcome against plain mixed additions per key.
template <typename Affine>
void expect_bucket_sums(const Entries& e, const std::vector<Affine>& points, unsigned lane,
                        unsigned batch, std::uint32_t hi) {
  SCOPED_TRACE(::testing::Message() << "lane " << lane << ", batch " << batch << ", entries "
                                    << e.keys.size());
  Outcome<Affine> out = run_lanes(e, points, lane, batch, hi);
  std::map<std::uint32_t, test::XyzzOf<Affine>> expected;
  for (std::size_t i = 0; i < e.keys.size(); ++i) {
    if (e.keys[i] >= hi) continue;
    const std::uint32_t v = e.values[i];
    const Affine p = points[v & 0x7fffffffu];
    auto [it, fresh] = expected.try_emplace(e.keys[i], test::XyzzOf<Affine>::infinity());
    add_mixed(it->second, v >> 31 ? neg(p) : p);
  }
  // Heads: exactly the lanes whose first entry continues a run.
  for (std::size_t g = 0; g < out.head_keys.size(); ++g) {
    const std::size_t b = g * lane;
    const bool continues = b > 0 && e.keys[b] < hi && e.keys[b] == e.keys[b - 1];
    ASSERT_EQ(out.head_keys[g], continues ? e.keys[b] : kNone) << "lane " << g;
  }
  for (const auto& [key, writes] : out.writes) ASSERT_EQ(writes, 1) << "key " << key;
  for (std::size_t g = 0; g < out.head_keys.size(); ++g) {
    if (out.head_keys[g] == kNone) continue;
    auto it = out.buckets.find(out.head_keys[g]);
    ASSERT_NE(it, out.buckets.end()) << "a head without its bucket, lane " << g;
    add_mixed(it->second, out.heads[g]);
  }
  ASSERT_EQ(out.buckets.size(), expected.size());
  for (const auto& [key, sum] : expected) {
    auto it = out.buckets.find(key);
    ASSERT_NE(it, out.buckets.end()) << "key " << key;
    ASSERT_TRUE(same_point(it->second, sum)) << "key " << key;
  }
}

// Entries of `windows` windows, each sorted on its own with its zero
// digits last (the window sorts), or all keys sorted with the zero digits
// at the end (the whole sort): keys are bucket + window * buckets.
Entries make_entries(std::size_t per_window, unsigned windows, std::uint32_t buckets,
                     unsigned zero_pct, std::size_t points, bool window_sorts,
                     std::mt19937_64& rng) {
  Entries e;
  std::vector<std::pair<std::uint32_t, std::uint32_t>> all;
  for (unsigned w = 0; w < windows; ++w) {
    std::vector<std::pair<std::uint32_t, std::uint32_t>> win;
    for (std::size_t i = 0; i < per_window; ++i) {
      const std::uint32_t value =
          static_cast<std::uint32_t>(rng() % points) | (rng() % 2 ? 0x80000000u : 0u);
      const std::uint32_t key =
          rng() % 100 < zero_pct ? kNone : w * buckets + static_cast<std::uint32_t>(rng() % buckets);
      win.emplace_back(key, value);
    }
    std::stable_sort(win.begin(), win.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
    all.insert(all.end(), win.begin(), win.end());
  }
  if (!window_sorts)
    std::stable_sort(all.begin(), all.end(),
                     [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [k, v] : all) {
    e.keys.push_back(k);
    e.values.push_back(v);
  }
  return e;
}

template <typename Affine>
class AccumulateBatchAffine : public ::testing::Test {};
TYPED_TEST_SUITE(AccumulateBatchAffine, test::Groups, test::GroupNames);

TYPED_TEST(AccumulateBatchAffine, MatchesMixedAdditionsPerBucket) {
  using Affine = TypeParam;
  const auto points = test::known_log_points<Affine>(300, 500).points;
  std::mt19937_64 rng(501);
  for (bool window_sorts : {false, true})
    for (std::uint32_t buckets : {1u, 7u, 64u})
      for (unsigned lane : {1u, 2u, 5u, 16u})
        for (unsigned batch : {1u, 3u, 8u})
          for (std::size_t per_window : {std::size_t{1}, std::size_t{37}, std::size_t{250}}) {
            const Entries e =
                make_entries(per_window, 3, buckets, 20, points.size(), window_sorts, rng);
            expect_bucket_sums(e, points, lane, batch, 3 * buckets);
          }
}

TYPED_TEST(AccumulateBatchAffine, OneLongRunAcrossThreads) {
  using Affine = TypeParam;
  const auto points = test::known_log_points<Affine>(500, 510).points;
  Entries e;
  for (std::uint32_t i = 0; i < 1000; ++i) {
    e.keys.push_back(i < 990 ? 0 : kNone);
    e.values.push_back(i % 500);
  }
  for (unsigned lane : {1u, 4u, 13u})
    for (unsigned batch : {1u, 6u, 32u}) expect_bucket_sums(e, points, lane, batch, 1);
}

TYPED_TEST(AccumulateBatchAffine, HandlesInfinityRepeatsAndOpposites) {
  using Affine = TypeParam;
  auto points = test::known_log_points<Affine>(4, 520).points;
  points.push_back(Affine::infinity());
  std::mt19937_64 rng(521);
  // Few distinct points, both signs: a lane's accumulator meets its own
  // point (P + P), its opposite (P - P, then infinity + Q) and infinity
  // round after round.
  for (unsigned lane : {3u, 8u})
    for (unsigned batch : {2u, 5u}) {
      const Entries e = make_entries(400, 2, 3, 10, points.size(), false, rng);
      expect_bucket_sums(e, points, lane, batch, 6);
    }
  // A bucket that sums to infinity: P and -P alternate.
  Entries e;
  for (std::uint32_t i = 0; i < 64; ++i) {
    e.keys.push_back(i < 32 ? 0 : 1);
    e.values.push_back(i % 2 ? 0x80000001u : 1u);
  }
  expect_bucket_sums(e, points, 4, 4, 2);
  expect_bucket_sums(e, points, 64, 1, 2);
}

}  // namespace
}  // namespace stoker::kernels::gpu::detail
