// A std::vector whose resize leaves new elements of trivial types
// uninitialized: for buffers that are written whole right after (a proving
// key's points, read from a file). std::vector's resize zero-fills them
// first, on one thread: a second pass over memory the reader then writes,
// and every page's first touch on that thread (perf put 24 % of reading a
// 2^18 .params file on this project's 2-core VM in that fill, besides the
// page faults it took).
#pragma once

#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace stoker::common {

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
