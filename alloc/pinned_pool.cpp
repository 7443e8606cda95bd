#include "alloc/pinned_pool.hpp"

#include <algorithm>
#include <array>
#include <cassert>
#include <mutex>
#include <vector>

#include "alloc/detail/size_class.hpp"
#include "devices/pinned_buffer.hpp"

namespace stoker::alloc {
namespace detail {

struct Slab {
  devices::PinnedBuffer buffer;
  unsigned cls = 0;
  std::size_t blocks = 0;
  std::size_t free = 0;  // guarded by the class mutex
};

struct FreeEntry {
  std::byte* ptr;
  Slab* slab;
};

struct ClassState {
  std::mutex m;
  std::vector<FreeEntry> free;               // LIFO: the most recently used first
  std::vector<std::unique_ptr<Slab>> slabs;  // all slabs of this class
};

struct PoolState {
  std::array<ClassState, kClassCount> classes;
  std::atomic<std::size_t> slabs{0};
  std::atomic<std::size_t> bytes_pinned{0};
  std::atomic<std::size_t> bytes_in_use{0};
  std::atomic<std::size_t> bytes_requested{0};
  std::atomic<std::size_t> blocks_in_use{0};
  std::atomic<std::size_t> high_water{0};
  std::atomic<std::size_t> allocations{0};
  std::atomic<std::size_t> reuses{0};
  std::atomic<std::size_t> pinned_allocations{0};
  std::atomic<std::size_t> failed{0};
  std::atomic<std::size_t> trimmed{0};
};

}  // namespace detail

namespace {

constexpr auto kRelaxed = std::memory_order_relaxed;

void raise_to(std::atomic<std::size_t>& peak, std::size_t value) noexcept {
  auto cur = peak.load(kRelaxed);
  while (value > cur && !peak.compare_exchange_weak(cur, value, kRelaxed)) {
  }
}

}  // namespace

void PinnedBlock::reset() noexcept {
  if (pool_ != nullptr) {
    // The block goes back first, so a producer woken by the released bytes finds it.
    pool_->give_back(slab_, ptr_, size_);
    reservation_.release();
  }
  pool_ = nullptr;
  slab_ = nullptr;
  ptr_ = nullptr;
  size_ = capacity_ = 0;
}

PinnedPool::PinnedPool(devices::Backend backend, MemoryBudget& budget, PinnedPoolOptions options)
    : backend_(backend),
      budget_(budget),
      options_(std::move(options)),
      max_pinned_(options_.max_pinned_bytes != 0 ? options_.max_pinned_bytes : budget.limit()),
      state_(std::make_unique<detail::PoolState>()) {}

PinnedPool::~PinnedPool() {
  assert(state_->blocks_in_use.load() == 0 && "PinnedPool destroyed while blocks are handed out");
}

std::size_t PinnedPool::block_capacity(std::size_t bytes) noexcept {
  if (bytes == 0 || bytes > detail::kMaxClassBytes) return 0;
  return detail::class_bytes(detail::size_class(bytes));
}

std::size_t PinnedPool::blocks_per_slab(std::size_t capacity) const noexcept {
  auto n = std::clamp<std::size_t>(options_.slab_bytes / capacity, 1,
                                   std::max<std::size_t>(options_.max_blocks_per_slab, 1));
  if (n > 1 && capacity * n > max_pinned_) n = std::max<std::size_t>(max_pinned_ / capacity, 1);
  return n;
}

void PinnedPool::note_failure() noexcept {
  state_->failed.fetch_add(1, kRelaxed);
}

std::error_code PinnedPool::check_request(std::size_t bytes) {
  if (bytes == 0 || bytes > detail::kMaxClassBytes) {
    note_failure();
    return make_error_code(Errc::invalid_argument);
  }
  return {};
}

Result<PinnedBlock> PinnedPool::try_allocate(std::size_t bytes) {
  if (auto ec = check_request(bytes))
    return Error{ec, "pinned pool '" + options_.name + "': cannot allocate a block of " +
                         std::to_string(bytes) + " bytes"};
  auto r = budget_.try_acquire(block_capacity(bytes));
  if (!r) {
    note_failure();
    return std::move(r).error();
  }
  return take(bytes, std::move(*r));
}

Result<PinnedBlock> PinnedPool::allocate(std::size_t bytes) {
  return allocate_until(bytes, clock::time_point::max());
}

Result<PinnedBlock> PinnedPool::allocate_until(std::size_t bytes, clock::time_point deadline) {
  if (auto ec = check_request(bytes))
    return Error{ec, "pinned pool '" + options_.name + "': cannot allocate a block of " +
                         std::to_string(bytes) + " bytes"};
  auto r = budget_.acquire_until(block_capacity(bytes), deadline);
  if (!r) {
    note_failure();
    return std::move(r).error();
  }
  return take(bytes, std::move(*r));
}

Result<PinnedBlock> PinnedPool::take(std::size_t bytes, Reservation r) {
  const auto cls = detail::size_class(bytes);
  const auto cap = detail::class_bytes(cls);
  assert(r.size() == cap);
  auto& c = state_->classes[cls];
  detail::FreeEntry entry{nullptr, nullptr};
  bool reused = false;
  {
    std::lock_guard lock(c.m);
    if (!c.free.empty()) {
      entry = c.free.back();
      c.free.pop_back();
      --entry.slab->free;
      reused = true;
    }
  }
  if (!reused) {
    // Pin outside any lock: cudaHostAlloc is slow and must not stall others.
    auto slab = grow(cls);
    if (!slab) {
      note_failure();
      return std::move(slab).error();
    }
    detail::Slab* s = *slab;
    auto* base = static_cast<std::byte*>(s->buffer.data());
    entry = {base, s};
    std::lock_guard lock(c.m);
    c.slabs.emplace_back(s);
    for (std::size_t i = s->blocks; i-- > 1;) c.free.push_back({base + i * cap, s});
    s->free = s->blocks - 1;
  }
  auto& st = *state_;
  st.allocations.fetch_add(1, kRelaxed);
  if (reused) st.reuses.fetch_add(1, kRelaxed);
  st.blocks_in_use.fetch_add(1, kRelaxed);
  st.bytes_requested.fetch_add(bytes, kRelaxed);
  raise_to(st.high_water, st.bytes_in_use.fetch_add(cap, kRelaxed) + cap);

  PinnedBlock b;
  b.pool_ = this;
  b.slab_ = entry.slab;
  b.ptr_ = entry.ptr;
  b.size_ = bytes;
  b.capacity_ = cap;
  b.reservation_ = std::move(r);
  return b;
}

void PinnedPool::give_back(detail::Slab* slab, std::byte* ptr, std::size_t requested) noexcept {
  const auto cap = detail::class_bytes(slab->cls);
  auto& c = state_->classes[slab->cls];
  {
    std::lock_guard lock(c.m);
    c.free.push_back({ptr, slab});
    ++slab->free;
  }
  auto& st = *state_;
  st.bytes_in_use.fetch_sub(cap, kRelaxed);
  st.bytes_requested.fetch_sub(requested, kRelaxed);
  st.blocks_in_use.fetch_sub(1, kRelaxed);
}

Result<detail::Slab*> PinnedPool::grow(unsigned cls, bool trim_to_fit) {
  const auto cap = detail::class_bytes(cls);
  const auto n = blocks_per_slab(cap);
  const auto bytes = cap * n;
  auto& pinned = state_->bytes_pinned;
  auto admit = [&] {
    auto cur = pinned.load(kRelaxed);
    do {
      if (bytes > max_pinned_ || cur > max_pinned_ - bytes) return false;
    } while (!pinned.compare_exchange_weak(cur, cur + bytes, kRelaxed));
    return true;
  };
  if (!admit()) {
    if (trim_to_fit) trim_idle(bytes);
    if (!trim_to_fit || !admit()) {
      return Error{Errc::out_of_host_memory,
                   "pinned pool '" + options_.name + "': a slab of " + std::to_string(bytes) +
                       " bytes would exceed the pinned limit of " + std::to_string(max_pinned_) +
                       " bytes (" + std::to_string(pinned.load(kRelaxed)) +
                       " pinned, in partly used slabs)"};
    }
  }
  auto buffer = devices::allocate_pinned(backend_, bytes);
  if (!buffer) {
    pinned.fetch_sub(bytes, kRelaxed);
    return std::move(buffer).error();
  }
  auto slab = std::make_unique<detail::Slab>();
  slab->buffer = std::move(*buffer);
  slab->cls = cls;
  slab->blocks = n;
  state_->slabs.fetch_add(1, kRelaxed);
  state_->pinned_allocations.fetch_add(1, kRelaxed);
  return slab.release();
}

std::size_t PinnedPool::trim_idle(std::size_t target) {
  std::size_t freed = 0;
  for (auto& c : state_->classes) {
    if (freed >= target) break;
    std::vector<std::unique_ptr<detail::Slab>> idle;
    {
      std::lock_guard lock(c.m);
      if (c.slabs.empty()) continue;
      for (auto it = c.slabs.begin(); it != c.slabs.end() && freed < target;) {
        if ((*it)->free == (*it)->blocks) {
          freed += (*it)->buffer.size();
          idle.push_back(std::move(*it));
          it = c.slabs.erase(it);
        } else {
          ++it;
        }
      }
      if (idle.empty()) continue;
      std::erase_if(c.free, [&](const detail::FreeEntry& e) {
        return std::any_of(idle.begin(), idle.end(), [&](auto& s) { return s.get() == e.slab; });
      });
    }
    for (auto& s : idle) {
      state_->bytes_pinned.fetch_sub(s->buffer.size(), kRelaxed);
      state_->slabs.fetch_sub(1, kRelaxed);
      state_->trimmed.fetch_add(1, kRelaxed);
    }
    // The slabs' buffers are unpinned here, outside the lock.
  }
  return freed;
}

std::size_t PinnedPool::trim() {
  return trim_idle(static_cast<std::size_t>(-1));
}

std::error_code PinnedPool::reserve(std::size_t block_bytes, std::size_t count) {
  if (block_bytes == 0 || block_bytes > detail::kMaxClassBytes)
    return make_error_code(Errc::invalid_argument);
  const auto cls = detail::size_class(block_bytes);
  auto& c = state_->classes[cls];
  for (;;) {
    {
      std::lock_guard lock(c.m);
      if (c.free.size() >= count) return {};
    }
    auto slab = grow(cls, /*trim_to_fit=*/false);
    if (!slab) return slab.error().code;
    detail::Slab* s = *slab;
    auto* base = static_cast<std::byte*>(s->buffer.data());
    const auto cap = detail::class_bytes(cls);
    std::lock_guard lock(c.m);
    c.slabs.emplace_back(s);
    for (std::size_t i = s->blocks; i-- > 0;) c.free.push_back({base + i * cap, s});
    s->free = s->blocks;
  }
}

PoolStats PinnedPool::stats() const noexcept {
  const auto& st = *state_;
  PoolStats s;
  s.slabs = st.slabs.load(kRelaxed);
  s.bytes_pinned = st.bytes_pinned.load(kRelaxed);
  s.bytes_in_use = st.bytes_in_use.load(kRelaxed);
  s.bytes_requested = st.bytes_requested.load(kRelaxed);
  s.blocks_in_use = st.blocks_in_use.load(kRelaxed);
  s.high_water = st.high_water.load(kRelaxed);
  s.allocations = st.allocations.load(kRelaxed);
  s.reuses = st.reuses.load(kRelaxed);
  s.pinned_allocations = st.pinned_allocations.load(kRelaxed);
  s.failed_requests = st.failed.load(kRelaxed);
  s.trimmed_slabs = st.trimmed.load(kRelaxed);
  return s;
}

}  // namespace stoker::alloc
