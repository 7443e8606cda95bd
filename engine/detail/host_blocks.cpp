#include <algorithm>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/post.hpp>
#include <future>
#include <map>

#include "engine/detail/engine_core.hpp"

namespace asio = boost::asio;

namespace stoker::engine::detail {

// Before the first producer ends: each device this job may use grows its
// memory pool to a full pipeline of the job's largest partition (the pool
// keeps it: its release threshold is the device budget).
void EngineCore::warm_device_pools(const JobState& job) {
  std::size_t largest = 0;
  for (const auto& ps : job.parts) largest = std::max(largest, ps.device_bytes);
  for (std::size_t d = 0; d < dev_.size(); ++d)
    if (allowed(job, d))
      if (const std::size_t want = pool_growth(d, largest)) runners_[d]->warm_device_pool(want);
}

std::size_t EngineCore::pool_growth(std::size_t d, std::size_t largest) {
  auto& ds = dev_[d];
  if (!ds.healthy) return 0;
  const std::size_t want =
      std::min(largest * static_cast<std::size_t>(runners_[d]->depth()), ds.capacity());
  if (want <= ds.pool_warmed) return 0;
  ds.pool_warmed = want;
  return want;
}

void EngineCore::reserve_device(const Partition& like) {
  // The engine thread owns the devices' state: it decides, the feeders map.
  const auto want = on_engine_thread([&] {
    std::vector<std::size_t> want(dev_.size());
    for (std::size_t d = 0; d < dev_.size(); ++d) want[d] = pool_growth(d, like.device_bytes());
    return want;
  });
  std::vector<std::promise<void>> mapped(want.size());
  for (std::size_t d = 0; d < want.size(); ++d) {
    if (want[d] == 0) continue;
    runners_[d]->warm_device_pool(want[d], [&p = mapped[d]] { p.set_value(); });
  }
  for (std::size_t d = 0; d < want.size(); ++d)
    if (want[d] != 0) mapped[d].get_future().wait();
}

// Pinned storage first (waiting on the budget: backpressure), then the
// producer on a worker thread. A partition's blocks (one per produced
// input, one per pageable output's landing area) are requested back to back
// with no other request between them: the budget they wait for is held only
// by partitions that have everything they need, so a small budget cannot
// deadlock.
void EngineCore::prepare(const Key& k) {
  auto& job = *jobs_.at(k.seq);
  auto& ps = job.parts[k.part];
  const auto& p = job.job.partitions[k.part];
  advance(job, ps, PartEvent::prepare);
  ps.cancel = std::make_unique<asio::cancellation_signal>();
  for (const auto& in : p.inputs)
    if (in.kind == InputKind::produced) ps.block_bytes.push_back(in.bytes);
  ps.input_blocks = ps.block_bytes.size();
  for (const auto& out : p.outputs)
    if (!out.pinned) ps.block_bytes.push_back(out.bytes);
  if (ps.block_bytes.empty()) return produced(k, {}, {});
  to_allocate_.push_back(k);
  allocate_next();
}

std::error_code EngineCore::reserve_pinned(const Partition& like, std::size_t count) {
  // Blocks per partition by size class (capacity -> a size of that class
  // and how many), the last kind of block a partition gives back noted.
  std::map<std::size_t, std::pair<std::size_t, std::size_t>> classes;
  std::size_t per_partition = 0, last_cap = 0;
  const auto add = [&](std::size_t bytes) {
    last_cap = alloc::PinnedPool::block_capacity(bytes);
    auto& [size, n] = classes[last_cap];
    size = std::max(size, bytes);
    ++n;
    per_partition += last_cap;
  };
  for (const auto& in : like.inputs)
    if (in.kind == InputKind::produced) add(in.bytes);
  for (const auto& out : like.outputs)
    if (!out.pinned) add(out.bytes);
  if (per_partition == 0 || count == 0 || classes.count(0)) return {};
  // Whole partitions first; what the budget has left goes to the blocks held
  // longest (output landing areas, kept after the inputs went back), so
  // that partitions past the first few, which hold only those, find them.
  // What the budget has free, not its limit: a resident SRS holds part of
  // it (12.9 GB at 2^27), and asking for more than fits left the pool
  // short of whole partitions and growing during the job.
  const std::size_t limit = host_budget_->available();
  const std::size_t whole = std::min(count, limit / per_partition);
  const std::size_t extra =
      std::min(count * classes[last_cap].second - whole * classes[last_cap].second,
               (limit - whole * per_partition) / last_cap);
  for (const auto& [cap, kind] : classes) {
    const std::size_t n = whole * kind.second + (cap == last_cap ? extra : 0);
    if (n != 0)
      if (auto ec = pool_->reserve(kind.first, n)) return ec;
  }
  return {};
}

void EngineCore::allocate_next() {
  while (!allocating_ && !to_allocate_.empty()) {
    const Key k = to_allocate_.front();
    to_allocate_.pop_front();
    auto& job = *find(k.seq);  // a preparing partition keeps its job alive
    if (job.cancelled || job.failure) {
      produced(k, make_error_code(Errc::cancelled), {});
      continue;
    }
    allocating_ = true;
    request_block(k);
  }
}

void EngineCore::request_block(const Key& k) {
  auto& ps = find(k.seq)->parts[k.part];
  const std::size_t bytes = ps.block_bytes[ps.blocks.size()];
  // The wait for the budget is this thread's: its cancellation handler is
  // installed, emitted (drop_queued) and cleared here (Asio's slots are not
  // thread-safe). Taking the block is not, where it would pin memory
  // (0.05-0.5 s/GiB) while every GPU's dispatch waits: a free block is
  // taken here, a new one is pinned on a worker.
  host_budget_->async_acquire(
      alloc::PinnedPool::block_capacity(bytes),
      asio::bind_cancellation_slot(
          ps.cancel->slot(),
          asio::bind_executor(io_, [this, k, bytes](std::error_code ec, alloc::Reservation r) {
            if (ec) return block_arrived(k, Error{ec});
            if (auto block = pool_->allocate_reserved_if_free(bytes, r))
              return block_arrived(k, std::move(*block));
            asio::post(*workers_, [this, k, bytes, r = std::move(r)]() mutable {
              auto block = pool_->allocate_reserved(bytes, std::move(r));
              asio::post(io_, [this, k, block = std::move(block)]() mutable {
                block_arrived(k, std::move(block));
              });
            });
          })));
}

void EngineCore::block_arrived(const Key& k, Result<alloc::PinnedBlock> block) {
  auto& job = *find(k.seq);
  auto& ps = job.parts[k.part];
  if (block) ps.blocks.push_back(std::move(*block));
  if (block && ps.blocks.size() < ps.block_bytes.size() && !job.cancelled && !job.failure)
    return request_block(k);  // still this partition's turn
  allocating_ = false;
  if (!block)
    produced(k, block.error().code, "pinned host memory: " + block.error().what());
  else
    run_producer(k);  // ends the partition as cancelled if its job is gone
  allocate_next();
}

}  // namespace stoker::engine::detail
