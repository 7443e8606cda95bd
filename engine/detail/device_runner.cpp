#include "engine/detail/device_runner.hpp"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <utility>

#include "common/elapsed.hpp"
#include "common/start_thread.hpp"
#include "engine/detail/cpu_kernels.hpp"
#include "engine/detail/device_handles.hpp"
#include "engine/detail/enter_thread.hpp"
#include "engine/detail/guarded_call.hpp"
#include "engine/detail/input_copies.hpp"

namespace stoker::engine::detail {

DeviceRunner::DeviceRunner(devices::Device& device)
    : device_(device),
      feeder_work_(feeder_io_.get_executor()),
      launcher_work_(launcher_io_.get_executor()),
      waiter_work_(waiter_io_.get_executor()),
      copy_waiter_work_(copy_waiter_io_.get_executor()) {}

Result<std::unique_ptr<DeviceRunner>> DeviceRunner::create(devices::Device& device,
                                                           const Config& config) {
  std::unique_ptr<DeviceRunner> r(new DeviceRunner(device));
  // Bound only where each staging thread can have a local CPU of its own:
  // a container that allows one of the GPU's CPUs and many others would
  // otherwise crowd all of them onto that one.
  devices::CpuSet cpus;
  if (config.bind_threads) {
    auto near = devices::cpus_near(device.info());
    if (near.size() >= static_cast<std::size_t>(std::max(1, config.staging_threads)))
      cpus = std::move(near);
  }
  const std::string where = device_where(device);
  if (auto e = make_stream(device, config.copy_priority, r->h2d_, where)) return e;
  if (auto e = make_stream(device, config.compute_priority, r->compute_, where)) return e;
  if (auto e = make_stream(device, config.copy_priority, r->d2h_, where)) return e;
  if (auto e = r->create_slots(config.pipeline_depth, where)) return e;
  auto staging = StagingRing::create(device, r->h2d_, config, std::move(cpus), where);
  if (!staging) return staging.error();
  r->staging_ = std::move(*staging);
  // The staging buffers were pinned from a thread bound to these CPUs; a
  // set that could not be bound came back empty, and every thread of the
  // device stays where it was.
  r->cpus_ = r->staging_->cpus();
  auto clock = EventClock::create(device, r->h2d_, where);
  if (!clock) return clock.error();
  r->clock_ = std::move(*clock);
  if (Error e = r->start_threads()) return Error{e.code, where + e.what()};
  return r;
}

Error DeviceRunner::create_slots(int depth, const std::string& where) {
  using K = devices::EventKind;
  slots_.resize(static_cast<std::size_t>(depth));
  for (auto& s : slots_) {
    for (auto* e : {&s.in_ready, &s.compute_done})
      if (auto err = make_event(device_, K::ordering, *e, where)) return err;
    for (auto* e : {&s.out_done, &s.copied_in})
      if (auto err = make_event(device_, K::blocking_sync, *e, where)) return err;
    if (auto err = s.timing.create(device_, where)) return err;
  }
  return {};
}

Error DeviceRunner::start_threads() {
  const std::string n = std::to_string(device_.index());
  const std::string feeder = "thread stoker-feed-" + n + " (the device's feeder)",
                    launcher = "thread stoker-kern-" + n + " (the device's launcher)",
                    waiter = "thread stoker-wait-" + n + " (the device's waiter)",
                    copy_waiter = "thread stoker-cwait-" + n + " (the device's copy waiter)";
  // A thread the system refuses ends create(): the destructor joins those
  // started before it.
  if (Error e = common::start_thread(feeder_, feeder, [io = &feeder_io_, cpus = cpus_, n, feeder] {
        enter_thread("stoker-feed-" + n, cpus);
        run_engine_thread(*io, feeder);
      }))
    return e;
  // The launcher runs the jobs' own callables, and any thread they start
  // would inherit its mask: it stays unbound.
  if (Error e = common::start_thread(launcher_, launcher,
                                     [io = &launcher_io_, d = &device_, n, launcher] {
                                       enter_thread("stoker-kern-" + n, {});
                                       (void)d->make_current();
                                       run_engine_thread(*io, launcher);
                                     }))
    return e;
  // The waiters block on this device's events: with the device current, so
  // CUDA does not make device 0's context current on them first.
  if (Error e = common::start_thread(waiter_, waiter,
                                     [io = &waiter_io_, d = &device_, cpus = cpus_, n, waiter] {
                                       enter_thread("stoker-wait-" + n, cpus);
                                       (void)d->make_current();
                                       run_engine_thread(*io, waiter);
                                     }))
    return e;
  return common::start_thread(copy_waiter_, copy_waiter,
                              [io = &copy_waiter_io_, d = &device_, cpus = cpus_, n, copy_waiter] {
                                enter_thread("stoker-cwait-" + n, cpus);
                                (void)d->make_current();
                                run_engine_thread(*io, copy_waiter);
                              });
}

DeviceRunner::~DeviceRunner() {
  // Feeder first: whatever it still enqueues reaches the waiter before the
  // waiter is told to finish.
  feeder_work_.reset();
  if (feeder_.joinable()) feeder_.join();
  // Then the staging passes the feeder started (their last task hands its
  // launch to the launcher), then the launcher (it hands launches to the
  // waiters).
  if (staging_) staging_->join();
  launcher_work_.reset();
  if (launcher_.joinable()) launcher_.join();
  waiter_work_.reset();
  if (waiter_.joinable()) waiter_.join();
  copy_waiter_work_.reset();
  if (copy_waiter_.joinable()) copy_waiter_.join();
  // Wait for the streams here: the staging ring is a member declared after
  // them, so destroyed before them, and a copy still reading one of its
  // buffers must end first.
  h2d_.synchronize();
  compute_.synchronize();
  d2h_.synchronize();
}

void DeviceRunner::fail(Launch& l, std::error_code ec, const std::string& what) const {
  if (!l.res.error) {
    l.res.error = ec;
    l.res.message = "device " + std::to_string(device_.index()) + ": " + what + ": " + ec.message();
  }
}

void DeviceRunner::launch(LaunchRequest request, std::function<void()> inputs_copied,
                          std::function<void(LaunchResult)> done) {
  auto l = std::make_shared<Launch>();
  l->r = std::move(request);
  l->r.span = nvtx::Span(nvtx::Stage::partition, l->r.index, l->r.partition->label.c_str());
  l->inputs_copied = std::move(inputs_copied);
  l->done = std::move(done);
  boost::asio::post(feeder_io_, [this, l = std::move(l)] { begin(l); });
}

void DeviceRunner::warm_device_pool(std::size_t bytes, std::function<void()> done) {
  if (device_.backend() != devices::Backend::cuda) {  // nothing to map there
    if (done) done();
    return;
  }
  boost::asio::post(feeder_io_, [this, bytes, done = std::move(done)] {
    // Best effort: a failure here only means the first launch pays instead
    // (and reports any real shortage itself).
    if (!device_.make_current()) {
      auto mem = device_.allocate_async(bytes, h2d_);
      if (mem) device_.free_async(*mem, h2d_);
      if (done) (void)h2d_.synchronize();
    }
    if (done) done();
  });
}

// Runs on the feeder thread: the partition's device memory, its direct
// copies (pinned, registered, streamed shares) and its staging pass,
// started. On an error the launch still ends (enqueue_compute records the
// slot's events so the waiter and the slot move on).
void DeviceRunner::begin(const std::shared_ptr<Launch>& lp) {
  Launch& l = *lp;
  const LaunchRequest& r = l.r;
  LaunchResult& res = l.res;
  const nvtx::ScopedRange range(nvtx::Stage::h2d, r.index);
  // Queued on the launcher before anything can make the launch ready.
  l.seq = launches_begun_++;
  boost::asio::post(launcher_io_, [this, lp] { in_order_.push_back(lp); });
  if (auto ec = device_.make_current()) fail(l, ec, "cudaSetDevice");
  allocate(l);

  // H2D
  // A streamed partition's span starts when its first share has ended:
  // waiting for the producer is not copy time.
  if (r.feed && !res.error && !r.feed->wait_for(0)) take_producer_failure(*r.feed, res);
  if (!res.error) {
    // Registrations first, before the copy stream's start event, so that
    // they count as staging (host-side preparation of pageable inputs),
    // not as H2D time.
    l.stage_start = Clock::now();
    const std::vector<DirectCopy> direct =
        plan_input_copies(*staging_, r, l.device_memory, l.layout.in_off, l.pass, res);
    l.staged = !res.registrations.empty() || l.pass.chunks != 0;
    if (l.pass.chunks != 0)
      start_pass(lp);
    else
      l.staged_at = Clock::now();
    if (!direct.empty() || r.feed) send_direct(l, direct);
  }
  // Whatever failed, the launch ends only after the producer has: until
  // then its shares may still write the blocks the engine frees with the
  // partition.
  if (r.feed) r.feed->wait_all();
  arrive(l);
}

void DeviceRunner::allocate(Launch& l) {
  l.layout = DeviceLayout::of(*l.r.partition);
  if (l.res.error) return;
  auto mem = device_.allocate_async(l.layout.bytes, h2d_);
  if (mem)
    l.device_memory = static_cast<std::byte*>(*mem);
  else
    fail(l, mem.error().code, mem.error().what());
}

void DeviceRunner::start_pass(const std::shared_ptr<Launch>& lp) {
  // The pass runs beside the rest of this half, and beside the previous
  // and next partitions' passes: the launch goes on when both have
  // ended. Its chunks may be sent before the previous launch's input
  // events are recorded: while one thread still copies that launch's
  // last chunk, the others go on here (and to the passes after), so
  // those events complete late by the H2D time of whatever the others
  // send meanwhile (a straggling chunk under load took up to 13 ms).
  lp->pending.store(2, std::memory_order_relaxed);
  Launch* const l = lp.get();
  // The pass's tasks keep the whole launch alive.
  staging_->start(
      std::shared_ptr<StagingPass>(lp, &lp->pass), lp->r.index, [this, l] { return start_h2d(*l); },
      [this, l] {
        l->staged_at = Clock::now();
        arrive(*l);
      });
}

void DeviceRunner::send_direct(Launch& l, const std::vector<DirectCopy>& direct) {
  // A whole input sent before the previous launch's input events would
  // hold up that launch's kernels for as long as its copy takes.
  wait_for_inputs_recorded(l.seq);
  if (auto ec = start_h2d(l)) fail(l, ec, "record");
  for (std::size_t i = 0; i < direct.size() && !l.res.error; ++i)
    if (auto ec = h2d_.copy(direct[i].dst, direct[i].src, direct[i].bytes))
      fail(l, ec, "H2D copy of " + direct[i].what);
  if (l.r.feed && !l.res.error)
    copy_streamed_shares(h2d_, device_.index(), l.r, l.device_memory, l.layout.in_off, l.res);
}

void DeviceRunner::wait_for_inputs_recorded(std::uint64_t seq) {
  for (auto v = inputs_recorded_.load(std::memory_order_acquire); v < seq;
       v = inputs_recorded_.load(std::memory_order_acquire))
    inputs_recorded_.wait(v, std::memory_order_acquire);
}

std::error_code DeviceRunner::start_h2d(Launch& l) {
  // The first to send records it. Another thread's copy may still slip in
  // between the exchange and the record: the span then starts one chunk
  // late.
  if (l.h2d_started.load(std::memory_order_relaxed) ||
      l.h2d_started.exchange(true, std::memory_order_acq_rel))
    return {};
  return h2d_.record(slots_[static_cast<std::size_t>(l.r.slot)].timing.h2d0);
}

void DeviceRunner::arrive(Launch& l) {
  if (l.pending.fetch_sub(1, std::memory_order_acq_rel) == 1)
    boost::asio::post(launcher_io_, [this] { enqueue_ready(); });
}

void DeviceRunner::enqueue_ready() {
  // In dispatch order, not in the order the launches became ready: a short
  // pass that ends before a long one must not put its kernels (and its
  // input events) ahead of an earlier partition's (completing launches as
  // they became ready ran kernels in the order 1 2 0).
  while (!in_order_.empty() && in_order_.front()->pending.load(std::memory_order_acquire) == 0) {
    const auto l = std::move(in_order_.front());
    in_order_.pop_front();
    enqueue_compute(*l);
  }
}

// Runs on the launcher thread, once the feeder's half and the staging pass
// have both ended: the input events, the kernels and the D2H, then the
// launch goes to the waiters.
void DeviceRunner::enqueue_compute(Launch& l) {
  // A job's kernel callable may have made another device current.
  if (auto ec = device_.make_current()) fail(l, ec, "cudaSetDevice");
  if (l.pass.failed.load(std::memory_order_relaxed))
    fail(l, l.pass.error, "staging " + l.pass.failed_what);
  record_inputs(l);
  enqueue_kernels(l);
  enqueue_d2h(l);
  hand_to_waiters(l);
}

void DeviceRunner::record_inputs(Launch& l) {
  auto& slot = slots_[static_cast<std::size_t>(l.r.slot)];
  if (l.staged) {
    // From the pass's first chunk, or from the registrations before it.
    const bool from_pass = l.res.registrations.empty() && l.pass.started_at != Clock::time_point{};
    const auto start = from_pass ? l.pass.started_at : l.stage_start;
    l.res.staging = {common::ms_since(l.r.job_start, start), common::ms_since(start, l.staged_at)};
  }
  if (auto ec = start_h2d(l)) fail(l, ec, "record");  // a launch with nothing to copy
  // Recorded after every chunk's copy of this partition, and perhaps after
  // chunks of the next partitions' passes, sent while this pass's last
  // chunk was being copied: the events then complete a little later, never
  // early.
  if (auto ec = h2d_.record(slot.timing.h2d1)) fail(l, ec, "record");
  if (auto ec = h2d_.record(slot.in_ready)) fail(l, ec, "record");
  if (auto ec = h2d_.record(slot.copied_in)) fail(l, ec, "record");
  // The feeder may now send the next launch's direct copies.
  inputs_recorded_.store(l.seq + 1, std::memory_order_release);
  inputs_recorded_.notify_all();
}

void DeviceRunner::enqueue_kernels(Launch& l) {
  auto& slot = slots_[static_cast<std::size_t>(l.r.slot)];
  const nvtx::ScopedRange range(nvtx::Stage::kernels, l.r.index);
  if (auto ec = compute_.wait(slot.in_ready)) fail(l, ec, "stream wait");
  if (auto ec = compute_.record(slot.timing.k0)) fail(l, ec, "record");
  if (!l.res.error) {
    KernelBuffers buffers = l.layout.buffers(l.device_memory, *l.r.partition);
    if (device_.backend() == devices::Backend::cuda) {
      enqueue_gpu_kernels(l, buffers);
    } else {
      l.res.cpu_kernels_threw = std::make_shared<std::string>();
      l.res.host_marks = std::make_shared<std::vector<Clock::time_point>>();
      if (auto ec =
              enqueue_cpu_kernels(device_, compute_, std::move(buffers), l.r.partition->work.cpu,
                                  l.r.index, l.res.cpu_kernels_threw, l.res.host_marks))
        fail(l, ec, "enqueueing the CPU kernels");
    }
  }
  if (auto ec = compute_.record(slot.timing.k1)) fail(l, ec, "record");
  if (auto ec = compute_.record(slot.compute_done)) fail(l, ec, "record");
}

void DeviceRunner::enqueue_gpu_kernels(Launch& l, const KernelBuffers& buffers) {
  auto& slot = slots_[static_cast<std::size_t>(l.r.slot)];
  KernelContext ctx = buffers.context(device_, compute_);
  std::string thrown;
  int marks = 0;
  ctx.mark = [&]() -> std::error_code {
    if (marks >= kMaxKernelMarks) return make_error_code(Errc::invalid_argument);
    return compute_.record(slot.timing.marks[static_cast<std::size_t>(marks++)]);
  };
  const auto ec = guarded_call(thrown, l.r.partition->work.gpu, ctx);
  l.res.gpu_marks = marks;
  if (ec)
    fail(l, ec, thrown.empty() ? "launching the kernels" : "launching the kernels threw " + thrown);
}

void DeviceRunner::enqueue_d2h(Launch& l) {
  const LaunchRequest& r = l.r;
  const Partition& p = *r.partition;
  auto& slot = slots_[static_cast<std::size_t>(r.slot)];
  const nvtx::ScopedRange range(nvtx::Stage::d2h, r.index);
  if (auto ec = d2h_.wait(slot.compute_done)) fail(l, ec, "stream wait");
  if (auto ec = d2h_.record(slot.timing.d2h0)) fail(l, ec, "record");
  for (std::size_t i = 0; i < p.outputs.size() && !l.res.error; ++i)
    if (auto ec = d2h_.copy(r.output_targets[i], l.device_memory + l.layout.out_off[i],
                            p.outputs[i].bytes))
      fail(l, ec, "D2H copy of output " + std::to_string(i));
  if (auto ec = d2h_.record(slot.timing.d2h1)) fail(l, ec, "record");
  // The memory is freed once out_done has completed, on the H2D stream
  // (finish): freed here, behind the D2H, a later partition's allocation on
  // the H2D stream could take it and so wait for this partition's end (the
  // pool adds that dependency): at 2^26 ntt_msm_h's copy in then ran after
  // the previous partition's kernels instead of under them, one 117 ms copy
  // lost in every three partitions.
  l.res.device_memory = std::exchange(l.device_memory, nullptr);
  if (auto ec = d2h_.record(slot.out_done)) fail(l, ec, "record");
}

void DeviceRunner::hand_to_waiters(Launch& l) {
  // Should the slot be reused before this wait starts, the wait covers the
  // newer copy: the signal comes late, never early.
  if (l.inputs_copied && !l.res.error)
    boost::asio::post(copy_waiter_io_, [this, slot = l.r.slot, f = std::move(l.inputs_copied)] {
      const auto ec = slots_[static_cast<std::size_t>(slot)].copied_in.synchronize();
      if (!ec && !device_.health()) f();
    });
  boost::asio::post(waiter_io_,
                    [this, r = std::move(l.r), res = std::move(l.res),
                     done = std::move(l.done)]() mutable { finish(r, std::move(res), done); });
}

// Runs on the waiter thread: blocks until the slot's last event completes
// (returns an error instead after a sticky fault), then reads the timings.
void DeviceRunner::finish(LaunchRequest& r, LaunchResult res,
                          const std::function<void(LaunchResult)>& done) {
  auto& slot = slots_[static_cast<std::size_t>(r.slot)];
  const auto ec = slot.out_done.synchronize();
  const auto health = device_.health();
  // Stream-ordered on the stream that allocates: the next allocation there
  // reuses it in order, with nothing to wait for. A faulted device fails
  // this too; its memory is gone with its context.
  if (res.device_memory != nullptr) (void)device_.free_async(res.device_memory, h2d_);
  res.device_memory = nullptr;
  if (ec || health) {
    const auto fault = health ? health : ec;
    res.device_fault = true;
    res.error = fault;
    res.message = "device " + std::to_string(device_.index()) + " (" + device_.info().name +
                  ") faulted: " + fault.message();
    // Read after the fault was seen: the worker wrote it before faulting.
    if (res.cpu_kernels_threw && !res.cpu_kernels_threw->empty())
      res.message += " (this partition's CPU kernels threw: " + *res.cpu_kernels_threw + ")";
  } else if (!res.error) {
    StageTimes t = clock_.read(slot.timing, r.job_start, res.gpu_marks, res.host_marks.get());
    res.h2d = t.h2d;
    res.kernels = t.kernels;
    res.kernel_steps_ms = std::move(t.kernel_steps_ms);
    res.d2h = t.d2h;
  }
  // The copies from them are done (or the device is gone): unlock the pages
  // before the engine reports the partition, and so before the caller may
  // free the memory. Unregistering runs in a healthy GPU's context
  // (devices::register_host), so pages locked for a faulted GPU come back
  // too.
  res.registrations.clear();
  // The partition's range ends before the engine hears of its end: the job
  // (and a caller reading the timeline) may complete on another thread
  // before this request is gone.
  r.span.end();
  done(std::move(res));
}

}  // namespace stoker::engine::detail
