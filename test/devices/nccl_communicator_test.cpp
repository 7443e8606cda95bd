// NcclCommunicator on the host backend: the stand-in the engine's CI runs,
// with the interface and ordering of the CUDA one.
#include "devices/nccl_communicator.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "devices/device_set.hpp"

namespace stoker::devices {
namespace {

DeviceSet host_set(int n) {
  DiscoverOptions o;
  o.backend = BackendChoice::host;
  o.host.device_count = n;
  auto set = discover(o);
  EXPECT_TRUE(set) << set.error().what();
  return std::move(*set);
}

// One buffer and one stream per rank; rank r's buffer holds bytes r*31 + i.
struct Ranks {
  std::vector<DeviceBuffer> memory;
  std::vector<Stream> owned;
  std::vector<void*> buffers;
  std::vector<Stream*> streams;

  Ranks(const DeviceSet& set, std::size_t bytes) {
    for (std::size_t r = 0; r < set.size(); ++r) {
      auto b = set[r].allocate(bytes);
      EXPECT_TRUE(b) << b.error().what();
      memory.push_back(std::move(*b));
      fill(r, bytes);
      auto s = set[r].create_stream();
      EXPECT_TRUE(s) << s.error().what();
      owned.push_back(std::move(*s));
    }
    for (std::size_t r = 0; r < set.size(); ++r) {
      buffers.push_back(memory[r].data());
      streams.push_back(&owned[r]);
    }
  }
  void fill(std::size_t r, std::size_t bytes) {
    auto* p = memory[r].as<std::uint8_t>();
    for (std::size_t i = 0; i < bytes; ++i) p[i] = static_cast<std::uint8_t>(r * 31 + i);
  }
  void synchronize() {
    for (auto& s : owned) ASSERT_FALSE(s.synchronize());
  }
};

TEST(NcclCommunicator, BroadcastFromEachRootReachesEveryRankOnOneTwoAndThreeDevices) {
  constexpr std::size_t kBytes = 4096 + 7;
  for (int n : {1, 2, 3}) {
    auto set = host_set(n);
    auto comm = NcclCommunicator::create(set);
    ASSERT_TRUE(comm) << comm.error().what();
    EXPECT_TRUE(*comm);
    EXPECT_EQ(comm->ranks(), n);
    for (int root = 0; root < n; ++root) {
      Ranks ranks(set, kBytes);
      std::vector<std::uint8_t> expected(kBytes);
      std::memcpy(expected.data(), ranks.buffers[root], kBytes);
      ASSERT_FALSE(comm->broadcast(ranks.buffers, kBytes, root, ranks.streams))
          << n << " ranks, root " << root;
      ranks.synchronize();
      for (int r = 0; r < n; ++r)
        EXPECT_EQ(std::memcmp(ranks.buffers[r], expected.data(), kBytes), 0)
            << n << " ranks, root " << root << ": rank " << r << " differs from the root's bytes";
    }
  }
}

// Work enqueued before the broadcast on the root's stream fills its buffer;
// the other ranks must receive those bytes, not what was there before.
TEST(NcclCommunicator, BroadcastSendsWhatTheRootsStreamWroteBeforeIt) {
  auto set = host_set(2);
  auto comm = std::move(*NcclCommunicator::create(set));
  constexpr std::size_t kBytes = 1 << 16;
  Ranks ranks(set, kBytes);
  auto* root_bytes = static_cast<std::uint8_t*>(ranks.buffers[1]);
  ASSERT_FALSE(ranks.owned[1].enqueue_host([root_bytes] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    std::memset(root_bytes, 0xab, kBytes);
    return std::error_code{};
  }));
  ASSERT_FALSE(comm.broadcast(ranks.buffers, kBytes, 1, ranks.streams));
  ranks.synchronize();
  const std::vector<std::uint8_t> expected(kBytes, 0xab);
  EXPECT_EQ(std::memcmp(ranks.buffers[0], expected.data(), kBytes), 0);
}

// Work enqueued after the broadcast on the root's stream may overwrite its
// buffer; the other ranks must still receive the bytes it held before.
TEST(NcclCommunicator, RootsLaterWorkWaitsUntilEveryRankHasItsBytes) {
  auto set = host_set(3);
  auto comm = std::move(*NcclCommunicator::create(set));
  constexpr std::size_t kBytes = 1 << 16;
  Ranks ranks(set, kBytes);
  std::vector<std::uint8_t> expected(kBytes);
  std::memcpy(expected.data(), ranks.buffers[0], kBytes);
  // Rank 2's stream is busy, so its copy runs late.
  ASSERT_FALSE(ranks.owned[2].enqueue_host([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    return std::error_code{};
  }));
  ASSERT_FALSE(comm.broadcast(ranks.buffers, kBytes, 0, ranks.streams));
  auto* root_bytes = static_cast<std::uint8_t*>(ranks.buffers[0]);
  ASSERT_FALSE(ranks.owned[0].enqueue_host([root_bytes] {
    std::memset(root_bytes, 0, kBytes);
    return std::error_code{};
  }));
  ranks.synchronize();
  for (int r : {1, 2}) EXPECT_EQ(std::memcmp(ranks.buffers[r], expected.data(), kBytes), 0) << r;
}

TEST(NcclCommunicator, BadRootIsRefusedAndNothingMoves) {
  auto set = host_set(2);
  auto comm = std::move(*NcclCommunicator::create(set));
  constexpr std::size_t kBytes = 256;
  Ranks ranks(set, kBytes);
  std::vector<std::uint8_t> before(kBytes);
  std::memcpy(before.data(), ranks.buffers[1], kBytes);
  for (int root : {-1, 2, 100})
    EXPECT_EQ(comm.broadcast(ranks.buffers, kBytes, root, ranks.streams),
              make_error_code(Errc::invalid_argument))
        << "root " << root;
  ranks.synchronize();
  EXPECT_EQ(std::memcmp(ranks.buffers[1], before.data(), kBytes), 0);
}

TEST(NcclCommunicator, SpansThatDoNotMatchTheRanksAreRefused) {
  auto set = host_set(2);
  auto comm = std::move(*NcclCommunicator::create(set));
  constexpr std::size_t kBytes = 256;
  Ranks ranks(set, kBytes);
  const auto invalid = make_error_code(Errc::invalid_argument);
  const std::vector<void*> one_buffer{ranks.buffers[0]};
  const std::vector<Stream*> one_stream{ranks.streams[0]};
  EXPECT_EQ(comm.broadcast(one_buffer, kBytes, 0, ranks.streams), invalid);
  EXPECT_EQ(comm.broadcast(ranks.buffers, kBytes, 0, one_stream), invalid);
  const std::vector<void*> null_buffer{ranks.buffers[0], nullptr};
  EXPECT_EQ(comm.broadcast(null_buffer, kBytes, 0, ranks.streams), invalid);
  const std::vector<Stream*> null_stream{ranks.streams[0], nullptr};
  EXPECT_EQ(comm.broadcast(ranks.buffers, kBytes, 0, null_stream), invalid);
  // Each rank's stream must belong to that rank's device.
  const std::vector<Stream*> swapped{ranks.streams[1], ranks.streams[0]};
  EXPECT_EQ(comm.broadcast(ranks.buffers, kBytes, 0, swapped), invalid);
}

TEST(NcclCommunicator, EmptySetIsRefused) {
  const DeviceSet empty;
  auto comm = NcclCommunicator::create(empty);
  ASSERT_FALSE(comm);
  EXPECT_EQ(comm.error().code, make_error_code(Errc::invalid_argument));
  EXPECT_NE(comm.error().what().find("empty"), std::string::npos) << comm.error().what();
}

TEST(NcclCommunicator, MovedFromIsEmptyAndRefusesToBroadcast) {
  auto set = host_set(2);
  auto comm = std::move(*NcclCommunicator::create(set));
  Ranks ranks(set, 64);

  NcclCommunicator moved(std::move(comm));
  EXPECT_FALSE(comm);
  EXPECT_EQ(comm.ranks(), 0);
  EXPECT_EQ(comm.broadcast(ranks.buffers, 64, 0, ranks.streams),
            make_error_code(Errc::invalid_argument));
  EXPECT_TRUE(moved);
  EXPECT_EQ(moved.ranks(), 2);

  NcclCommunicator assigned;
  EXPECT_FALSE(assigned);
  assigned = std::move(moved);
  EXPECT_FALSE(moved);
  EXPECT_EQ(assigned.ranks(), 2);
  EXPECT_FALSE(assigned.broadcast(ranks.buffers, 64, 1, ranks.streams));
  ranks.synchronize();
  EXPECT_EQ(std::memcmp(ranks.buffers[0], ranks.buffers[1], 64), 0);
}

}  // namespace
}  // namespace stoker::devices
