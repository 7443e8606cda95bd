#include "engine/detail/engine_core.hpp"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <future>

namespace asio = boost::asio;

namespace stoker::engine::detail {

EngineCore::EngineCore(Config config, devices::DeviceSet set)
    : config_(std::move(config)), set_(std::move(set)), io_work_(io_.get_executor()) {}

Result<std::unique_ptr<EngineCore>> EngineCore::create(Config config) {
  if (auto e = config.validate()) return e;
  auto set = devices::discover(config.devices);
  if (!set) return std::move(set).error();
  const auto backend = set->backend();
  const std::size_t n_devices = set->size();
  std::unique_ptr<EngineCore> core(
      new EngineCore(config.resolved(backend, n_devices), std::move(*set)));
  auto& cfg = core->config_;

  core->host_budget_ = std::make_unique<alloc::MemoryBudget>(cfg.host_budget_bytes, "engine host");
  // The pool's defaults: the budget's limit pinned for granted blocks, plus at
  // most an eighth of it in free blocks of partly used shared slabs
  // (docs/ALLOC.md), so whatever the budget grants the pool can pin.
  alloc::PinnedPoolOptions pool_options;
  core->pool_ = std::make_unique<alloc::PinnedPool>(backend, *core->host_budget_, pool_options);

  for (std::size_t d = 0; d < core->set_.size(); ++d) {
    auto& dev = core->set_[d];
    auto runner = DeviceRunner::create(dev, cfg);
    if (!runner) return std::move(runner).error();
    core->runners_.push_back(std::move(*runner));
    DevState s;
    s.slot_busy.assign(static_cast<std::size_t>(cfg.pipeline_depth), false);
    s.free_slots = cfg.pipeline_depth;
    auto mem = dev.memory_info();
    const std::size_t total = mem ? mem->total : dev.info().total_memory;
    s.budget = cfg.device_budget(total);
    // Stream-ordered allocations stay cached in the device pool between
    // partitions, so the hot path never reaches cudaMalloc.
    dev.configure_pool(s.budget);
    core->dev_.push_back(s);
  }
  // Partitions between prepare and finished (each holding its pinned block):
  // enough to keep every slot and every producer thread busy, and exactly
  // the number of blocks reserve_pinned() needs so the pool never grows
  // mid-job (pinning a slab costs 0.05-0.5 s/GiB). The host budget bounds
  // the memory.
  core->max_prepared_ =
      std::max(core->set_.size() * static_cast<std::size_t>(cfg.pipeline_depth) * 2,
               static_cast<std::size_t>(cfg.worker_threads));
  core->worker_count_ = static_cast<std::size_t>(cfg.worker_threads);
  core->workers_ = std::make_unique<asio::thread_pool>(core->worker_count_);
  core->thread_ = std::thread([io = &core->io_] { io->run(); });
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
    runners_.clear();
    return;
  }
  // Cancel what is queued, let started partitions drain, then stop threads
  // in dependency order: runners (they post here), workers, then our own.
  std::promise<void> drained;
  asio::post(io_, [&] {
    shutting_down_ = true;
    std::vector<std::uint64_t> seqs;
    for (auto& [seq, job] : jobs_) seqs.push_back(seq);
    for (auto s : seqs) cancel(s);
    if (jobs_.empty()) {
      drained.set_value();
    } else {
      shutdown_waiters_.emplace_back(
          ShutdownHandler([&drained](boost::system::error_code) { drained.set_value(); }),
          io_.get_executor());
    }
  });
  drained.get_future().wait();
  on_engine_thread([&] { release_all_srs(); });
  runners_.clear();
  workers_->join();
  io_work_.reset();
  thread_.join();
}

EngineStats EngineCore::stats() {
  return on_engine_thread([&] {
    EngineStats s;
    s.jobs_in_flight = jobs_.size();
    for (const auto& d : dev_) {
      s.total_slots += d.slot_busy.size();
      s.busy_slots +=
          static_cast<std::size_t>(std::count(d.slot_busy.begin(), d.slot_busy.end(), true));
      s.device_budget_in_use.push_back(d.in_use);
      s.device_budget_limit.push_back(d.budget);
      s.device_resident_bytes.push_back(d.resident);
      s.device_healthy.push_back(d.healthy);
    }
    for (const auto& r : runners_) {
      s.staging_ring_bytes.push_back(r->staging_bytes());
      s.device_cpus.push_back(r->cpus().to_string());
    }
    s.srs_resident = srs_.size();
    s.partitions_in_flight = s.busy_slots;
    s.host_budget_in_use = host_budget_->in_use();
    s.host_budget_limit = host_budget_->limit();
    const auto ps = pool_->stats();
    s.pinned_bytes_in_use = ps.bytes_in_use;
    s.pinned_bytes_pooled = ps.bytes_pinned;
    s.pinned_slab_allocations = ps.pinned_allocations;
    s.pinned_slabs_trimmed = ps.trimmed_slabs;
    return s;
  });
}

bool EngineCore::allowed(const JobState& job, std::size_t device) const {
  return allowed_on(job.job, device);
}

EngineCore::JobState* EngineCore::find(std::uint64_t seq) {
  auto it = jobs_.find(seq);
  return it == jobs_.end() ? nullptr : it->second.get();
}

}  // namespace stoker::engine::detail
