// See msm_bench.hpp.
#include "tools/bench/msm_bench.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "devices/device_set.hpp"
#include "devices/pinned_buffer.hpp"
#include "engine/strict_number.hpp"
#include "kernels/detail/msm_group.hpp"
#include "kernels/msm.hpp"
#include "tools/bench/bench_stats.hpp"
#include "tools/bench/msm_bench_kernels.hpp"
#include "tools/cli/command_line.hpp"
#include "tools/cli/memory_guard.hpp"

namespace stoker::tools {
namespace {

using kernels::Fr;
using kernels::G1Affine;
using kernels::G2Affine;
using kernels::MsmGroup;

constexpr const char* kUsage =
    "usage: stoker bench msm [--group g1|g2] [--scalars dense|sparse|both|none] [--log-n "
    "16,20,22,24,26]\n"
    "                        [--reps N] [--window C] [--parts P] [--check] [--device N]\n"
    "  --group   the points' group: G1 (96-byte points, default) or G2 (192 bytes)\n"
    "  --scalars dense: random scalars below r (e2e, resident); sparse: a witness's mix, 40 %\n"
    "            zeros, 50 % ones, 10 % full-size, by the dense path and by sparse_msm, with\n"
    "            the ones' and the rest's parts timed alone; both (default); none\n"
    "  --log-n   sizes 2^K to run, K in 1..27 (default 16,20,22,24,26)\n"
    "  --reps    timed runs per figure, after one warm-up (default 5)\n"
    "  --window  force the window size c (2..26) instead of the cost model's, the\n"
    "            sparse path's rest too\n"
    "  --parts   point ranges of the e2e run, each summed while the next is copied (1..4, "
    "default 2)\n"
    "  --check   also the check a key's load runs over the same points (on the curve, in the\n"
    "            group): each point tested, and by random buckets in ranges of a load's chunk\n"
    "  --ones-batch B, --ones-threads T\n"
    "            the sparse path's ones by batched affine additions: force B accumulators a\n"
    "            thread (1..4096) and T threads an SM (1..2048) instead of the defaults\n"
    "  --ones-start with|after\n"
    "            the sparse path's ones start with the rest (default) or once the rest's\n"
    "            bucket sums are done, beside its joins and reduction\n"
    "  --rest-buckets mixed|affine\n"
    "            the sparse path's rest adds its points to the buckets by mixed additions\n"
    "            or by batched affine additions (default: as the plan chooses, affine in G2\n"
    "            where each lane gets enough entries)\n"
    "  --bucket-batch B, --bucket-threads T\n"
    "            the affine buckets (forced, or where the plan takes them): B lanes a\n"
    "            thread (1..4096) and T threads an SM (1..2048) instead of the defaults\n"
    "  --reduce-fold L\n"
    "            the sparse path's rest: the reduction's first level folds 2^L buckets a\n"
    "            thread (1..6) instead of the plan's (G2: fewer where 2^6 leaves few threads)\n";

struct Options {
  MsmGroup group = MsmGroup::g1;
  bool dense = true, sparse = true;
  std::vector<unsigned> log_n{16, 20, 22, 24, 26};
  int reps = 5;
  unsigned window = 0;
  unsigned parts = 2;
  unsigned ones_batch = 0, ones_threads = 0;
  kernels::gpu::OnesStart ones_start = kernels::gpu::OnesStart::with_the_rest;
  kernels::gpu::BucketSum rest_buckets = kernels::gpu::BucketSum::automatic;
  unsigned bucket_batch = 0, bucket_threads = 0;
  unsigned reduce_fold = 0;
  bool points_check = false;
  int device = 0;
};

// The points a key's load hands the check at a time (engine/detail/
// srs_loading.cpp: pinned chunks of 2^21 slots, a G2 point two of them).
std::size_t load_range(MsmGroup group) {
  return group == MsmGroup::g2 ? std::size_t{1} << 20 : std::size_t{1} << 21;
}

// sppark's mult_pippenger on one H200, from pinned host memory (DESIGN.md).
std::optional<double> sppark_ms(unsigned log_n) {
  switch (log_n) {
    case 20:
      return 21.0;
    case 22:
      return 55.3;
    case 24:
      return 169.9;
    case 26:
      return 630.8;
    default:
      return std::nullopt;
  }
}

// The options as CommandLine reads them (tools/cli/command_line.hpp).
// nullopt to go on; otherwise the exit status (--help: 0, a usage error: 2).
std::optional<int> parse(int argc, char** argv, Options& o) {
  CommandLine cl("bench msm", kUsage);
  cl.custom("--group", [&o](std::string_view text) -> std::string {
    if (text != "g1" && text != "g2") return "--group: '" + std::string(text) + "' is not g1 or g2";
    o.group = text == "g2" ? MsmGroup::g2 : MsmGroup::g1;
    return {};
  });
  cl.custom("--scalars", [&o](std::string_view text) -> std::string {
    if (text != "dense" && text != "sparse" && text != "both" && text != "none")
      return "--scalars: '" + std::string(text) + "' is not dense, sparse, both or none";
    o.dense = text == "dense" || text == "both";
    o.sparse = text == "sparse" || text == "both";
    return {};
  });
  cl.custom("--log-n", [&o](std::string_view text) -> std::string {
    o.log_n.clear();
    std::stringstream ss{std::string(text)};
    std::string item;
    while (std::getline(ss, item, ',')) {
      const auto k = engine::parse_integer<unsigned>(item, 1, 27);
      if (!k) return engine::integer_problem("--log-n", item, 1u, 27u);
      o.log_n.push_back(*k);
    }
    if (o.log_n.empty()) return "--log-n: no size in '" + std::string(text) + "'";
    return {};
  });
  cl.number("--reps", o.reps, 1, 1000);
  cl.number("--window", o.window, 2u, 26u);
  cl.number("--parts", o.parts, 1u, 4u);
  cl.flag("--check", o.points_check);
  cl.number("--ones-batch", o.ones_batch, 1u, 4096u);
  cl.number("--ones-threads", o.ones_threads, 1u, 2048u);
  cl.custom("--ones-start", [&o](std::string_view text) -> std::string {
    if (text != "with" && text != "after")
      return "--ones-start: '" + std::string(text) + "' is not with or after";
    o.ones_start = text == "after" ? kernels::gpu::OnesStart::after_the_buckets
                                   : kernels::gpu::OnesStart::with_the_rest;
    return {};
  });
  cl.number("--bucket-batch", o.bucket_batch, 1u, 4096u);
  cl.number("--bucket-threads", o.bucket_threads, 1u, 2048u);
  cl.number("--reduce-fold", o.reduce_fold, 1u, 6u);
  cl.custom("--rest-buckets", [&o](std::string_view text) -> std::string {
    if (text != "mixed" && text != "affine")
      return "--rest-buckets: '" + std::string(text) + "' is not mixed or affine";
    o.rest_buckets = text == "affine" ? kernels::gpu::BucketSum::batch_affine
                                      : kernels::gpu::BucketSum::mixed_additions;
    return {};
  });
  std::optional<int> device;
  cl.gpu("--device", device);
  auto rc = cl.parse(argc, argv);
  o.device = device.value_or(0);
  if (!rc && (o.bucket_batch || o.bucket_threads) &&
      o.rest_buckets == kernels::gpu::BucketSum::mixed_additions) {
    std::fprintf(stderr,
                 "stoker bench msm: --bucket-batch and --bucket-threads shape the affine "
                 "buckets: they do not go with --rest-buckets mixed\n");
    return 2;
  }
  return rc;
}

// Fails the bench with a message naming what was being done.
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

struct Timer {
  devices::Event start, stop;
  double ms(devices::Stream& s, const std::string& what) {
    check(stop.synchronize(), what);
    return static_cast<double>(take(devices::elapsed_ms(start, stop), what));
  }
};

struct Rates {
  double mixed_per_s = 0, xyzz_per_s = 0;
};

Rates measure_add_rates(devices::Device& dev, devices::Stream& s, Timer& t, MsmGroup group) {
  auto table = take(dev.allocate(add_rate_table_bytes(group)), "add-rate table");
  auto sink = take(dev.allocate(8192), "add-rate sink");
  auto* stream = static_cast<cudaStream_t>(s.native());
  check(fill_add_rate_table(table.data(), stream, group), "add-rate table");
  int sms = 0, per_sm = 0;
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev.index());
  cudaDeviceGetAttribute(&per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, dev.index());
  const std::size_t threads = std::size_t(sms) * per_sm * 2;
  const unsigned iterations = 128;
  Rates r;
  for (bool xyzz : {false, true}) {
    std::vector<double> times;
    for (int rep = -1; rep < 5; ++rep) {
      check(s.record(t.start), "add rate");
      check(enqueue_add_rate(xyzz, table.data(), sink.data(), threads, iterations, stream, group),
            "add rate");
      check(s.record(t.stop), "add rate");
      const double ms = t.ms(s, "add rate");
      if (rep >= 0) times.push_back(ms);
    }
    const double per_s = double(threads) * iterations / (median(times) * 1e-3);
    (xyzz ? r.xyzz_per_s : r.mixed_per_s) = per_s;
  }
  return r;
}

// The bound of the ones by batched affine additions, in Fq products at the
// rate the mixed addition's micro-kernel implies (detail/ones_batch_affine.cuh
// counts them): each accumulator's first point a mixed addition (28 Fq
// products in G2, 10 in G1), every later one an affine addition (17, 6),
// and each thread's round one inversion (x^(q-2) by a sliding window: 463
// products, and 4 more for Fq2's norm): the counts the plans choose by
// (detail::affine_steps).
double batch_affine_ms(const kernels::gpu::SparseMsmPlan& p, const Rates& rates) {
  if (!p.ones || p.ones_sum != kernels::gpu::OnesSum::batch_affine) return 0;
  const auto [mixed, affine, inversion] = kernels::gpu::detail::affine_steps(p.group);
  const std::size_t per_thread = (p.ones + p.ones_threads - 1) / p.ones_threads;
  const std::size_t rounds = (per_thread + p.ones_batch - 1) / p.ones_batch;
  const double opened = double(std::min(p.ones, p.ones_threads * p.ones_batch));
  const double products = opened * mixed + double(p.ones - std::size_t(opened)) * affine +
                          double(p.ones_threads) * double(rounds > 0 ? rounds - 1 : 0) * inversion;
  return products / (rates.mixed_per_s * mixed) * 1e3;
}

struct Row {
  unsigned log_n = 0, c = 0, windows = 0;
  double e2e = 0, resident = 0, sort = 0, h2d_gbs = 0;
  double bound_resident = 0, bound_e2e = 0;
  double scratch_gib = 0;
  double finish = 0;  // the host's finish of the window sums, ms
  // Sparse scalars: by the dense path, by sparse_msm, and its two parts
  // alone (the ones' sum; the rest's Pippenger, of window c_tail).
  double dense_path = 0, split = 0, ones = 0, tail = 0;
  double bound_split = 0, bound_ones = 0, bound_tail = 0;
  // The ones each way: mixed additions, batched affine additions.
  double ones_mixed = 0, ones_affine = 0, bound_ones_mixed = 0, bound_ones_affine = 0;
  bool ones_by_affine = false;  // what plan_sparse_msm chose
  bool rest_by_affine = false;  // the rest's buckets, as the plan chose
  unsigned rest_fold_log = 0;   // the rest's reduction: 2^this buckets a thread first
  unsigned c_tail = 0, w_tail = 0;
  // The load's point check: each point tested, batched (c, W).
  double check_each = 0, check_batched = 0;
  unsigned check_c = 0, check_w = 0;
  bool consistent = true;
};

// The sum that window sums copied to the host stand for.
template <typename Xyzz>
Xyzz finished(const devices::PinnedBuffer& sums, const std::string& what) {
  Xyzz out;
  check(kernels::cpu::finish_window_sums(sums.data(), sums.size(), out), what + ": window sums");
  return out;
}

// Equal affine forms (the order of additions differs between paths, hence
// the XYZZ form).
template <typename Xyzz>
bool same_point(const Xyzz& a, const Xyzz& b) {
  const auto pa = kernels::to_affine(a), pb = kernels::to_affine(b);
  return std::memcmp(&pa, &pb, sizeof pa) == 0;
}

// G1Affine or G2Affine points; the group's rates.
template <typename Affine>
Row run_size(devices::Device& dev, devices::Stream& main, devices::Stream& copy, Timer& t,
             std::vector<devices::Event>& ready, const Rates& rates, unsigned log_n,
             const Options& o) {
  using Xyzz = kernels::detail::XyzzOf<Affine>;
  const std::size_t n = std::size_t{1} << log_n;
  const std::string at = "2^" + std::to_string(log_n);
  kernels::gpu::MsmPlan plan, split;
  check(kernels::gpu::plan_msm(o.group, n, dev.index(), plan, o.window), at + ": plan");
  check(kernels::gpu::plan_msm(o.group, n, dev.index(), split, plan.window_bits, o.parts),
        at + ": plan");
  // The Pippenger bound of m points at a plan's window. Buckets by batched
  // affine additions: every entry an affine addition, each thread's round
  // an inversion, each lane's head a mixed addition, in Fq products at the
  // rate the mixed addition implies.
  auto pippenger_ms = [&rates](std::size_t m, const kernels::gpu::MsmPlan& p) {
    if (m == 0) return 0.0;
    const double entries = double(m) * p.windows;
    double additions_s = entries / rates.mixed_per_s;
    if (p.accumulate_batch) {
      const auto [mixed, affine, inversion] = kernels::gpu::detail::affine_steps(p.group);
      const double lanes = entries / p.slice;
      const double products = entries * affine +
                              lanes / p.accumulate_batch * p.slice * inversion + lanes * mixed;
      additions_s = products / (rates.mixed_per_s * mixed);
    }
    return (additions_s + 2.0 * p.windows * p.buckets / rates.xyzz_per_s) * 1e3;
  };
  Row row;
  row.log_n = log_n;
  row.c = plan.window_bits;
  row.windows = plan.windows;
  row.scratch_gib = plan.scratch_bytes / double(1ull << 30);
  row.bound_resident = pippenger_ms(n, plan);

  const std::size_t point_bytes = n * sizeof(Affine), scalar_bytes = n * sizeof(Fr);
  const std::size_t gen_bytes = kernels::gpu::random_points_scratch_bytes(o.group, n);
  const auto room = take(dev.memory_info(), at + ": memory info");
  const std::size_t scratch_bytes = std::max({plan.scratch_bytes, split.scratch_bytes, gen_bytes});
  const std::size_t need = point_bytes + 2 * scalar_bytes + scratch_bytes;
  if (need + (std::size_t{512} << 20) > room.free)
    throw Failure{at + ": needs " + std::to_string(need >> 20) + " MiB of device memory, " +
                  std::to_string(room.free >> 20) + " MiB free"};
  auto points = take(dev.allocate(point_bytes), at + ": points");
  auto scalars = take(dev.allocate(scalar_bytes), at + ": scalars");
  // Every MSM leaves its window sums (kernels/msm.hpp), copied to the host
  // within the timed span and finished there; the finish's time on one CPU
  // core (row.finish) is added to each figure.
  const std::size_t sums_bytes =
      kernels::gpu::window_sums_bytes(o.group, kernels::gpu::kMsmMaxWindows);
  auto sums = take(dev.allocate(sums_bytes), at + ": window sums");
  auto scratch = take(dev.allocate(scratch_bytes), at + ": scratch");
  auto* stream = static_cast<cudaStream_t>(main.native());
  check(kernels::gpu::random_points(points.as<Affine>(), n, 1000 + log_n, scratch.data(),
                                    scratch.size(), stream),
        at + ": random points");
  devices::PinnedBuffer h_sums[2] = {
      take(devices::allocate_pinned(devices::Backend::cuda, sums_bytes), at),
      take(devices::allocate_pinned(devices::Backend::cuda, sums_bytes), at)};
  // The bytes the MSM left (its plan's windows), not the whole buffer.
  auto sums_to_host = [&](int k, std::size_t bytes) {
    check(main.copy(h_sums[k].data(), sums.data(), bytes), at + ": window sums to host");
  };

  auto timed = [&](auto&& body, const char* what) {
    std::vector<double> times;
    for (int rep = -1; rep < o.reps; ++rep) {
      check(main.record(t.start), at + ": " + what);
      body();
      check(main.record(t.stop), at + ": " + what);
      const double ms = t.ms(main, at + ": " + what);
      if (rep >= 0) times.push_back(ms);
    }
    return median(times);
  };
  auto resident = [&]() {
    check(kernels::gpu::msm_window_sums(plan, sums.data(), points.as<Affine>(), scalars.as<Fr>(),
                                        scratch.data(), scratch.size(), stream),
          at + ": msm");
    sums_to_host(1, kernels::gpu::window_sums_bytes(plan));
  };
  // The host's finish of what h_sums[k] holds, timed on this thread.
  auto finish_ms = [&](int k) {
    check(main.synchronize(), at + ": window sums");
    std::vector<double> times;
    for (int rep = 0; rep < std::max(o.reps, 3); ++rep) {
      const auto t0 = std::chrono::steady_clock::now();
      (void)finished<Xyzz>(h_sums[k], at);
      times.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    return median(times);
  };

  if (o.dense) {
    check(kernels::gpu::random_scalars(scalars.as<Fr>(), n, 2000 + log_n, false, stream),
          at + ": random scalars");
    auto h_points = take(devices::allocate_pinned(devices::Backend::cuda, point_bytes), at);
    auto h_scalars = take(devices::allocate_pinned(devices::Backend::cuda, scalar_bytes), at);
    check(main.copy(h_points.data(), points.data(), point_bytes), at + ": points to host");
    check(main.copy(h_scalars.data(), scalars.data(), scalar_bytes), at + ": scalars to host");
    check(main.synchronize(), at + ": inputs");

    // Link rate for the bound: the points alone, pinned to device.
    row.h2d_gbs =
        point_bytes /
        (timed([&] { check(main.copy(points.data(), h_points.data(), point_bytes), at + ": h2d"); },
               "h2d") *
         1e6);
    // What no schedule can hide: the scalars (the sort needs all of them)
    // and the first part's points (nothing is summed before they are in);
    // the later parts travel under the earlier parts' additions.
    const double first_part_bytes = double(split.part_begin[1]) * sizeof(Affine);
    row.bound_e2e = row.bound_resident + (scalar_bytes + first_part_bytes) / (row.h2d_gbs * 1e6);

    // Everything in on the copy stream, scalars first; the main stream sorts
    // once the scalars are in and adds each part once its points are.
    row.e2e = timed(
        [&] {
          check(copy.wait(t.start), at + ": e2e");
          check(copy.copy(scalars.data(), h_scalars.data(), scalar_bytes), at + ": e2e scalars");
          check(copy.record(ready[0]), at + ": e2e");
          for (unsigned part = 0; part < split.parts; ++part) {
            const std::size_t begin = split.part_begin[part];
            const std::size_t end = split.part_begin[part + 1];
            check(copy.copy(points.as<Affine>() + begin,
                            static_cast<const Affine*>(h_points.data()) + begin,
                            (end - begin) * sizeof(Affine)),
                  at + ": e2e points");
            check(copy.record(ready[1 + part]), at + ": e2e");
          }
          check(main.wait(ready[0]), at + ": e2e");
          check(kernels::gpu::msm_sort_scalars(split, scalars.as<Fr>(), scratch.data(),
                                               scratch.size(), stream),
                at + ": e2e sort");
          for (unsigned part = 0; part < split.parts; ++part) {
            check(main.wait(ready[1 + part]), at + ": e2e");
            check(kernels::gpu::msm_add_points(split, part, points.as<Affine>(), scratch.data(),
                                               scratch.size(), stream),
                  at + ": e2e add");
          }
          check(kernels::gpu::msm_finish_window_sums(split, o.group, sums.data(), scratch.data(),
                                                     scratch.size(), stream),
                at + ": e2e finish");
          sums_to_host(0, kernels::gpu::window_sums_bytes(split));
        },
        "e2e");
    row.finish = finish_ms(0);
    row.e2e += row.finish;
    row.resident = timed(resident, "resident") + row.finish;
    check(main.synchronize(), at + ": result");
    row.consistent = same_point(finished<Xyzz>(h_sums[0], at), finished<Xyzz>(h_sums[1], at));
    row.sort = timed(
        [&] {
          check(kernels::gpu::msm_sort_scalars(plan, scalars.as<Fr>(), scratch.data(),
                                               scratch.size(), stream),
                at + ": sort");
        },
        "sort");
  }
  if (o.points_check) {
    // Good points: both checks must leave first_bad at n.
    const std::size_t range = std::min(n, load_range(o.group));
    kernels::gpu::BatchCheckPlan bp;
    check(kernels::gpu::plan_batch_check(o.group, range, dev.index(), bp), at + ": check plan");
    row.check_c = bp.bucket_bits;
    row.check_w = bp.windows;
    auto first_bad = take(dev.allocate(sizeof(std::uint64_t)), at + ": check");
    auto batch_scratch = take(dev.allocate(bp.scratch_bytes), at + ": check scratch");
    kernels::gpu::PointCheckKey key;
    check(kernels::gpu::random_point_check_key(key), at + ": check key");
    auto* bad = first_bad.as<std::uint64_t>();
    auto expect_passed = [&](const char* how) {
      std::uint64_t h = 0;
      check(main.synchronize(), at + ": check");
      check(make_cuda_error(cudaMemcpy(&h, bad, sizeof h, cudaMemcpyDeviceToHost)),
            at + ": check result");
      if (h != n)
        throw Failure{at + ": the check " + how + " refused point " + std::to_string(h) +
                      " of points made in the group"};
    };
    row.check_each = timed(
        [&] {
          check(kernels::gpu::check_points_begin(bad, n, stream), at + ": check");
          check(kernels::gpu::check_points_range(bad, points.as<Affine>(), 0, n, stream),
                at + ": check");
        },
        "check each");
    expect_passed("of each point");
    row.check_batched = timed(
        [&] {
          check(kernels::gpu::check_points_begin(bad, n, stream), at + ": check");
          for (std::size_t b = 0; b < n; b += range)
            check(kernels::gpu::check_points_batched(bp, bad, points.as<Affine>(), b,
                                                     std::min(n, b + range), key,
                                                     batch_scratch.data(), batch_scratch.size(),
                                                     stream),
                  at + ": batched check");
        },
        "check batched");
    expect_passed("by random buckets");
  }
  if (!o.sparse) return row;

  // Witness-like scalars by the dense path, then split on the host (not
  // timed: a prover's witness is there) and summed by sparse_msm: the ones
  // by mixed additions, the rest by the Pippenger over their points.
  check(kernels::gpu::random_scalars(scalars.as<Fr>(), n, 3000 + log_n, true, stream),
        at + ": sparse scalars");
  row.dense_path = timed(resident, "sparse");
  row.finish = finish_ms(1);
  row.dense_path += row.finish;
  const Xyzz dense_sum = finished<Xyzz>(h_sums[1], at);
  std::vector<Fr> h_sparse(n);
  check(main.copy(h_sparse.data(), scalars.data(), scalar_bytes), at + ": sparse to host");
  check(main.synchronize(), at + ": sparse scalars");
  const auto parts = kernels::cpu::split_scalars(h_sparse.data(), n);
  const std::size_t n_ones = parts.ones.size(), n_rest = parts.rest.size();
  kernels::gpu::SparseMsmPlan sp, ones_only, rest_only, ones_mixed, ones_affine;
  kernels::gpu::SparseMsmShape shape;
  shape.rest_window_bits = o.window;
  shape.ones_batch = o.ones_batch;
  shape.ones_threads_per_sm = o.ones_threads;
  shape.ones_start = o.ones_start;
  shape.rest_buckets = o.rest_buckets;
  shape.rest_bucket_batch = o.bucket_batch;
  shape.rest_bucket_threads_per_sm = o.bucket_threads;
  shape.rest_reduce_first_log = o.reduce_fold;
  check(kernels::gpu::plan_sparse_msm(o.group, n_ones, n_rest, dev.index(), sp, shape),
        at + ": sparse plan");
  check(kernels::gpu::plan_sparse_msm(o.group, n_ones, 0, dev.index(), ones_only, shape),
        at + ": sparse plan");
  check(kernels::gpu::plan_sparse_msm(o.group, 0, n_rest, dev.index(), rest_only, shape),
        at + ": sparse plan");
  shape.ones_sum = kernels::gpu::OnesSum::mixed_additions;
  check(kernels::gpu::plan_sparse_msm(o.group, n_ones, 0, dev.index(), ones_mixed, shape),
        at + ": sparse plan");
  shape.ones_sum = kernels::gpu::OnesSum::batch_affine;
  check(kernels::gpu::plan_sparse_msm(o.group, n_ones, 0, dev.index(), ones_affine, shape),
        at + ": sparse plan");
  auto ones = take(dev.allocate(std::max<std::size_t>(1, n_ones * 4)), at + ": ones");
  auto rest = take(dev.allocate(std::max<std::size_t>(1, n_rest * 4)), at + ": rest");
  auto rest_scalars =
      take(dev.allocate(std::max<std::size_t>(1, n_rest * sizeof(Fr))), at + ": rest");
  auto sp_scratch = take(dev.allocate(std::max({sp.scratch_bytes, ones_only.scratch_bytes,
                                                rest_only.scratch_bytes, ones_mixed.scratch_bytes,
                                                ones_affine.scratch_bytes})),
                         at + ": sparse scratch");
  check(main.copy(ones.data(), parts.ones.data(), n_ones * 4), at + ": ones");
  check(main.copy(rest.data(), parts.rest.data(), n_rest * 4), at + ": rest");
  check(main.copy(rest_scalars.data(), parts.rest_scalars.data(), n_rest * sizeof(Fr)),
        at + ": rest scalars");
  auto sparse_msm = [&](const kernels::gpu::SparseMsmPlan& p) {
    return [&] {
      check(kernels::gpu::sparse_msm_window_sums(p, sums.data(), points.as<Affine>(),
                                                 p.ones ? ones.as<std::uint32_t>() : nullptr,
                                                 p.rest.n ? rest.as<std::uint32_t>() : nullptr,
                                                 p.rest.n ? rest_scalars.as<Fr>() : nullptr,
                                                 sp_scratch.data(), sp_scratch.size(), stream),
            at + ": sparse msm");
      sums_to_host(0, kernels::gpu::window_sums_bytes(p));
    };
  };
  row.split = timed(sparse_msm(sp), "split") + finish_ms(0);
  row.consistent = row.consistent && same_point(dense_sum, finished<Xyzz>(h_sums[0], at));
  row.ones = timed(sparse_msm(ones_only), "ones") + finish_ms(0);
  row.ones_by_affine = ones_only.ones_sum == kernels::gpu::OnesSum::batch_affine;
  const Xyzz ones_sum = finished<Xyzz>(h_sums[0], at);
  row.ones_mixed = timed(sparse_msm(ones_mixed), "ones mixed") + finish_ms(0);
  row.consistent = row.consistent && same_point(ones_sum, finished<Xyzz>(h_sums[0], at));
  row.ones_affine = timed(sparse_msm(ones_affine), "ones affine") + finish_ms(0);
  row.consistent = row.consistent && same_point(ones_sum, finished<Xyzz>(h_sums[0], at));
  row.tail = timed(sparse_msm(rest_only), "tail") + finish_ms(0);
  row.c_tail = sp.rest.window_bits;
  row.rest_by_affine = sp.rest.accumulate_batch != 0;
  row.rest_fold_log = sp.rest.reduce_first_log;
  row.w_tail = sp.rest.windows;
  row.bound_ones_mixed = double(n_ones) / rates.mixed_per_s * 1e3;
  row.bound_ones_affine = batch_affine_ms(ones_affine, rates);
  row.bound_ones = row.ones_by_affine ? row.bound_ones_affine : row.bound_ones_mixed;
  row.bound_tail = pippenger_ms(n_rest, sp.rest);
  row.bound_split = row.bound_ones + row.bound_tail;
  return row;
}

int bench_msm(int argc, char** argv) {
  Options o;
  if (auto rc = parse(argc, argv, o)) return *rc;
  if (devices::cuda_device_count() == 0) {
    std::fprintf(stderr, "stoker bench msm: needs a CUDA device; this machine has none\n");
    return 1;
  }
  try {
    devices::DiscoverOptions d;
    d.backend = devices::BackendChoice::cuda;
    d.cuda_ordinals = {o.device};
    auto set = take(devices::discover(d), "device " + std::to_string(o.device));
    devices::Device& dev = set[0];
    check(dev.make_current(), "device");
    auto main = take(dev.create_stream(), "stream");
    auto copy = take(dev.create_stream(), "stream");
    Timer t{take(dev.create_event(devices::EventKind::timing), "event"),
            take(dev.create_event(devices::EventKind::timing), "event")};
    std::vector<devices::Event> ready;
    for (unsigned i = 0; i <= o.parts; ++i) ready.push_back(take(dev.create_event(), "event"));
    const bool g2 = o.group == MsmGroup::g2;
    const Rates rates = measure_add_rates(dev, main, t, o.group);
    std::printf("stoker bench msm: %s, %s, CUDA events, median of %d after a warm-up\n",
                g2 ? "G2" : "G1", dev.info().name.c_str(), o.reps);
    std::printf("measured: mixed addition (XYZZ + affine) %.3e/s, XYZZ addition %.3e/s\n",
                rates.mixed_per_s, rates.xyzz_per_s);
    std::vector<Row> rows;
    if (o.dense)
      std::printf("dense scalars:\n%5s %3s %3s %9s %9s %9s %8s %9s %9s %8s %9s %7s %s\n", "log_n",
                  "c", "W", "e2e ms", "bound", "sppark", "x sppark", "resident", "bound", "sort ms",
                  "finish ms", "GiB", "");
    for (unsigned k : o.log_n) {
      const Row r = g2 ? run_size<G2Affine>(dev, main, copy, t, ready, rates, k, o)
                       : run_size<G1Affine>(dev, main, copy, t, ready, rates, k, o);
      rows.push_back(r);
      if (o.dense) {
        const auto ref = g2 ? std::optional<double>{} : sppark_ms(k);
        char ref_s[16] = "-", speedup[16] = "-";
        if (ref) {
          std::snprintf(ref_s, sizeof ref_s, "%.1f", *ref);
          std::snprintf(speedup, sizeof speedup, "%.2fx", *ref / r.e2e);
        }
        std::printf("%5u %3u %3u %9.2f %9.2f %9s %8s %9.2f %9.2f %8.2f %9.3f %7.2f %s\n", r.log_n,
                    r.c, r.windows, r.e2e, r.bound_e2e, ref_s, speedup, r.resident,
                    r.bound_resident, r.sort, r.finish, r.scratch_gib,
                    r.consistent ? "" : "RESULTS DIFFER between paths");
      } else if (!r.consistent) {
        std::printf("2^%u: RESULTS DIFFER between paths\n", r.log_n);
      }
      std::fflush(stdout);
      if (!r.consistent) return 1;
    }
    if (o.dense)
      std::printf(
          "bound (resident) = n*W mixed additions + 2*W*2^(c-1) XYZZ additions at the measured "
          "rates; bound (e2e) adds the scalars' and the first part's bytes at the measured pinned "
          "H2D rate (the later parts' copies hide under additions); sppark: mult_pippenger from "
          "pinned host memory on the same kind of GPU; finish: the host's sum of the window sums "
          "the "
          "GPU leaves (one core), included in e2e and resident; GiB: scratch\n");
    if (o.sparse) {
      std::printf("sparse scalars (40 %% zeros, 50 %% ones, 10 %% full-size), resident:\n");
      std::printf("%5s %9s %9s %9s %7s %9s %9s %3s %3s %9s %9s %9s %9s %9s %9s\n", "log_n",
                  "dense ms", "split", "bound", "x dense", "ones", "bound", "c", "W", "rest",
                  "bound", "mixed", "bound", "affine", "bound");
      for (const Row& r : rows)
        std::printf(
            "%5u %9.2f %9.2f %9.2f %6.2fx %9.2f %9.2f %3u %3u %9.2f %9.2f %9.2f %9.2f %9.2f "
            "%9.2f (ones: %s; rest: %s, fold 2^%u)\n",
            r.log_n, r.dense_path, r.split, r.bound_split, r.dense_path / r.split, r.ones,
            r.bound_ones, r.c_tail, r.w_tail, r.tail, r.bound_tail, r.ones_mixed,
            r.bound_ones_mixed, r.ones_affine, r.bound_ones_affine,
            r.ones_by_affine ? "affine" : "mixed", r.rest_by_affine ? "affine" : "mixed",
            r.rest_fold_log);
      std::printf(
          "dense: the dense path (every scalar sorted into W windows); split: sparse_msm on the "
          "scalars split on the host beforehand (zeros left out); ones: its sum of the points "
          "whose scalar is 1 alone, as the plan chose; mixed, affine: the ones by mixed "
          "additions (bound one each at the measured rate) and by batched affine additions "
          "(bound: their Fq products at the rate the mixed addition implies); rest: its "
          "Pippenger over the others alone, bound as the dense path's for their count at its "
          "window c (where its buckets are affine: the affine additions' Fq products); "
          "in brackets what the plan chose: the ones' form, the rest's buckets and its "
          "reduction's first fold\n");
    }
    if (o.points_check) {
      std::printf("the points' check (on the curve, in the group), resident:\n");
      std::printf("%5s %11s %11s %8s %9s %9s %3s %3s\n", "log_n", "each ms", "batched ms",
                  "x each", "ns/pt", "ns/pt", "c", "W");
      for (const Row& r : rows) {
        const double n = double(std::size_t{1} << r.log_n);
        std::printf("%5u %11.2f %11.2f %7.2fx %9.2f %9.2f %3u %3u\n", r.log_n, r.check_each,
                    r.check_batched, r.check_each / r.check_batched, r.check_each * 1e6 / n,
                    r.check_batched * 1e6 / n, r.check_c, r.check_w);
      }
      std::printf(
          "each: one thread a point, its curve equation and membership test; batched: ranges of "
          "%zu points (a key load's chunk), each point's curve equation and W random buckets "
          "of 2^c, every bucket's sum tested; both over the same points, of the group\n",
          load_range(o.group));
    }
  } catch (const Failure& f) {
    std::fprintf(stderr, "stoker bench msm: %s\n", f.what.c_str());
    return 1;
  }
  return 0;
}

}  // namespace

int bench_msm_command(int argc, char** argv) {
  return with_memory_guard("bench msm", [&] { return bench_msm(argc, argv); });
}

}  // namespace stoker::tools
