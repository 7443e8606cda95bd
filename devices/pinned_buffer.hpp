// Page-locked host memory, the only memory stoker ever hands to a DMA engine
// (DESIGN.md rule 2).
//
// PinnedBuffer owns a portable (every GPU may DMA from it) page-locked
// range; HostRegistration page-locks memory the caller already owns
// (cudaHostRegister). On the host backend both are ordinary aligned memory.
// On CUDA, large buffers are anonymous mappings with transparent huge pages,
// faulted in by several threads and then registered (about 0.05 s/GiB
// measured on the H200 hosts), the rest cudaHostAlloc'd (0.46-0.56 s/GiB,
// one thread zeroing and pinning); both DMA at the same rate. Allocation is
// still far slower than a copy: alloc/PinnedPool keeps it off the hot path.
#pragma once

#include <cstddef>
#include <utility>

#include "common/error.hpp"
#include "devices/device_info.hpp"

namespace stoker::devices {

class PinnedBuffer {
 public:
  PinnedBuffer() noexcept = default;
  PinnedBuffer(Backend backend, void* ptr, std::size_t bytes) noexcept
      : backend_(backend), ptr_(ptr), bytes_(bytes) {}
  // A CUDA buffer that is a registered mapping of `mapped_bytes` (unregistered
  // and unmapped on reset) instead of a cudaHostAlloc'd one.
  PinnedBuffer(void* ptr, std::size_t bytes, std::size_t mapped_bytes) noexcept
      : backend_(Backend::cuda), ptr_(ptr), bytes_(bytes), mapped_bytes_(mapped_bytes) {}
  PinnedBuffer(PinnedBuffer&& o) noexcept { swap(o); }
  PinnedBuffer& operator=(PinnedBuffer&& o) noexcept {
    PinnedBuffer(std::move(o)).swap(*this);
    return *this;
  }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  ~PinnedBuffer() { reset(); }

  void* data() const noexcept { return ptr_; }
  std::size_t size() const noexcept { return bytes_; }
  Backend backend() const noexcept { return backend_; }
  explicit operator bool() const noexcept { return ptr_ != nullptr; }
  void reset() noexcept;

 private:
  void swap(PinnedBuffer& o) noexcept {
    std::swap(backend_, o.backend_);
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
    std::swap(mapped_bytes_, o.mapped_bytes_);
  }
  Backend backend_ = Backend::host;
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
  std::size_t mapped_bytes_ = 0;  // non-zero: a registered mapping of this size
};

// Portable pinned memory, aligned to at least 4 KiB.
Result<PinnedBuffer> allocate_pinned(Backend backend, std::size_t bytes);

class HostRegistration {
 public:
  HostRegistration() noexcept = default;
  HostRegistration(Backend backend, void* ptr, std::size_t bytes) noexcept
      : backend_(backend), ptr_(ptr), bytes_(bytes) {}
  HostRegistration(HostRegistration&& o) noexcept { swap(o); }
  HostRegistration& operator=(HostRegistration&& o) noexcept {
    HostRegistration(std::move(o)).swap(*this);
    return *this;
  }
  HostRegistration(const HostRegistration&) = delete;
  HostRegistration& operator=(const HostRegistration&) = delete;
  ~HostRegistration() { reset(); }

  void* data() const noexcept { return ptr_; }
  std::size_t size() const noexcept { return bytes_; }
  explicit operator bool() const noexcept { return ptr_ != nullptr; }
  void reset() noexcept;

 private:
  void swap(HostRegistration& o) noexcept {
    std::swap(backend_, o.backend_);
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
  }
  Backend backend_ = Backend::host;
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

// Page-locks [ptr, ptr + bytes) for DMA by every GPU until the registration dies.
Result<HostRegistration> register_host(Backend backend, void* ptr, std::size_t bytes);

// Whether every byte of [ptr, ptr + bytes) is page-locked for the GPUs
// (cudaHostAlloc'd or cudaHostRegister'ed memory, in one piece or several
// adjacent ones; one driver query per piece): memory a caller declares
// page-locked and is not would be copied through the driver's slow
// pageable path without a word (cudaMemcpyDefault). Where the driver
// cannot give a pointer's range, only the first and last bytes are asked.
// The host backend cannot tell pinned memory from any other and answers
// true. An error when CUDA cannot say (no healthy GPU left, for one).
Result<bool> is_page_locked(Backend backend, const void* ptr, std::size_t bytes);

}  // namespace stoker::devices
