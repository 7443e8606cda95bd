#include "engine/detail/staging_ring.hpp"

#include <unistd.h>

#include <algorithm>
#include <boost/asio/post.hpp>
#include <cstdint>
#include <thread>

#include "common/start_thread.hpp"
#include "engine/detail/device_handles.hpp"
#include "engine/detail/enter_thread.hpp"
#include "engine/detail/nontemporal_copy.hpp"
#include "engine/detail/nvtx.hpp"

namespace stoker::engine::detail {

StagingRing::StagingRing(devices::Device& device, devices::Stream& h2d, devices::CpuSet cpus)
    : device_(device), h2d_(h2d), cpus_(std::move(cpus)) {}

Result<std::unique_ptr<StagingRing>> StagingRing::create(devices::Device& device,
                                                         devices::Stream& h2d, const Config& config,
                                                         devices::CpuSet cpus,
                                                         const std::string& where) {
  const std::size_t chunk_bytes = config.staging_chunk_bytes;
  std::unique_ptr<StagingRing> r(new StagingRing(device, h2d, std::move(cpus)));
  r->chunk_bytes_ = chunk_bytes;
  const auto staging_threads = static_cast<std::size_t>(std::max(1, config.staging_threads));
  r->pageable_inputs_ = config.pageable_inputs;
  const std::string name = "stoker-stage-" + std::to_string(device.index());
  auto pool = WorkerPool::start(staging_threads, [&](std::size_t i) {
    return "thread " + name + " (staging thread " + std::to_string(i + 1) + " of " +
           std::to_string(staging_threads) + ")";
  });
  if (!pool) return Error{pool.error().code, where + pool.error().what()};
  r->pool_ = std::move(*pool);
  // Two buffers per thread at least, so that a thread fills one while the
  // other's H2D runs; staging_ring_bytes may ask for more, in whole buffers
  // per thread.
  const std::size_t asked = (config.staging_ring_bytes + chunk_bytes - 1) / chunk_bytes;
  r->threads_ = staging_threads;
  r->buffers_per_thread_ =
      std::max<std::size_t>(2, (asked + staging_threads - 1) / staging_threads);
  r->thread_next_buffer_.assign(staging_threads, 0);
  r->count_ = staging_threads * r->buffers_per_thread_;
  r->buffers_ = std::make_unique<Buffer[]>(r->count_);
  if (auto err = r->pin(where)) return err;
  for (std::size_t i = 0; i < r->count_; ++i)
    if (auto err =
            make_event(device, devices::EventKind::blocking_sync, r->buffers_[i].copied, where))
      return err;
  return r;
}

Error StagingRing::pin(const std::string& where) {
  // Pinned from a thread on the device's CPUs, where it has any: pinning
  // faults the pages in, so they land in that NUMA node's memory, which
  // the staging threads write and the device reads.
  Error pinning;
  const auto pin_all = [&] {
    for (std::size_t i = 0; i < count_ && !pinning; ++i) {
      auto b = devices::allocate_pinned(device_.backend(), chunk_bytes_);
      if (!b)
        pinning = Error{b.error().code, where + "staging buffer: " + b.error().what()};
      else
        buffers_[i].buffer = std::move(*b);
    }
  };
  if (cpus_.empty()) {
    pin_all();
  } else {
    // A set that cannot be bound (a CPU taken offline since discovery)
    // leaves every thread of the device where it was, and says so.
    // A thread the system refuses pins from here, unbound: placement is a
    // speed-up, never a reason to fail.
    bool bound = false;
    std::thread pinner;
    if (common::start_thread(pinner, "the thread that pins the staging buffers", [&] {
          bound = !cpus_.bind_this_thread();
          pin_all();
        }))
      pin_all();
    else
      pinner.join();
    if (!bound) cpus_ = {};
  }
  return pinning;
}

void StagingRing::add_segment(StagingPass& pass, std::byte* dst, const std::byte* src,
                              std::size_t bytes, std::string what) const {
  if (bytes == 0) return;
  pass.segments.push_back({dst, src, bytes, pass.chunks, std::move(what)});
  pass.chunks += (bytes + chunk_bytes_ - 1) / chunk_bytes_;
}

void StagingRing::start(const std::shared_ptr<StagingPass>& pass, std::size_t index,
                        std::function<std::error_code()> before_copy, std::function<void()> ended) {
  pass->index = index;
  pass->before_copy = std::move(before_copy);
  pass->ended = std::move(ended);
  const std::size_t tasks = std::min(pass->chunks, threads_);
  pass->running.store(tasks, std::memory_order_relaxed);
  for (std::size_t t = 0; t < tasks; ++t)
    boost::asio::post(pool_->get_executor(), [this, pass] { run_task(*pass); });
}

void StagingRing::join() {
  pool_->join();
}

std::size_t StagingRing::thread_index() {
  // A pool thread runs only this ring's tasks, one at a time; a ring made
  // later at the same address has new threads.
  thread_local const StagingRing* owner = nullptr;
  thread_local std::size_t index = 0;
  if (owner != this) {
    owner = this;
    index = threads_seen_.fetch_add(1, std::memory_order_relaxed) % threads_;
    enter_thread("stoker-stage-" + std::to_string(device_.index()), cpus_);
  }
  return index;
}

void StagingRing::run_task(StagingPass& p) {
  // The staging threads copy whole chunks, each on its own: under CPU
  // contention a thread that loses its core delays its own chunk only
  // (splitting each chunk across the threads behind a barrier made more
  // threads slower). Each sends its own chunks too, in any order: sent in
  // order from a ring, chunks sat filled for 0.3-0.9 ms (512 KiB chunks,
  // idle host) and up to 13 ms (8 MiB, 14 writer threads) behind one slow
  // chunk, with the threads that had filled them idle.
  const nvtx::ScopedRange range(nvtx::Stage::staging, p.index);
  const std::size_t me = thread_index();
  Buffer* const mine = &buffers_[me * buffers_per_thread_];
  std::size_t& next = thread_next_buffer_[me];
  // The waits run with this device current: on a thread with none, CUDA
  // would make device 0's context current first, a stray context on a node
  // where 0 is not ours.
  std::error_code ec = device_.make_current();
  const Segment* seg = p.segments.data();
  while (!ec && !p.failed.load(std::memory_order_relaxed)) {
    const std::size_t c = p.next_chunk.fetch_add(1, std::memory_order_relaxed);
    if (c >= p.chunks) break;
    if (c == 0) p.started_at = Clock::now();
    while (seg + 1 != p.segments.data() + p.segments.size() && c >= seg[1].first_chunk) ++seg;
    Buffer& b = mine[next];
    next = (next + 1) % buffers_per_thread_;
    const std::size_t off = (c - seg->first_chunk) * chunk_bytes_,
                      n = std::min(chunk_bytes_, seg->bytes - off);
    // The buffer's previous H2D, from this pass or an earlier one, must
    // have read it.
    if ((ec = b.copied.synchronize())) break;
    nontemporal_copy(static_cast<std::byte*>(b.buffer.data()), seg->src + off, n);
    if ((ec = p.before_copy())) break;
    // Other copies may land between this copy and its record: the event
    // then also covers theirs, and completes a little later.
    if ((ec = h2d_.copy(seg->dst + off, b.buffer.data(), n))) break;
    if ((ec = h2d_.record(b.copied))) {
      // The copy is queued but the buffer's event does not cover it: wait
      // for the stream, or a later pass could refill the buffer under it.
      (void)h2d_.synchronize();
      break;
    }
  }
  if (ec && !p.failed.exchange(true, std::memory_order_relaxed)) {
    p.error = ec;
    p.failed_what = seg->what;
  }
  // The last task to end: every chunk's copy is queued on the H2D stream
  // (before the input event the launcher records), or the pass failed.
  // Release: the launcher (told by `ended`) reads the error after the count
  // reached zero.
  if (p.running.fetch_sub(1, std::memory_order_acq_rel) == 1) p.ended();
}

StagingRing::InPlace StagingRing::register_in_place(
    const std::byte* src, std::size_t bytes,
    std::vector<devices::HostRegistration>& registrations) const {
  if (pageable_inputs_ != PageableInputs::register_in_place) return {};
  // Only the whole pages inside the input: its first and last page may hold
  // a neighbour's bytes (heap buffers side by side), and CUDA refuses to
  // register a page twice. The head and tail are staged.
  static const std::size_t page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  const auto addr = reinterpret_cast<std::uintptr_t>(src);
  const std::size_t head = (page - addr % page) % page;
  if (head >= bytes) return {};
  const std::size_t interior = (bytes - head) / page * page;
  if (interior < 2 * chunk_bytes_) return {};
  // The registration only page-locks the caller's memory; nothing is written.
  auto reg =
      devices::register_host(device_.backend(), const_cast<std::byte*>(src + head), interior);
  if (!reg) return {};  // registered already (by the caller): stage it all
  registrations.push_back(std::move(*reg));
  return {head, interior};
}

}  // namespace stoker::engine::detail
