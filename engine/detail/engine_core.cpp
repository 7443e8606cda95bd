#include "engine/detail/engine_core.hpp"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <future>

#include "common/start_thread.hpp"
#include "engine/detail/enter_thread.hpp"
#include "engine/detail/run_and_wait.hpp"

namespace asio = boost::asio;

namespace stoker::engine::detail {
namespace {

// Partitions between prepare and finished (each holding its pinned blocks):
// enough to keep every slot and every producer thread busy, and exactly the
// number of blocks reserve_pinned() needs so the pool never grows mid-job
// (pinning a slab costs 0.05-0.5 s/GiB). The host budget bounds the memory.
std::size_t lookahead_for(const Config& c, std::size_t devices) {
  return std::max(devices * static_cast<std::size_t>(c.pipeline_depth) * 2,
                  static_cast<std::size_t>(c.worker_threads));
}

}  // namespace

EngineCore::EngineCore(Config config, devices::DeviceSet set)
    : config_(std::move(config)),
      set_(std::move(set)),
      io_work_(io_.get_executor()),
      jobs_(lookahead_for(config_, set_.size())) {}

Result<std::unique_ptr<EngineCore>> EngineCore::create(Config config) {
  if (auto e = config.validate()) return e;
  auto set = devices::discover(config.devices);
  if (!set) return std::move(set).error();
  const auto backend = set->backend();
  const std::size_t n_devices = set->size();
  std::unique_ptr<EngineCore> core(
      new EngineCore(config.resolved(backend, n_devices), std::move(*set)));
  auto& c = *core;
  auto staging = HostStaging::create(backend, c.config_.host_budget_bytes,
                                     static_cast<std::size_t>(c.config_.worker_threads), c.io_);
  if (!staging) return std::move(staging).error();
  c.staging_ = std::move(*staging);
  auto slots = DeviceSlots::create(c.set_, c.config_);
  if (!slots) return std::move(slots).error();
  c.slots_ = std::move(*slots);
  c.keys_ = std::make_unique<KeyRegistry>(c.io_, c.set_, *c.slots_, *c.staging_,
                                          [core = &c] { core->pump(); });
  if (Error e = common::start_thread(c.thread_, "the engine's thread", [io = &c.io_] {
        run_engine_thread(*io, "the engine's thread");
      }))
    return e;
  return core;
}

void CancelRelay::cancel(std::uint64_t seq) {
  inside_.fetch_add(1);
  if (EngineCore* core = core_.load()) asio::post(core->io_, [core, seq] { core->cancel(seq); });
  inside_.fetch_sub(1);
}

EngineCore::~EngineCore() {
  // Cancellation handlers left in callers' slots stop reaching us first.
  relay_->detach();
  // create() failed before starting our threads (a device's runner could
  // not be set up): nothing ran, so there is nothing to drain, and posting
  // to an io_context nobody runs would wait forever.
  if (!thread_.joinable()) {
    slots_.reset();
    return;
  }
  // Cancel what is queued, let started partitions drain, then stop threads
  // in dependency order: runners (they post here), workers, then our own.
  std::promise<void> drained;
  asio::post(io_, [&] {
    shutting_down_ = true;
    keys_->close();
    for (auto s : jobs_.seqs()) cancel(s);
    if (jobs_.empty()) {
      drained.set_value();
    } else {
      shutdown_waiters_.emplace_back(
          ShutdownHandler([&drained](boost::system::error_code) { drained.set_value(); }),
          io_.get_executor());
    }
  });
  drained.get_future().wait();
  run_and_wait(io_, [&] { keys_->release_all(); });
  slots_->stop_runners();
  staging_->join();
  io_work_.reset();
  thread_.join();
}

EngineStats EngineCore::stats() {
  return run_and_wait(io_, [&] {
    EngineStats s;
    s.jobs_in_flight = jobs_.size();
    slots_->add_stats(s);
    s.srs_resident = keys_->resident();
    s.partitions_in_flight = s.busy_slots;
    s.host_budget_in_use = staging_->budget().in_use();
    s.host_budget_limit = staging_->budget().limit();
    const auto ps = staging_->pool().stats();
    s.pinned_bytes_in_use = ps.bytes_in_use;
    s.pinned_bytes_pooled = ps.bytes_pinned;
    s.pinned_slab_allocations = ps.pinned_allocations;
    s.pinned_slabs_trimmed = ps.trimmed_slabs;
    return s;
  });
}

std::error_code EngineCore::reserve_pinned(const Partition& like, std::size_t count) {
  return staging_->reserve_pinned(like, count);
}

void EngineCore::reserve_device(const Partition& like) {
  // The engine thread owns the devices' state: it decides, the feeders map.
  std::vector<std::promise<void>> mapped(slots_->size());
  const auto growing = run_and_wait(io_, [&] {
    return slots_->warm_pools(like.device_bytes(), [&](std::size_t d) { mapped[d].set_value(); });
  });
  for (auto d : growing) mapped[d].get_future().wait();
}

void EngineCore::shutdown(ShutdownHandler handler, asio::any_io_executor handler_executor) {
  const auto ex = asio::prefer(handler_executor, asio::execution::outstanding_work.tracked);
  asio::post(io_, [this, h = std::move(handler), ex]() mutable {
    shutting_down_ = true;
    keys_->close();
    if (jobs_.empty())
      asio::post(ex, [h = std::move(h)]() mutable { std::move(h)(boost::system::error_code{}); });
    else
      shutdown_waiters_.emplace_back(std::move(h), ex);
  });
}

void EngineCore::fail(JobState& job, Error error) {
  if (!job.over()) job.failure = std::move(error);
  drop_queued(job);
}

void EngineCore::cancel(std::uint64_t seq) {
  auto* job = jobs_.find(seq);
  // A failed job is already dropping its queue; cancelling it now would
  // report operation_aborted and hide the failure its caller must read.
  if (!job || job->over()) return;
  job->cancelled = true;
  drop_queued(*job);
  end_job_if_over(seq);
}

void EngineCore::drop_queued(JobState& job) {
  jobs_.withdraw(job);
  // Blocks not yet requested never will be; their partitions end from the
  // queue (posted: this may run inside produced() or launch_ended()).
  staging_->withdraw_blocks(job.seq);
  // Workers going on with its shares take no more.
  staging_->stop_producing(job.seq);
  // Budget waits still pending complete with operation_aborted.
  for (auto& ps : job.parts)
    if (ps.cancel) ps.cancel->emit(asio::cancellation_type::all);
}

// Partitions no healthy permitted device can run fail their job. Not while
// some of its partitions are still on a device: a sibling partition may have
// reported the device's fault first, and the job's own in-flight partition
// (possibly the faulting kernel) is the failure its caller must read. Each
// completion pumps again, so the job fails as soon as they are back.
void EngineCore::fail_unschedulable() {
  std::vector<std::uint64_t> doomed;
  jobs_.for_each([&](JobState& job) {
    if (job.over()) return;
    if (std::any_of(job.parts.begin(), job.parts.end(), [](const PartState& ps) {
          return ps.phase == PartPhase::running || ps.phase == PartPhase::streaming;
        }))
      return;
    // Partitions fit only the devices whose budget holds them: if the
    // only such device faulted, the others would never take them. Only
    // those still to be scheduled count (finishing ones left their device).
    std::size_t largest = 0, waiting = 0;
    for (const auto& ps : job.parts)
      if (ps.phase == PartPhase::queued || ps.phase == PartPhase::preparing ||
          ps.phase == PartPhase::ready) {
        largest = std::max(largest, ps.device_bytes);
        ++waiting;
      }
    if (waiting == 0) return;
    bool runnable = false;
    for (std::size_t d = 0; d < slots_->size(); ++d)
      if (slots_->healthy(d) && job.allows(d) && largest <= slots_->capacity(d)) runnable = true;
    if (!runnable && job.remaining > 0) doomed.push_back(job.seq);
  });
  for (auto seq : doomed) {
    auto& job = jobs_.at(seq);
    fail(job,
         Error{Errc::device_fault,
               "job '" + job.job.name + "': no healthy device left that may run its partitions"});
    end_job_if_over(seq);
  }
}

}  // namespace stoker::engine::detail
