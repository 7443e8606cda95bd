// A std::vector whose resize leaves new elements of trivial types
// uninitialized: for buffers that are written whole right after (a proving
// key's points, read from a file). std::vector's resize zero-fills them
// first, on one thread: a second pass over memory the reader then writes,
// and every page's first touch on that thread (perf put 24 % of reading a
// 2^18 .params file on this project's 2-core VM in that fill, besides the
// page faults it took).
//
// Buffers of 8 MiB and more are also 2 MiB-aligned and advised to the
// kernel as transparent huge pages (madvise MADV_HUGEPAGE; the GPU
// machines and Debian's default run THP in `madvise` mode, so nothing gets
// huge pages unasked). Such buffers are a witness (671 MB at 2^24) or a
// key's section, read once per proof or per load into fresh memory: a
// 4 KiB page costs a fault each, 164K for one 2^24 witness, and freeing
// them a TLB shootdown on every thread. On the development VM, reading 671
// MB from the page cache into fresh memory on two threads took 2.4-3.5 s
// with 4 KiB pages and 115-160 ms with huge pages; freeing it, 100-380 ms
// against 1.5 ms.
#pragma once

#include <sys/mman.h>

#include <cstddef>
#include <limits>
#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace stoker::common {

// From this size an allocation is huge-page aligned and advised.
inline constexpr std::size_t kHugePageBufferBytes = std::size_t{8} << 20;
inline constexpr std::size_t kHugePageBytes = std::size_t{2} << 20;

template <typename T>
struct DefaultInitAllocator : std::allocator<T> {
  using value_type = T;
  template <typename U>
  struct rebind {
    using other = DefaultInitAllocator<U>;
  };
  DefaultInitAllocator() noexcept = default;
  template <typename U>
  DefaultInitAllocator(const DefaultInitAllocator<U>&) noexcept {}

  T* allocate(std::size_t n) {
    if (n > std::numeric_limits<std::size_t>::max() / sizeof(T)) throw std::bad_array_new_length();
    const std::size_t bytes = n * sizeof(T);
    if (bytes < kHugePageBufferBytes) return std::allocator<T>::allocate(n);
    static_assert(alignof(T) <= kHugePageBytes);
    void* p = ::operator new(bytes, std::align_val_t{kHugePageBytes});
    // Advice only: where the kernel has no THP, the pages stay small.
    (void)::madvise(p, bytes, MADV_HUGEPAGE);
    return static_cast<T*>(p);
  }
  void deallocate(T* p, std::size_t n) noexcept {
    if (n * sizeof(T) < kHugePageBufferBytes) return std::allocator<T>::deallocate(p, n);
    ::operator delete(p, std::align_val_t{kHugePageBytes});
  }

  // Default-initialization: nothing written for a trivial T.
  template <typename U>
  void construct(U* p) noexcept(noexcept(::new (static_cast<void*>(p)) U)) {
    ::new (static_cast<void*>(p)) U;
  }
  template <typename U, typename... Args>
  void construct(U* p, Args&&... args) {
    ::new (static_cast<void*>(p)) U(std::forward<Args>(args)...);
  }
};

template <typename T, typename U>
bool operator==(const DefaultInitAllocator<T>&, const DefaultInitAllocator<U>&) noexcept {
  return true;
}

template <typename T>
using UninitializedVector = std::vector<T, DefaultInitAllocator<T>>;

}  // namespace stoker::common
