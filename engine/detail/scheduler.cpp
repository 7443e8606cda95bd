#include <algorithm>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/prefer.hpp>

#include "engine/detail/engine_core.hpp"

namespace asio = boost::asio;

namespace stoker::engine::detail {
namespace {

// Posts a submit handler to its associated executor, never runs it inline.
void post_handler(SubmitHandler handler, const asio::any_io_executor& ex, std::error_code ec,
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

void EngineCore::submit(Job job, SubmitHandler handler, asio::any_io_executor ex) {
  JobReport early;
  early.name = job.name;
  early.partitions = job.partitions.size();
  // Bad input is rejected before any device work, on the caller's thread.
  if (auto e = validate(job)) {
    early.error = e.what();
    return post_handler(std::move(handler), ex, e.code, std::move(early));
  }
  auto state = std::make_unique<JobState>(std::move(job), std::move(handler), tracked(ex));
  state->start = Clock::now();
  state->pool_at_start = pool_->stats();
  // The cancellation slot is installed here, on the initiating thread, as
  // Asio's own operations do: signals and slots are not thread-safe, and the
  // caller emits from its side (the handler's executor). Installing it on the
  // engine thread would race with such an emit. The handler
  // only posts, so it may run on any thread; a cancel that arrives after the
  // job completed finds nothing and does nothing.
  const auto seq = next_seq_.fetch_add(1, std::memory_order_relaxed);
  state->seq = seq;
  state->span = nvtx::Span(nvtx::Stage::job, seq, state->job.name.c_str());
  auto slot = asio::get_associated_cancellation_slot(state->handler);
  if (slot.is_connected())
    slot.assign([relay = relay_, seq](asio::cancellation_type) { relay->cancel(seq); });
  asio::post(io_, [this, state = std::move(state)]() mutable {
    if (shutting_down_) {
      JobReport r;
      r.name = state->job.name;
      r.partitions = state->job.partitions.size();
      r.error = "engine is shutting down; job '" + state->job.name + "' not started";
      return post_handler(std::move(state->handler), state->handler_executor,
                          make_error_code(Errc::shutting_down), std::move(r));
    }
    if (auto e = admit_srs(state->job)) {
      JobReport r;
      r.name = state->job.name;
      r.partitions = state->job.partitions.size();
      r.error = e.what();
      return post_handler(std::move(state->handler), state->handler_executor, e.code, std::move(r));
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
      if (job.parts[it->part].device_bytes > ds.capacity() - ds.in_use) continue;
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

void EngineCore::produced(const Key& k, std::error_code ec, std::string message) {
  auto& job = *find(k.seq);
  auto& ps = job.parts[k.part];
  ps.cancel.reset();
  const bool failed = ec || job.cancelled || job.failure;
  // Streamed and on a device already: the launch, which ends after this,
  // ends the partition (its feeder was told of a failure).
  if (ps.phase == PartPhase::streaming)
    return advance(job, ps, failed ? PartEvent::production_failed : PartEvent::produced);
  early_uploads_.erase(k);
  ps.feed.reset();  // no slot took it while it was produced: copied whole
  if (failed) {
    advance(job, ps, PartEvent::production_failed);
    return drop(k, ec, message);
  }
  advance(job, ps, PartEvent::produced);
  ps.ready_at = Clock::now();
  ready_.insert(k);  // still counted in prepared_ while it waits for a slot
  pump();
}

void EngineCore::drop(const Key& k, std::error_code ec, const std::string& message) {
  auto& job = *find(k.seq);
  auto& ps = job.parts[k.part];
  ps.blocks.clear();
  ps.feed.reset();
  if (ec && !job.cancelled && !job.failure)
    fail(job, Error{ec, "job '" + job.job.name + "' partition " + std::to_string(k.part) + ": " +
                            message});
  end_job_if_over(k.seq);
  pump();
}

void EngineCore::dispatch(std::size_t d, const Key& k) {
  auto& job = *jobs_.at(k.seq);
  auto& ps = job.parts[k.part];
  const auto& p = job.job.partitions[k.part];
  auto& ds = dev_[d];
  advance(job, ps, PartEvent::dispatched);
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
  req.index = k.part;
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
                          launch_ended(d, slot, k, std::move(r));
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

void EngineCore::launch_ended(std::size_t d, int slot, const Key& k, LaunchResult r) {
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
  ps.report.kernel_steps_ms = r.kernel_steps_ms;
  ps.report.d2h = r.d2h;
  if (r.producer_failed) {  // streamed: nothing ran on the device
    advance(job, ps, PartEvent::abandoned);
    return drop(k, r.error, r.message);
  }
  if (r.error) {
    finished(k, Error{r.error, "job '" + job.job.name + "' partition " + std::to_string(k.part) +
                                   " on " + r.message});
    return pump();
  }
  copy_out(k);
  pump();
}

void EngineCore::finished(const Key& k, Error error) {
  auto& job = *jobs_.at(k.seq);
  auto& ps = job.parts[k.part];
  ps.blocks.clear();                          // back to the pool, budget released
  job.job.partitions[k.part].inputs.clear();  // pinned inputs go back to their pool
  advance(job, ps, PartEvent::finished);
  if (error) {
    fail(job, std::move(error));
  } else {
    --job.remaining;
    if (job.job.progress)
      asio::post(job.handler_executor,
                 [f = job.job.progress, done = job.parts.size() - job.remaining,
                  total = job.parts.size()] { f(done, total); });
  }
  end_job_if_over(k.seq);
  pump();
}

void EngineCore::drop_queued(JobState& job) {
  for (auto it = to_prepare_.begin(); it != to_prepare_.end();)
    it = it->seq == job.seq ? to_prepare_.erase(it) : std::next(it);
  // Blocks not yet requested never will be; their partitions end from the
  // queue (posted: this may run inside produced() or launch_ended()).
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
      advance(job, ps, PartEvent::withdrawn);
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
  end_job_if_over(seq);
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
    if (std::any_of(job->parts.begin(), job->parts.end(), [](const PartState& ps) {
          return ps.phase == PartPhase::running || ps.phase == PartPhase::streaming;
        }))
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
      if (dev_[d].healthy && allowed(*job, d) && largest <= dev_[d].capacity()) runnable = true;
    if (!runnable && (job->remaining > 0)) doomed.push_back(seq);
  }
  for (auto seq : doomed) {
    auto& job = *jobs_.at(seq);
    fail(job,
         Error{Errc::device_fault,
               "job '" + job.job.name + "': no healthy device left that may run its partitions"});
    end_job_if_over(seq);
  }
}

void EngineCore::end_job_if_over(std::uint64_t seq) {
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
  r.kernel_steps = job.job.kernel_steps;
  r.device_busy.assign(set_.size(), 0.0);
  for (std::size_t d = 0; d < set_.size(); ++d) r.device_names.push_back(set_[d].info().name);
  std::vector<bool> ran(set_.size(), false);  // ran a partition of this job
  for (auto& ps : job.parts) {
    if (ps.phase != PartPhase::done) continue;
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
  set_bound(r, devices_allowed);
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
  const auto srs = job.job.srs.residency();
  jobs_.erase(it);
  post_handler(std::move(handler), ex, ec, std::move(r));
  srs_job_done(srs);

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

}  // namespace stoker::engine::detail
