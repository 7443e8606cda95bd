#include "devices/device_set.hpp"

#include <cuda_runtime.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "devices/cpu_set.hpp"
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
  // The host backend's shape would be ignored here: say so rather than run
  // on GPUs the caller thought were emulated.
  if (options.host.device_count != 1 || !options.host.slowdown.empty() ||
      !options.host.cpu_affinity.empty())
    return Error{Errc::invalid_argument,
                 "host backend options (device count " + std::to_string(options.host.device_count) +
                     ", " + std::to_string(options.host.slowdown.size()) + " slowdown factors, " +
                     std::to_string(options.host.cpu_affinity.size()) +
                     " CPU lists) were given but the backend is CUDA; ask for the host "
                     "backend to use them"};
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
  for (int o : ordinals) detail::note_usable_cuda_device(o);
  return DeviceSet(Backend::cuda, std::move(devices), cuda_topology(ordinals));
}

Result<DeviceSet> discover_host(const DiscoverOptions& options) {
  // Silently running on emulated devices when GPUs were named would report
  // figures for a machine the caller did not ask for.
  if (!options.cuda_ordinals.empty())
    return Error{
        Errc::invalid_argument,
        "CUDA devices were named (" + std::to_string(options.cuda_ordinals.size()) +
            ") but the backend is the host's" +
            (options.backend == BackendChoice::automatic ? " (no CUDA device is visible)" : "") +
            "; the host backend's device count is set on its own"};
  const HostBackendOptions& o = options.host;
  if (o.device_count < 1 || o.device_count > 64)
    return Error{Errc::invalid_argument,
                 "host backend device count must be 1..64, not " + std::to_string(o.device_count)};
  if (o.slowdown.size() > static_cast<std::size_t>(o.device_count))
    return Error{Errc::invalid_argument, std::to_string(o.slowdown.size()) +
                                             " slowdown factors given for " +
                                             std::to_string(o.device_count) + " host devices"};
  if (o.cpu_affinity.size() > static_cast<std::size_t>(o.device_count))
    return Error{Errc::invalid_argument, std::to_string(o.cpu_affinity.size()) +
                                             " CPU lists given for " +
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
    const std::string cpus = i < static_cast<int>(o.cpu_affinity.size()) ? o.cpu_affinity[i] : "";
    if (!cpus.empty())
      if (auto parsed = CpuSet::parse(cpus); !parsed)
        return Error{parsed.error().code,
                     "host device " + std::to_string(i) + ": " + parsed.error().what()};
    devices.push_back(std::make_unique<detail::HostDevice>(i, f, o.memory_bytes, cpus));
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
      return discover_host(options);
    case BackendChoice::automatic:
      if (cuda_device_count() > 0) return discover_cuda(options);
      return discover_host(options);
  }
  return Error{Errc::invalid_argument, "unknown backend choice"};
}

KeepCurrentDevice::KeepCurrentDevice(bool cuda) noexcept
    : device_(cuda ? detail::device_to_restore() : -1) {}

KeepCurrentDevice::~KeepCurrentDevice() {
  detail::restore_device(device_);
}

namespace {

constexpr std::size_t kHugePage = std::size_t{2} << 20;
// Below this, cudaHostAlloc's cost is small and a mapping would round up to
// a huge page and start threads for little.
constexpr std::size_t kMappedMinBytes = std::size_t{64} << 20;
// One faulting thread per this many bytes, up to the cores (at most 16):
// 8 threads fault 4 GiB of huge pages in 0.13 s, 16 in 0.09 s (measured).
constexpr std::size_t kBytesPerFaultThread = std::size_t{256} << 20;

std::optional<std::size_t> mem_available_bytes() {
  std::ifstream in("/proc/meminfo");
  std::string key;
  std::size_t kib = 0;
  std::string unit;
  while (in >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return std::nullopt;
}

// Anonymous mapping aligned to a huge page, advised to use transparent huge
// pages, faulted in by several threads, then registered with CUDA: pinning
// then walks 512 times fewer pages than with 4 KiB ones. Null (and nothing
// left behind) when any step fails; the caller falls back to cudaHostAlloc,
// which also names the error when memory is short. Refused up front when
// the request exceeds MemAvailable: faulting in more would wake the OOM
// killer instead of failing cleanly.
void* map_and_register(std::size_t bytes, std::size_t& mapped) {
  if (const auto avail = mem_available_bytes(); !avail || bytes > *avail) return nullptr;
  mapped = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  const std::size_t span = mapped + kHugePage;  // room to align the start
  void* raw = mmap(nullptr, span, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return nullptr;
  auto* base = static_cast<std::byte*>(raw);
  const auto addr = reinterpret_cast<std::uintptr_t>(base);
  auto* p = base + ((kHugePage - addr % kHugePage) % kHugePage);
  if (p > base) munmap(base, static_cast<std::size_t>(p - base));
  if (p + mapped < base + span)
    munmap(p + mapped, static_cast<std::size_t>(base + span - (p + mapped)));
  madvise(p, mapped, MADV_HUGEPAGE);  // a hint: without THP the mapping still works
  // Not inherited by a child the process forks: shared copy-on-write, the
  // first write by the parent would move its page to a new frame while the
  // device still reads the old one. A child cannot use the parent's CUDA
  // memory anyway.
  if (madvise(p, mapped, MADV_DONTFORK) != 0) {
    munmap(p, mapped);
    return nullptr;
  }

  const std::size_t cores = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t threads =
      std::clamp<std::size_t>(mapped / kBytesPerFaultThread, 1, std::min<std::size_t>(cores, 16));
  const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const auto fault = [=](std::size_t t) {
    const std::size_t from = mapped / threads * t / page * page;
    const std::size_t to = t + 1 == threads ? mapped : mapped / threads * (t + 1) / page * page;
    for (std::size_t i = from; i < to; i += page) *reinterpret_cast<volatile char*>(p + i) = 0;
  };
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(fault, t);
  fault(0);
  for (auto& t : pool) t.join();

  if (cudaHostRegister(p, mapped, cudaHostRegisterPortable | cudaHostRegisterMapped) !=
      cudaSuccess) {
    cudaGetLastError();
    munmap(p, mapped);
    return nullptr;
  }
  return p;
}

}  // namespace

Result<PinnedBuffer> allocate_pinned(Backend backend, std::size_t bytes) {
  if (bytes == 0) return Error{Errc::invalid_argument, "pinned allocation of 0 bytes"};
  void* p = nullptr;
  if (backend == Backend::cuda) {
    detail::PinningContext context;
    if (bytes >= kMappedMinBytes) {
      std::size_t mapped = 0;
      if (void* m = map_and_register(bytes, mapped)) return PinnedBuffer(m, bytes, mapped);
    }
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
    std::optional<detail::PinningContext> context;
    if (backend_ == Backend::cuda) context.emplace();
    if (mapped_bytes_ != 0) {
      cudaHostUnregister(ptr_);
      munmap(ptr_, mapped_bytes_);
    } else if (backend_ == Backend::cuda) {
      cudaFreeHost(ptr_);
    } else {
      std::free(ptr_);
    }
  }
  ptr_ = nullptr;
  bytes_ = 0;
  mapped_bytes_ = 0;
}

Result<HostRegistration> register_host(Backend backend, void* ptr, std::size_t bytes) {
  if (ptr == nullptr || bytes == 0)
    return Error{Errc::invalid_argument, "register_host needs a non-empty range"};
  if (backend == Backend::cuda) {
    detail::PinningContext context;
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

Result<bool> is_page_locked(Backend backend, const void* ptr, std::size_t bytes) {
  if (backend != Backend::cuda) return true;
  if (ptr == nullptr || bytes == 0) return false;
  const auto begin = reinterpret_cast<std::uintptr_t>(ptr);
  if (bytes - 1 > UINTPTR_MAX - begin) return false;  // past the end of the address space
  const std::uintptr_t last = begin + (bytes - 1);
  detail::PinningContext context;
  // Range by range: each answer covers the rest of its registration, so
  // memory registered in pieces takes one call per piece, and a page
  // between two registrations is found.
  for (std::uintptr_t p = begin;;) {
    const auto r = detail::locked_range(reinterpret_cast<const void*>(p));
    if (!r) return r.error();
    if (!r->locked) return false;
    if (r->size == 0) {  // the driver gives no range: the last byte decides
      if (p == last) return true;
      p = last;
      continue;
    }
    const std::uintptr_t end = r->start + r->size;  // past p (locked_range says it holds p)
    if (end > last) return true;
    p = end;
  }
}

void HostRegistration::reset() noexcept {
  if (ptr_ != nullptr && backend_ == Backend::cuda) {
    detail::PinningContext context;
    cudaHostUnregister(ptr_);
  }
  if (ptr_ != nullptr && backend_ == Backend::host) HostRegistry::instance().release(ptr_, bytes_);
  ptr_ = nullptr;
  bytes_ = 0;
}

}  // namespace stoker::devices
