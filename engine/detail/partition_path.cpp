// A partition's path through the engine, from submission to its job's
// handler, in the order it is taken (docs/DESIGN.md draws it). Everything
// here runs on the engine thread, but for submit()'s first half.
#include <algorithm>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/prefer.hpp>

#include "common/elapsed.hpp"
#include "engine/detail/engine_core.hpp"
#include "engine/detail/guarded_call.hpp"

namespace asio = boost::asio;

namespace stoker::engine::detail {
namespace {

using common::ms_since;

// Posts a submit handler to its associated executor, never runs it inline.
void post_handler(SubmitHandler handler, const asio::any_io_executor& ex, std::error_code ec,
                  JobReport report) {
  asio::post(ex, [h = std::move(handler), ec, r = std::move(report)]() mutable {
    asio::get_associated_cancellation_slot(h).clear();
    std::move(h)(boost::system::error_code(ec), std::move(r));
  });
}

// The report of a job that never started.
JobReport not_started(const Job& job, std::string error) {
  JobReport r;
  r.name = job.name;
  r.partitions = job.partitions.size();
  r.error = std::move(error);
  return r;
}

}  // namespace

void EngineCore::submit(Job job, SubmitHandler handler, asio::any_io_executor ex) {
  // Bad input is rejected before any device work, on the caller's thread.
  if (auto e = validate(job))
    return post_handler(std::move(handler), ex, e.code, not_started(job, e.what()));
  auto state =
      std::make_unique<JobState>(std::move(job), std::move(handler),
                                 asio::prefer(ex, asio::execution::outstanding_work.tracked));
  state->start = Clock::now();
  state->pool_at_start = staging_->pool().stats();
  // The cancellation slot is installed here, on the initiating thread, as
  // Asio's own operations do: signals and slots are not thread-safe, and the
  // caller emits from its side (the handler's executor). Installing it on the
  // engine thread would race with such an emit. The handler
  // only posts, so it may run on any thread; a cancel that arrives after the
  // job completed finds nothing and does nothing.
  const auto seq = jobs_.next_seq();
  state->seq = seq;
  state->span = nvtx::Span(nvtx::Stage::job, seq, state->job.name.c_str());
  auto slot = asio::get_associated_cancellation_slot(state->handler);
  if (slot.is_connected())
    slot.assign([relay = relay_, seq](asio::cancellation_type) { relay->cancel(seq); });
  asio::post(io_, [this, state = std::move(state)]() mutable {
    Error refused;
    if (shutting_down_)
      refused = {Errc::shutting_down,
                 "engine is shutting down; job '" + state->job.name + "' not started"};
    else
      refused = keys_->admit(state->job);
    if (refused)
      return post_handler(std::move(state->handler), state->handler_executor, refused.code,
                          not_started(state->job, refused.what()));
    start(std::move(state));
  });
}

void EngineCore::start(std::unique_ptr<JobState> state) {
  auto& job = jobs_.add(std::move(state));
  // Before the first producer ends: each device this job may use grows its
  // memory pool to a full pipeline of the job's largest partition (the pool
  // keeps it: its release threshold is the device budget).
  std::size_t largest = 0;
  for (const auto& ps : job.parts) largest = std::max(largest, ps.device_bytes);
  slots_->warm_pools(job.job, largest);
  pump();
}

void EngineCore::pump() {
  while (const auto k = jobs_.next_to_prepare()) prepare(*k);
  // Devices with the most free slots pull first; each takes the best-ranked
  // ready partition it may run and has device memory for (a produced one
  // first: a slot should not wait on a producer while another is ready).
  bool progress = true;
  while (progress && jobs_.runnable_waiting()) {
    progress = false;
    for (auto d : slots_->by_free_slots()) {
      if (slots_->free_slots(d) == 0) continue;
      const auto k = jobs_.take_runnable([&](const JobState& job, const PartState& ps) {
        return job.allows(d) && slots_->fits_now(d, ps.device_bytes);
      });
      if (!k) continue;
      dispatch(d, *k);
      progress = true;
    }
  }
  // Only a device fault leaves a job nowhere to run (affinities name
  // devices that exist, sizes were checked at submission), and the scan
  // visits every job: with all devices healthy it would only make each pump
  // cost as much as the jobs queued (10,000 small jobs: half the time).
  if (slots_->any_faulted() && jobs_.any_waiting()) fail_unschedulable();
}

// Pinned storage first (waiting on the budget: backpressure), then the
// producer on the workers. A partition's blocks (one per produced input, one
// per pageable output's landing area) are requested back to back with no
// other request between them: the budget they wait for is held only by
// partitions that have everything they need, so a small budget cannot
// deadlock.
void EngineCore::prepare(const PartKey& k) {
  auto& job = jobs_.at(k.seq);
  auto& ps = job.parts[k.part];
  const auto& p = job.job.partitions[k.part];
  jobs_.advance(job, ps, PartEvent::prepare);
  ps.cancel = std::make_unique<asio::cancellation_signal>();
  for (const auto& in : p.inputs)
    if (in.kind == InputKind::produced) ps.block_bytes.push_back(in.bytes);
  ps.input_blocks = ps.block_bytes.size();
  for (const auto& out : p.outputs)
    if (!out.pinned) ps.block_bytes.push_back(out.bytes);
  if (ps.block_bytes.empty()) return produced(k, {}, {});
  BlockRequest r;
  r.key = k;
  r.sizes = ps.block_bytes;
  r.cancel = ps.cancel->slot();
  r.wanted = [&job] { return !job.over(); };  // a preparing partition keeps its job alive
  r.done = [this, k](Result<std::vector<alloc::PinnedBlock>> blocks) {
    blocks_granted(k, std::move(blocks));
  };
  staging_->request_blocks(std::move(r));
}

void EngineCore::blocks_granted(const PartKey& k, Result<std::vector<alloc::PinnedBlock>> blocks) {
  if (!blocks) return produced(k, blocks.error().code, blocks.error().what());
  jobs_.part(k).blocks = std::move(*blocks);
  run_producer(k);
}

void EngineCore::run_producer(const PartKey& k) {
  auto& job = jobs_.at(k.seq);
  auto& ps = job.parts[k.part];
  const auto& p = job.job.partitions[k.part];
  if (job.over()) return produced(k, make_error_code(Errc::cancelled), {});
  if (!p.producer && !p.split_producer) return produced(k, {}, {});
  ProduceRequest r;
  r.key = k;
  for (std::size_t i = 0; i < ps.input_blocks; ++i) r.spans.push_back(ps.blocks[i].bytes());
  r.plain = p.producer;
  if (!p.producer) {
    r.split = p.split_producer;
    r.tasks = p.producer_tasks;
    if (p.share_align != 0 && config_.early_upload) r.share_align = p.share_align;
  }
  r.done = [this, k](ProducerOutcome out) {
    auto& job = jobs_.at(k.seq);
    auto& report = job.parts[k.part].report.producer;
    if (out.first_start != Clock::time_point{}) {
      report.start_ms = ms_since(job.start, out.first_start);
      report.ms = std::chrono::duration<double, std::milli>(out.last_end - out.first_start).count();
    }
    produced(k, out.error, std::move(out.message));
  };
  ps.feed = staging_->produce(std::move(r));
  // Streamed: a slot may take it now and copy its shares as they end.
  if (ps.feed) {
    jobs_.queue_early(k);
    pump();
  }
}

void EngineCore::produced(const PartKey& k, std::error_code ec, std::string message) {
  auto& job = jobs_.at(k.seq);
  auto& ps = job.parts[k.part];
  ps.cancel.reset();
  const bool failed = ec || job.over();
  // Streamed and on a device already: the launch, which ends after this,
  // ends the partition (its feeder was told of a failure).
  if (ps.phase == PartPhase::streaming)
    return jobs_.advance(job, ps, failed ? PartEvent::production_failed : PartEvent::produced);
  jobs_.unqueue_early(k);
  ps.feed.reset();  // no slot took it while it was produced: copied whole
  if (failed) {
    jobs_.advance(job, ps, PartEvent::production_failed);
    return drop(k, ec, message);
  }
  jobs_.advance(job, ps, PartEvent::produced);
  ps.ready_at = Clock::now();
  jobs_.queue_ready(k);  // in the lookahead while it waits for a slot
  pump();
}

void EngineCore::dispatch(std::size_t d, const PartKey& k) {
  auto& job = jobs_.at(k.seq);
  auto& ps = job.parts[k.part];
  const auto& p = job.job.partitions[k.part];
  jobs_.advance(job, ps, PartEvent::dispatched);
  ps.slot = slots_->take(d, ps.device_bytes);
  ps.report.device = static_cast<int>(d);
  ps.report.slot = ps.slot.slot();
  // Taken while still being produced (streamed): it never waited.
  ps.report.queue_wait_ms = ps.feed ? 0.0 : ms_since(ps.ready_at);

  LaunchRequest req;
  req.slot = ps.slot.slot();
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
  slots_->runner(d).launch(std::move(req), std::move(on_inputs_copied), [this, k](LaunchResult r) {
    asio::post(io_, [this, k, r = std::move(r)]() mutable { launch_ended(k, std::move(r)); });
  });
}

void EngineCore::inputs_copied(const PartKey& k) {
  // Late (the partition has ended) is harmless: the block is gone already.
  if (auto* job = jobs_.find(k.seq)) {
    auto& ps = job->parts[k.part];
    for (std::size_t i = 0; i < std::min(ps.input_blocks, ps.blocks.size()); ++i)
      ps.blocks[i].reset();
  }
}

void EngineCore::launch_ended(const PartKey& k, LaunchResult r) {
  auto& job = jobs_.at(k.seq);
  auto& ps = job.parts[k.part];
  if (r.device_fault) slots_->faulted(ps.slot.device());
  ps.slot.release();
  ps.report.staging = r.staging;
  ps.report.bytes_registered = r.bytes_registered;
  ps.report.h2d = r.h2d;
  ps.report.kernels = r.kernels;
  ps.report.kernel_steps_ms = r.kernel_steps_ms;
  ps.report.d2h = r.d2h;
  if (r.producer_failed) {  // streamed: nothing ran on the device
    jobs_.advance(job, ps, PartEvent::abandoned);
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

void EngineCore::copy_out(const PartKey& k) {
  auto& job = jobs_.at(k.seq);
  auto& ps = job.parts[k.part];
  jobs_.advance(job, ps, PartEvent::device_done);
  const auto& p = job.job.partitions[k.part];
  std::vector<BounceCopy> copies;
  std::size_t b = ps.input_blocks;
  for (const auto& out : p.outputs)
    if (!out.pinned) copies.push_back({out.destination, ps.blocks[b++].data(), out.bytes});
  // The last copy to end runs the workload's check, on that worker.
  staging_->copy_out(copies, [this, k, &p, verify = job.job.verify, &name = job.job.name] {
    Error e;
    std::string thrown;
    if (verify)
      if (auto ec = detail::guarded_call(thrown, verify, p, k.part))
        e = Error{ec, "job '" + name + "' partition " + std::to_string(k.part) +
                          (thrown.empty() ? " failed verification: " + ec.message()
                                          : ": its verify threw: " + thrown)};
    asio::post(io_, [this, k, e = std::move(e)]() mutable { finished(k, std::move(e)); });
  });
}

void EngineCore::finished(const PartKey& k, Error error) {
  auto& job = jobs_.at(k.seq);
  auto& ps = job.parts[k.part];
  ps.blocks.clear();                          // back to the pool, budget released
  job.job.partitions[k.part].inputs.clear();  // pinned inputs go back to their pool
  jobs_.advance(job, ps, PartEvent::finished);
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

void EngineCore::drop(const PartKey& k, std::error_code ec, const std::string& message) {
  auto& job = jobs_.at(k.seq);
  auto& ps = job.parts[k.part];
  ps.blocks.clear();
  ps.feed.reset();
  if (ec && !job.over())
    fail(job, Error{ec, "job '" + job.job.name + "' partition " + std::to_string(k.part) + ": " +
                            message});
  end_job_if_over(k.seq);
  pump();
}

void EngineCore::end_job_if_over(std::uint64_t seq) {
  auto* found = jobs_.find(seq);
  if (!found) return;
  auto& job = *found;
  if (!(job.remaining == 0 || job.over()) || job.active > 0) return;

  ReportContext c;
  c.pool_now = staging_->pool().stats();
  c.h2d_gbps = config_.h2d_gbps;
  c.d2h_gbps = config_.d2h_gbps;
  for (std::size_t d = 0; d < set_.size(); ++d) {
    c.device_names.push_back(set_[d].info().name);
    c.device_healthy.push_back(slots_->healthy(d));
  }
  auto r = JobTable::report(job, c);
  const std::error_code ec = job.cancelled ? operation_aborted() : job.failure.code;
  auto handler = std::move(job.handler);
  auto ex = std::move(job.handler_executor);
  const auto srs = job.job.srs.residency();
  jobs_.erase(seq);
  post_handler(std::move(handler), ex, ec, std::move(r));
  keys_->job_done(srs);

  if (shutting_down_ && jobs_.empty()) {
    for (auto& [h, hex] : shutdown_waiters_)
      asio::post(hex, [h = std::move(h)]() mutable { std::move(h)(boost::system::error_code{}); });
    shutdown_waiters_.clear();
  }
}

}  // namespace stoker::engine::detail
