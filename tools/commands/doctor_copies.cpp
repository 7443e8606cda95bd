#include "tools/commands/doctor_copies.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <cstring>
#include <functional>
#include <string>
#include <system_error>
#include <thread>
#include <utility>

#include "devices/cpu_set.hpp"

namespace stoker::tools::doctor {
namespace {

cudaStream_t native(const devices::Stream& s) {
  return static_cast<cudaStream_t>(s.native());
}

std::string gpu_tag(const Rig& r) {
  return "GPU " + std::to_string(r.dev->index());
}

// Runs `f` on a thread bound to `cpulist` (a GPU's local CPUs), so that memory
// it first touches lands on the GPU's NUMA node; runs it here when the list
// is unknown.
void run_near(const std::string& cpulist, const std::function<void()>& f) {
  const auto cpus = devices::CpuSet::parse(cpulist);
  if (!cpus) return f();
  std::thread t([&] {
    (void)cpus->bind_this_thread();  // a hint: failure is harmless
    f();
  });
  t.join();
}

using Enqueue = std::function<cudaError_t(cudaStream_t)>;

// One copy of `bytes` from `src` to the start of the rig's device buffer.
Enqueue h2d(Rig& r, const void* src, std::size_t bytes) {
  return [&r, src, bytes](cudaStream_t s) {
    return cudaMemcpyAsync(r.dbuf.data(), src, bytes, cudaMemcpyHostToDevice, s);
  };
}

// One copy of `bytes` from the start of the rig's device buffer to `dst`.
Enqueue d2h(Rig& r, void* dst, std::size_t bytes) {
  return [&r, dst, bytes](cudaStream_t s) {
    return cudaMemcpyAsync(dst, r.dbuf.data(), bytes, cudaMemcpyDeviceToHost, s);
  };
}

// Times `copies` enqueue() calls between two events, after `warmup` untimed
// rounds, `reps` times; returns the median rate in GB/s.
Result<double> time_copies(Rig& r, std::size_t bytes, int copies, int warmup, int reps,
                           const Enqueue& enqueue) {
  if (auto ec = r.dev->health()) return Error{ec, "device faulted"};
  std::vector<double> rates;
  for (int i = 0; i < warmup + reps; ++i) {
    if (auto ec = r.dev->make_current()) return Error{ec, "cudaSetDevice"};
    if (auto ec = r.stream.record(r.start)) return Error{ec, "cudaEventRecord"};
    for (int c = 0; c < copies; ++c)
      if (const auto st = enqueue(native(r.stream)); st != cudaSuccess)
        return Error{make_cuda_error(st), cuda_message("copy", st)};
    if (auto ec = r.stream.record(r.stop)) return Error{ec, "cudaEventRecord"};
    if (auto ec = r.stop.synchronize()) return Error{ec, "cudaEventSynchronize"};
    auto ms = devices::elapsed_ms(r.start, r.stop);
    if (!ms) return std::move(ms).error();
    if (i >= warmup && *ms > 0)
      rates.push_back(static_cast<double>(bytes) * copies / 1e9 / (*ms / 1e3));
  }
  auto m = median(std::move(rates));
  if (!m) return Error{Errc::verification_failed, "no positive event time"};
  return *m;
}

// H2D into the device buffer's first half on the rig's stream while D2H
// from its second half runs on the other, `copies` of each (half the copy
// size) after one start event; each direction's median rate from its own
// stop event.
struct Duplex {
  double h2d = 0, d2h = 0;
};
Result<Duplex> time_duplex(Rig& r, std::size_t bytes, int copies, int warmup, int reps) {
  if (auto ec = r.dev->health()) return Error{ec, "device faulted"};
  const std::size_t half = bytes / 2;
  auto* dev = static_cast<std::byte*>(r.dbuf.data());
  auto* host = static_cast<std::byte*>(r.pinned.data());
  const auto back = native(r.back);
  std::vector<double> in, out;
  for (int i = 0; i < warmup + reps; ++i) {
    if (auto ec = r.dev->make_current()) return Error{ec, "cudaSetDevice"};
    if (auto ec = r.stream.record(r.start)) return Error{ec, "cudaEventRecord"};
    if (auto ec = r.back.wait(r.start)) return Error{ec, "cudaStreamWaitEvent"};
    for (int c = 0; c < copies; ++c) {
      if (const auto st =
              cudaMemcpyAsync(dev, host, half, cudaMemcpyHostToDevice, native(r.stream));
          st != cudaSuccess)
        return Error{make_cuda_error(st), cuda_message("H2D copy", st)};
      if (const auto st =
              cudaMemcpyAsync(host + half, dev + half, half, cudaMemcpyDeviceToHost, back);
          st != cudaSuccess)
        return Error{make_cuda_error(st), cuda_message("D2H copy", st)};
    }
    if (auto ec = r.stream.record(r.stop)) return Error{ec, "cudaEventRecord"};
    if (auto ec = r.back.record(r.back_stop)) return Error{ec, "cudaEventRecord"};
    for (auto* e : {&r.stop, &r.back_stop})
      if (auto ec = e->synchronize()) return Error{ec, "cudaEventSynchronize"};
    auto in_ms = devices::elapsed_ms(r.start, r.stop);
    auto out_ms = devices::elapsed_ms(r.start, r.back_stop);
    if (!in_ms) return std::move(in_ms).error();
    if (!out_ms) return std::move(out_ms).error();
    if (i < warmup || *in_ms <= 0 || *out_ms <= 0) continue;
    in.push_back(static_cast<double>(half) * copies / 1e9 / (*in_ms / 1e3));
    out.push_back(static_cast<double>(half) * copies / 1e9 / (*out_ms / 1e3));
  }
  auto h = median(std::move(in));
  auto d = median(std::move(out));
  if (!h || !d) return Error{Errc::verification_failed, "no positive event time"};
  return Duplex{*h, *d};
}

std::optional<double> record(Result<double> r, Errors& errors, const std::string& what) {
  if (r) return *r;
  errors.add(what + ": " + r.error().what());
  return std::nullopt;
}

// Enables peer access where CUDA offers it and disables, on destruction, what
// this run enabled: doctor leaves the process as it found it.
class PeerAccess {
 public:
  PeerAccess() = default;
  PeerAccess(const PeerAccess&) = delete;
  PeerAccess& operator=(const PeerAccess&) = delete;
  ~PeerAccess() {
    for (const auto& [from, to] : enabled_) {
      if (cudaSetDevice(from) == cudaSuccess) cudaDeviceDisablePeerAccess(to);
      cudaGetLastError();
    }
  }
  // true: `from` can now reach `to` directly.
  bool enable(int from, int to, Errors& errors) {
    int can = 0;
    if (const auto st = cudaDeviceCanAccessPeer(&can, from, to); st != cudaSuccess) {
      errors.add(cuda_message("cudaDeviceCanAccessPeer", st));
      return false;
    }
    if (!can) return false;
    if (const auto st = cudaSetDevice(from); st != cudaSuccess) {
      errors.add(cuda_message("cudaSetDevice", st));
      return false;
    }
    const auto st = cudaDeviceEnablePeerAccess(to, 0);
    if (st == cudaSuccess) {
      enabled_.emplace_back(from, to);
      return true;
    }
    if (st == cudaErrorPeerAccessAlreadyEnabled) {
      cudaGetLastError();
      return true;
    }
    errors.add("CUDA ordinal " + std::to_string(from) + " -> " + std::to_string(to) + ": " +
               cuda_message("cudaDeviceEnablePeerAccess", st));
    return false;
  }

 private:
  std::vector<std::pair<int, int>> enabled_;
};

}  // namespace

double start_contexts(devices::DeviceSet& set, Errors& errors) {
  const auto t0 = Clock::now();
  for (std::size_t i = 0; i < set.size(); ++i) {
    std::error_code ec = set[i].make_current();
    if (!ec)
      if (const auto st = cudaFree(nullptr); st != cudaSuccess)
        errors.add("GPU " + std::to_string(i) + ": " + cuda_message("context start", st));
    if (ec) errors.add("GPU " + std::to_string(i) + ": cudaSetDevice: " + ec.message());
  }
  return seconds_since(t0);
}

void prepare(Rig& r, const Plan& plan, Errors& errors) {
  const std::string tag = gpu_tag(r);
  auto stream = r.dev->create_stream();
  auto back = r.dev->create_stream();
  auto start = r.dev->create_event(devices::EventKind::timing);
  auto stop = r.dev->create_event(devices::EventKind::timing);
  auto back_stop = r.dev->create_event(devices::EventKind::timing);
  for (const Error* e : {stream ? nullptr : &stream.error(), back ? nullptr : &back.error(),
                         start ? nullptr : &start.error(), stop ? nullptr : &stop.error(),
                         back_stop ? nullptr : &back_stop.error()})
    if (e) return errors.add(tag + ": " + e->what());
  r.stream = std::move(*stream);
  r.back = std::move(*back);
  r.start = std::move(*start);
  r.stop = std::move(*stop);
  r.back_stop = std::move(*back_stop);
  auto dbuf = r.dev->allocate(plan.copy_bytes);
  if (!dbuf) return errors.add(tag + ": " + dbuf.error().what());
  r.dbuf = std::move(*dbuf);
  std::optional<Error> failure;
  run_near(r.dev->info().cpu_affinity, [&] {
    auto pinned = devices::allocate_pinned(devices::Backend::cuda, plan.copy_bytes);
    if (!pinned) {
      failure = pinned.error();
      return;
    }
    r.pinned = std::move(*pinned);
    std::memset(r.pinned.data(), 1, plan.copy_bytes);
    r.pageable = touched_memory(plan.copy_bytes);
  });
  if (failure) return errors.add(tag + ": " + failure->what());
  if (!r.pageable)
    return errors.add(tag + ": cannot allocate " + format_bytes(plan.copy_bytes) +
                      " of pageable memory");
  r.ready = true;
}

void measure_transfers(Rig& r, const Plan& plan, const devices::HostRegistration& registration,
                       TransferFigures& g, Errors& errors) {
  const std::size_t b = plan.copy_bytes;
  const int fast = plan.fast_copies, w = plan.warmup, k = plan.reps;
  const std::string tag = gpu_tag(r);
  g.pinned_h2d = record(time_copies(r, b, fast, w, k, h2d(r, r.pinned.data(), b)), errors,
                        tag + " H2D pinned");
  g.pinned_d2h = record(time_copies(r, b, fast, w, k, d2h(r, r.pinned.data(), b)), errors,
                        tag + " D2H pinned");
  g.pageable_h2d = record(time_copies(r, b, 1, w, k, h2d(r, r.pageable.get(), b)), errors,
                          tag + " H2D pageable");
  g.pageable_d2h = record(time_copies(r, b, 1, w, k, d2h(r, r.pageable.get(), b)), errors,
                          tag + " D2H pageable");
  if (auto both = time_duplex(r, b, fast, w, k)) {
    g.duplex_h2d = both->h2d;
    g.duplex_d2h = both->d2h;
  } else {
    errors.add(tag + " H2D + D2H at once: " + both.error().what());
  }
  if (registration) {
    g.registered_h2d = record(time_copies(r, b, fast, w, k, h2d(r, registration.data(), b)), errors,
                              tag + " H2D registered");
    g.registered_d2h = record(time_copies(r, b, fast, w, k, d2h(r, registration.data(), b)), errors,
                              tag + " D2H registered");
  }
}

void measure_loaded_transfers(Rig& r, const Plan& plan, TransferFigures& g, Errors& errors) {
  const std::size_t b = plan.copy_bytes;
  const int fast = plan.fast_copies, w = plan.warmup, k = plan.reps;
  const std::string tag = gpu_tag(r);
  g.loaded_pinned_h2d = record(time_copies(r, b, fast, w, k, h2d(r, r.pinned.data(), b)), errors,
                               tag + " H2D pinned under load");
  g.loaded_pageable_h2d = record(time_copies(r, b, 1, w, k, h2d(r, r.pageable.get(), b)), errors,
                                 tag + " H2D pageable under load");
}

// Every GPU copies from its own pinned buffer at once. The aggregate is
// total bytes over wall-clock time: events of different GPUs cannot be
// subtracted from one another.
ConcurrentFigures measure_concurrent(std::vector<Rig>& rigs, const Plan& plan, Errors& errors) {
  std::vector<Rig*> live;
  for (auto& r : rigs)
    if (r.ready && !r.dev->health()) live.push_back(&r);
  if (live.size() < 2 || live.size() != rigs.size()) {
    if (rigs.size() > 1) errors.add("all-GPU H2D: skipped, not every GPU is ready");
    return {};
  }
  const std::size_t bytes = plan.copy_bytes;
  const int copies = plan.fast_copies;
  std::vector<double> agg;
  std::vector<std::vector<double>> per(live.size());
  const auto fail = [&](const Rig& r, const std::string& why) {
    errors.add("all-GPU H2D, " + gpu_tag(r) + ": " + why);
    return ConcurrentFigures{};
  };
  for (int i = 0; i < plan.warmup + plan.reps; ++i) {
    const auto t0 = Clock::now();
    for (auto* r : live) {
      std::error_code ec = r->dev->make_current();
      if (!ec) ec = r->stream.record(r->start);
      for (int c = 0; !ec && c < copies; ++c)
        if (const auto st = cudaMemcpyAsync(r->dbuf.data(), r->pinned.data(), bytes,
                                            cudaMemcpyHostToDevice, native(r->stream));
            st != cudaSuccess)
          return fail(*r, cuda_message("cudaMemcpyAsync", st));
      if (!ec) ec = r->stream.record(r->stop);
      if (ec) return fail(*r, ec.message());
    }
    for (auto* r : live)
      if (auto ec = r->stop.synchronize()) return fail(*r, ec.message());
    const double s = seconds_since(t0);
    if (i < plan.warmup) continue;
    agg.push_back(static_cast<double>(bytes) * copies * live.size() / 1e9 / s);
    for (std::size_t g = 0; g < live.size(); ++g) {
      auto ms = devices::elapsed_ms(live[g]->start, live[g]->stop);
      if (ms && *ms > 0) per[g].push_back(static_cast<double>(bytes) * copies / 1e9 / (*ms / 1e3));
    }
  }
  ConcurrentFigures f;
  f.aggregate_gbps = median(agg);
  for (auto& v : per) f.per_gpu_gbps.push_back(median(v).value_or(0));
  return f;
}

std::vector<PeerFigure> measure_peers(std::vector<Rig>& rigs, const Plan& plan, Errors& errors) {
  std::vector<PeerFigure> peers;
  const auto n = rigs.size();
  if (n < 2) return peers;
  PeerAccess access;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      if (i == j) continue;
      Rig& src = rigs[i];
      Rig& dst = rigs[j];
      PeerFigure pf;
      pf.src = static_cast<int>(i);
      pf.dst = static_cast<int>(j);
      if (!src.ready || !dst.ready) {
        peers.push_back(pf);
        continue;
      }
      pf.direct = access.enable(src.ordinal, dst.ordinal, errors);
      // Without peer access the copy still works, staged through host memory.
      pf.gbps = record(time_copies(src, plan.copy_bytes, plan.fast_copies, plan.warmup, plan.reps,
                                   [&](cudaStream_t s) {
                                     return cudaMemcpyPeerAsync(dst.dbuf.data(), dst.ordinal,
                                                                src.dbuf.data(), src.ordinal,
                                                                plan.copy_bytes, s);
                                   }),
                       errors, "peer copy " + gpu_tag(src) + " -> " + gpu_tag(dst));
      peers.push_back(pf);
    }
  return peers;
}

}  // namespace stoker::tools::doctor
