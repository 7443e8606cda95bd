#include "alloc/pinned_pool.hpp"

#include <algorithm>
#include <array>
#include <cassert>
#include <mutex>
#include <thread>
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
  bool shared() const noexcept { return blocks > 1; }
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
  // What counts against max_pinned: every slab, except the free blocks of
  // shared slabs that have blocks handed out (at most max_shared in all).
  // Changed under the class mutex where a slab turns idle or busy.
  std::atomic<std::size_t> counted{0};
  // Of `counted`, idle slabs that are not trimmable (yet or any more):
  // being pinned for reserve() or unpinned by a trim.
  std::atomic<std::size_t> settling{0};
  std::atomic<std::size_t> bytes_shared{0};
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

// Ends `bytes` of settling and wakes fit_counted's waiters to look again.
void settled(detail::PoolState& st, std::size_t bytes, std::memory_order order) noexcept {
  if (bytes == 0) return;
  st.settling.fetch_sub(bytes, order);
  st.settling.notify_all();
}

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
      max_shared_(options_.max_shared_bytes != 0 ? options_.max_shared_bytes : max_pinned_ / 8),
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
  if (n > 1 && capacity * n > max_shared_) n = std::max<std::size_t>(max_shared_ / capacity, 1);
  return n;
}

bool PinnedPool::admit_counted(std::size_t bytes) noexcept {
  auto& counted = state_->counted;
  auto cur = counted.load(kRelaxed);
  do {
    if (bytes > max_pinned_ || cur > max_pinned_ - bytes) return false;
  } while (!counted.compare_exchange_weak(cur, cur + bytes, kRelaxed));
  return true;
}

bool PinnedPool::fit_counted(std::size_t bytes) {
  // Every counted byte is granted by the budget (blocks handed out, slabs
  // being pinned for them), an idle slab, or settling. The caller
  // holds a grant of `bytes` that is not counted yet, so with the pinned
  // limit at or above the budget's, `bytes` fit once idle slabs are trimmed
  // and settling ones have settled. A pass that finds neither lost a race
  // with a block coming back; the bound on those only turns a broken
  // invariant into an error instead of a spin.
  for (int races = 0;;) {
    if (admit_counted(bytes)) return true;
    if (trim_idle(bytes, TrimKind::all) > 0) continue;
    // Acquire: a settled slab is listed, or no longer counted, once seen so.
    // Every decrement notifies, so this sleeps until one happens (a pin or
    // unpin takes milliseconds; polling would only burn the core).
    if (const auto s = state_->settling.load(std::memory_order_acquire); s > 0) {
      state_->settling.wait(s, std::memory_order_acquire);
      continue;
    }
    if (admit_counted(bytes)) return true;
    if (max_pinned_ < budget_.limit() || ++races > 64) return false;
    std::this_thread::yield();
  }
}

std::size_t PinnedPool::admit_shared(std::size_t capacity, std::size_t blocks) noexcept {
  auto& shared = state_->bytes_shared;
  auto cur = shared.load(kRelaxed);
  std::size_t n = 0;
  do {
    n = cur >= max_shared_ ? 0 : std::min(blocks, (max_shared_ - cur) / capacity);
    if (n < 2) return 1;
  } while (!shared.compare_exchange_weak(cur, cur + n * capacity, kRelaxed));
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

bool PinnedPool::pop_free(unsigned cls, detail::FreeEntry& entry) {
  const auto cap = detail::class_bytes(cls);
  auto& c = state_->classes[cls];
  auto& st = *state_;
  std::lock_guard lock(c.m);
  if (c.free.empty()) return false;
  entry = c.free.back();
  c.free.pop_back();
  auto& slab = *entry.slab;
  // An idle shared slab counted whole; now its other blocks are stranded.
  if (slab.shared() && slab.free == slab.blocks)
    st.counted.fetch_sub(cap * (slab.blocks - 1), kRelaxed);
  else if (slab.shared())
    st.counted.fetch_add(cap, kRelaxed);
  --slab.free;
  return true;
}

PinnedBlock PinnedPool::hand_out(std::size_t bytes, const detail::FreeEntry& entry, bool reused,
                                 Reservation r) {
  const auto cap = detail::class_bytes(entry.slab->cls);
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

Result<PinnedBlock> PinnedPool::take(std::size_t bytes, Reservation r) {
  const auto cls = detail::size_class(bytes);
  assert(r.size() == detail::class_bytes(cls));
  detail::FreeEntry entry{nullptr, nullptr};
  if (pop_free(cls, entry)) return hand_out(bytes, entry, /*reused=*/true, std::move(r));
  // Pins outside any lock: cudaHostAlloc is slow and must not stall others.
  auto grown = grow(cls, /*for_reserve=*/false);
  if (!grown) {
    note_failure();
    return std::move(grown).error();
  }
  return hand_out(bytes, *grown, /*reused=*/false, std::move(r));
}

bool PinnedPool::pays_for(std::size_t bytes, const Reservation& r) const noexcept {
  // A bad size has capacity 0, which no Reservation of this budget has.
  return r.of(budget_) && r.size() == block_capacity(bytes);
}

Result<PinnedBlock> PinnedPool::allocate_reserved(std::size_t bytes, Reservation r) {
  if (auto ec = check_request(bytes))  // which counts the failure
    return Error{ec, "pinned pool '" + options_.name + "': cannot allocate a block of " +
                         std::to_string(bytes) + " bytes"};
  if (!pays_for(bytes, r)) {
    note_failure();
    return Error{Errc::invalid_argument,
                 "pinned pool '" + options_.name + "': a block of " + std::to_string(bytes) +
                     " bytes needs a reservation of " + std::to_string(block_capacity(bytes)) +
                     " bytes of budget '" + budget_.name() + "', not " + std::to_string(r.size()) +
                     (r.of(budget_) || r.empty() ? " bytes" : " bytes of another budget")};
  }
  return take(bytes, std::move(r));
}

std::optional<PinnedBlock> PinnedPool::allocate_reserved_if_free(std::size_t bytes,
                                                                 Reservation& r) {
  if (!pays_for(bytes, r)) return std::nullopt;
  detail::FreeEntry entry{nullptr, nullptr};
  if (!pop_free(detail::size_class(bytes), entry)) return std::nullopt;
  return hand_out(bytes, entry, /*reused=*/true, std::move(r));
}

void PinnedPool::give_back(detail::Slab* slab, std::byte* ptr, std::size_t requested) noexcept {
  const auto cap = detail::class_bytes(slab->cls);
  auto& c = state_->classes[slab->cls];
  auto& st = *state_;
  {
    std::lock_guard lock(c.m);
    c.free.push_back({ptr, slab});
    ++slab->free;
    // Before the budget releases the block's bytes (PinnedBlock::reset), so
    // counted bytes stay within granted ones plus idle slabs. A shared slab
    // that turns idle counts whole again: a trim can now give it back.
    if (slab->shared() && slab->free == slab->blocks)
      st.counted.fetch_add(cap * (slab->blocks - 1), kRelaxed);
    else if (slab->shared())
      st.counted.fetch_sub(cap, kRelaxed);
  }
  st.bytes_in_use.fetch_sub(cap, kRelaxed);
  st.bytes_requested.fetch_sub(requested, kRelaxed);
  st.blocks_in_use.fetch_sub(1, kRelaxed);
}

Result<detail::FreeEntry> PinnedPool::grow(unsigned cls, bool for_reserve) {
  const auto cap = detail::class_bytes(cls);
  const auto want = blocks_per_slab(cap);
  auto& st = *state_;
  std::size_t n = 1;
  if (want > 1) {
    n = admit_shared(cap, want);
    if (n == 1 && !for_reserve && trim_idle(want * cap, TrimKind::shared) > 0)
      n = admit_shared(cap, want);
  }
  const auto bytes = cap * n;
  // An idle slab (reserve()) counts whole; a slab with a block handed out
  // counts that block.
  const std::size_t counted = for_reserve ? bytes : cap;
  if (!(for_reserve ? admit_counted(counted) : fit_counted(counted))) {
    if (n > 1) st.bytes_shared.fetch_sub(bytes, kRelaxed);
    return Error{Errc::out_of_host_memory,
                 "pinned pool '" + options_.name + "': a block of " + std::to_string(cap) +
                     " bytes would exceed the pinned limit of " + std::to_string(max_pinned_) +
                     " bytes (" + std::to_string(st.counted.load(kRelaxed)) +
                     " counted: pinned bytes less the free blocks of partly used shared slabs)"};
  }
  const std::size_t settling = for_reserve ? bytes : 0;
  st.settling.fetch_add(settling, kRelaxed);
  auto buffer = devices::allocate_pinned(backend_, bytes);
  if (!buffer) {
    if (n > 1) st.bytes_shared.fetch_sub(bytes, kRelaxed);
    st.counted.fetch_sub(counted, kRelaxed);
    settled(st, settling, kRelaxed);
    return std::move(buffer).error();
  }
  auto slab = std::make_unique<detail::Slab>();
  slab->buffer = std::move(*buffer);
  slab->cls = cls;
  slab->blocks = n;
  auto* s = slab.get();
  auto* base = static_cast<std::byte*>(s->buffer.data());
  const std::size_t first = for_reserve ? 0 : 1;
  st.bytes_pinned.fetch_add(bytes, kRelaxed);
  st.slabs.fetch_add(1, kRelaxed);
  st.pinned_allocations.fetch_add(1, kRelaxed);
  {
    auto& c = st.classes[cls];
    std::lock_guard lock(c.m);
    c.slabs.push_back(std::move(slab));
    for (std::size_t i = n; i-- > first;) c.free.push_back({base + i * cap, s});
    s->free = n - first;
  }
  // Listed now, so trimmable: no longer settling.
  settled(st, settling, std::memory_order_release);
  return detail::FreeEntry{base, s};
}

std::size_t PinnedPool::trim_idle(std::size_t target, TrimKind kind, unsigned keep) {
  auto& st = *state_;
  std::size_t freed = 0;
  for (auto& c : st.classes) {
    if (freed >= target) break;
    if (static_cast<std::size_t>(&c - &st.classes[0]) == keep) continue;
    std::vector<std::unique_ptr<detail::Slab>> idle;
    {
      std::lock_guard lock(c.m);
      if (c.slabs.empty()) continue;
      for (auto it = c.slabs.begin(); it != c.slabs.end() && freed < target;) {
        auto& slab = **it;
        const bool wanted = kind == TrimKind::all || slab.shared();
        if (wanted && slab.free == slab.blocks) {
          freed += slab.buffer.size();
          st.settling.fetch_add(slab.buffer.size(), kRelaxed);
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
    // Unpinned outside the lock, and only then no longer counted, so the
    // room it leaves is never used before it is there.
    for (auto& s : idle) {
      const auto size = s->buffer.size();
      const bool shared = s->shared();
      s.reset();
      st.bytes_pinned.fetch_sub(size, kRelaxed);
      if (shared) st.bytes_shared.fetch_sub(size, kRelaxed);
      st.counted.fetch_sub(size, kRelaxed);
      settled(st, size, std::memory_order_release);
      st.slabs.fetch_sub(1, kRelaxed);
      st.trimmed.fetch_add(1, kRelaxed);
    }
  }
  return freed;
}

std::size_t PinnedPool::trim() {
  return trim_idle(static_cast<std::size_t>(-1), TrimKind::all);
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
    auto grown = grow(cls, /*for_reserve=*/true);
    if (grown) continue;
    // Idle slabs of other sizes (an earlier job's shape) make room: the
    // caller reserves for what it runs next. Its own class's are kept.
    if (grown.error().code == make_error_code(Errc::out_of_host_memory) &&
        trim_idle(detail::class_bytes(cls), TrimKind::all, cls) > 0)
      continue;
    return grown.error().code;
  }
}

PoolStats PinnedPool::stats() const noexcept {
  const auto& st = *state_;
  PoolStats s;
  s.slabs = st.slabs.load(kRelaxed);
  s.bytes_pinned = st.bytes_pinned.load(kRelaxed);
  s.bytes_shared = st.bytes_shared.load(kRelaxed);
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
