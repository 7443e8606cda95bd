#include "engine/engine.hpp"

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/prefer.hpp>
#include <cstring>
#include <future>
#include <stdexcept>

#include "engine/detail/engine_core.hpp"
#include "engine/detail/guarded_call.hpp"
#include "engine/detail/nontemporal_copy.hpp"

namespace asio = boost::asio;

namespace stoker::engine {

std::size_t Partition::input_bytes() const {
  std::size_t n = 0;
  for (const auto& i : inputs) n += i.bytes;
  return n;
}

std::size_t Partition::output_bytes() const {
  std::size_t n = 0;
  for (const auto& o : outputs) n += o.bytes;
  return n;
}

std::error_code operation_aborted() noexcept {
  return std::error_code(asio::error::make_error_code(asio::error::operation_aborted));
}

namespace detail {
namespace {

double ms_since(Clock::time_point a, Clock::time_point b = Clock::now()) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

bool allowed_on(const Job& job, std::size_t device) {
  if (!job.devices) return true;
  return std::find(job.devices->begin(), job.devices->end(), static_cast<int>(device)) !=
         job.devices->end();
}

std::string bytes_str(std::size_t n) {
  return std::to_string(n) + " bytes";
}

// Completes a submit handler on its associated executor, never inline.
void complete(SubmitHandler handler, const asio::any_io_executor& ex, std::error_code ec,
              JobReport report) {
  asio::post(ex, [h = std::move(handler), ec, r = std::move(report)]() mutable {
    asio::get_associated_cancellation_slot(h).clear();
    std::move(h)(boost::system::error_code(ec), std::move(r));
  });
}

asio::any_io_executor tracked(const asio::any_io_executor& ex) {
  return asio::prefer(ex, asio::execution::outstanding_work.tracked);
}

}  // namespace

EngineCore::EngineCore(Config config, devices::DeviceSet set)
    : config_(std::move(config)), set_(std::move(set)), io_work_(io_.get_executor()) {}

Result<std::unique_ptr<EngineCore>> EngineCore::create(Config config) {
  if (auto e = config.validate()) return e;
  auto set = devices::discover(config.devices);
  if (!set) return std::move(set).error();
  std::unique_ptr<EngineCore> core(new EngineCore(std::move(config), std::move(*set)));
  auto& cfg = core->config_;
  const auto backend = core->set_.backend();

  if (cfg.host_budget_bytes == 0) {
    const auto pages = static_cast<std::size_t>(sysconf(_SC_PHYS_PAGES));
    const auto page = static_cast<std::size_t>(sysconf(_SC_PAGE_SIZE));
    cfg.host_budget_bytes = std::max<std::size_t>(pages * page / 2, std::size_t{1} << 30);
  }
  if (cfg.worker_threads == 0)
    cfg.worker_threads = std::max(2, static_cast<int>(std::thread::hardware_concurrency()));
  if (cfg.staging_threads == 0)
    cfg.staging_threads = std::clamp(static_cast<int>(std::thread::hardware_concurrency() /
                                                      std::max<std::size_t>(1, core->set_.size())),
                                     4, 16);
  if (cfg.h2d_gbps == 0) cfg.h2d_gbps = backend == devices::Backend::cuda ? 55.0 : 10.0;
  if (cfg.d2h_gbps == 0) cfg.d2h_gbps = backend == devices::Backend::cuda ? 55.0 : 10.0;

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
    s.budget =
        cfg.device_budget_bytes ? std::min(cfg.device_budget_bytes, total) : total / 100 * 85;
    // Stream-ordered allocations stay cached in the device pool between
    // partitions, so the hot path never reaches cudaMalloc.
    dev.set_pool_release_threshold(s.budget);
    core->dev_.push_back(s);
  }
  // Partitions between prepare and finished (each holding its pinned block):
  // enough to keep every slot and every producer thread busy, and exactly
  // the number of blocks reserve_pinned() needs so the pool never grows
  // mid-job (it once did: 23 cudaHostAlloc slabs, 3.4 s, in a 64-partition
  // run after 32 blocks were reserved). The host budget bounds the memory.
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
  runners_.clear();
  workers_->join();
  io_work_.reset();
  thread_.join();
}

EngineStats EngineCore::stats() {
  std::promise<EngineStats> p;
  asio::post(io_, [&] {
    EngineStats s;
    s.jobs_in_flight = jobs_.size();
    for (const auto& d : dev_) {
      s.total_slots += d.slot_busy.size();
      s.busy_slots +=
          static_cast<std::size_t>(std::count(d.slot_busy.begin(), d.slot_busy.end(), true));
      s.device_budget_in_use.push_back(d.in_use);
      s.device_healthy.push_back(d.healthy);
    }
    for (const auto& r : runners_) {
      s.staging_ring_bytes.push_back(r->staging_bytes());
      s.device_cpus.push_back(r->cpus().to_string());
    }
    s.partitions_in_flight = s.busy_slots;
    s.host_budget_in_use = host_budget_->in_use();
    s.host_budget_limit = host_budget_->limit();
    const auto ps = pool_->stats();
    s.pinned_bytes_in_use = ps.bytes_in_use;
    s.pinned_bytes_pooled = ps.bytes_pinned;
    s.pinned_slab_allocations = ps.pinned_allocations;
    s.pinned_slabs_trimmed = ps.trimmed_slabs;
    p.set_value(std::move(s));
  });
  return p.get_future().get();
}

Error EngineCore::validate(const Job& job) const {
  const std::string who = "job '" + job.name + "'";
  if (job.partitions.empty()) return {Errc::invalid_argument, who + " has no partitions"};
  if (job.devices) {
    if (job.devices->empty())
      return {Errc::invalid_argument, who + ": device affinity lists no device"};
    for (int d : *job.devices)
      if (d < 0 || static_cast<std::size_t>(d) >= set_.size())
        return {Errc::invalid_argument, who + ": device " + std::to_string(d) +
                                            " does not exist (this engine has " +
                                            std::to_string(set_.size()) + " devices)"};
  }
  const bool cuda = set_.backend() == devices::Backend::cuda;
  for (std::size_t i = 0; i < job.partitions.size(); ++i) {
    const auto& p = job.partitions[i];
    const std::string where = who + " partition " + std::to_string(i);
    if (cuda ? !p.work.gpu : !p.work.cpu)
      return {Errc::invalid_argument,
              where + " has no " + (cuda ? "GPU" : "CPU") + " version of its device work"};
    // Memory the caller declares page-locked must be: copied as such, it
    // would crawl through the driver's pageable path without a word.
    const auto page_locked = [&](const void* ptr, std::size_t bytes, const std::string& what,
                                 const char* declared, const char* remedy) -> Error {
      const auto locked = devices::is_page_locked(set_.backend(), ptr, bytes);
      if (!locked)
        return {locked.error().code,
                where + ": checking that " + what + " is page-locked: " + locked.error().what()};
      if (!*locked)
        return {Errc::invalid_argument, where + ": " + what + " is declared " + declared +
                                            " but its memory is not page-locked (" + remedy + ")"};
      return {};
    };
    bool any_produced = false;
    for (std::size_t k = 0; k < p.inputs.size(); ++k) {
      const auto& in = p.inputs[k];
      if (in.bytes == 0)
        return {Errc::invalid_argument,
                where + ": input " + std::to_string(k) + " is empty (0 bytes)"};
      if (in.kind == InputKind::produced)
        any_produced = true;
      else if (in.data == nullptr)
        return {Errc::invalid_argument, where + ": input " + std::to_string(k) + " has no data"};
      else if (in.kind == InputKind::registered)
        if (auto e = page_locked(in.data, in.bytes, "input " + std::to_string(k), "registered",
                                 "cudaHostRegister it, or pass it as Input::pageable"))
          return e;
    }
    const bool has_producer = p.producer || p.split_producer;
    if (p.producer && p.split_producer)
      return {Errc::invalid_argument, where + " has both a producer and a split producer"};
    if (any_produced && !has_producer)
      return {Errc::invalid_argument, where + " has produced inputs but no producer"};
    if (!any_produced && has_producer)
      return {Errc::invalid_argument, where + " has a producer but no produced input"};
    if (p.share_align != 0 && p.producer)
      return {Errc::invalid_argument,
              where + " sets share_align (" + std::to_string(p.share_align) +
                  ") with a plain producer: only a split producer's shares can be streamed"};
    if (p.producer_tasks > 4096)
      return {Errc::invalid_argument, where + " asks for " + std::to_string(p.producer_tasks) +
                                          " producer tasks (at most 4096)"};
    for (std::size_t k = 0; k < p.outputs.size(); ++k) {
      const auto& out = p.outputs[k];
      if (out.bytes == 0 || out.destination == nullptr)
        return {Errc::invalid_argument,
                where + ": output " + std::to_string(k) +
                    (out.bytes == 0 ? " is empty (0 bytes)" : " has no destination")};
      if (out.pinned)
        if (auto e =
                page_locked(out.destination, out.bytes, "output " + std::to_string(k), "pinned",
                            "cudaHostRegister it, or land it through a bounce block: "
                            "Output::to(span, false)"))
          return e;
    }
    const std::size_t host_bytes = Engine::pinned_bytes(p);
    if (host_bytes > host_budget_->limit())
      return {Errc::invalid_argument, where + " needs " + bytes_str(host_bytes) +
                                          " of pinned host memory; the host budget is " +
                                          bytes_str(host_budget_->limit())};
    std::size_t largest = 0;
    for (std::size_t d = 0; d < dev_.size(); ++d)
      if (allowed_on(job, d)) largest = std::max(largest, dev_[d].budget);
    if (p.device_bytes() + 256 * (p.inputs.size() + p.outputs.size() + 1) > largest)
      return {Errc::invalid_argument, where + " needs " + bytes_str(p.device_bytes()) +
                                          " of device memory; the largest device budget is " +
                                          bytes_str(largest)};
    if (job.validate) {
      Error e;
      std::string thrown;
      const auto ec = detail::guarded_call(thrown, [&] {
        e = job.validate(p, i);
        return std::error_code{};
      });
      if (ec) return {ec, where + ": its validate threw: " + thrown};
      if (e) return {e.code, where + ": " + e.what()};
    }
  }
  return {};
}

bool EngineCore::allowed(const JobState& job, std::size_t device) const {
  return allowed_on(job.job, device);
}

EngineCore::JobState* EngineCore::find(std::uint64_t seq) {
  auto it = jobs_.find(seq);
  return it == jobs_.end() ? nullptr : it->second.get();
}

void EngineCore::submit(Job job, SubmitHandler handler, asio::any_io_executor ex) {
  JobReport early;
  early.name = job.name;
  early.partitions = job.partitions.size();
  // Bad input is rejected before any device work, on the caller's thread.
  if (auto e = validate(job)) {
    early.error = e.what();
    return complete(std::move(handler), ex, e.code, std::move(early));
  }
  auto state = std::make_unique<JobState>(std::move(job), std::move(handler), tracked(ex));
  state->start = Clock::now();
  state->pool_at_start = pool_->stats();
  // The cancellation slot is installed here, on the initiating thread, as
  // Asio's own operations do: signals and slots are not thread-safe, and the
  // caller emits from its side (the handler's executor). Installing it later
  // on the engine thread raced with such an emit (found by TSan). The handler
  // only posts, so it may run on any thread; a cancel that arrives after the
  // job completed finds nothing and does nothing.
  const auto seq = next_seq_.fetch_add(1, std::memory_order_relaxed);
  state->seq = seq;
  auto slot = asio::get_associated_cancellation_slot(state->handler);
  if (slot.is_connected())
    slot.assign([relay = relay_, seq](asio::cancellation_type) { relay->cancel(seq); });
  asio::post(io_, [this, state = std::move(state)]() mutable {
    if (shutting_down_) {
      JobReport r;
      r.name = state->job.name;
      r.partitions = state->job.partitions.size();
      r.error = "engine is shutting down; job '" + state->job.name + "' not started";
      return complete(std::move(state->handler), state->handler_executor,
                      make_error_code(Errc::shutting_down), std::move(r));
    }
    const auto seq = state->seq;
    jobs_.emplace(seq, std::move(state));
    start(seq);
  });
}

void EngineCore::start(std::uint64_t seq) {
  auto& job = *jobs_.at(seq);
  const auto n = job.job.partitions.size();
  job.parts.resize(n);
  job.remaining = n;
  for (std::size_t i = 0; i < n; ++i) {
    auto& ps = job.parts[i];
    ps.device_bytes = job.job.partitions[i].device_bytes();
    ps.report.index = i;
    ps.report.bytes_in = job.job.partitions[i].input_bytes();
    ps.report.bytes_out = job.job.partitions[i].output_bytes();
    to_prepare_.insert(Key{-job.job.priority, seq, i});
  }
  warm_device_pools(job);
  pump();
}

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
      std::min(largest * static_cast<std::size_t>(runners_[d]->depth()), ds.budget);
  if (want <= ds.pool_warmed) return 0;
  ds.pool_warmed = want;
  return want;
}

void EngineCore::reserve_device(const Partition& like) {
  // The engine thread owns the devices' state: it decides, the feeders map.
  std::promise<std::vector<std::size_t>> plan;
  asio::post(io_, [&] {
    std::vector<std::size_t> want(dev_.size());
    for (std::size_t d = 0; d < dev_.size(); ++d) want[d] = pool_growth(d, like.device_bytes());
    plan.set_value(std::move(want));
  });
  const auto want = plan.get_future().get();
  std::vector<std::promise<void>> mapped(want.size());
  for (std::size_t d = 0; d < want.size(); ++d) {
    if (want[d] == 0) continue;
    runners_[d]->warm_device_pool(want[d], [&p = mapped[d]] { p.set_value(); });
  }
  for (std::size_t d = 0; d < want.size(); ++d)
    if (want[d] != 0) mapped[d].get_future().wait();
}

void EngineCore::pump() {
  while (prepared_ < max_prepared_ && !to_prepare_.empty()) {
    const Key k = *to_prepare_.begin();
    to_prepare_.erase(to_prepare_.begin());
    prepare(k);
  }
  // Devices with the most free slots pull first; each takes the best-ranked
  // ready partition it may run and has device memory for.
  std::vector<std::size_t> order(dev_.size());
  for (std::size_t d = 0; d < order.size(); ++d) order[d] = d;
  std::stable_sort(order.begin(), order.end(),
                   [&](auto a, auto b) { return dev_[a].free_slots > dev_[b].free_slots; });
  const auto take = [&](std::set<Key>& from, std::size_t d) {
    const auto& ds = dev_[d];
    for (auto it = from.begin(); it != from.end(); ++it) {
      const auto& job = *jobs_.at(it->seq);
      if (job.cancelled || job.failure || !allowed(job, d)) continue;
      if (job.parts[it->part].device_bytes > ds.budget - ds.in_use) continue;
      const Key k = *it;
      from.erase(it);
      dispatch(d, k);
      return true;
    }
    return false;
  };
  bool progress = true;
  while (progress && !(ready_.empty() && early_uploads_.empty())) {
    progress = false;
    for (auto d : order) {
      auto& ds = dev_[d];
      if (!ds.healthy || ds.free_slots == 0) continue;
      // A produced partition first: a slot should not wait on a producer
      // while another partition is ready.
      if (take(ready_, d) || take(early_uploads_, d)) progress = true;
    }
  }
  // Only a device fault leaves a job nowhere to run (affinities name
  // devices that exist, sizes were checked at submission), and the scan
  // visits every job: with all devices healthy it would only make each pump
  // cost as much as the jobs queued (10,000 small jobs: half the time).
  const bool any_broken =
      std::any_of(dev_.begin(), dev_.end(), [](const DevState& ds) { return !ds.healthy; });
  if (any_broken && (!to_prepare_.empty() || !ready_.empty() || !early_uploads_.empty()))
    fail_unschedulable();
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
  ps.phase = PartPhase::preparing;
  ps.cancel = std::make_unique<asio::cancellation_signal>();
  ++prepared_;
  ++job.active;
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
  const std::size_t limit = host_budget_->limit();
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
    produced(
        k, block.error().code,
        "pinned host memory for partition " + std::to_string(k.part) + ": " + block.error().what());
  else
    run_producer(k);  // ends the partition as cancelled if its job is gone
  allocate_next();
}

void EngineCore::run_producer(const Key& k) {
  auto* job = find(k.seq);
  auto& ps = job->parts[k.part];
  const auto& p = job->job.partitions[k.part];
  if (job->cancelled || job->failure) return produced(k, make_error_code(Errc::cancelled), {});
  if (!p.producer && !p.split_producer) return produced(k, {}, {});
  auto run = std::make_shared<ProducerRun>();
  std::size_t bytes = 0;
  for (std::size_t i = 0; i < ps.input_blocks; ++i) {
    run->spans.push_back(ps.blocks[i].bytes());
    bytes += ps.blocks[i].size();
  }
  const bool streamed = p.split_producer && p.share_align != 0 && config_.early_upload;
  if (p.producer) {
    run->plain = p.producer;
  } else {
    // Shares that all run at once also all end at once, and a streamed
    // partition's copies could only start then: streamed partitions get
    // several waves of shares, which end (and cross) one wave after another.
    const std::size_t most = worker_count_ * (streamed ? kStreamedShareWaves : 1);
    run->split = p.split_producer;
    run->tasks = p.producer_tasks ? p.producer_tasks
                                  : std::clamp<std::size_t>(bytes / kBytesPerWorkerTask, 1, most);
  }
  run->left = run->tasks;
  if (streamed) {
    run->feed = ps.feed = std::make_shared<ShareFeed>(run->tasks, p.share_align);
    early_uploads_.insert(k);
  }
  producing_.emplace(k, std::move(run));
  start_shares();
  if (streamed) pump();
}

void EngineCore::start_shares() {
  while (shares_running_ < worker_count_ && !producing_.empty()) {
    const auto it = producing_.begin();
    const Key k = it->first;
    const auto run = it->second;
    auto& job = *find(k.seq);
    if (job.cancelled || job.failure) {
      // Shares not taken are skipped (drop_queued stopped the workers going
      // on); the partition ends with its last running share, or now if none
      // runs.
      run->left -= run->tasks - std::min(run->tasks, run->claimed.exchange(run->tasks));
      if (!run->error) run->error = make_error_code(Errc::cancelled);
      producing_.erase(it);
      if (run->left == 0) producer_done(k, *run);
      continue;
    }
    const std::size_t t = run->claim();
    if (run->claimed.load(std::memory_order_relaxed) >= run->tasks) producing_.erase(it);
    if (t == run->tasks) continue;  // workers going on took the rest
    if (t == 0) {
      run->first_start = Clock::now();
      job.parts[k.part].report.producer.start_ms = ms_since(job.start, run->first_start);
    }
    ++shares_running_;
    asio::post(*workers_, [this, k, run, t] { produce_shares(k, run, t); });
  }
}

void EngineCore::produce_shares(const Key& k, std::shared_ptr<ProducerRun> run, std::size_t t) {
  for (;;) {
    std::string thrown;
    const std::error_code ec = run->plain ? detail::guarded_call(thrown, run->plain, run->spans)
                                          : detail::guarded_call(thrown, run->split, run->spans,
                                                                 ProducerTask{t, run->tasks});
    const std::size_t next =
        ec || run->stop.load(std::memory_order_relaxed) ? run->tasks : run->claim();
    const bool going_on = next != run->tasks;
    asio::post(io_, [this, k, run, t, ec, going_on, end = Clock::now(),
                     thrown = std::move(thrown)]() mutable {
      share_done(k, run, t, ec, end, std::move(thrown));
      if (going_on) return;
      --shares_running_;
      start_shares();
    });
    if (!going_on) return;
    t = next;
  }
}

void EngineCore::share_done(const Key& k, const std::shared_ptr<ProducerRun>& run,
                            std::size_t share, std::error_code ec, Clock::time_point end,
                            std::string thrown) {
  if (ec && !run->error) {
    run->error = ec;
    run->thrown = std::move(thrown);
  }
  // The feed is told here, not by the worker: once the feeder has seen the
  // last share it may end the launch, and the engine must have heard of the
  // producer's end by then (the same handler calls producer_done). Told
  // from the worker, a launch could end first and produced() then queued
  // the finished partition again, its input blocks gone (test
  // StreamedPartitionsRunOnceWhateverEndsFirst).
  if (!ec && run->feed) run->feed->share_done(share);
  run->last_end = std::max(run->last_end, end);
  if (--run->left == 0) producer_done(k, *run);
}

void EngineCore::producer_done(const Key& k, const ProducerRun& run) {
  if (run.first_start != Clock::time_point{})
    find(k.seq)->parts[k.part].report.producer.ms =
        std::chrono::duration<double, std::milli>(run.last_end - run.first_start).count();
  const std::string message = !run.error            ? std::string{}
                              : !run.thrown.empty() ? "producer threw: " + run.thrown
                                                    : "producer failed: " + run.error.message();
  // Every started share has ended: a feeder waiting for the others may stop.
  if (run.feed && run.error) run.feed->abort(run.error, message);
  produced(k, run.error, message);
}

void EngineCore::produced(const Key& k, std::error_code ec, std::string message) {
  auto& job = *find(k.seq);
  auto& ps = job.parts[k.part];
  ps.cancel.reset();
  --job.active;  // no longer preparing
  // Streamed and on a device already: the launch, which ends after this,
  // ends the partition (its feeder was told of a failure).
  if (ps.phase == PartPhase::running) return;
  early_uploads_.erase(k);
  ps.feed.reset();  // no slot took it while it was produced: copied whole
  if (ec || job.cancelled || job.failure) return drop(k, ec, message);
  ps.phase = PartPhase::ready;
  ps.ready_at = Clock::now();
  ready_.insert(k);  // still counted in prepared_ while it waits for a slot
  pump();
}

void EngineCore::drop(const Key& k, std::error_code ec, const std::string& message) {
  auto& job = *find(k.seq);
  auto& ps = job.parts[k.part];
  ps.blocks.clear();
  ps.feed.reset();
  ps.phase = PartPhase::dropped;
  --prepared_;
  if (ec && !job.cancelled && !job.failure)
    fail(job, Error{ec, "job '" + job.job.name + "' partition " + std::to_string(k.part) + ": " +
                            message});
  maybe_complete(k.seq);
  pump();
}

void EngineCore::dispatch(std::size_t d, const Key& k) {
  auto& job = *jobs_.at(k.seq);
  auto& ps = job.parts[k.part];
  const auto& p = job.job.partitions[k.part];
  auto& ds = dev_[d];
  ++job.active;  // still counted in prepared_ until finished(): it holds its block
  ps.phase = PartPhase::running;
  const int slot = static_cast<int>(std::find(ds.slot_busy.begin(), ds.slot_busy.end(), false) -
                                    ds.slot_busy.begin());
  ds.slot_busy[static_cast<std::size_t>(slot)] = true;
  --ds.free_slots;
  ds.in_use += ps.device_bytes;
  ps.report.device = static_cast<int>(d);
  ps.report.slot = slot;
  // Taken while still being produced (streamed): it never waited.
  ps.report.queue_wait_ms = ps.feed ? 0.0 : ms_since(ps.ready_at);

  LaunchRequest req;
  req.slot = slot;
  req.partition = &p;
  req.job_start = job.start;
  req.feed = ps.feed;
  std::size_t next_block = 0;
  for (const auto& in : p.inputs)
    req.input_sources.push_back(in.kind == InputKind::produced ? ps.blocks[next_block++].data()
                                                               : in.data);
  for (const auto& out : p.outputs)
    req.output_targets.push_back(out.pinned ? out.destination : ps.blocks[next_block++].data());
  std::function<void()> on_inputs_copied;
  if (ps.input_blocks != 0)
    on_inputs_copied = [this, k] { asio::post(io_, [this, k] { inputs_copied(k); }); };
  runners_[d]->launch(std::move(req), std::move(on_inputs_copied),
                      [this, d, slot, k](LaunchResult r) {
                        asio::post(io_, [this, d, slot, k, r = std::move(r)]() mutable {
                          launched(d, slot, k, std::move(r));
                        });
                      });
}

void EngineCore::inputs_copied(const Key& k) {
  // Late (the partition has ended) is harmless: the block is gone already.
  if (auto* job = find(k.seq)) {
    auto& ps = job->parts[k.part];
    for (std::size_t i = 0; i < std::min(ps.input_blocks, ps.blocks.size()); ++i)
      ps.blocks[i].reset();
  }
}

void EngineCore::launched(std::size_t d, int slot, const Key& k, LaunchResult r) {
  auto& job = *jobs_.at(k.seq);
  auto& ps = job.parts[k.part];
  auto& ds = dev_[d];
  ds.slot_busy[static_cast<std::size_t>(slot)] = false;
  ds.in_use -= ps.device_bytes;
  if (r.device_fault) {
    ds.healthy = false;
    ds.free_slots = 0;
  } else {
    ++ds.free_slots;
  }
  ps.report.staging = r.staging;
  ps.report.bytes_registered = r.bytes_registered;
  ps.report.h2d = r.h2d;
  ps.report.kernels = r.kernels;
  ps.report.d2h = r.d2h;
  if (r.producer_failed) {  // streamed: nothing ran on the device
    --job.active;           // the slot's count; drop() ends the partition's
    return drop(k, r.error, r.message);
  }
  if (r.error) {
    finished(k, Error{r.error, "job '" + job.job.name + "' partition " + std::to_string(k.part) +
                                   " on " + r.message});
    return pump();
  }
  // Bounce copies into pageable destinations, then the workload's check, on
  // workers: the slot is free already. A large output is copied in pieces
  // on several workers at once (one memcpy thread moves ~10 GB/s, a GPU
  // returns 55); the last piece to finish runs the check.
  ps.phase = PartPhase::finishing;
  const auto& p = job.job.partitions[k.part];
  struct Piece {
    std::byte* dst;
    const std::byte* src;
    std::size_t bytes;
  };
  std::vector<Piece> pieces;
  std::size_t b = ps.input_blocks;
  for (const auto& out : p.outputs) {
    if (out.pinned) continue;
    const std::byte* src = ps.blocks[b++].data();
    const std::size_t count =
        std::clamp<std::size_t>(out.bytes / kBytesPerWorkerTask, 1, worker_count_);
    for (std::size_t i = 0; i < count; ++i) {
      const auto [lo, hi] = ProducerTask{i, count}.range(out.bytes, 64);  // same split rule
      pieces.push_back({out.destination + lo, src + lo, hi - lo});
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
        const Piece& c = pieces[i];
        if (c.bytes >= kNontemporalStoresFrom)
          detail::nontemporal_copy(c.dst, c.src, c.bytes);
        else
          std::memcpy(c.dst, c.src, c.bytes);
        return std::error_code{};
      },
      [this, k, &p, verify = job.job.verify](std::error_code) {
        Error e;
        std::string thrown;
        if (verify)
          if (auto ec = detail::guarded_call(thrown, verify, p, k.part))
            e = Error{ec, "partition " + std::to_string(k.part) +
                              (thrown.empty() ? " failed verification: " + ec.message()
                                              : ": its verify threw: " + thrown)};
        asio::post(io_, [this, k, e = std::move(e)]() mutable { finished(k, std::move(e)); });
      });
  pump();
}

void EngineCore::finished(const Key& k, Error error) {
  auto& job = *jobs_.at(k.seq);
  auto& ps = job.parts[k.part];
  ps.blocks.clear();                          // back to the pool, budget released
  job.job.partitions[k.part].inputs.clear();  // pinned inputs go back to their pool
  ps.phase = PartPhase::done;
  --prepared_;
  --job.active;
  if (error) {
    fail(job, std::move(error));
  } else {
    --job.remaining;
    if (job.job.progress)
      asio::post(job.handler_executor,
                 [f = job.job.progress, done = job.parts.size() - job.remaining,
                  total = job.parts.size()] { f(done, total); });
  }
  maybe_complete(k.seq);
  pump();
}

void EngineCore::drop_queued(JobState& job) {
  for (auto it = to_prepare_.begin(); it != to_prepare_.end();)
    it = it->seq == job.seq ? to_prepare_.erase(it) : std::next(it);
  // Blocks not yet requested never will be; their partitions end from the
  // queue (posted: this may run inside produced() or launched()).
  for (auto it = to_allocate_.begin(); it != to_allocate_.end();) {
    if (it->seq != job.seq) {
      ++it;
      continue;
    }
    asio::post(io_, [this, k = *it] { produced(k, make_error_code(Errc::cancelled), {}); });
    it = to_allocate_.erase(it);
  }
  for (auto it = ready_.begin(); it != ready_.end();) {
    if (it->seq == job.seq) {
      auto& ps = job.parts[it->part];
      ps.blocks.clear();
      ps.phase = PartPhase::dropped;
      --prepared_;
      it = ready_.erase(it);
    } else {
      ++it;
    }
  }
  // Workers going on with its shares take no more.
  for (auto& [k, run] : producing_)
    if (k.seq == job.seq) run->stop = true;
  // Budget waits still pending complete with operation_aborted.
  for (auto& ps : job.parts)
    if (ps.cancel) ps.cancel->emit(asio::cancellation_type::all);
}

void EngineCore::fail(JobState& job, Error error) {
  if (!job.failure && !job.cancelled) job.failure = std::move(error);
  drop_queued(job);
}

void EngineCore::cancel(std::uint64_t seq) {
  auto* job = find(seq);
  // A failed job is already dropping its queue; cancelling it now would
  // report operation_aborted and hide the failure its caller must read.
  if (!job || job->cancelled || job->failure) return;
  job->cancelled = true;
  drop_queued(*job);
  maybe_complete(seq);
}

// Partitions no healthy permitted device can run fail their job. Not while
// some of its partitions are still on a device: a sibling partition may have
// reported the device's fault first, and the job's own in-flight partition
// (possibly the faulting kernel) is the failure its caller must read. Each
// completion pumps again, so the job fails as soon as they are back.
void EngineCore::fail_unschedulable() {
  std::vector<std::uint64_t> doomed;
  for (auto& [seq, job] : jobs_) {
    if (job->failure || job->cancelled) continue;
    if (std::any_of(job->parts.begin(), job->parts.end(),
                    [](const PartState& ps) { return ps.phase == PartPhase::running; }))
      continue;
    // Partitions fit only the devices whose budget holds them: if the
    // only such device faulted, the others would never take them. Only
    // those still to be scheduled count (finishing ones left their device).
    std::size_t largest = 0, waiting = 0;
    for (const auto& ps : job->parts)
      if (ps.phase == PartPhase::queued || ps.phase == PartPhase::preparing ||
          ps.phase == PartPhase::ready) {
        largest = std::max(largest, ps.device_bytes);
        ++waiting;
      }
    if (waiting == 0) continue;
    bool runnable = false;
    for (std::size_t d = 0; d < dev_.size(); ++d)
      if (dev_[d].healthy && allowed(*job, d) && largest <= dev_[d].budget) runnable = true;
    if (!runnable && (job->remaining > 0)) doomed.push_back(seq);
  }
  for (auto seq : doomed) {
    auto& job = *jobs_.at(seq);
    fail(job,
         Error{Errc::device_fault,
               "job '" + job.job.name + "': no healthy device left that may run its partitions"});
    maybe_complete(seq);
  }
}

void EngineCore::maybe_complete(std::uint64_t seq) {
  auto it = jobs_.find(seq);
  if (it == jobs_.end()) return;
  auto& job = *it->second;
  const bool over = job.remaining == 0 || job.cancelled || job.failure;
  if (!over || job.active > 0) return;

  JobReport r;
  r.name = job.job.name;
  r.partitions = job.parts.size();
  r.partitions_done = job.parts.size() - job.remaining;
  r.wall_ms = ms_since(job.start);
  const auto pool_now = pool_->stats();
  r.pinned_slabs_grown = pool_now.pinned_allocations - job.pool_at_start.pinned_allocations;
  r.pinned_bytes_grown = pool_now.bytes_pinned > job.pool_at_start.bytes_pinned
                             ? pool_now.bytes_pinned - job.pool_at_start.bytes_pinned
                             : 0;
  r.h2d_gbps_model = config_.h2d_gbps;
  r.d2h_gbps_model = config_.d2h_gbps;
  r.device_busy.assign(set_.size(), 0.0);
  for (std::size_t d = 0; d < set_.size(); ++d) r.device_names.push_back(set_[d].info().name);
  std::vector<bool> ran(set_.size(), false);  // ran a partition of this job
  double bound = 0, longest_part = 0;
  for (auto& ps : job.parts) {
    if (ps.phase != PartPhase::done) continue;
    const double t_in = ps.report.bytes_in / (config_.h2d_gbps * 1e6);
    const double t_out = ps.report.bytes_out / (config_.d2h_gbps * 1e6);
    const double longest = std::max({t_in, ps.report.kernels.ms, t_out});
    bound += longest;
    longest_part = std::max(longest_part, longest);
    r.fill_drain_ms = std::max(r.fill_drain_ms, t_in + ps.report.kernels.ms + t_out - longest);
    if (ps.report.device >= 0) {
      r.device_busy[static_cast<std::size_t>(ps.report.device)] += ps.report.kernels.ms;
      ran[static_cast<std::size_t>(ps.report.device)] = true;
    }
    r.parts.push_back(ps.report);
  }
  // Spread over the devices that could take the work: those the job
  // allows, less any that faulted without running a partition of it. But
  // never below one partition's longest stage (fewer partitions than
  // devices leave devices idle).
  std::size_t devices_allowed = 0;
  for (std::size_t d = 0; d < set_.size(); ++d)
    devices_allowed += allowed(job, d) && (dev_[d].healthy || ran[d]);
  r.bound_ms = std::max(bound / static_cast<double>(std::max<std::size_t>(1, devices_allowed)),
                        longest_part);
  for (auto& b : r.device_busy) b = r.wall_ms > 0 ? b / r.wall_ms : 0;

  std::error_code ec;
  if (job.cancelled) {
    ec = operation_aborted();
    r.error = "job '" + job.job.name + "' cancelled after " + std::to_string(r.partitions_done) +
              " of " + std::to_string(r.partitions) + " partitions";
  } else if (job.failure) {
    ec = job.failure.code;
    r.error = job.failure.what();
  }
  auto handler = std::move(job.handler);
  auto ex = std::move(job.handler_executor);
  jobs_.erase(it);
  complete(std::move(handler), ex, ec, std::move(r));

  if (shutting_down_ && jobs_.empty()) {
    for (auto& [h, hex] : shutdown_waiters_)
      asio::post(hex, [h = std::move(h)]() mutable { std::move(h)(boost::system::error_code{}); });
    shutdown_waiters_.clear();
  }
}

void EngineCore::shutdown(ShutdownHandler handler, asio::any_io_executor handler_executor) {
  const auto ex = tracked(handler_executor);
  asio::post(io_, [this, h = std::move(handler), ex]() mutable {
    shutting_down_ = true;
    if (jobs_.empty())
      asio::post(ex, [h = std::move(h)]() mutable { std::move(h)(boost::system::error_code{}); });
    else
      shutdown_waiters_.emplace_back(std::move(h), ex);
  });
}

}  // namespace detail

Engine::Engine(Tag, executor_type executor, std::unique_ptr<detail::EngineCore> core)
    : executor_(std::move(executor)), core_(std::move(core)) {}

namespace {
// The engine's calls on its caller's thread leave the caller's current GPU
// as they found it (devices::KeepCurrentDevice).
bool may_use_cuda(const Config& c) {
  return c.devices.backend != devices::BackendChoice::host;
}
}  // namespace

Engine::Engine(executor_type executor, Config config) : executor_(std::move(executor)) {
  devices::KeepCurrentDevice keep(may_use_cuda(config));
  auto core = detail::EngineCore::create(std::move(config));
  if (!core) throw std::system_error(core.error().code, core.error().what());
  core_ = std::move(*core);
}

Result<std::unique_ptr<Engine>> Engine::create(executor_type executor, Config config) {
  devices::KeepCurrentDevice keep(may_use_cuda(config));
  auto core = detail::EngineCore::create(std::move(config));
  if (!core) return std::move(core).error();
  return std::make_unique<Engine>(Tag{}, std::move(executor), std::move(*core));
}

Engine::~Engine() {
  devices::KeepCurrentDevice keep(core_->devices().backend() == devices::Backend::cuda);
  core_.reset();
}

const devices::DeviceSet& Engine::devices() const noexcept {
  return core_->devices();
}
const Config& Engine::config() const noexcept {
  return core_->config();
}
EngineStats Engine::stats() const {
  return core_->stats();
}

void Engine::submit_erased(Job job, boost::asio::any_completion_handler<SubmitSignature> handler,
                           executor_type handler_executor) {
  core_->submit(std::move(job), std::move(handler), std::move(handler_executor));
}

void Engine::shutdown_erased(boost::asio::any_completion_handler<ShutdownSignature> handler,
                             executor_type handler_executor) {
  core_->shutdown(std::move(handler), std::move(handler_executor));
}

}  // namespace stoker::engine

namespace stoker::engine {

std::size_t Engine::lookahead() const noexcept {
  return core_->lookahead();
}

std::error_code Engine::reserve_pinned(const Partition& like, std::size_t count) {
  devices::KeepCurrentDevice keep(core_->devices().backend() == devices::Backend::cuda);
  return core_->reserve_pinned(like, count);
}

void Engine::reserve_device(const Partition& like) {
  devices::KeepCurrentDevice keep(core_->devices().backend() == devices::Backend::cuda);
  core_->reserve_device(like);
}

std::size_t Engine::pinned_bytes(const Partition& p) {
  // The pool rounds each block up to its size class (one too large for any
  // class is refused by the pool, and counts as asked).
  const auto taken = [](std::size_t b) {
    return std::max(b, alloc::PinnedPool::block_capacity(b));
  };
  std::size_t total = 0;
  for (const auto& in : p.inputs)
    if (in.kind == InputKind::produced) total += taken(in.bytes);
  for (const auto& out : p.outputs)
    if (!out.pinned) total += taken(out.bytes);
  return total;
}

}  // namespace stoker::engine
