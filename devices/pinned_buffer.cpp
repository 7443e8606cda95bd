#include "devices/pinned_buffer.hpp"

#include <cuda_runtime.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/host_memory_limit.hpp"
#include "common/start_thread.hpp"
#include "devices/detail/cuda_backend.hpp"
#include "devices/meminfo.hpp"

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

constexpr std::size_t kHugePage = std::size_t{2} << 20;
// Below this, cudaHostAlloc's cost is small and a mapping would round up to
// a huge page and start threads for little.
constexpr std::size_t kMappedMinBytes = std::size_t{64} << 20;
// One faulting thread per this many bytes, up to the cores (at most 16):
// 8 threads fault 4 GiB of huge pages in 0.13 s, 16 in 0.09 s (measured).
constexpr std::size_t kBytesPerFaultThread = std::size_t{256} << 20;

// Anonymous mapping aligned to a huge page, advised to use transparent huge
// pages, faulted in by several threads, then registered with CUDA: pinning
// then walks 512 times fewer pages than with 4 KiB ones. Null (and nothing
// left behind) when any step fails; the caller falls back to cudaHostAlloc,
// which also names the error when memory is short. Refused up front when
// the request exceeds MemAvailable: faulting in more would wake the OOM
// killer instead of failing cleanly.
void* map_and_register(std::size_t bytes, std::size_t& mapped) {
  if (const auto avail = read_meminfo().available_bytes; !avail || bytes > *avail) return nullptr;
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
  // Helpers only share the faulting: the ranges of any the system refuses
  // are faulted here.
  std::vector<std::thread> pool;
  std::size_t started = 1;
  for (; started < threads; ++started) {
    std::thread helper;
    if (common::start_thread(helper, "a faulting thread", [&fault, started] { fault(started); }))
      break;
    pool.push_back(std::move(helper));
  }
  for (std::size_t t = started; t < threads; ++t) fault(t);
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
  // Page-locked memory stays in RAM, and no allocation passes the
  // process's address-space or data limit, so a request beyond the
  // machine's RAM or those limits can never succeed: refuse it in words
  // instead of asking the allocator (which, under a sanitizer, aborts on
  // such a size instead of failing).
  if (Error e = common::check_host_memory("a pinned allocation", bytes)) return e;
  void* p = nullptr;
  if (backend == Backend::cuda) {
    detail::PinningContext context;
    if (bytes >= kMappedMinBytes) {
      std::size_t mapped = 0;
      if (void* m = map_and_register(bytes, mapped)) return PinnedBuffer(m, bytes, mapped);
    }
    const auto st = cudaHostAlloc(&p, bytes, cudaHostAllocPortable);
    if (st != cudaSuccess) {
      return Error{Errc::out_of_host_memory,
                   cuda_message("cudaHostAlloc of " + std::to_string(bytes) + " bytes", st)};
    }
  } else {
    const auto rounded = (bytes + kPinnedAlignment - 1) / kPinnedAlignment * kPinnedAlignment;
    p = std::aligned_alloc(kPinnedAlignment, rounded);
    if (p == nullptr) return common::host_memory_refused("a pinned allocation", bytes);
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
    if (st != cudaSuccess)
      return Error{make_cuda_error(st),
                   cuda_message("cudaHostRegister of " + std::to_string(bytes) + " bytes", st)};
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
