#include "engine/detail/device_runner.hpp"

#include <pthread.h>
#include <unistd.h>

#include <boost/asio/post.hpp>
#include <cstring>
#include <optional>

#include "common/elapsed.hpp"
#include "engine/detail/guarded_call.hpp"
#include "engine/detail/nontemporal_copy.hpp"

namespace stoker::engine::detail {
namespace {
constexpr std::size_t kAlign = 256;
std::size_t align_up(std::size_t n) {
  return (n + kAlign - 1) / kAlign * kAlign;
}
// Names the calling thread for top, perf and debuggers ("stoker-feed-0";
// Linux keeps 15 characters) and binds it near its device where `cpus`
// says where that is (a failure leaves it unbound: placement is a speed-up,
// never a reason to fail).
void enter_thread(const std::string& name, const devices::CpuSet& cpus) {
  (void)pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
  if (!cpus.empty()) (void)cpus.bind_this_thread();
}
// A streamed partition's producer failed: the launch carries its error and
// nothing more runs on the device.
void take_producer_failure(const ShareFeed& feed, LaunchResult& res) {
  res.error = feed.error();
  res.message = feed.message();
  res.producer_failed = true;
}
}  // namespace

DeviceRunner::DeviceRunner(devices::Device& device)
    : device_(device),
      feeder_work_(feeder_io_.get_executor()),
      launcher_work_(launcher_io_.get_executor()),
      waiter_work_(waiter_io_.get_executor()),
      copy_waiter_work_(copy_waiter_io_.get_executor()) {}

Result<std::unique_ptr<DeviceRunner>> DeviceRunner::create(devices::Device& device,
                                                           const Config& config) {
  const int depth = config.pipeline_depth;
  const std::size_t chunk_bytes = config.staging_chunk_bytes;
  std::unique_ptr<DeviceRunner> r(new DeviceRunner(device));
  // Bound only where each staging thread can have a local CPU of its own:
  // a container that allows one of the GPU's CPUs and many others would
  // otherwise crowd all of them onto that one.
  if (config.bind_threads) {
    auto near = devices::cpus_near(device.info());
    if (near.size() >= static_cast<std::size_t>(std::max(1, config.staging_threads)))
      r->cpus_ = std::move(near);
  }
  const std::string where =
      "device " + std::to_string(device.index()) + " (" + device.info().name + "): ";
  auto stream = [&](devices::StreamPriority p, devices::Stream& out) -> Error {
    auto s = device.create_stream(p);
    if (!s) return Error{s.error().code, where + "creating a stream: " + s.error().what()};
    out = std::move(*s);
    return {};
  };
  auto event = [&](devices::EventKind k, devices::Event& out) -> Error {
    auto e = device.create_event(k);
    if (!e) return Error{e.error().code, where + "creating an event: " + e.error().what()};
    out = std::move(*e);
    return {};
  };
  if (auto e = stream(config.copy_priority, r->h2d_)) return e;
  if (auto e = stream(config.compute_priority, r->compute_)) return e;
  if (auto e = stream(config.copy_priority, r->d2h_)) return e;
  using K = devices::EventKind;
  r->slots_.resize(static_cast<std::size_t>(depth));
  for (auto& s : r->slots_) {
    for (auto* e : {&s.in_ready, &s.compute_done})
      if (auto err = event(K::ordering, *e)) return err;
    for (auto* e : {&s.out_done, &s.copied_in})
      if (auto err = event(K::blocking_sync, *e)) return err;
    for (auto* e : {&s.h2d0, &s.h2d1, &s.k0, &s.k1, &s.d2h0, &s.d2h1})
      if (auto err = event(K::timing, *e)) return err;
    for (auto& e : s.marks)
      if (auto err = event(K::timing, e)) return err;
  }
  r->chunk_bytes_ = chunk_bytes;
  const auto staging_threads = static_cast<std::size_t>(std::max(1, config.staging_threads));
  r->pageable_inputs_ = config.pageable_inputs;
  r->copiers_ = std::make_unique<boost::asio::thread_pool>(staging_threads);
  // Two buffers per thread at least, so that a thread fills one while the
  // other's H2D runs; staging_ring_bytes may ask for more, in whole buffers
  // per thread.
  const std::size_t asked = (config.staging_ring_bytes + chunk_bytes - 1) / chunk_bytes;
  r->staging_threads_ = staging_threads;
  r->buffers_per_thread_ =
      std::max<std::size_t>(2, (asked + staging_threads - 1) / staging_threads);
  r->thread_next_buffer_.assign(staging_threads, 0);
  r->staging_count_ = staging_threads * r->buffers_per_thread_;
  r->staging_ = std::make_unique<Staging[]>(r->staging_count_);
  // Pinned from a thread on the device's CPUs, where it has any: pinning
  // faults the pages in, so they land in that NUMA node's memory, which
  // the staging threads write and the device reads.
  Error pinning;
  const auto pin_staging = [&] {
    for (std::size_t i = 0; i < r->staging_count_ && !pinning; ++i) {
      auto b = devices::allocate_pinned(device.backend(), chunk_bytes);
      if (!b)
        pinning = Error{b.error().code, where + "staging buffer: " + b.error().what()};
      else
        r->staging_[i].buffer = std::move(*b);
    }
  };
  if (r->cpus_.empty()) {
    pin_staging();
  } else {
    // A set that cannot be bound (a CPU taken offline since discovery)
    // leaves every thread of the device where it was, and says so.
    bool bound = false;
    std::thread([&] {
      bound = !r->cpus_.bind_this_thread();
      pin_staging();
    }).join();
    if (!bound) r->cpus_ = {};
  }
  if (pinning) return pinning;
  for (std::size_t i = 0; i < r->staging_count_; ++i)
    if (auto err = event(K::blocking_sync, r->staging_[i].copied)) return err;
  if (auto err = event(K::timing, r->epoch_)) return err;
  if (auto ec = r->h2d_.record(r->epoch_)) return Error{ec, where + "recording the epoch event"};
  if (auto ec = r->epoch_.synchronize()) return Error{ec, where + "waiting for the epoch event"};
  r->epoch_host_ = Clock::now();
  const std::string n = std::to_string(device.index());
  r->feeder_ = std::thread([io = &r->feeder_io_, cpus = r->cpus_, n] {
    enter_thread("stoker-feed-" + n, cpus);
    io->run();
  });
  // The launcher runs the jobs' own callables, and any thread they start
  // would inherit its mask: it stays unbound.
  r->launcher_ = std::thread([io = &r->launcher_io_, d = &device, n] {
    enter_thread("stoker-kern-" + n, {});
    (void)d->make_current();
    io->run();
  });
  // The waiters block on this device's events: with the device current, so
  // CUDA does not make device 0's context current on them first.
  r->waiter_ = std::thread([io = &r->waiter_io_, d = &device, cpus = r->cpus_, n] {
    enter_thread("stoker-wait-" + n, cpus);
    (void)d->make_current();
    io->run();
  });
  r->copy_waiter_ = std::thread([io = &r->copy_waiter_io_, d = &device, cpus = r->cpus_, n] {
    enter_thread("stoker-cwait-" + n, cpus);
    (void)d->make_current();
    io->run();
  });
  return r;
}

DeviceRunner::~DeviceRunner() {
  // Feeder first: whatever it still enqueues reaches the waiter before the
  // waiter is told to finish.
  feeder_work_.reset();
  if (feeder_.joinable()) feeder_.join();
  // Then the staging passes the feeder started (their last task hands its
  // launch to the launcher), then the launcher (it hands launches to the
  // waiters).
  if (copiers_) copiers_->join();
  launcher_work_.reset();
  if (launcher_.joinable()) launcher_.join();
  waiter_work_.reset();
  if (waiter_.joinable()) waiter_.join();
  copy_waiter_work_.reset();
  if (copy_waiter_.joinable()) copy_waiter_.join();
  // Wait for the streams here: the staging buffers are members declared
  // after them, so destroyed before them, and a copy still reading one
  // must end first.
  h2d_.synchronize();
  compute_.synchronize();
  d2h_.synchronize();
}

double DeviceRunner::device_time_ms(const devices::Event& e, Clock::time_point job_start) const {
  auto ms = devices::elapsed_ms(epoch_, e);
  if (!ms) return 0;
  return common::ms_since(job_start, epoch_host_) + *ms;
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

void DeviceRunner::arrive(const std::shared_ptr<Launch>& l) {
  if (l->pending.fetch_sub(1, std::memory_order_acq_rel) == 1)
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
  return h2d_.record(slots_[static_cast<std::size_t>(l.r.slot)].h2d0);
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

std::size_t DeviceRunner::staging_thread_index() {
  // A pool thread runs only this runner's tasks, one at a time; a runner
  // made later at the same address has new threads.
  thread_local const DeviceRunner* owner = nullptr;
  thread_local std::size_t index = 0;
  if (owner != this) {
    owner = this;
    index = threads_seen_.fetch_add(1, std::memory_order_relaxed) % staging_threads_;
    enter_thread("stoker-stage-" + std::to_string(device_.index()), cpus_);
  }
  return index;
}

void DeviceRunner::add_segment(Launch& l, std::byte* dst, const std::byte* src, std::size_t bytes,
                               std::string what) {
  if (bytes == 0) return;
  StagingPass& p = l.pass;
  p.segments.push_back({dst, src, bytes, p.chunks, std::move(what)});
  p.chunks += (bytes + chunk_bytes_ - 1) / chunk_bytes_;
}

void DeviceRunner::run_staging_task(const std::shared_ptr<Launch>& l) {
  // The staging threads copy whole chunks, each on its own: under CPU
  // contention a thread that loses its core delays its own chunk only
  // (splitting each chunk across the threads behind a barrier made more
  // threads slower). Each sends its own chunks too, in any order: sent in
  // order from a ring, chunks sat filled for 0.3-0.9 ms (512 KiB chunks,
  // idle host) and up to 13 ms (8 MiB, 14 writer threads) behind one slow
  // chunk, with the threads that had filled them idle.
  StagingPass& p = l->pass;
  const nvtx::ScopedRange range(nvtx::Stage::staging, l->r.index);
  const std::size_t me = staging_thread_index();
  Staging* const mine = &staging_[me * buffers_per_thread_];
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
    Staging& st = mine[next];
    next = (next + 1) % buffers_per_thread_;
    const std::size_t off = (c - seg->first_chunk) * chunk_bytes_,
                      n = std::min(chunk_bytes_, seg->bytes - off);
    // The buffer's previous H2D, from this pass or an earlier one, must
    // have read it.
    if ((ec = st.copied.synchronize())) break;
    nontemporal_copy(static_cast<std::byte*>(st.buffer.data()), seg->src + off, n);
    if ((ec = start_h2d(*l))) break;
    // Other copies may land between this copy and its record: the event
    // then also covers theirs, and completes a little later.
    if ((ec = h2d_.copy(seg->dst + off, st.buffer.data(), n))) break;
    if ((ec = h2d_.record(st.copied))) {
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
  // Release: the launcher reads the error after the count reached zero.
  if (p.running.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    l->staged_at = Clock::now();
    arrive(l);
  }
}

DeviceRunner::InPlace DeviceRunner::register_in_place(const std::byte* src, std::size_t bytes,
                                                      LaunchResult& res) {
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
  res.registrations.push_back(std::move(*reg));
  res.bytes_registered += interior;
  return {head, interior};
}

bool DeviceRunner::copy_streamed_shares(const LaunchRequest& r, std::byte* device_memory,
                                        const std::vector<std::size_t>& in_off, LaunchResult& res) {
  const Partition& p = *r.partition;
  const ShareFeed& feed = *r.feed;
  for (std::size_t t = 0; t < feed.shares(); ++t) {
    if (!feed.wait_for(t)) {
      take_producer_failure(feed, res);
      return false;
    }
    for (std::size_t i = 0; i < p.inputs.size(); ++i) {
      if (p.inputs[i].kind != InputKind::produced) continue;
      const auto [lo, hi] = ProducerTask{t, feed.shares()}.range(p.inputs[i].bytes, feed.align());
      if (hi == lo) continue;
      if (auto ec = h2d_.copy(device_memory + in_off[i] + lo, r.input_sources[i] + lo, hi - lo)) {
        res.error = ec;
        res.message = "device " + std::to_string(device_.index()) + ": H2D copy of input " +
                      std::to_string(i) + ", share " + std::to_string(t) + ": " + ec.message();
        return false;
      }
    }
  }
  return true;
}

namespace {
// The first error of a launch, with what failed and on which device.
void fail_launch(LaunchResult& res, int device, std::error_code ec, const std::string& what) {
  if (!res.error) {
    res.error = ec;
    res.message = "device " + std::to_string(device) + ": " + what + ": " + ec.message();
  }
}
}  // namespace

// Runs on the feeder thread: the partition's device memory, its direct
// copies (pinned, registered, streamed shares) and its staging pass,
// started. On an error the launch still ends (enqueue_compute records the
// slot's events so the waiter and the slot move on).
void DeviceRunner::begin(const std::shared_ptr<Launch>& lp) {
  Launch& l = *lp;
  const LaunchRequest& r = l.r;
  LaunchResult& res = l.res;
  const Partition& p = *r.partition;
  auto fail = [&](std::error_code ec, const std::string& what) {
    fail_launch(res, device_.index(), ec, what);
  };
  const nvtx::ScopedRange range(nvtx::Stage::h2d, r.index);
  // Queued on the launcher before anything can make the launch ready.
  l.seq = launches_begun_++;
  boost::asio::post(launcher_io_, [this, lp] { in_order_.push_back(lp); });
  if (auto ec = device_.make_current()) fail(ec, "cudaSetDevice");

  std::size_t total = 0;
  for (const auto& in : p.inputs)
    l.in_off.push_back(std::exchange(total, total + align_up(in.bytes)));
  for (const auto& out : p.outputs)
    l.out_off.push_back(std::exchange(total, total + align_up(out.bytes)));
  l.scratch_off = total;
  total += align_up(p.scratch_bytes);

  if (!res.error) {
    auto mem = device_.allocate_async(total, h2d_);
    if (mem)
      l.device_memory = static_cast<std::byte*>(*mem);
    else
      fail(mem.error().code, mem.error().what());
  }

  // H2D
  // A streamed partition's span starts when its first share has ended:
  // waiting for the producer is not copy time.
  if (r.feed && !res.error && !r.feed->wait_for(0)) take_producer_failure(*r.feed, res);
  if (!res.error) {
    // Registrations first, before the copy stream's start event, so that
    // they count as staging (host-side preparation of pageable inputs),
    // not as H2D time.
    l.stage_start = Clock::now();
    std::vector<InPlace> in_place(p.inputs.size());
    for (std::size_t i = 0; i < p.inputs.size(); ++i)
      if (p.inputs[i].kind == InputKind::pageable)
        in_place[i] = register_in_place(r.input_sources[i], p.inputs[i].bytes, res);
    // Pinned, registered and streamed inputs are copied by the feeder,
    // pageable ones by the pass.
    struct Direct {
      std::byte* dst;
      const std::byte* src;
      std::size_t bytes;
      std::string what;
    };
    std::vector<Direct> direct;
    for (std::size_t i = 0; i < p.inputs.size(); ++i) {
      std::byte* dst = l.device_memory + l.in_off[i];
      const std::byte* src = r.input_sources[i];
      const auto& in = p.inputs[i];
      const std::string input = "input " + std::to_string(i);
      if (const auto [head, interior] = in_place[i]; interior != 0) {
        const std::size_t tail = head + interior;
        add_segment(l, dst, src, head, "the head of " + input);
        direct.push_back({dst + head, src + head, interior, "registered " + input});
        add_segment(l, dst + tail, src + tail, in.bytes - tail, "the tail of " + input);
      } else if (in.kind == InputKind::pageable) {
        add_segment(l, dst, src, in.bytes, input);
      } else if (in.kind != InputKind::produced || !r.feed) {
        direct.push_back({dst, src, in.bytes, input});
      }  // else share by share, below
    }
    l.staged = !res.registrations.empty() || l.pass.chunks != 0;
    if (l.pass.chunks != 0) {
      // The pass runs beside the rest of this half, and beside the previous
      // and next partitions' passes: the launch goes on when both have
      // ended. Its chunks may be sent before the previous launch's input
      // events are recorded: while one thread still copies that launch's
      // last chunk, the others go on here (and to the passes after), so
      // those events complete late by the H2D time of whatever the others
      // send meanwhile (a straggling chunk under load took up to 13 ms).
      StagingPass& pass = l.pass;
      const std::size_t tasks = std::min(pass.chunks, staging_threads_);
      pass.running.store(tasks, std::memory_order_relaxed);
      l.pending.store(2, std::memory_order_relaxed);
      for (std::size_t t = 0; t < tasks; ++t)
        boost::asio::post(*copiers_, [this, lp] { run_staging_task(lp); });
    } else {
      l.staged_at = Clock::now();
    }
    if (!direct.empty() || r.feed) {
      // A whole input sent before the previous launch's input events would
      // hold up that launch's kernels for as long as its copy takes.
      wait_for_inputs_recorded(l.seq);
      if (auto ec = start_h2d(l)) fail(ec, "record");
      for (std::size_t i = 0; i < direct.size() && !res.error; ++i)
        if (auto ec = h2d_.copy(direct[i].dst, direct[i].src, direct[i].bytes))
          fail(ec, "H2D copy of " + direct[i].what);
      if (r.feed && !res.error) copy_streamed_shares(r, l.device_memory, l.in_off, res);
    }
  }
  // Whatever failed, the launch ends only after the producer has: until
  // then its shares may still write the blocks the engine frees with the
  // partition.
  if (r.feed) r.feed->wait_all();
  arrive(lp);
}

// Runs on the launcher thread, once the feeder's half and the staging pass
// have both ended: the input events, the kernels and the D2H, then the
// launch goes to the waiters.
void DeviceRunner::enqueue_compute(Launch& l) {
  const LaunchRequest& r = l.r;
  LaunchResult& res = l.res;
  auto& slot = slots_[static_cast<std::size_t>(r.slot)];
  const Partition& p = *r.partition;
  auto fail = [&](std::error_code ec, const std::string& what) {
    fail_launch(res, device_.index(), ec, what);
  };
  // A job's kernel callable may have made another device current.
  if (auto ec = device_.make_current()) fail(ec, "cudaSetDevice");
  if (l.pass.failed.load(std::memory_order_relaxed))
    fail(l.pass.error, "staging " + l.pass.failed_what);
  if (l.staged) {
    // From the pass's first chunk, or from the registrations before it.
    const bool from_pass = res.registrations.empty() && l.pass.started_at != Clock::time_point{};
    const auto start = from_pass ? l.pass.started_at : l.stage_start;
    res.staging = {common::ms_since(r.job_start, start), common::ms_since(start, l.staged_at)};
  }
  if (auto ec = start_h2d(l)) fail(ec, "record");  // a launch with nothing to copy
  // Recorded after every chunk's copy of this partition, and perhaps after
  // chunks of the next partitions' passes, sent while this pass's last
  // chunk was being copied: the events then complete a little later, never
  // early.
  if (auto ec = h2d_.record(slot.h2d1)) fail(ec, "record");
  if (auto ec = h2d_.record(slot.in_ready)) fail(ec, "record");
  if (auto ec = h2d_.record(slot.copied_in)) fail(ec, "record");
  // The feeder may now send the next launch's direct copies.
  inputs_recorded_.store(l.seq + 1, std::memory_order_release);
  inputs_recorded_.notify_all();
  std::byte* device_memory = l.device_memory;

  // Kernels
  std::optional<nvtx::ScopedRange> range(std::in_place, nvtx::Stage::kernels, r.index);
  if (auto ec = compute_.wait(slot.in_ready)) fail(ec, "stream wait");
  if (auto ec = compute_.record(slot.k0)) fail(ec, "record");
  if (!res.error) {
    std::vector<std::byte*> ins, outs;
    std::vector<std::size_t> in_bytes, out_bytes;
    for (std::size_t i = 0; i < p.inputs.size(); ++i) {
      ins.push_back(device_memory + l.in_off[i]);
      in_bytes.push_back(p.inputs[i].bytes);
    }
    for (std::size_t i = 0; i < p.outputs.size(); ++i) {
      outs.push_back(device_memory + l.out_off[i]);
      out_bytes.push_back(p.outputs[i].bytes);
    }
    KernelContext ctx{device_,
                      compute_,
                      ins,
                      in_bytes,
                      outs,
                      out_bytes,
                      p.scratch_bytes ? device_memory + l.scratch_off : nullptr,
                      p.scratch_bytes,
                      {}};
    if (device_.backend() == devices::Backend::cuda) {
      std::string thrown;
      int marks = 0;
      ctx.mark = [&]() -> std::error_code {
        if (marks >= kMaxKernelMarks) return make_error_code(Errc::invalid_argument);
        return compute_.record(slot.marks[static_cast<std::size_t>(marks++)]);
      };
      const auto ec = guarded_call(thrown, p.work.gpu, ctx);
      res.gpu_marks = marks;
      if (ec)
        fail(ec,
             thrown.empty() ? "launching the kernels" : "launching the kernels threw " + thrown);
    } else {
      // The CPU version runs on the stream's worker, in stream order; the
      // context's spans are copied since this frame is gone by then.
      // A throw faults the emulated device, as an error returned does; the
      // job's message then carries the exception's text.
      res.cpu_kernels_threw = std::make_shared<std::string>();
      res.host_marks = std::make_shared<std::vector<Clock::time_point>>();
      auto task = [&dev = device_, &st = compute_, ins, in_bytes, outs, out_bytes,
                   scratch = ctx.scratch, sb = ctx.scratch_bytes, fn = p.work.cpu,
                   thrown = res.cpu_kernels_threw, marks = res.host_marks, index = r.index]() {
        const nvtx::ScopedRange running(nvtx::Stage::kernels, index);
        KernelContext c{dev, st, ins, in_bytes, outs, out_bytes, scratch, sb, {}};
        // The task's own clock readings: its start, each mark, its end (the
        // stream's events are read on another clock's footing).
        marks->push_back(Clock::now());
        c.mark = [marks]() -> std::error_code {
          if (marks->size() > kMaxKernelMarks) return make_error_code(Errc::invalid_argument);
          marks->push_back(Clock::now());
          return {};
        };
        struct End {
          std::vector<Clock::time_point>& m;
          ~End() {
            if (m.size() > 1) m.push_back(Clock::now());
          }
        } end{*marks};
        return guarded_call(*thrown, fn, c);
      };
      if (auto ec = compute_.enqueue_host(std::move(task))) fail(ec, "enqueueing the CPU kernels");
    }
  }
  if (auto ec = compute_.record(slot.k1)) fail(ec, "record");
  if (auto ec = compute_.record(slot.compute_done)) fail(ec, "record");

  // D2H
  range.reset();
  range.emplace(nvtx::Stage::d2h, r.index);
  if (auto ec = d2h_.wait(slot.compute_done)) fail(ec, "stream wait");
  if (auto ec = d2h_.record(slot.d2h0)) fail(ec, "record");
  for (std::size_t i = 0; i < p.outputs.size() && !res.error; ++i)
    if (auto ec = d2h_.copy(r.output_targets[i], device_memory + l.out_off[i], p.outputs[i].bytes))
      fail(ec, "D2H copy of output " + std::to_string(i));
  if (auto ec = d2h_.record(slot.d2h1)) fail(ec, "record");
  // The memory is freed once out_done has completed, on the H2D stream
  // (finish): freed here, behind the D2H, a later partition's allocation on
  // the H2D stream could take it and so wait for this partition's end (the
  // pool adds that dependency): at 2^26 ntt_msm_h's copy in then ran after
  // the previous partition's kernels instead of under them, one 117 ms copy
  // lost in every three partitions.
  res.device_memory = device_memory;
  l.device_memory = nullptr;
  if (auto ec = d2h_.record(slot.out_done)) fail(ec, "record");
  range.reset();

  // Should the slot be reused before this wait starts, the wait covers the
  // newer copy: the signal comes late, never early.
  if (l.inputs_copied && !res.error)
    boost::asio::post(copy_waiter_io_, [this, slot = r.slot, f = std::move(l.inputs_copied)] {
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
    const double h0 = device_time_ms(slot.h2d0, r.job_start),
                 h1 = device_time_ms(slot.h2d1, r.job_start);
    const double k0 = device_time_ms(slot.k0, r.job_start),
                 k1 = device_time_ms(slot.k1, r.job_start);
    const double d0 = device_time_ms(slot.d2h0, r.job_start),
                 d1 = device_time_ms(slot.d2h1, r.job_start);
    res.h2d = {h0, h1 - h0};
    res.kernels = {k0, k1 - k0};
    if (res.host_marks && res.host_marks->size() > 2)
      for (std::size_t i = 1; i < res.host_marks->size(); ++i)
        res.kernel_steps_ms.push_back(
            common::ms_since((*res.host_marks)[i - 1], (*res.host_marks)[i]));
    std::vector<double> at;
    for (int i = 0; i < res.gpu_marks; ++i)
      at.push_back(device_time_ms(slot.marks[static_cast<std::size_t>(i)], r.job_start));
    double prev = k0;
    for (const double t : at) {
      res.kernel_steps_ms.push_back(t - prev);
      prev = t;
    }
    if (!at.empty()) res.kernel_steps_ms.push_back(k1 - prev);
    res.d2h = {d0, d1 - d0};
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
