// NcclCommunicator over real GPUs. Run with NCCL_NVLS_ENABLE=0 on the shared
// GPU machines (nccl_communicator.hpp says why).
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "devices/device_set.hpp"
#include "devices/nccl_communicator.hpp"
#include "devices/pinned_buffer.hpp"
#include "test/gpu_guard.hpp"

namespace stoker::devices {
namespace {

DeviceSet gpus(std::vector<int> ordinals) {
  DiscoverOptions o;
  o.backend = BackendChoice::cuda;
  o.cuda_ordinals = std::move(ordinals);
  auto set = discover(o);
  EXPECT_TRUE(set) << set.error().what();
  return std::move(*set);
}

std::uint8_t pattern(std::size_t rank, std::size_t i) {
  return static_cast<std::uint8_t>((i * 131 + rank * 17 + (i >> 12)) & 0xff);
}

// Fills rank r's buffer with pattern(r, .) through pinned memory on its stream.
void upload(Stream& stream, void* buffer, std::size_t rank, std::size_t bytes) {
  auto host = allocate_pinned(Backend::cuda, bytes);
  ASSERT_TRUE(host) << host.error().what();
  auto* p = static_cast<std::uint8_t*>(host->data());
  for (std::size_t i = 0; i < bytes; ++i) p[i] = pattern(rank, i);
  ASSERT_FALSE(stream.copy(buffer, p, bytes));
  ASSERT_FALSE(stream.synchronize());
}

std::vector<std::uint8_t> download(Stream& stream, const void* buffer, std::size_t bytes) {
  auto host = allocate_pinned(Backend::cuda, bytes);
  EXPECT_TRUE(host) << host.error().what();
  EXPECT_FALSE(stream.copy(host->data(), buffer, bytes));
  EXPECT_FALSE(stream.synchronize());
  const auto* p = static_cast<const std::uint8_t*>(host->data());
  return {p, p + bytes};
}

// First differing index, or -1.
long long first_difference(const std::vector<std::uint8_t>& got, std::size_t rank) {
  for (std::size_t i = 0; i < got.size(); ++i)
    if (got[i] != pattern(rank, i)) return static_cast<long long>(i);
  return -1;
}

TEST(NcclCommunicatorGpu, OneRankBroadcastSucceedsAndLeavesTheRootsBufferUnchanged) {
  STOKER_REQUIRE_GPU();
  auto set = gpus({0});
  auto comm = NcclCommunicator::create(set);
  ASSERT_TRUE(comm) << comm.error().what();
  EXPECT_EQ(comm->ranks(), 1);
  constexpr std::size_t kBytes = std::size_t{1} << 20;
  auto buffer = set[0].allocate(kBytes);
  ASSERT_TRUE(buffer) << buffer.error().what();
  auto stream = set[0].create_stream();
  ASSERT_TRUE(stream) << stream.error().what();
  upload(*stream, buffer->data(), 0, kBytes);
  const std::vector<void*> buffers{buffer->data()};
  const std::vector<Stream*> streams{&*stream};
  ASSERT_FALSE(comm->broadcast(buffers, kBytes, 0, streams));
  EXPECT_EQ(first_difference(download(*stream, buffer->data(), kBytes), 0), -1);
}

TEST(NcclCommunicatorGpu, BroadcastOf64MiBReachesEveryGpuByteForByte) {
  STOKER_REQUIRE_GPUS(2);
  auto set = gpus({});
  auto comm = NcclCommunicator::create(set);
  ASSERT_TRUE(comm) << comm.error().what();
  const auto n = set.size();
  ASSERT_EQ(comm->ranks(), static_cast<int>(n));
  constexpr std::size_t kBytes = std::size_t{64} << 20;
  std::vector<DeviceBuffer> memory;
  std::vector<Stream> owned;
  for (std::size_t r = 0; r < n; ++r) {
    auto b = set[r].allocate(kBytes);
    ASSERT_TRUE(b) << b.error().what();
    memory.push_back(std::move(*b));
    auto s = set[r].create_stream();
    ASSERT_TRUE(s) << s.error().what();
    owned.push_back(std::move(*s));
  }
  std::vector<void*> buffers;
  std::vector<Stream*> streams;
  for (std::size_t r = 0; r < n; ++r) {
    buffers.push_back(memory[r].data());
    streams.push_back(&owned[r]);
  }
  for (const int root : {0, static_cast<int>(n) - 1}) {
    for (std::size_t r = 0; r < n; ++r) upload(owned[r], buffers[r], r, kBytes);
    int before = -1;
    ASSERT_EQ(cudaGetDevice(&before), cudaSuccess);
    ASSERT_FALSE(comm->broadcast(buffers, kBytes, root, streams)) << "root " << root;
    int after = -1;
    ASSERT_EQ(cudaGetDevice(&after), cudaSuccess);
    EXPECT_EQ(after, before) << "broadcast changed the calling thread's current device";
    for (std::size_t r = 0; r < n; ++r)
      EXPECT_EQ(
          first_difference(download(owned[r], buffers[r], kBytes), static_cast<std::size_t>(root)),
          -1)
          << "root " << root << ", rank " << r << ": first byte that differs from the root's";
  }
}

}  // namespace
}  // namespace stoker::devices
