// See ntt_msm_h_baseline.hpp.
#include "tools/bench/ntt_msm_h_baseline.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdio>
#include <memory>
#include <mutex>
#include <span>
#include <thread>

#include "common/elapsed.hpp"
#include "devices/device_set.hpp"
#include "devices/pinned_buffer.hpp"
#include "engine/workloads/hpoly_workload.hpp"
#include "engine/workloads/toy_srs.hpp"
#include "kernels/hpoly.hpp"
#include "kernels/msm.hpp"
#include "tools/bench/bench_stats.hpp"

namespace stoker::tools::ntt_msm_h_bench {

using kernels::Fr;
using kernels::G1Affine;
using kernels::G1Xyzz;
namespace wl = engine::workloads;

namespace {

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
  const double ms = common::ms_since(t0);
  if (!error.empty()) throw Failure{error};
  for (std::size_t p = 0; p < out.size(); ++p)
    if (out[p].is_infinity())
      throw Failure{"naive baseline: partition " + std::to_string(p) + "'s point was not written"};
  return ms;
}

}  // namespace

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

}  // namespace stoker::tools::ntt_msm_h_bench
