// PinnedVec<T>: a std::vector-like, move-only container whose storage is a
// PinnedPool block, so producers (a prover's synthesis threads) write
// straight into memory the engine can DMA from, with no extra copy.
//
// Promises:
// - Like std::vector: contiguous, amortised O(1) push_back; growth takes a
//   larger pooled block (its bytes charged to the pool's MemoryBudget
//   first) and moves the elements; shrink_to_fit gives the surplus back.
//   The capacity is whatever the pool's size class holds (>= requested).
//   T must be trivially copyable: elements move by memcpy and DMA.
// - Failure: reserve/resize/push_back/emplace_back/append throw
//   std::bad_alloc when the budget cannot pay, as std::vector does (users
//   of a vector-like type expect that); try_reserve/try_resize return the
//   std::error_code instead and throw nothing. With GrowthPolicy::wait,
//   growth waits for the budget (a producer thread's backpressure) instead
//   of failing while memory is merely in use. On any failure the vector
//   is unchanged and nothing is left charged.
// - Thread safety: none beyond a std::vector's; one writer at a time.
// - Hand-off contract: once a PinnedVec is moved into the engine (e.g. as a
//   partition's input), the engine owns it; the producer must not keep
//   pointers, spans or iterators into it and must not touch the memory
//   until the job's completion handler has run. The engine returns the
//   block to the pool (and its bytes to the budget) when the copies out of
//   it have completed on the GPU, not when the handler runs.
// - Lifetime: the pool must outlive the vector.
#pragma once

#include <algorithm>
#include <cassert>
#include <cstddef>
#include <cstring>
#include <new>
#include <span>
#include <stdexcept>
#include <system_error>
#include <type_traits>
#include <utility>

#include "alloc/pinned_pool.hpp"

namespace stoker::alloc {

enum class GrowthPolicy {
  fail,  // growth that the budget cannot pay now fails (std::bad_alloc / error_code)
  wait,  // growth blocks the calling thread until the budget has room
};

template <typename T>
class PinnedVec {
  static_assert(std::is_trivially_copyable_v<T>, "PinnedVec<T> needs a trivially copyable T");

 public:
  using value_type = T;
  using size_type = std::size_t;
  using difference_type = std::ptrdiff_t;
  using reference = T&;
  using const_reference = const T&;
  using pointer = T*;
  using const_pointer = const T*;
  using iterator = T*;
  using const_iterator = const T*;

  // Without a pool: empty, and any growth fails (invalid_argument / std::bad_alloc)
  // until a pooled vector is moved in.
  PinnedVec() noexcept = default;
  explicit PinnedVec(PinnedPool& pool, GrowthPolicy policy = GrowthPolicy::fail) noexcept
      : pool_(&pool), policy_(policy) {}
  PinnedVec(PinnedPool& pool, size_type n, GrowthPolicy policy = GrowthPolicy::fail)
      : PinnedVec(pool, policy) {
    resize(n);
  }
  // Takes `block` (handed out by `pool`) as the storage of `n` value-initialised
  // elements, as a pool's async_allocate delivers it. A block smaller than `n`
  // elements is misuse: std::invalid_argument.
  PinnedVec(PinnedPool& pool, PinnedBlock block, size_type n,
            GrowthPolicy policy = GrowthPolicy::fail)
      : pool_(&pool), policy_(policy), block_(std::move(block)) {
    if (n > capacity()) throw std::invalid_argument("PinnedVec: block smaller than its elements");
    for (size_type i = 0; i < n; ++i) ::new (static_cast<void*>(data() + i)) T();
    size_ = n;
  }
  PinnedVec(PinnedVec&& o) noexcept
      : pool_(o.pool_),
        policy_(o.policy_),
        block_(std::move(o.block_)),
        size_(std::exchange(o.size_, 0)) {}
  PinnedVec& operator=(PinnedVec&& o) noexcept {
    if (this != &o) {
      pool_ = o.pool_;
      policy_ = o.policy_;
      block_ = std::move(o.block_);
      size_ = std::exchange(o.size_, 0);
    }
    return *this;
  }
  PinnedVec(const PinnedVec&) = delete;
  PinnedVec& operator=(const PinnedVec&) = delete;
  ~PinnedVec() = default;

  // Element access.
  T* data() noexcept { return block_.template as<T>(); }
  const T* data() const noexcept { return block_.template as<T>(); }
  T& operator[](size_type i) noexcept {
    assert(i < size_);
    return data()[i];
  }
  const T& operator[](size_type i) const noexcept {
    assert(i < size_);
    return data()[i];
  }
  T& at(size_type i) {
    if (i >= size_) throw std::out_of_range("PinnedVec::at");
    return data()[i];
  }
  const T& at(size_type i) const {
    if (i >= size_) throw std::out_of_range("PinnedVec::at");
    return data()[i];
  }
  T& front() noexcept { return (*this)[0]; }
  const T& front() const noexcept { return (*this)[0]; }
  T& back() noexcept { return (*this)[size_ - 1]; }
  const T& back() const noexcept { return (*this)[size_ - 1]; }
  std::span<T> span() noexcept { return {data(), size_}; }
  std::span<const T> span() const noexcept { return {data(), size_}; }
  std::span<const std::byte> bytes() const noexcept {
    return {reinterpret_cast<const std::byte*>(data()), size_ * sizeof(T)};
  }

  // Iteration.
  iterator begin() noexcept { return data(); }
  iterator end() noexcept { return data() + size_; }
  const_iterator begin() const noexcept { return data(); }
  const_iterator end() const noexcept { return data() + size_; }
  const_iterator cbegin() const noexcept { return begin(); }
  const_iterator cend() const noexcept { return end(); }

  // Capacity.
  bool empty() const noexcept { return size_ == 0; }
  size_type size() const noexcept { return size_; }
  size_type size_bytes() const noexcept { return size_ * sizeof(T); }
  size_type capacity() const noexcept { return block_.capacity() / sizeof(T); }
  PinnedPool* pool() const noexcept { return pool_; }
  GrowthPolicy growth_policy() const noexcept { return policy_; }
  // The storage; the engine DMAs from it.
  const PinnedBlock& block() const noexcept { return block_; }

  void reserve(size_type n) { throw_if(try_reserve(n)); }
  std::error_code try_reserve(size_type n) {
    if (n <= capacity()) return {};
    if (n > max_size()) return make_error_code(Errc::invalid_argument);
    return reallocate(n);
  }
  void shrink_to_fit() noexcept {
    if (size_ == 0) {
      block_.reset();
      return;
    }
    if (pool_ == nullptr || PinnedPool::block_capacity(size_ * sizeof(T)) >= block_.capacity())
      return;
    // Non-binding, as for std::vector: if the smaller block is not there, keep this one.
    auto smaller = pool_->try_allocate(size_ * sizeof(T));
    if (!smaller) return;
    std::memcpy(smaller->data(), block_.data(), size_ * sizeof(T));
    block_ = std::move(*smaller);
  }
  static constexpr size_type max_size() noexcept {
    return (std::size_t{1} << 46) / sizeof(T);  // the pool's largest size class
  }

  // Modifiers.
  void clear() noexcept { size_ = 0; }
  void push_back(const T& v) {
    if (size_ == capacity()) {
      const T copy = v;  // `v` may live in the storage about to move
      grow_for(size_ + 1);
      data()[size_++] = copy;
      return;
    }
    data()[size_++] = v;
  }
  template <typename... Args>
  T& emplace_back(Args&&... args) {
    if (size_ == capacity()) grow_for(size_ + 1);
    T* p = ::new (static_cast<void*>(data() + size_)) T(std::forward<Args>(args)...);
    ++size_;
    return *p;
  }
  void pop_back() noexcept {
    assert(size_ > 0);
    --size_;
  }
  void append(std::span<const T> values) {
    if (values.empty()) return;
    if (size_ + values.size() > capacity()) {
      // `values` may point into this vector: copy through the new block.
      const auto* src = values.data();
      const bool inside = src >= data() && src < data() + size_;
      const auto offset = inside ? static_cast<size_type>(src - data()) : 0;
      grow_for(size_ + values.size());
      if (inside) src = data() + offset;
      std::memcpy(data() + size_, src, values.size() * sizeof(T));
    } else {
      std::memmove(data() + size_, values.data(), values.size() * sizeof(T));
    }
    size_ += values.size();
  }
  // New elements are value-initialised, as in std::vector.
  void resize(size_type n) { throw_if(try_resize(n)); }
  void resize(size_type n, const T& value) {
    const T copy = value;
    const auto old = size_;
    throw_if(try_resize_for_overwrite(n));
    std::fill(data() + std::min(old, n), data() + n, copy);
  }
  std::error_code try_resize(size_type n) {
    const auto old = size_;
    if (auto ec = try_resize_for_overwrite(n)) return ec;
    for (size_type i = old; i < n; ++i) ::new (static_cast<void*>(data() + i)) T();
    return {};
  }
  // New elements are left uninitialised: for producers that overwrite them
  // all anyway (zeroing gigabytes first would cost a pass over memory).
  void resize_for_overwrite(size_type n) { throw_if(try_resize_for_overwrite(n)); }
  std::error_code try_resize_for_overwrite(size_type n) {
    if (n > capacity()) {
      if (n > max_size()) return make_error_code(Errc::invalid_argument);
      if (auto ec = reallocate(std::max(n, growth_target(n)))) {
        if (auto ec2 = reallocate(n)) return ec2;  // the exact size may still fit
      }
    }
    size_ = n;
    return {};
  }

 private:
  static void throw_if(std::error_code ec) {
    if (ec) throw std::bad_alloc();
  }
  size_type growth_target(size_type n) const noexcept {
    return std::max(n, std::min(max_size(), 2 * capacity()));
  }
  void grow_for(size_type n) {
    if (n > max_size()) throw std::bad_alloc();
    if (reallocate(growth_target(n)) && reallocate(n)) throw std::bad_alloc();
  }
  // Moves the elements into a block for `n` elements; unchanged on failure.
  std::error_code reallocate(size_type n) {
    if (pool_ == nullptr) return make_error_code(Errc::invalid_argument);
    const auto bytes = n * sizeof(T);
    // Growth holds the old and the new block at once; waiting for more than
    // the whole budget minus what this vector holds would wait forever.
    if (policy_ == GrowthPolicy::wait &&
        PinnedPool::block_capacity(bytes) + block_.capacity() > pool_->budget().limit())
      return make_error_code(Errc::out_of_host_memory);
    auto next = policy_ == GrowthPolicy::wait ? pool_->allocate(bytes) : pool_->try_allocate(bytes);
    if (!next) return next.error().code;
    if (size_ != 0) std::memcpy(next->data(), block_.data(), size_ * sizeof(T));
    block_ = std::move(*next);
    return {};
  }

  PinnedPool* pool_ = nullptr;
  GrowthPolicy policy_ = GrowthPolicy::fail;
  PinnedBlock block_;
  size_type size_ = 0;
};

}  // namespace stoker::alloc
