// PinnedPool: page-locked host memory, pinned once and reused, so producers
// can write straight into memory a GPU can DMA from and no pinning (0.05-0.5
// s/GiB here) happens on the hot path after warm-up (DESIGN.md rule 2).
//
// How it works: requests are rounded up to a size class (2^k times 1, 1.25,
// 1.5 or 1.75, from 4 KiB; at most 20 % waste). Each class carves its blocks
// from slabs of devices::allocate_pinned (portable: every GPU may DMA from
// them); small classes share slabs of about `slab_bytes` (up to
// max_shared_bytes in all, then one block per slab), classes of
// `slab_bytes` and more get one slab per block (the large-block path), which
// trim() can hand back as soon as the block is idle. Released blocks go to
// their class's free list and are handed out again, most recent first.
//
// Budget: a block costs its capacity in the MemoryBudget for as long as it
// is handed out; returning it releases those bytes, which is what wakes
// waiting producers (backpressure). Idle pinned memory (free blocks, reserve())
// is not charged, and the budget's in_use() is what producers and the engine
// hold. Instead the pool bounds what it pins. Every slab counts against
// max_pinned_bytes (default: the budget's limit; idle slabs are trimmed
// first when a new one would not fit) except the free blocks of a shared
// slab while another block of it is handed out: no other class can use
// them, and they cannot be unpinned. Counting them let a few long-lived
// small blocks hold the whole limit, and the pool then failed requests the
// budget had granted (docs/ALLOC.md). Shared slabs take at most
// max_shared_bytes (default: an eighth of max_pinned_bytes) in all; past
// that a small class gets one block per slab. So with the default limit a
// request the budget grants always gets its block, and pinned memory stays
// within max_pinned_bytes + max_shared_bytes.
//
// Promises:
// - Thread safety: every member may be called from any thread. Each size
//   class has its own plain mutex, held only to push or pop a free-list
//   entry, never across allocate_pinned or GPU work. Why not Boost.Lockfree:
//   measured on the H200 machine (32 cores, `stoker bench alloc`), a
//   mutex+vector free list does 3.2 M pop+push/s at 16 and 32 threads,
//   boost::lockfree::stack 3.6 M at 16 and 2.3 M at 32: no consistent win.
//   And every allocation also takes the budget's mutex (FIFO and no lost
//   wake-ups need it; 2.7-3.0 M acquire+release/s), which a lock-free free
//   list cannot remove; trim() also needs a consistent view of each slab.
//   A pooled cycle costs 180-220 ns and the pool sustains about 1 M
//   allocate+release/s over 16-32 threads: a million 1 MiB blocks a second,
//   far more than the links can move (docs/ALLOC.md).
// - A block is handed to one owner at a time; its storage never moves.
// - Failure: try_allocate never waits and fails with out_of_host_memory
//   (budget exhausted, naming the numbers) or invalid_argument (0 bytes or
//   absurd sizes); allocate/async_allocate wait for the budget instead. Past
//   the budget, only a pinned limit set below the budget's limit, or
//   allocate_pinned itself, can fail a request.
//   Every failure path gives back what it took; stats().failed_requests
//   counts them.
// - Lifetime: the pool must outlive its blocks (asserted in debug), and the
//   budget must outlive the pool.
#pragma once

#include <atomic>
#include <boost/asio/associated_cancellation_slot.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/post.hpp>
#include <boost/system/error_code.hpp>
#include <chrono>
#include <cstddef>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <system_error>
#include <utility>

#include "alloc/memory_budget.hpp"
#include "common/error.hpp"
#include "devices/device_info.hpp"

namespace stoker::alloc {

class PinnedPool;

namespace detail {
struct Slab;
struct FreeEntry;
struct PoolState;
}  // namespace detail

struct PinnedPoolOptions {
  // Target size of the slabs that small classes share; classes this large
  // or larger get one slab per block.
  std::size_t slab_bytes = std::size_t{32} << 20;
  // Keeps slabs of tiny classes from pinning many blocks nobody asked for.
  std::size_t max_blocks_per_slab = 64;
  // Upper bound on pinned bytes, not counting the free blocks of partly used
  // shared slabs; 0 means the budget's limit. Set below it, a request the
  // budget grants may fail for want of pinned memory.
  std::size_t max_pinned_bytes = 0;
  // Upper bound on the bytes of shared slabs, and so on what is pinned past
  // max_pinned_bytes; 0 means max_pinned_bytes / 8. Past it, small classes
  // get one block per slab.
  std::size_t max_shared_bytes = 0;
  std::string name = "pinned";
};

struct PoolStats {
  std::size_t slabs = 0;               // slabs held now
  std::size_t bytes_pinned = 0;        // bytes of those slabs
  std::size_t bytes_shared = 0;        // of those, in slabs shared by several blocks
  std::size_t bytes_in_use = 0;        // capacity of the blocks handed out now
  std::size_t bytes_requested = 0;     // requested size of the blocks handed out now
  std::size_t blocks_in_use = 0;       // blocks handed out now
  std::size_t high_water = 0;          // peak of bytes_in_use
  std::size_t allocations = 0;         // blocks handed out, ever
  std::size_t reuses = 0;              // of those, served without pinning new memory
  std::size_t pinned_allocations = 0;  // allocate_pinned calls (slabs), reserve() included
  std::size_t failed_requests = 0;     // requests that ended in an error
  std::size_t trimmed_slabs = 0;       // slabs given back by trim() or to make room
};

// A move-only owner of one pool block. Destroying it (or reset()) returns
// the block to the pool and its bytes to the budget.
class PinnedBlock {
 public:
  PinnedBlock() noexcept = default;
  PinnedBlock(PinnedBlock&& o) noexcept { swap(o); }
  PinnedBlock& operator=(PinnedBlock&& o) noexcept {
    PinnedBlock(std::move(o)).swap(*this);
    return *this;
  }
  PinnedBlock(const PinnedBlock&) = delete;
  PinnedBlock& operator=(const PinnedBlock&) = delete;
  ~PinnedBlock() { reset(); }

  std::byte* data() const noexcept { return ptr_; }
  template <typename T>
  T* as() const noexcept {
    return reinterpret_cast<T*>(ptr_);
  }
  std::size_t size() const noexcept { return size_; }          // as requested
  std::size_t capacity() const noexcept { return capacity_; }  // usable bytes
  std::span<std::byte> bytes() const noexcept { return {ptr_, size_}; }
  explicit operator bool() const noexcept { return ptr_ != nullptr; }
  PinnedPool* pool() const noexcept { return pool_; }

  void reset() noexcept;

 private:
  friend class PinnedPool;
  void swap(PinnedBlock& o) noexcept {
    std::swap(pool_, o.pool_);
    std::swap(slab_, o.slab_);
    std::swap(ptr_, o.ptr_);
    std::swap(size_, o.size_);
    std::swap(capacity_, o.capacity_);
    std::swap(reservation_, o.reservation_);
  }
  PinnedPool* pool_ = nullptr;
  detail::Slab* slab_ = nullptr;
  std::byte* ptr_ = nullptr;
  std::size_t size_ = 0;
  std::size_t capacity_ = 0;
  Reservation reservation_;
};

class PinnedPool {
 public:
  using clock = std::chrono::steady_clock;

  PinnedPool(devices::Backend backend, MemoryBudget& budget, PinnedPoolOptions options = {});
  ~PinnedPool();
  PinnedPool(const PinnedPool&) = delete;
  PinnedPool& operator=(const PinnedPool&) = delete;

  devices::Backend backend() const noexcept { return backend_; }
  MemoryBudget& budget() const noexcept { return budget_; }
  const PinnedPoolOptions& options() const noexcept { return options_; }
  std::size_t max_pinned_bytes() const noexcept { return max_pinned_; }
  std::size_t max_shared_bytes() const noexcept { return max_shared_; }
  // The capacity a request of `bytes` gets.
  static std::size_t block_capacity(std::size_t bytes) noexcept;

  // Never waits for the budget (it may pin a new slab, which is slow on
  // CUDA: reserve() ahead of time to keep that off the hot path).
  Result<PinnedBlock> try_allocate(std::size_t bytes);
  // Blocks the calling (producer) thread until the budget has room.
  Result<PinnedBlock> allocate(std::size_t bytes);
  Result<PinnedBlock> allocate_until(std::size_t bytes, clock::time_point deadline);

  // Waits for the budget in its FIFO; completion signature
  // void(boost::system::error_code, PinnedBlock), delivered like
  // MemoryBudget::async_acquire (associated executor, cancellation slot;
  // Errc::timed_out past the deadline).
  template <typename Token>
  auto async_allocate(std::size_t bytes, Token&& token) {
    return async_allocate_until(bytes, clock::time_point::max(), std::forward<Token>(token));
  }
  template <typename Token>
  auto async_allocate_until(std::size_t bytes, clock::time_point deadline, Token&& token) {
    return boost::asio::async_initiate<Token, void(boost::system::error_code, PinnedBlock)>(
        [this](auto handler, std::size_t n, clock::time_point d) {
          start_async_allocate(std::move(handler), n, d);
        },
        token, bytes, deadline);
  }

  // For callers that wait for the budget themselves (async_acquire of
  // block_capacity(bytes) on budget(), where their cancellation lives) and
  // take the block elsewhere: taking may pin a new slab, too slow for a
  // thread that schedules GPU work. allocate_reserved takes a block for
  // `bytes` paid for by `r`, pinning if none is free; invalid_argument,
  // naming the sizes, when `r` is not block_capacity(bytes) of this pool's
  // budget (`r` is given back then). allocate_reserved_if_free never pins:
  // it takes a free block, or returns nullopt and leaves `r` with the caller
  // (also for a request allocate_reserved would refuse).
  Result<PinnedBlock> allocate_reserved(std::size_t bytes, Reservation r);
  std::optional<PinnedBlock> allocate_reserved_if_free(std::size_t bytes, Reservation& r);

  // Pins ahead of time so that `count` blocks for requests of `block_bytes`
  // (default: one block of `bytes`) are idle in the pool. More than the
  // pinned limit holds: out_of_host_memory, with the blocks that fit kept.
  std::error_code reserve(std::size_t block_bytes, std::size_t count = 1);
  // Gives every idle slab back (cudaFreeHost, which may synchronise: not on
  // a hot path). Returns the bytes unpinned.
  std::size_t trim();

  PoolStats stats() const noexcept;

 private:
  friend class PinnedBlock;

  template <typename Handler>
  void start_async_allocate(Handler&& handler, std::size_t bytes, clock::time_point deadline) {
    auto ex = boost::asio::get_associated_executor(handler);
    auto slot = boost::asio::get_associated_cancellation_slot(handler);
    if (auto err = check_request(bytes)) {
      boost::asio::post(ex, [h = std::move(handler), err]() mutable {
        std::move(h)(boost::system::error_code(err), PinnedBlock{});
      });
      return;
    }
    // The budget delivers on the handler's executor and cancels through its
    // slot; once granted, the block is taken there and passed straight on.
    budget_.async_acquire_until(
        block_capacity(bytes), deadline,
        boost::asio::bind_executor(
            ex, boost::asio::bind_cancellation_slot(
                    slot, [this, bytes, h = std::move(handler)](boost::system::error_code ec,
                                                                Reservation r) mutable {
                      if (ec) {
                        note_failure();
                        std::move(h)(ec, PinnedBlock{});
                        return;
                      }
                      auto block = take(bytes, std::move(r));
                      if (!block) {
                        std::move(h)(boost::system::error_code(block.error().code), PinnedBlock{});
                        return;
                      }
                      std::move(h)(boost::system::error_code{}, std::move(*block));
                    })));
  }

  // invalid_argument for 0 bytes or more than a size class can hold; records the failure.
  std::error_code check_request(std::size_t bytes);
  void note_failure() noexcept;
  // Hands out a block for `bytes` paid for by `r` (its capacity's worth).
  Result<PinnedBlock> take(std::size_t bytes, Reservation r);
  // Whether `r` is block_capacity(bytes) of this pool's budget.
  bool pays_for(std::size_t bytes, const Reservation& r) const noexcept;
  // A free block of class `cls` off its free list, if there is one.
  bool pop_free(unsigned cls, detail::FreeEntry& entry);
  // The block at `entry` as handed out, counted in the stats.
  PinnedBlock hand_out(std::size_t bytes, const detail::FreeEntry& entry, bool reused,
                       Reservation r);
  void give_back(detail::Slab* slab, std::byte* ptr, std::size_t requested) noexcept;
  // Pins a new slab of class `cls`: a shared one while the shared bytes
  // allow, else one of one block. For take() (`for_reserve` false) one block
  // of it is about to be handed out, and idle slabs are trimmed to make room;
  // reserve() trims only other classes (its own would give back the very
  // blocks it is reserving, and loop forever) and counts the whole slab as
  // idle.
  // The slab goes into its class, its blocks onto the free list; for take()
  // the first block is left out and returned.
  Result<detail::FreeEntry> grow(unsigned cls, bool for_reserve);
  enum class TrimKind { all, shared };
  // Idle slabs given back until `target` bytes are; `keep` (a class index,
  // or none) keeps its own.
  static constexpr unsigned kNoClass = ~0u;
  std::size_t trim_idle(std::size_t target, TrimKind kind, unsigned keep = kNoClass);
  std::size_t blocks_per_slab(std::size_t capacity) const noexcept;
  // Adds `bytes` to what counts against max_pinned_bytes if they fit.
  bool admit_counted(std::size_t bytes) noexcept;
  // The same, trimming idle one-block slabs until they fit (for take()).
  bool fit_counted(std::size_t bytes);
  // Takes room for a shared slab of up to `blocks` blocks of `capacity`;
  // returns the blocks it got room for, or 1 (no shared slab) below two.
  std::size_t admit_shared(std::size_t capacity, std::size_t blocks) noexcept;

  const devices::Backend backend_;
  MemoryBudget& budget_;
  const PinnedPoolOptions options_;
  const std::size_t max_pinned_;
  const std::size_t max_shared_;
  std::unique_ptr<detail::PoolState> state_;
};

}  // namespace stoker::alloc
