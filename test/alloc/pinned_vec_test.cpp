// PinnedVec behaves like std::vector (growth, moves, shrink) while its
// storage comes from the pool and is paid for by the budget.
#include "alloc/pinned_vec.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <thread>
#include <vector>

namespace stoker::alloc {
namespace {

using namespace std::chrono_literals;
constexpr std::size_t MiB = std::size_t{1} << 20;

struct Point {
  std::uint64_t x, y;
  bool operator==(const Point&) const = default;
};

class PinnedVecTest : public ::testing::Test {
 protected:
  MemoryBudget budget{64 * MiB, "host"};
  PinnedPool pool{devices::Backend::host, budget};
};

TEST_F(PinnedVecTest, PushBackGrowsLikeStdVector) {
  PinnedVec<std::uint32_t> v(pool);
  std::vector<std::uint32_t> ref;
  EXPECT_TRUE(v.empty());
  EXPECT_EQ(v.capacity(), 0u);
  std::size_t reallocations = 0;
  for (std::uint32_t i = 0; i < 300000; ++i) {
    const auto cap = v.capacity();
    v.push_back(i * 7);
    ref.push_back(i * 7);
    if (v.capacity() != cap) ++reallocations;
  }
  EXPECT_EQ(v.size(), ref.size());
  EXPECT_TRUE(std::equal(v.begin(), v.end(), ref.begin(), ref.end()));
  EXPECT_LT(reallocations, 20u) << "growth is geometric";
  EXPECT_GE(v.capacity(), v.size());
  EXPECT_EQ(budget.in_use(), v.block().capacity()) << "only the current block is charged";
  EXPECT_EQ(v.span().size(), v.size());
  EXPECT_EQ(v.bytes().size(), v.size() * sizeof(std::uint32_t));
  EXPECT_EQ(v.front(), 0u);
  EXPECT_EQ(v.back(), 299999u * 7);
  EXPECT_THROW(v.at(v.size()), std::out_of_range);
}

TEST_F(PinnedVecTest, PushBackOfItsOwnElementSurvivesGrowth) {
  PinnedVec<std::uint64_t> v(pool);
  v.push_back(42);
  while (v.size() < v.capacity()) v.push_back(v.size());
  v.push_back(v[0]);  // the reference dangles once the storage moves
  EXPECT_EQ(v.back(), 42u);
}

TEST_F(PinnedVecTest, EmplaceBackAppendAndIteration) {
  PinnedVec<Point> v(pool);
  auto& p = v.emplace_back(Point{1, 2});
  EXPECT_EQ(p, (Point{1, 2}));
  std::vector<Point> more{{3, 4}, {5, 6}};
  v.append(more);
  v.append(v.span());  // appending itself, across a reallocation
  ASSERT_EQ(v.size(), 6u);
  EXPECT_EQ(v[3], (Point{1, 2}));
  EXPECT_EQ(v[5], (Point{5, 6}));
  std::uint64_t sum = 0;
  for (const auto& q : v) sum += q.x;
  EXPECT_EQ(sum, 18u);
  v.pop_back();
  EXPECT_EQ(v.size(), 5u);
}

TEST_F(PinnedVecTest, MoveTransfersTheStorageWithoutCopying) {
  PinnedVec<int> a(pool, 1000);
  std::iota(a.begin(), a.end(), 0);
  const int* storage = a.data();
  PinnedVec<int> b(std::move(a));
  EXPECT_EQ(b.data(), storage);
  EXPECT_EQ(b.size(), 1000u);
  EXPECT_EQ(a.size(), 0u);  // NOLINT: moved-from is empty, as for std::vector
  EXPECT_EQ(a.capacity(), 0u);
  PinnedVec<int> c(pool);
  c = std::move(b);
  EXPECT_EQ(c.data(), storage);
  EXPECT_EQ(c[999], 999);
  a.push_back(5);  // a moved-from vector is usable again
  EXPECT_EQ(a[0], 5);
}

TEST_F(PinnedVecTest, ResizeValueInitialisesLikeStdVector) {
  PinnedVec<int> v(pool);
  v.resize(10);
  EXPECT_TRUE(std::all_of(v.begin(), v.end(), [](int x) { return x == 0; }));
  v.resize(20, 7);
  EXPECT_EQ(v[9], 0);
  EXPECT_EQ(v[10], 7);
  EXPECT_EQ(v[19], 7);
  v.resize(5);
  EXPECT_EQ(v.size(), 5u);
  v.resize_for_overwrite(1000);
  EXPECT_EQ(v.size(), 1000u);
  v.clear();
  EXPECT_TRUE(v.empty());
  EXPECT_GE(v.capacity(), 1000u) << "clear keeps the storage, as std::vector does";
}

TEST_F(PinnedVecTest, ShrinkToFitGivesTheSurplusBack) {
  PinnedVec<std::byte> v(pool);
  v.reserve(8 * MiB);
  EXPECT_GE(budget.in_use(), 8 * MiB);
  v.resize(100);
  v.shrink_to_fit();
  EXPECT_EQ(v.size(), 100u);
  EXPECT_LT(v.capacity(), 8 * MiB);
  EXPECT_EQ(budget.in_use(), v.block().capacity());
  v.clear();
  v.shrink_to_fit();
  EXPECT_EQ(v.capacity(), 0u);
  EXPECT_EQ(budget.in_use(), 0u);
}

TEST_F(PinnedVecTest, GrowthBeyondTheBudgetThrowsAndLeavesTheVectorUnchanged) {
  PinnedVec<std::byte> v(pool);
  v.resize(MiB, std::byte{1});
  const auto* storage = v.data();
  const auto charged = budget.in_use();
  EXPECT_THROW(v.reserve(100 * MiB), std::bad_alloc);
  EXPECT_EQ(v.try_reserve(100 * MiB), make_error_code(Errc::out_of_host_memory));
  EXPECT_EQ(v.try_resize(100 * MiB), make_error_code(Errc::out_of_host_memory));
  EXPECT_EQ(v.size(), MiB);
  EXPECT_EQ(v.data(), storage);
  EXPECT_EQ(v[MiB - 1], std::byte{1});
  EXPECT_EQ(budget.in_use(), charged) << "failed growth leaves nothing charged";
  EXPECT_EQ(pool.stats().blocks_in_use, 1u);
}

TEST_F(PinnedVecTest, GrowthFallsBackToTheExactSizeWhenDoublingDoesNotFit) {
  PinnedVec<std::byte> v(pool);
  v.resize(20 * MiB);
  // Doubling (40 MiB) plus the old block does not fit in 64 MiB; 30 MiB does.
  v.resize(30 * MiB);
  EXPECT_EQ(v.size(), 30 * MiB);
  EXPECT_EQ(budget.in_use(), v.block().capacity());
}

TEST_F(PinnedVecTest, WaitPolicyBlocksUntilTheBudgetHasRoom) {
  auto other = pool.try_allocate(60 * MiB);
  ASSERT_TRUE(other);
  PinnedVec<std::byte> v(pool, GrowthPolicy::wait);
  std::thread releaser([&] {
    std::this_thread::sleep_for(20ms);
    other->reset();
  });
  v.resize(10 * MiB);  // waits for the release instead of throwing
  releaser.join();
  EXPECT_EQ(v.size(), 10 * MiB);
  PinnedVec<std::byte> w(pool, GrowthPolicy::wait);
  EXPECT_EQ(w.try_reserve(65 * MiB), make_error_code(Errc::out_of_host_memory))
      << "more than the whole budget fails instead of waiting forever";
}

TEST_F(PinnedVecTest, DefaultConstructedHasNoPoolAndCannotGrow) {
  PinnedVec<int> v;
  EXPECT_TRUE(v.empty());
  EXPECT_EQ(v.pool(), nullptr);
  EXPECT_EQ(v.try_reserve(10), make_error_code(Errc::invalid_argument));
  EXPECT_THROW(v.push_back(1), std::bad_alloc);
  v = PinnedVec<int>(pool);
  v.push_back(1);
  EXPECT_EQ(v[0], 1);
}

TEST_F(PinnedVecTest, DestructionReturnsEverything) {
  {
    PinnedVec<double> a(pool, 1000);
    PinnedVec<double> b(pool);
    for (int i = 0; i < 50000; ++i) b.push_back(i);
    EXPECT_GT(budget.in_use(), 0u);
  }
  EXPECT_EQ(budget.in_use(), 0u);
  EXPECT_EQ(pool.stats().blocks_in_use, 0u);
  EXPECT_EQ(pool.stats().bytes_in_use, 0u);
}

}  // namespace
}  // namespace stoker::alloc
