// See ntt_msm_h_bench.hpp. The method is bench pipeline's: jobs built once
// and submitted as copies (bench_job.hpp), pools reserved before anything
// is timed, a warm-up then --reps timed runs, medians beside the model's
// bound, and the baseline and the engine taking turns.
#include "tools/bench/ntt_msm_h_bench.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "devices/device_set.hpp"
#include "devices/meminfo.hpp"
#include "devices/pinned_buffer.hpp"
#include "engine/engine.hpp"
#include "engine/workloads/hpoly_workload.hpp"
#include "engine/workloads/ntt_msm_h_workload.hpp"
#include "engine/workloads/toy_srs.hpp"
#include "kernels/hpoly.hpp"
#include "kernels/msm.hpp"
#include "tools/bench/bench_job.hpp"
#include "tools/bench/bench_stats.hpp"
#include "tools/cli/command_line.hpp"
#include "tools/cli/json_output.hpp"
#include "tools/cli/output_file.hpp"

namespace stoker::tools {
namespace {

using Clock = std::chrono::steady_clock;
using kernels::Fr;
using kernels::G1Affine;
using kernels::G1Xyzz;
namespace wl = engine::workloads;

constexpr int kMaxReps = 1000;
constexpr int kMaxWriters = 4096;
constexpr std::size_t kMaxPartitions = std::size_t{1} << 20;
constexpr std::size_t kVerifiedPartitions = 2;
// What the engine is meant to reach: a full pipeline within 5 % of its
// bound plus fill and drain; a partition's kernels 1.5x faster than
// sppark's NTTs and MSM from pinned memory (801 ms at 2^26: 534 ms); the
// engine 2.5x the naive baseline's rate.
constexpr double kPipelineTarget = 1.05;
constexpr double kSpparkSpeedupTarget = 1.5;
constexpr double kBaselineTarget = 2.5;

struct Options {
  std::vector<unsigned> log_n;            // empty: 24,26,27 on GPUs, 8 on the host backend
  std::optional<std::size_t> partitions;  // default: 8 per device
  int reps = 3;
  int writers = 20;  // as many producers as a prover's synthesis threads in the field
  unsigned baseline_log_n = 24;
  std::size_t baseline_partitions = 16;
  std::uint64_t seed = 1;  // of a, b, c and of the toy SRS
  bool json = false;
  bool no_baseline = false;
  std::string trace;
};

// sppark on one H200 (DESIGN.md): hpoly's seven NTTs and the MSM from
// pinned host memory, at the sizes where both were measured.
struct Sppark {
  double hpoly_ms, msm_ms;
  double total_ms() const { return hpoly_ms + msm_ms; }
};
std::optional<Sppark> sppark(unsigned log_n) {
  switch (log_n) {
    case 20:
      return Sppark{2.10, 21.0};
    case 24:
      return Sppark{35.3, 169.9};
    case 26:
      return Sppark{170.4, 630.8};
    default:
      return std::nullopt;
  }
}

// Fails the bench (exit 1) with a message naming what was being done.
struct Failure {
  std::string what;
};
void check(std::error_code ec, const std::string& what) {
  if (ec) throw Failure{what + ": " + ec.message()};
}
template <typename T>
T take(Result<T> r, const std::string& what) {
  if (!r) throw Failure{what + ": " + r.error().what()};
  return std::move(*r);
}

bool out_of_memory(std::error_code ec) {
  return ec == Errc::out_of_device_memory || ec == Errc::out_of_host_memory;
}

std::string gib(std::size_t bytes) {
  char buf[32];
  if (bytes < (std::size_t{1} << 30))
    std::snprintf(buf, sizeof buf, "%.1f MiB", static_cast<double>(bytes) / double(1ull << 20));
  else
    std::snprintf(buf, sizeof buf, "%.1f GiB", static_cast<double>(bytes) / double(1ull << 30));
  return buf;
}

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

std::string size_name(unsigned log_n) {
  return "2^" + std::to_string(log_n);
}

// The smallest device budget of `e`: what an ntt_msm_h partition's MSM is
// planned for.
std::size_t min_device_budget(engine::Engine& e) {
  const auto limits = e.stats().device_budget_limit;
  return limits.empty() ? 0 : *std::min_element(limits.begin(), limits.end());
}

// Why the toy SRS of 2^log_n and one partition beside it cannot run on `e`,
// or "" when they can: on every device the points, a, b, c, the point and
// the MSM's scratch within what its budget leaves (the engine's rule: 85 %
// of the device unless --device-budget-mib says otherwise) and within its
// free memory with `extra_device` more; one partition's pinned blocks
// within the host budget; the points' host copy within available memory.
std::string why_it_does_not_fit(engine::Engine& e, unsigned log_n, std::size_t extra_device = 0) {
  const std::size_t n = std::size_t{1} << log_n, bytes = n * sizeof(Fr);
  const std::size_t srs = wl::toy_srs_points(log_n) * sizeof(G1Affine);
  const std::size_t partition =
      3 * bytes + sizeof(G1Xyzz) +
      wl::ntt_msm_h_scratch_bytes(e.devices(), log_n, srs, min_device_budget(e));
  const engine::EngineStats stats = e.stats();
  for (std::size_t d = 0; d < e.devices().size(); ++d) {
    devices::Device& dev = e.devices()[d];
    const auto mem = dev.memory_info();
    const std::size_t total = mem ? mem->total : dev.info().total_memory;
    const std::size_t set = e.config().device_budget_bytes;
    const std::size_t budget = set ? std::min(set, total) : total / 100 * 85;
    std::size_t held = 0;
    if (d < stats.device_resident_bytes.size()) held += stats.device_resident_bytes[d];
    if (d < stats.device_budget_in_use.size()) held += stats.device_budget_in_use[d];
    const std::size_t left = budget > held ? budget - held : 0;
    const std::string device = "device " + std::to_string(d);
    if (srs + partition > left)
      return "the SRS and one partition need " + gib(srs + partition) + " of " + device +
             "'s budget, which has " + gib(left) + " left";
    // The engine's memory pool keeps what earlier sizes used, free for its
    // partitions: count it as free.
    const auto pooled = dev.pool_reserved_bytes();
    const std::size_t free = mem ? mem->free + (pooled ? *pooled : 0) : 0;
    if (mem && srs + partition + extra_device > free)
      return "needs " + gib(srs + partition + extra_device) + " of " + device + "'s memory, " +
             gib(free) + " free or in the engine's pool";
  }
  engine::Partition shape;
  for (int k = 0; k < 3; ++k) shape.inputs.push_back(engine::Input::produced(bytes));
  shape.outputs.push_back(engine::Output{nullptr, sizeof(G1Xyzz), false});
  const std::size_t pinned = engine::Engine::pinned_bytes(shape);
  if (pinned > stats.host_budget_limit)
    return "a partition's pinned inputs take " + gib(pinned) + ", more than the host budget of " +
           gib(stats.host_budget_limit);
  const auto host = devices::read_meminfo();
  if (host.available_bytes && srs > *host.available_bytes)
    return "the SRS's host copy takes " + gib(srs) + ", " + gib(*host.available_bytes) +
           " of host memory available";
  return {};
}

// The toy SRS of 2^log_n made into `points` (on the engine's first GPU where
// it has one, else on the CPU) and loaded onto every engine device. An
// error is the load's: out_of_*_memory when the points do not fit.
Result<engine::Srs> load_toy_srs(engine::Engine& e, std::uint64_t seed, unsigned log_n,
                                 std::span<G1Affine> points, double& generate_s) {
  const bool gpu = e.devices().backend() == devices::Backend::cuda;
  const auto t0 = Clock::now();
  if (auto err = wl::make_toy_srs(seed, log_n, 0, points, gpu ? e.devices()[0].info().ordinal : -1))
    throw Failure{size_name(log_n) + ": making the toy SRS: " + err.what()};
  generate_s = seconds_since(t0);
  engine::SrsLoadOptions lo;
  lo.label = "toy SRS " + size_name(log_n);
  return e.load_srs(std::span<const G1Affine>(points), lo);
}

void evict(engine::Engine& e, engine::Srs srs) {
  boost::asio::io_context io;
  std::error_code ec;
  e.async_evict_srs(std::move(srs),
                    boost::asio::bind_executor(io, [&](std::error_code c) { ec = c; }));
  io.run();
  check(ec, "evicting the SRS");
}

// Pins the host blocks and maps the device pools of a full lookahead of
// partitions like the job's before anything is timed, as a prover does at
// start-up (bench pipeline says why a warm-up alone is not enough).
void reserve(engine::Engine& e, const engine::Job& job, bool json) {
  const engine::Partition& like = job.partitions[0];
  if (auto ec = e.reserve_pinned(like, std::min(job.partitions.size(), e.lookahead())))
    if (!json)
      std::printf("  note: could not pin the pool ahead (%s); it grows in the first runs\n",
                  ec.message().c_str());
  e.reserve_device(like);
}

// Runs a copy of `job` with its points poisoned first and checked written
// after.
Result<engine::JobReport> run_job(engine::Engine& e, const engine::Job& job, wl::NttMsmHRun& run) {
  auto report = run_prepared(
      e, job, [&run] { std::fill(run.sums.begin(), run.sums.end(), G1Xyzz::infinity()); });
  if (!report) return report;
  for (std::size_t p = 0; p < run.sums.size(); ++p)
    if (run.sums[p].is_infinity())
      return Error{Errc::verification_failed,
                   job.name + ": partition " + std::to_string(p) + "'s point was not written"};
  return report;
}

struct Verified {
  unsigned log_n = 0;
  double wall_ms = 0;
};

// One size's steady state: the figures of each timed job, in the order run.
struct Steady {
  unsigned log_n = 0;
  std::size_t partitions = 0;
  std::string skipped;  // why it did not run; empty when it did
  std::size_t srs_points = 0, srs_bytes = 0;
  double generate_s = 0;
  engine::SrsLoadTimes load;
  std::vector<double> wall_ms, bound_ms, bound_fill_drain_ms, ratio;
  std::vector<double> hpoly_ms, msm_ms, kernels_ms;  // every partition of every timed job
  std::vector<double> busy;                          // the last timed job's
  std::size_t slabs_grown = 0;
  engine::JobReport last;  // for --trace

  double load_gbps() const { return load.total_s > 0 ? srs_bytes / load.total_s / 1e9 : 0; }
  // A partition's share of the wall time on one device: what it costs in
  // a full pipeline, against sppark's sequential figure.
  double wall_per_partition_ms(std::size_t devices) const {
    return partitions ? median(wall_ms) * static_cast<double>(devices) / partitions : 0;
  }
};

Steady run_steady(engine::Engine& e, const Options& o, unsigned log_n, std::size_t partitions,
                  std::optional<Verified>& verified) {
  Steady s;
  s.log_n = log_n;
  s.partitions = partitions;
  const std::string at = size_name(log_n);
  if (s.skipped = why_it_does_not_fit(e, log_n); !s.skipped.empty()) return s;
  s.srs_points = wl::toy_srs_points(log_n);
  s.srs_bytes = s.srs_points * sizeof(G1Affine);
  engine::Srs srs;
  {
    // Page-aligned and left untouched until the points are written: a
    // vector would zero 12.9 GB first at 2^27.
    wl::PageBuffer<G1Affine> points(static_cast<G1Affine*>(wl::allocate_pages(s.srs_bytes)));
    if (!points) {
      s.skipped = "no host memory for the SRS's " + gib(s.srs_bytes);
      return s;
    }
    auto loaded = load_toy_srs(e, o.seed, log_n, {points.get(), s.srs_points}, s.generate_s);
    if (!loaded && out_of_memory(loaded.error().code)) {
      s.skipped = loaded.error().what();
      return s;
    }
    srs = take(std::move(loaded), at + ": loading the SRS");
  }
  s.load = srs.load_times();
  check(wl::ntt_msm_h_prepare(e.devices(), log_n), at + ": preparing the kernels");

  wl::NttMsmHOptions no;
  no.log_n = log_n;
  no.seed = o.seed;
  no.srs = srs;
  no.devices = &e.devices();
  no.device_budget_bytes = min_device_budget(e);
  if (!verified) {
    no.partitions = kVerifiedPartitions;
    no.verify = true;
    no.secret = wl::toy_srs_secret(o.seed);
    no.name = "ntt_msm_h verified";
    std::shared_ptr<wl::NttMsmHRun> run;
    const engine::Job job = take(wl::make_ntt_msm_h_job(no, run), at + ": the verified job");
    // run_prepared runs the job's check after it, on every partition.
    auto report = run_job(e, job, *run);
    if (!report) throw Failure{at + ": the verified job: " + report.error().what()};
    if (!run->all_verified())
      throw Failure{at + ": the verified job's points do not match the toy secret's"};
    verified = Verified{log_n, report->wall_ms};
  }
  no.partitions = partitions;
  no.verify = false;
  no.secret.reset();
  no.name = "ntt_msm_h";
  std::shared_ptr<wl::NttMsmHRun> run;
  std::optional<engine::Job> job(take(wl::make_ntt_msm_h_job(no, run), at + ": the job"));
  reserve(e, *job, o.json);
  for (int r = 0; r <= o.reps; ++r) {
    auto report = run_job(e, *job, *run);
    if (!report && r == 0 && out_of_memory(report.error().code)) {
      s.skipped = report.error().what();
      break;
    }
    if (!report) throw Failure{at + ": " + report.error().what()};
    if (r == 0) continue;  // the warm-up
    const double fd = report->bound_ms + report->fill_drain_ms;
    s.wall_ms.push_back(report->wall_ms);
    s.bound_ms.push_back(report->bound_ms);
    s.bound_fill_drain_ms.push_back(fd);
    if (fd > 0) s.ratio.push_back(report->wall_ms / fd);
    for (const auto& p : report->parts) {
      if (p.kernel_steps_ms.size() == 2) {
        s.hpoly_ms.push_back(p.kernel_steps_ms[0]);
        s.msm_ms.push_back(p.kernel_steps_ms[1]);
      }
      s.kernels_ms.push_back(p.kernels.ms);
    }
    s.busy = report->device_busy;
    s.slabs_grown += report->pinned_slabs_grown;
    s.last = std::move(*report);
  }
  job.reset();  // its partitions' callables hold the Srs
  run.reset();
  no.srs = {};
  evict(e, std::move(srs));
  return s;
}

// The naive baseline's device buffers on one GPU, allocated once.
struct NaiveDevice {
  devices::DeviceBuffer a, b, c, points, scratch, result;
};

// One run of the baseline: `writers` threads take partitions in turn; each
// fills its partition's a, b, c into fresh pageable vectors, then does all
// of that partition's GPU work under one process-wide mutex with
// synchronous copies, the SRS points copied in from pinned memory for every
// partition, as the field's provers do (partition p on GPU p mod G). The
// points land in `out`; returns the wall ms.
double run_naive(engine::Engine& e, std::vector<NaiveDevice>& gpus, const G1Affine* host_points,
                 unsigned log_n, std::uint64_t seed, int writers, std::vector<G1Xyzz>& out) {
  const std::size_t n = std::size_t{1} << log_n, bytes = n * sizeof(Fr);
  const std::size_t point_bytes = (n - 1) * sizeof(G1Affine);
  const cudaStream_t stream = cudaStreamLegacy;  // the default stream, which cudaMemcpy waits on
  std::fill(out.begin(), out.end(), G1Xyzz::infinity());
  std::mutex gpu_mutex, error_mutex;
  std::string error;
  std::atomic<std::size_t> next{0};
  auto fail = [&](const std::string& what) {
    std::lock_guard lock(error_mutex);
    if (error.empty()) error = what;
  };
  const auto t0 = Clock::now();
  std::vector<std::thread> threads;
  for (int w = 0; w < writers; ++w)
    threads.emplace_back([&] {
      for (std::size_t p; (p = next++) < out.size();) {
        std::vector<Fr> a(n), b(n), c(n);
        wl::hpoly_fill(seed, p, 0, n, a.data(), b.data(), c.data());
        const std::size_t g = p % gpus.size();
        NaiveDevice& d = gpus[g];
        const std::string at = "naive baseline, partition " + std::to_string(p);
        std::lock_guard lock(gpu_mutex);  // the field's global GPU mutex, deliberately
        if (auto ec = e.devices()[g].make_current()) return fail(at + ": " + ec.message());
        cudaError_t rc = cudaMemcpy(d.a.data(), a.data(), bytes, cudaMemcpyHostToDevice);
        if (rc == cudaSuccess) rc = cudaMemcpy(d.b.data(), b.data(), bytes, cudaMemcpyHostToDevice);
        if (rc == cudaSuccess) rc = cudaMemcpy(d.c.data(), c.data(), bytes, cudaMemcpyHostToDevice);
        if (rc != cudaSuccess) return fail(cuda_message(at + ": copying a, b, c in", rc));
        // h overwrites a, as in the engine's partitions.
        if (auto ec = kernels::gpu::hpoly(d.a.as<Fr>(), d.a.as<Fr>(), d.b.as<Fr>(), d.c.as<Fr>(),
                                          log_n, stream))
          return fail(at + ": hpoly: " + ec.message());
        rc = cudaMemcpy(d.points.data(), host_points, point_bytes, cudaMemcpyHostToDevice);
        if (rc != cudaSuccess) return fail(cuda_message(at + ": copying the SRS in", rc));
        if (auto ec =
                kernels::gpu::msm(d.result.as<G1Xyzz>(), d.points.as<G1Affine>(), d.a.as<Fr>(),
                                  n - 1, d.scratch.data(), d.scratch.size(), stream))
          return fail(at + ": msm: " + ec.message());
        rc = cudaMemcpy(&out[p], d.result.data(), sizeof(G1Xyzz), cudaMemcpyDeviceToHost);
        if (rc != cudaSuccess) return fail(cuda_message(at + ": copying the point out", rc));
      }
    });
  for (auto& t : threads) t.join();
  const double ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  if (!error.empty()) throw Failure{error};
  for (std::size_t p = 0; p < out.size(); ++p)
    if (out[p].is_infinity())
      throw Failure{"naive baseline: partition " + std::to_string(p) + "'s point was not written"};
  return ms;
}

struct Baseline {
  std::string skipped;
  unsigned log_n = 0;
  std::size_t partitions = 0;
  int writers = 0;
  std::vector<double> naive_ms, engine_ms, engine_bound_ms;
  std::size_t slabs_grown = 0;
  double rate(double ms) const { return ms > 0 ? partitions / (ms / 1e3) : 0; }
};

// The baseline and the engine (its own, with `writers` producer threads)
// on the same partitions, taking turns; each engine point must equal the
// baseline's.
Baseline run_baseline(engine::Config config, const Options& o) {
  Baseline b;
  b.log_n = o.baseline_log_n;
  b.partitions = o.baseline_partitions;
  b.writers = o.writers;
  const unsigned log_n = b.log_n;
  const std::string at = "baseline at " + size_name(log_n);
  boost::asio::io_context io;
  config.worker_threads = o.writers;
  auto e = take(engine::Engine::create(io.get_executor(), config), at + ": the engine");

  const std::size_t n = std::size_t{1} << log_n, bytes = n * sizeof(Fr);
  const std::size_t count = wl::toy_srs_points(log_n), point_bytes = count * sizeof(G1Affine);
  std::size_t naive_bytes = 0;
  for (std::size_t d = 0; d < e->devices().size(); ++d)
    naive_bytes = std::max(
        naive_bytes, 3 * bytes + point_bytes + sizeof(G1Xyzz) +
                         kernels::gpu::msm_scratch_bytes(n - 1, e->devices()[d].info().ordinal));
  if (b.skipped = why_it_does_not_fit(*e, log_n, naive_bytes); !b.skipped.empty()) return b;

  // The points in pinned host memory, where the baseline copies them from
  // (allocated and filled outside its time), and resident in the engine.
  auto host_points = devices::allocate_pinned(devices::Backend::cuda, point_bytes);
  if (!host_points) {
    b.skipped = "pinning the SRS's " + gib(point_bytes) + ": " + host_points.error().what();
    return b;
  }
  const std::span<G1Affine> points(static_cast<G1Affine*>(host_points->data()), count);
  double generate_s = 0;
  auto loaded = load_toy_srs(*e, o.seed, log_n, points, generate_s);
  if (!loaded && out_of_memory(loaded.error().code)) {
    b.skipped = loaded.error().what();
    return b;
  }
  const engine::Srs srs = take(std::move(loaded), at + ": loading the SRS");
  check(wl::ntt_msm_h_prepare(e->devices(), log_n), at + ": preparing the kernels");

  std::vector<NaiveDevice> gpus(e->devices().size());
  for (std::size_t d = 0; d < gpus.size(); ++d) {
    devices::Device& dev = e->devices()[d];
    const std::string where = at + ": device " + std::to_string(d) + ": ";
    auto& g = gpus[d];
    g.a = take(dev.allocate(bytes), where + "a");
    g.b = take(dev.allocate(bytes), where + "b");
    g.c = take(dev.allocate(bytes), where + "c");
    g.points = take(dev.allocate(point_bytes), where + "the SRS points");
    g.scratch = take(dev.allocate(kernels::gpu::msm_scratch_bytes(n - 1, dev.info().ordinal)),
                     where + "scratch");
    g.result = take(dev.allocate(sizeof(G1Xyzz)), where + "the point");
  }

  wl::NttMsmHOptions no;
  no.partitions = b.partitions;
  no.log_n = log_n;
  no.seed = o.seed;
  no.srs = srs;
  no.devices = &e->devices();
  no.device_budget_bytes = min_device_budget(*e);
  no.name = "ntt_msm_h engine";
  std::shared_ptr<wl::NttMsmHRun> run;
  const engine::Job job = take(wl::make_ntt_msm_h_job(no, run), at + ": the job");
  reserve(*e, job, o.json);
  std::vector<G1Xyzz> naive_points(b.partitions);
  for (int r = 0; r <= o.reps; ++r) {
    const double naive_ms =
        run_naive(*e, gpus, points.data(), log_n, o.seed, o.writers, naive_points);
    auto report = run_job(*e, job, *run);
    if (!report) throw Failure{at + ": the engine: " + report.error().what()};
    if (r == 0) continue;
    b.naive_ms.push_back(naive_ms);
    b.engine_ms.push_back(report->wall_ms);
    b.engine_bound_ms.push_back(report->bound_ms);
    b.slabs_grown += report->pinned_slabs_grown;
  }
  for (std::size_t p = 0; p < b.partitions; ++p) {
    const G1Affine naive = kernels::to_affine(naive_points[p]), ours = run->point(p);
    if (!(naive.x == ours.x && naive.y == ours.y))
      throw Failure{at + ": partition " + std::to_string(p) +
                    ": the engine's point differs from the naive baseline's"};
  }
  return b;
}

Json steady_json(const Steady& s, std::size_t devices) {
  const auto num = number_or_null;
  Json j;
  j["log_n"] = s.log_n;
  j["partitions"] = s.partitions;
  if (!s.skipped.empty()) {
    j["skipped"] = s.skipped;
    return j;
  }
  j["skipped"] = nullptr;
  j["srs"] = {{"points", s.srs_points},
              {"bytes", s.srs_bytes},
              {"generate_s", num(s.generate_s)},
              {"load_s", num(s.load.total_s)},
              {"load_gbps", num(s.load_gbps())},
              {"upload_s", s.load.upload_s},
              {"broadcast_s", s.load.broadcast_s},
              {"check_s", s.load.check_s}};
  j["wall_ms"] = num(median(s.wall_ms));
  j["bound_ms"] = num(median(s.bound_ms));
  j["bound_fill_drain_ms"] = num(median(s.bound_fill_drain_ms));
  const Spread ratio = ratios_per_rep(s.wall_ms, s.bound_fill_drain_ms);
  j["wall_over_bound_fill_drain"] = num(ratio.median);
  j["wall_over_bound_fill_drain_range"] = {num(ratio.min), num(ratio.max)};
  j["wall_over_bound_fill_drain_target"] = kPipelineTarget;
  j["each_wall_ms"] = s.wall_ms;
  j["each_bound_ms"] = s.bound_ms;
  j["each_bound_fill_drain_ms"] = s.bound_fill_drain_ms;
  const double wall = median(s.wall_ms);
  j["partitions_per_s"] = num(wall > 0 ? s.partitions / (wall / 1e3) : 0);
  j["per_partition"] = {{"hpoly_ms", num(median(s.hpoly_ms))},
                        {"msm_ms", num(median(s.msm_ms))},
                        {"kernels_ms", num(median(s.kernels_ms))},
                        {"wall_per_device_ms", num(s.wall_per_partition_ms(devices))}};
  if (const auto ref = sppark(s.log_n)) {
    const double kernels = median(s.kernels_ms);
    j["sppark"] = {{"hpoly_ms", ref->hpoly_ms},
                   {"msm_ms", ref->msm_ms},
                   {"total_ms", ref->total_ms()},
                   {"target_ms", ref->total_ms() / kSpparkSpeedupTarget},
                   {"over_kernels", num(kernels > 0 ? ref->total_ms() / kernels : 0)}};
  } else {
    j["sppark"] = nullptr;
  }
  j["device_busy"] = s.busy;
  j["pinned_slabs_grown"] = s.slabs_grown;
  return j;
}

Json baseline_json(const Baseline& b) {
  const auto num = number_or_null;
  Json j;
  if (!b.skipped.empty()) {
    j["skipped"] = b.skipped;
    return j;
  }
  j["skipped"] = nullptr;
  j["log_n"] = b.log_n;
  j["partitions"] = b.partitions;
  j["writers"] = b.writers;
  const double naive = median(b.naive_ms), ours = median(b.engine_ms);
  j["naive_ms"] = num(naive);
  j["engine_ms"] = num(ours);
  j["engine_bound_ms"] = num(median(b.engine_bound_ms));
  j["naive_partitions_per_s"] = num(b.rate(naive));
  j["engine_partitions_per_s"] = num(b.rate(ours));
  const Spread speedup = ratios_per_rep(b.naive_ms, b.engine_ms);
  j["engine_over_naive"] = num(speedup.median);
  j["engine_over_naive_range"] = {num(speedup.min), num(speedup.max)};
  j["engine_over_naive_target"] = kBaselineTarget;
  j["naive_each_ms"] = b.naive_ms;
  j["engine_each_ms"] = b.engine_ms;
  j["pinned_slabs_grown"] = b.slabs_grown;
  return j;
}

std::string cell(double v, const char* format = "%.2f") {
  if (!(v > 0)) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

void print_steady(const std::vector<Steady>& rows, std::size_t devices) {
  std::printf("\nsteady state, the SRS resident (ms; bound: the engine's model):\n");
  std::printf("  %5s %5s %7s %7s %7s %9s %9s %9s %11s %9s\n", "log_n", "parts", "SRS GB", "load s",
              "GB/s", "wall", "bound", "+fill/dr", "wall/(b+fd)", "parts/s");
  for (const auto& s : rows) {
    if (!s.skipped.empty()) continue;
    const double wall = median(s.wall_ms);
    const Spread ratio = ratios_per_rep(s.wall_ms, s.bound_fill_drain_ms);
    std::printf("  %5u %5zu %7.2f %7.2f %7s %9.1f %9.1f %9.1f %11s %9s\n", s.log_n, s.partitions,
                s.srs_bytes / 1e9, s.load.total_s, cell(s.load_gbps(), "%.1f").c_str(), wall,
                median(s.bound_ms), median(s.bound_fill_drain_ms), cell(ratio.median).c_str(),
                cell(wall > 0 ? s.partitions / (wall / 1e3) : 0).c_str());
  }
  std::printf("\nper partition (medians over every partition of the timed jobs, ms):\n");
  std::printf("  %5s %9s %9s %9s %11s %9s %9s %9s\n", "log_n", "hpoly", "msm", "kernels",
              "wall/part", "sppark", "target", "x sppark");
  for (const auto& s : rows) {
    if (!s.skipped.empty()) {
      std::printf("  %5u skipped: %s\n", s.log_n, s.skipped.c_str());
      continue;
    }
    const auto ref = sppark(s.log_n);
    const double kernels = median(s.kernels_ms);
    std::printf("  %5u %9.1f %9.1f %9.1f %11.1f %9s %9s %9s\n", s.log_n, median(s.hpoly_ms),
                median(s.msm_ms), kernels, s.wall_per_partition_ms(devices),
                ref ? cell(ref->total_ms(), "%.1f").c_str() : "-",
                ref ? cell(ref->total_ms() / kSpparkSpeedupTarget, "%.1f").c_str() : "-",
                ref && kernels > 0 ? cell(ref->total_ms() / kernels, "%.2fx").c_str() : "-");
  }
  for (const auto& s : rows)
    if (s.slabs_grown > 0)
      std::printf("  note: the pinned pool grew by %zu slab(s) during 2^%u's timed jobs\n",
                  s.slabs_grown, s.log_n);
  std::printf(
      "  target: wall/(bound + fill/drain) <= %.2f; kernels <= sppark / %.1f (hpoly's NTTs plus\n"
      "  the MSM from pinned memory, one H200); wall/part: the wall time times the devices over\n"
      "  the partitions, a partition's cost in the pipeline\n",
      kPipelineTarget, kSpparkSpeedupTarget);
}

void print_baseline(const Baseline& b) {
  std::printf("\nnaive baseline against the engine");
  if (!b.skipped.empty()) {
    std::printf(": skipped: %s\n", b.skipped.c_str());
    return;
  }
  std::printf(" at 2^%u, %zu partitions, %d writer threads:\n", b.log_n, b.partitions, b.writers);
  const double naive = median(b.naive_ms), ours = median(b.engine_ms);
  std::printf("  %-58s %9s %9s %9s\n", "", "ms", "parts/s", "bound ms");
  std::printf("  %-58s %9.1f %9s %9s\n",
              "naive: pageable, sync copies, global mutex, SRS copied in", naive,
              cell(b.rate(naive)).c_str(), "-");
  std::printf("  %-58s %9.1f %9s %9.1f\n", "engine: SRS resident, writers as its producers", ours,
              cell(b.rate(ours)).c_str(), median(b.engine_bound_ms));
  const Spread x = ratios_per_rep(b.naive_ms, b.engine_ms);
  std::printf("  engine against naive: %.2fx (%.2f-%.2fx over %zu reps; target >= %.1fx)\n",
              x.median, x.min, x.max, b.naive_ms.size(), kBaselineTarget);
}

const std::string kHelp =
    std::string(
        "usage: stoker bench ntt_msm_h [--log-n 24,26,27] [--partitions P] [--reps N]\n"
        "                              [--writers W] [--baseline-log-n K] [--baseline-partitions "
        "N]\n"
        "                              [--no-baseline] [--seed S] [--json] [--trace FILE]\n"
        "                              [engine options]\n"
        "The GPU phase of a Groth16 prover (hpoly, then the MSM of h over the toy SRS's\n"
        "H-query points, resident on every device) through the engine, in two parts.\n"
        "Steady state, for each size: the toy SRS made once (on GPU 0 where there is one) and\n"
        "loaded (time and rate reported), then a warm-up job and --reps timed jobs, unverified;\n"
        "the median wall time beside the model's bound, the bound plus fill and drain and their\n"
        "ratio, and per partition the medians of hpoly's, the MSM's and the whole kernel time\n"
        "against sppark's. One job of 2 partitions at the smallest size is verified against the\n"
        "toy secret first; the bench fails if it does not hold. A size that does not fit the\n"
        "device or host budgets is skipped and said so.\n"
        "Baseline (GPUs only): the field's way, --writers threads each filling pageable a, b, c\n"
        "and then, under one global mutex, copying them in synchronously, running hpoly,\n"
        "copying the SRS in from pinned memory and running the MSM; against the engine with\n"
        "the SRS resident and --writers producer threads. They take turns, a warm-up and --reps\n"
        "timed turns; the engine's points must equal the baseline's.\n"
        "  --log-n LIST             sizes 2^K, K in 2..28 (default 24,26,27 on GPUs, 8 on the\n"
        "                           host backend)\n"
        "  --partitions P           partitions per steady-state job (default 8 per device)\n"
        "  --reps N                 timed runs after the warm-up (default 3)\n"
        "  --writers W              producer threads in the baseline and its engine (default 20)\n"
        "  --baseline-log-n K       the baseline's size (default 24)\n"
        "  --baseline-partitions N  the baseline's partitions (default 16)\n"
        "  --no-baseline            the steady state only\n"
        "  --seed S                 of a, b, c and of the toy SRS (default 1)\n"
        "  --json                   every figure as one JSON object instead of the tables\n"
        "  --trace FILE             the largest size's last timed job as Chrome trace JSON\n"
        "Engine options and STOKER_* variables apply to every engine (--workers but in the\n"
        "baseline's, which has --writers).\n") +
    kEngineOptionsHelp;

}  // namespace

int bench_ntt_msm_h_command(int argc, char** argv) {
  CommandLine cl("bench ntt_msm_h", kHelp);
  engine::Config config;
  Options opt;
  cl.custom("--log-n", [&opt](std::string_view text) -> std::string {
    std::stringstream list{std::string(text)};
    for (std::string item; std::getline(list, item, ',');) {
      const auto k =
          engine::parse_integer<unsigned>(item, wl::kNttMsmHMinLogN, wl::kNttMsmHMaxLogN);
      if (!k)
        return engine::integer_problem("--log-n", item, wl::kNttMsmHMinLogN, wl::kNttMsmHMaxLogN);
      opt.log_n.push_back(*k);
    }
    if (opt.log_n.empty()) return "--log-n: no size in '" + std::string(text) + "'";
    return {};
  });
  cl.number("--partitions", opt.partitions, std::size_t{1}, kMaxPartitions);
  cl.number("--reps", opt.reps, 1, kMaxReps);
  cl.number("--writers", opt.writers, 1, kMaxWriters);
  cl.number("--baseline-log-n", opt.baseline_log_n, wl::kNttMsmHMinLogN, wl::kNttMsmHMaxLogN);
  cl.number("--baseline-partitions", opt.baseline_partitions, std::size_t{1}, kMaxPartitions);
  cl.flag("--no-baseline", opt.no_baseline);
  cl.number("--seed", opt.seed);
  cl.flag("--json", opt.json);
  cl.value("--trace", opt.trace);
  cl.engine_options(config);
  if (auto rc = cl.parse(argc, argv)) return *rc;
  std::optional<OutputFile> trace_file;
  if (!opt.trace.empty()) {
    auto f = OutputFile::check(opt.trace);
    if (!f) return cl.usage_error("--trace: " + f.error().what());
    trace_file.emplace(std::move(*f));
  }

  try {
    std::vector<Steady> steady;
    std::optional<Verified> verified;
    std::vector<std::string> names;
    bool gpu = false;
    std::size_t devices = 0;
    {
      boost::asio::io_context io;
      auto e = take(engine::Engine::create(io.get_executor(), config), "the engine");
      gpu = e->devices().backend() == devices::Backend::cuda;
      devices = e->devices().size();
      for (std::size_t d = 0; d < devices; ++d) names.push_back(e->devices()[d].info().name);
      if (opt.log_n.empty())
        opt.log_n = gpu ? std::vector<unsigned>{24, 26, 27} : std::vector<unsigned>{8};
      // Ascending, so that the verified job runs at the smallest size.
      std::sort(opt.log_n.begin(), opt.log_n.end());
      opt.log_n.erase(std::unique(opt.log_n.begin(), opt.log_n.end()), opt.log_n.end());
      const std::size_t partitions = opt.partitions.value_or(8 * devices);
      if (!opt.json)
        std::printf(
            "stoker bench ntt_msm_h: %zu x %s (%s backend), %zu partitions a job, median of %d "
            "timed runs after a warm-up\n",
            devices, names[0].c_str(), gpu ? "cuda" : "host", partitions, opt.reps);
      for (unsigned k : opt.log_n) {
        steady.push_back(run_steady(*e, opt, k, partitions, verified));
        if (!opt.json && verified && verified->log_n == k)
          std::printf("verified: %zu partitions of 2^%u against the toy SRS's secret (%.1f ms)\n",
                      kVerifiedPartitions, k, verified->wall_ms);
      }
    }  // the steady state's engine gives its pools back before the baseline's starts
    if (!verified) {
      for (const auto& s : steady)
        std::fprintf(stderr, "stoker bench ntt_msm_h: 2^%u skipped: %s\n", s.log_n,
                     s.skipped.c_str());
      return cl.failure("every size was skipped; nothing was verified or measured");
    }
    if (!opt.json) print_steady(steady, devices);

    Baseline baseline;
    if (!gpu)
      baseline.skipped = "needs a GPU";
    else if (opt.no_baseline)
      baseline.skipped = "--no-baseline";
    else
      baseline = run_baseline(config, opt);
    if (!opt.json) print_baseline(baseline);

    if (trace_file) {
      const Steady* largest = nullptr;
      for (const auto& s : steady)
        if (s.skipped.empty()) largest = &s;
      if (!largest) return cl.failure("--trace: no size ran to the end");
      if (auto err = trace_file->write(
              [&](std::ostream& out) { engine::write_chrome_trace(out, {largest->last}); }))
        return cl.failure("the trace: " + err.what());
    }
    if (opt.json) {
      Json j;
      j["backend"] = gpu ? "cuda" : "host";
      j["devices"] = names;
      j["reps"] = opt.reps;
      j["seed"] = opt.seed;
      j["verified"] = {{"log_n", verified->log_n},
                       {"partitions", kVerifiedPartitions},
                       {"wall_ms", verified->wall_ms},
                       {"ok", true}};
      Json rows = Json::array();
      for (const auto& s : steady) rows.push_back(steady_json(s, devices));
      j["steady"] = rows;
      j["baseline"] = baseline_json(baseline);
      std::printf("%s\n", json_text(j).c_str());
    }
  } catch (const Failure& f) {
    return cl.failure(f.what);
  }
  return 0;
}

}  // namespace stoker::tools
