#include "devices/device_set.hpp"

#include <cuda_runtime.h>

#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "devices/detail/cuda_backend.hpp"
#include "devices/detail/host_backend.hpp"
#include "devices/pinned_buffer.hpp"

namespace stoker::devices {
namespace {

constexpr std::size_t kPinnedAlignment = 4096;

// The host backend's stand-in for the driver's table of registered pages, so
// that code which registers caller memory meets CUDA's refusal of a range
// overlapping a registered page on every CI run, not only on a GPU. Off the
// data path: registration is a per-buffer setup step.
class HostRegistry {
 public:
  static HostRegistry& instance() {
    static HostRegistry r;
    return r;
  }
  // Claims the pages of [ptr, ptr + bytes); false if any is claimed already.
  bool claim(const void* ptr, std::size_t bytes) {
    const auto [first, last] = pages(ptr, bytes);
    std::lock_guard lock(m_);
    auto next = ranges_.lower_bound(first);  // the first range starting at or after `first`
    if (next != ranges_.end() && next->first < last) return false;
    if (next != ranges_.begin() && std::prev(next)->second > first) return false;
    ranges_.emplace(first, last);
    return true;
  }
  void release(const void* ptr, std::size_t bytes) {
    std::lock_guard lock(m_);
    ranges_.erase(pages(ptr, bytes).first);
  }

 private:
  static std::pair<std::uintptr_t, std::uintptr_t> pages(const void* ptr, std::size_t bytes) {
    const auto p = reinterpret_cast<std::uintptr_t>(ptr);
    return {p / kPinnedAlignment * kPinnedAlignment,
            (p + bytes + kPinnedAlignment - 1) / kPinnedAlignment * kPinnedAlignment};
  }
  std::mutex m_;
  std::map<std::uintptr_t, std::uintptr_t> ranges_;  // first page -> end, disjoint
};

Topology cuda_topology(const std::vector<int>& ordinals) {
  const auto n = ordinals.size();
  Topology t;
  t.peer_access.assign(n, std::vector<bool>(n, false));
  t.peer_rank.assign(n, std::vector<int>(n, -1));
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      if (i == j) continue;
      int can = 0;
      if (cudaDeviceCanAccessPeer(&can, ordinals[i], ordinals[j]) != cudaSuccess) continue;
      t.peer_access[i][j] = can != 0;
      int rank = -1;
      if (can && cudaDeviceGetP2PAttribute(&rank, cudaDevP2PAttrPerformanceRank, ordinals[i],
                                           ordinals[j]) == cudaSuccess)
        t.peer_rank[i][j] = rank;
    }
  }
  return t;
}

Result<DeviceSet> discover_cuda(const DiscoverOptions& options) {
  const int count = cuda_device_count();
  if (count == 0)
    return Error{Errc::no_device, "CUDA backend requested but no CUDA device is visible"};
  std::vector<int> ordinals = options.cuda_ordinals;
  if (ordinals.empty())
    for (int i = 0; i < count; ++i) ordinals.push_back(i);
  std::vector<std::unique_ptr<Device>> devices;
  for (std::size_t i = 0; i < ordinals.size(); ++i) {
    const int o = ordinals[i];
    if (o < 0 || o >= count)
      return Error{Errc::invalid_argument, "CUDA device " + std::to_string(o) +
                                               " does not exist (this machine has " +
                                               std::to_string(count) + ")"};
    for (std::size_t k = 0; k < i; ++k)
      if (ordinals[k] == o)
        return Error{Errc::invalid_argument, "CUDA device " + std::to_string(o) + " listed twice"};
    auto info = detail::read_cuda_device_info(o);
    if (!info) return std::move(info).error();
    devices.push_back(
        std::make_unique<detail::CudaDevice>(static_cast<int>(i), o, std::move(*info)));
  }
  return DeviceSet(Backend::cuda, std::move(devices), cuda_topology(ordinals));
}

Result<DeviceSet> discover_host(const HostBackendOptions& o) {
  if (o.device_count < 1 || o.device_count > 64)
    return Error{Errc::invalid_argument,
                 "host backend device count must be 1..64, not " + std::to_string(o.device_count)};
  if (o.slowdown.size() > static_cast<std::size_t>(o.device_count))
    return Error{Errc::invalid_argument, std::to_string(o.slowdown.size()) +
                                             " slowdown factors given for " +
                                             std::to_string(o.device_count) + " host devices"};
  if (o.memory_bytes == 0)
    return Error{Errc::invalid_argument, "host backend device memory must be > 0 bytes"};
  std::vector<std::unique_ptr<Device>> devices;
  for (int i = 0; i < o.device_count; ++i) {
    const double f = i < static_cast<int>(o.slowdown.size()) ? o.slowdown[i] : 1.0;
    if (!(f >= 1.0 && f <= 1000.0))
      return Error{Errc::invalid_argument, "host device " + std::to_string(i) +
                                               ": slowdown factor must be in [1, 1000], not " +
                                               std::to_string(f)};
    devices.push_back(std::make_unique<detail::HostDevice>(i, f, o.memory_bytes));
  }
  Topology t;
  const auto n = static_cast<std::size_t>(o.device_count);
  // Host memory is one address space: every emulated device reaches every other.
  t.peer_access.assign(n, std::vector<bool>(n, true));
  t.peer_rank.assign(n, std::vector<int>(n, 0));
  for (std::size_t i = 0; i < n; ++i) {
    t.peer_access[i][i] = false;
    t.peer_rank[i][i] = -1;
  }
  return DeviceSet(Backend::host, std::move(devices), std::move(t));
}

}  // namespace

int cuda_device_count() noexcept {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // no driver or no device: not an error for us
    return 0;
  }
  return n;
}

Result<DeviceSet> discover(const DiscoverOptions& options) {
  switch (options.backend) {
    case BackendChoice::cuda:
      return discover_cuda(options);
    case BackendChoice::host:
      return discover_host(options.host);
    case BackendChoice::automatic:
      if (cuda_device_count() > 0) return discover_cuda(options);
      return discover_host(options.host);
  }
  return Error{Errc::invalid_argument, "unknown backend choice"};
}

Result<PinnedBuffer> allocate_pinned(Backend backend, std::size_t bytes) {
  if (bytes == 0) return Error{Errc::invalid_argument, "pinned allocation of 0 bytes"};
  void* p = nullptr;
  if (backend == Backend::cuda) {
    const auto st = cudaHostAlloc(&p, bytes, cudaHostAllocPortable);
    if (st != cudaSuccess) {
      cudaGetLastError();
      return Error{Errc::out_of_host_memory, "cudaHostAlloc of " + std::to_string(bytes) +
                                                 " bytes failed: " + cudaGetErrorString(st)};
    }
  } else {
    const auto rounded = (bytes + kPinnedAlignment - 1) / kPinnedAlignment * kPinnedAlignment;
    p = std::aligned_alloc(kPinnedAlignment, rounded);
    if (p == nullptr)
      return Error{Errc::out_of_host_memory,
                   "allocation of " + std::to_string(bytes) + " bytes failed"};
  }
  return PinnedBuffer(backend, p, bytes);
}

void PinnedBuffer::reset() noexcept {
  if (ptr_ != nullptr) {
    if (backend_ == Backend::cuda)
      cudaFreeHost(ptr_);
    else
      std::free(ptr_);
  }
  ptr_ = nullptr;
  bytes_ = 0;
}

Result<HostRegistration> register_host(Backend backend, void* ptr, std::size_t bytes) {
  if (ptr == nullptr || bytes == 0)
    return Error{Errc::invalid_argument, "register_host needs a non-empty range"};
  if (backend == Backend::cuda) {
    const auto st = cudaHostRegister(ptr, bytes, cudaHostRegisterPortable);
    if (st != cudaSuccess) {
      cudaGetLastError();
      return Error{make_cuda_error(st),
                   "cudaHostRegister of " + std::to_string(bytes) + " bytes failed"};
    }
  } else if (!HostRegistry::instance().claim(ptr, bytes)) {
    return Error{make_cuda_error(cudaErrorHostMemoryAlreadyRegistered),
                 "registering " + std::to_string(bytes) +
                     " bytes on the host backend: a page of the range is registered already"};
  }
  return HostRegistration(backend, ptr, bytes);
}

void HostRegistration::reset() noexcept {
  if (ptr_ != nullptr && backend_ == Backend::cuda) cudaHostUnregister(ptr_);
  if (ptr_ != nullptr && backend_ == Backend::host) HostRegistry::instance().release(ptr_, bytes_);
  ptr_ = nullptr;
  bytes_ = 0;
}

}  // namespace stoker::devices
