#include "engine/detail/host_staging.hpp"

#include <algorithm>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <cstring>

#include "engine/detail/guarded_call.hpp"
#include "engine/detail/nontemporal_copy.hpp"
#include "engine/detail/nvtx.hpp"

namespace asio = boost::asio;

namespace stoker::engine::detail {

// A partition's producer work: its shares (one for a plain producer).
struct HostStaging::ProducerRun {
  PartKey key;
  std::vector<std::span<std::byte>> spans;
  Producer plain;
  SplitProducer split;
  std::size_t tasks = 1;
  std::size_t left = 1;                 // engine thread: shares not yet ended
  std::atomic<std::size_t> claimed{0};  // shares taken, by the engine thread or a worker
  std::atomic<bool> stop{false};        // its job was cancelled or failed: take no more
  std::shared_ptr<ShareFeed> feed;      // streamed: told of each share as it ends
  std::error_code error;
  std::string thrown;  // with Errc::callable_threw: what the first share threw
  Clock::time_point first_start{}, last_end{};
  std::function<void(ProducerOutcome)> done;
  // The next share nobody has taken, or `tasks` when none is left.
  std::size_t claim() noexcept {
    std::size_t c = claimed.load(std::memory_order_relaxed);
    while (c < tasks && !claimed.compare_exchange_weak(c, c + 1, std::memory_order_relaxed)) {
    }
    return std::min(c, tasks);
  }
};

Result<std::unique_ptr<HostStaging>> HostStaging::create(devices::Backend backend,
                                                         std::size_t host_budget_bytes,
                                                         std::size_t workers,
                                                         asio::io_context& engine) {
  auto pool = WorkerPool::start(workers, [workers](std::size_t i) {
    return "worker thread " + std::to_string(i + 1) + " of " + std::to_string(workers) +
           " (producers and output copies)";
  });
  if (!pool) return std::move(pool).error();
  return std::unique_ptr<HostStaging>(
      new HostStaging(backend, host_budget_bytes, std::move(*pool), engine));
}

HostStaging::HostStaging(devices::Backend backend, std::size_t host_budget_bytes,
                         std::unique_ptr<WorkerPool> workers, asio::io_context& engine)
    : engine_(engine),
      budget_(std::make_unique<alloc::MemoryBudget>(host_budget_bytes, "engine host")),
      worker_count_(workers->size()),
      workers_(std::move(workers)) {
  // The pool's defaults: the budget's limit pinned for granted blocks, plus at
  // most an eighth of it in free blocks of partly used shared slabs
  // (docs/ALLOC.md), so whatever the budget grants the pool can pin.
  pool_ = std::make_unique<alloc::PinnedPool>(backend, *budget_, alloc::PinnedPoolOptions{});
}

std::error_code HostStaging::reserve_pinned(const Partition& like, std::size_t count) {
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
  const std::size_t limit = budget_->available();
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

void HostStaging::request_blocks(BlockRequest request) {
  to_allocate_.push_back(std::move(request));
  allocate_next();
}

void HostStaging::withdraw_blocks(std::uint64_t seq) {
  for (auto it = to_allocate_.begin(); it != to_allocate_.end();) {
    if (it->key.seq != seq) {
      ++it;
      continue;
    }
    asio::post(engine_, [done = std::move(it->done)] { done(Error{Errc::cancelled}); });
    it = to_allocate_.erase(it);
  }
}

void HostStaging::allocate_next() {
  while (!allocating_ && !to_allocate_.empty()) {
    auto r = std::move(to_allocate_.front());
    to_allocate_.pop_front();
    if (!r.wanted()) {
      r.done(Error{Errc::cancelled});
      continue;
    }
    allocating_ = std::move(r);
    request_block();
  }
}

void HostStaging::request_block() {
  const std::size_t bytes = allocating_->sizes[granted_.size()];
  // The wait for the budget is the engine thread's: its cancellation handler
  // is installed, emitted and cleared there (Asio's slots are not
  // thread-safe). Taking the block is not, where it would pin memory
  // (0.05-0.5 s/GiB) while every GPU's dispatch waits: a free block is
  // taken there, a new one is pinned on a worker.
  budget_->async_acquire(
      alloc::PinnedPool::block_capacity(bytes),
      asio::bind_cancellation_slot(
          allocating_->cancel,
          asio::bind_executor(engine_, [this, bytes](std::error_code ec, alloc::Reservation r) {
            if (ec) return block_arrived(Error{ec});
            if (auto block = pool_->allocate_reserved_if_free(bytes, r))
              return block_arrived(std::move(*block));
            asio::post(workers_->get_executor(), [this, bytes, r = std::move(r)]() mutable {
              auto block = pool_->allocate_reserved(bytes, std::move(r));
              asio::post(engine_, [this, block = std::move(block)]() mutable {
                block_arrived(std::move(block));
              });
            });
          })));
}

void HostStaging::block_arrived(Result<alloc::PinnedBlock> block) {
  if (block) granted_.push_back(std::move(*block));
  const bool wanted = allocating_->wanted();
  if (block && granted_.size() < allocating_->sizes.size() && wanted)
    return request_block();  // still this partition's turn
  auto r = std::move(*allocating_);
  allocating_.reset();
  auto blocks = std::move(granted_);
  granted_.clear();
  if (!block)
    r.done(Error{block.error().code, "pinned host memory: " + block.error().what()});
  else if (!wanted)
    r.done(Error{Errc::cancelled});
  else
    r.done(std::move(blocks));
  allocate_next();
}

std::shared_ptr<ShareFeed> HostStaging::produce(ProduceRequest request) {
  auto run = std::make_shared<ProducerRun>();
  run->key = request.key;
  run->spans = std::move(request.spans);
  run->done = std::move(request.done);
  const bool streamed = request.share_align != 0;
  if (request.plain) {
    run->plain = std::move(request.plain);
  } else {
    std::size_t bytes = 0;
    for (const auto& s : run->spans) bytes += s.size();
    // Shares that all run at once also all end at once, and a streamed
    // partition's copies could only start then: streamed partitions get
    // several waves of shares, which end (and cross) one wave after another.
    const std::size_t most = worker_count_ * (streamed ? kStreamedShareWaves : 1);
    run->split = std::move(request.split);
    run->tasks = request.tasks ? request.tasks
                               : std::clamp<std::size_t>(bytes / kBytesPerWorkerTask, 1, most);
  }
  run->left = run->tasks;
  if (streamed) run->feed = std::make_shared<ShareFeed>(run->tasks, request.share_align);
  auto feed = run->feed;
  producing_.emplace(run->key, std::move(run));
  start_shares();
  return feed;
}

void HostStaging::stop_producing(std::uint64_t seq) {
  for (auto& [k, run] : producing_)
    if (k.seq == seq) run->stop = true;
}

void HostStaging::start_shares() {
  while (shares_running_ < worker_count_ && !producing_.empty()) {
    const auto it = producing_.begin();
    const auto run = it->second;
    if (run->stop.load(std::memory_order_relaxed)) {
      // Shares not taken are skipped (workers going on take no more); the
      // partition ends with its last running share, or now if none runs.
      run->left -= run->tasks - std::min(run->tasks, run->claimed.exchange(run->tasks));
      if (!run->error) run->error = make_error_code(Errc::cancelled);
      producing_.erase(it);
      if (run->left == 0) producer_done(*run);
      continue;
    }
    const std::size_t t = run->claim();
    if (run->claimed.load(std::memory_order_relaxed) >= run->tasks) producing_.erase(it);
    if (t == run->tasks) continue;  // workers going on took the rest
    if (t == 0) run->first_start = Clock::now();
    ++shares_running_;
    asio::post(workers_->get_executor(), [this, run, t] { produce_shares(run, t); });
  }
}

// On a worker: share t, then more shares of the same run while any is left
// and its job goes on. Under CPU contention a round trip through the engine
// thread per share cost each worker a scheduling delay (the pipeline
// benchmark's producers ran 18 % slower with twice the shares).
void HostStaging::produce_shares(std::shared_ptr<ProducerRun> run, std::size_t t) {
  for (;;) {
    std::string thrown;
    std::error_code ec;
    {
      const nvtx::ScopedRange range(nvtx::Stage::producer, run->key.part);
      ec = run->plain
               ? detail::guarded_call(thrown, run->plain, run->spans)
               : detail::guarded_call(thrown, run->split, run->spans, ProducerTask{t, run->tasks});
    }
    const std::size_t next =
        ec || run->stop.load(std::memory_order_relaxed) ? run->tasks : run->claim();
    const bool going_on = next != run->tasks;
    asio::post(engine_, [this, run, t, ec, going_on, end = Clock::now(),
                         thrown = std::move(thrown)]() mutable {
      share_done(run, t, ec, end, std::move(thrown));
      if (going_on) return;
      --shares_running_;
      start_shares();
    });
    if (!going_on) return;
    t = next;
  }
}

void HostStaging::share_done(const std::shared_ptr<ProducerRun>& run, std::size_t share,
                             std::error_code ec, Clock::time_point end, std::string thrown) {
  if (ec && !run->error) {
    run->error = ec;
    run->thrown = std::move(thrown);
  }
  // The feed is told here, not by the worker: once the feeder has seen the
  // last share it may end the launch, and the engine must have heard of the
  // producer's end by then (the same handler calls producer_done). Told
  // from the worker, a launch could end first and the engine then queued
  // the finished partition again, its input blocks gone (test
  // StreamedPartitionsRunOnceWhateverEndsFirst).
  if (!ec && run->feed) run->feed->share_done(share);
  run->last_end = std::max(run->last_end, end);
  if (--run->left == 0) producer_done(*run);
}

void HostStaging::producer_done(ProducerRun& run) {
  ProducerOutcome out;
  out.error = run.error;
  out.message = !run.error            ? std::string{}
                : !run.thrown.empty() ? "producer threw: " + run.thrown
                                      : "producer failed: " + run.error.message();
  out.first_start = run.first_start;
  out.last_end = run.last_end;
  // Every started share has ended: a feeder waiting for the others may stop.
  if (run.feed && run.error) run.feed->abort(run.error, out.message);
  auto done = std::move(run.done);
  done(std::move(out));
}

template <typename Task, typename Last>
void HostStaging::fan_out(std::size_t count, Task task, Last last) {
  struct State {
    State(std::size_t n, Task t, Last l) : remaining(n), task(std::move(t)), last(std::move(l)) {}
    std::atomic<std::size_t> remaining;
    std::atomic<bool> failed{false};
    std::error_code first_error;
    Task task;
    Last last;
  };
  auto st = std::make_shared<State>(count, std::move(task), std::move(last));
  if (count == 0) {
    asio::post(workers_->get_executor(), [st] { st->last(std::error_code{}); });
    return;
  }
  for (std::size_t i = 0; i < count; ++i)
    asio::post(workers_->get_executor(), [st, i] {
      if (auto ec = st->task(i); ec && !st->failed.exchange(true)) st->first_error = ec;
      if (st->remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) st->last(st->first_error);
    });
}

void HostStaging::copy_out(const std::vector<BounceCopy>& copies, std::function<void()> then) {
  // A large output is copied in pieces on several workers at once (one
  // memcpy thread moves ~10 GB/s, a GPU returns 55).
  std::vector<BounceCopy> pieces;
  for (const auto& c : copies) {
    const std::size_t count =
        std::clamp<std::size_t>(c.bytes / kBytesPerWorkerTask, 1, worker_count_);
    for (std::size_t i = 0; i < count; ++i) {
      const auto [lo, hi] = ProducerTask{i, count}.range(c.bytes, 64);  // same split rule
      pieces.push_back({c.dst + lo, c.src + lo, hi - lo});
    }
  }
  const std::size_t count = pieces.size();
  fan_out(
      count,
      [pieces = std::move(pieces)](std::size_t i) {
        // Non-temporal stores for large pieces: a plain copy first reads every
        // destination line it fills, a quarter more host memory traffic per
        // input byte of the synthetic job, on memory that the producers and
        // the DMA share (kNontemporalStoresFrom says where small ones go).
        const BounceCopy& c = pieces[i];
        if (c.bytes >= kNontemporalStoresFrom)
          detail::nontemporal_copy(c.dst, c.src, c.bytes);
        else
          std::memcpy(c.dst, c.src, c.bytes);
        return std::error_code{};
      },
      [then = std::move(then)](std::error_code) { then(); });
}

}  // namespace stoker::engine::detail
