// See msm_bench.hpp.
#include "tools/bench/msm_bench.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
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
    "usage: stoker bench msm [--group g1|g2] [--log-n 16,20,22,24,26] [--reps N] [--window C]\n"
    "                        [--parts P] [--device N]\n"
    "  --group   the points' group: G1 (96-byte points, default) or G2 (192 bytes)\n"
    "  --log-n   sizes 2^K to run, K in 1..27 (default 16,20,22,24,26)\n"
    "  --reps    timed runs per figure, after one warm-up (default 5)\n"
    "  --window  force the window size c (2..26) instead of the cost model's\n"
    "  --parts   point ranges of the e2e run, each summed while the next is copied (1..4, "
    "default 2)\n";

struct Options {
  MsmGroup group = MsmGroup::g1;
  std::vector<unsigned> log_n{16, 20, 22, 24, 26};
  int reps = 5;
  unsigned window = 0;
  unsigned parts = 2;
  int device = 0;
};

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
  std::optional<int> device;
  cl.gpu("--device", device);
  auto rc = cl.parse(argc, argv);
  o.device = device.value_or(0);
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

struct Row {
  unsigned log_n = 0, c = 0, windows = 0;
  double e2e = 0, resident = 0, sparse = 0, split = 0, bound_split = 0, sort = 0, h2d_gbs = 0;
  double bound_resident = 0, bound_e2e = 0;
  double scratch_gib = 0;
  bool consistent = true;
};

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
  Row row;
  row.log_n = log_n;
  row.c = plan.window_bits;
  row.windows = plan.windows;
  row.scratch_gib = plan.scratch_bytes / double(1ull << 30);
  const double adds = double(n) * plan.windows;
  const double bucket_adds = 2.0 * plan.windows * plan.buckets;
  row.bound_resident = (adds / rates.mixed_per_s + bucket_adds / rates.xyzz_per_s) * 1e3;

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
  auto sparse = take(dev.allocate(scalar_bytes), at + ": sparse scalars");
  auto result = take(dev.allocate(sizeof(Xyzz)), at + ": result");
  auto scratch = take(dev.allocate(scratch_bytes), at + ": scratch");
  auto* stream = static_cast<cudaStream_t>(main.native());
  check(kernels::gpu::random_points(points.as<Affine>(), n, 1000 + log_n, scratch.data(),
                                    scratch.size(), stream),
        at + ": random points");
  check(kernels::gpu::random_scalars(scalars.as<Fr>(), n, 2000 + log_n, false, stream),
        at + ": random scalars");
  check(kernels::gpu::random_scalars(sparse.as<Fr>(), n, 3000 + log_n, true, stream),
        at + ": sparse scalars");
  auto h_points = take(devices::allocate_pinned(devices::Backend::cuda, point_bytes), at);
  auto h_scalars = take(devices::allocate_pinned(devices::Backend::cuda, scalar_bytes), at);
  auto h_result = take(devices::allocate_pinned(devices::Backend::cuda, 2 * sizeof(Xyzz)), at);
  check(main.copy(h_points.data(), points.data(), point_bytes), at + ": points to host");
  check(main.copy(h_scalars.data(), scalars.data(), scalar_bytes), at + ": scalars to host");
  check(main.synchronize(), at + ": inputs");

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
  auto resident = [&](const devices::DeviceBuffer& s) {
    check(kernels::gpu::msm(plan, result.as<Xyzz>(), points.as<Affine>(), s.as<Fr>(),
                            scratch.data(), scratch.size(), stream),
          at + ": msm");
  };
  auto* first = static_cast<unsigned char*>(h_result.data());
  auto* second = first + sizeof(Xyzz);

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
        check(kernels::gpu::msm_finish(split, result.as<Xyzz>(), scratch.data(), scratch.size(),
                                       stream),
              at + ": e2e finish");
        check(main.copy(first, result.data(), sizeof(Xyzz)), at + ": e2e result");
      },
      "e2e");
  row.resident = timed([&] { resident(scalars); }, "resident");
  check(main.copy(second, result.data(), sizeof(Xyzz)), at + ": result");
  check(main.synchronize(), at + ": result");
  // Parts change the order of additions, hence the XYZZ form: compare the
  // affine points.
  Xyzz a, b;
  std::memcpy(&a, first, sizeof a);
  std::memcpy(&b, second, sizeof b);
  const Affine pa = kernels::to_affine(a), pb = kernels::to_affine(b);
  row.consistent = std::memcmp(&pa, &pb, sizeof pa) == 0;
  row.sort = timed(
      [&] {
        check(kernels::gpu::msm_sort_scalars(plan, scalars.as<Fr>(), scratch.data(), scratch.size(),
                                             stream),
              at + ": sort");
      },
      "sort");
  row.sparse = timed([&] { resident(sparse); }, "sparse");

  // The same sparse scalars split on the host (not timed: a prover's
  // witness is there) and summed by sparse_msm: the ones by mixed
  // additions, the rest by the Pippenger over their points.
  std::vector<Fr> h_sparse(n);
  check(main.copy(h_sparse.data(), sparse.data(), scalar_bytes), at + ": sparse to host");
  check(main.copy(first, result.data(), sizeof(Xyzz)), at + ": sparse result");
  check(main.synchronize(), at + ": sparse scalars");
  const auto parts = kernels::cpu::split_scalars(h_sparse.data(), n);
  kernels::gpu::SparseMsmPlan sp;
  check(kernels::gpu::plan_sparse_msm(o.group, parts.ones.size(), parts.rest.size(), dev.index(),
                                      sp),
        at + ": sparse plan");
  auto ones = take(dev.allocate(std::max<std::size_t>(1, parts.ones.size() * 4)), at + ": ones");
  auto rest = take(dev.allocate(std::max<std::size_t>(1, parts.rest.size() * 4)), at + ": rest");
  auto rest_scalars =
      take(dev.allocate(std::max<std::size_t>(1, parts.rest.size() * sizeof(Fr))), at + ": rest");
  auto sp_scratch = take(dev.allocate(sp.scratch_bytes), at + ": sparse scratch");
  check(main.copy(ones.data(), parts.ones.data(), parts.ones.size() * 4), at + ": ones");
  check(main.copy(rest.data(), parts.rest.data(), parts.rest.size() * 4), at + ": rest");
  check(main.copy(rest_scalars.data(), parts.rest_scalars.data(), parts.rest.size() * sizeof(Fr)),
        at + ": rest scalars");
  row.split = timed(
      [&] {
        check(kernels::gpu::sparse_msm(sp, result.as<Xyzz>(), points.as<Affine>(),
                                       ones.as<std::uint32_t>(), rest.as<std::uint32_t>(),
                                       rest_scalars.as<Fr>(), sp_scratch.data(), sp_scratch.size(),
                                       stream),
              at + ": sparse msm");
      },
      "split");
  check(main.copy(second, result.data(), sizeof(Xyzz)), at + ": split result");
  check(main.synchronize(), at + ": split result");
  std::memcpy(&a, first, sizeof a);
  std::memcpy(&b, second, sizeof b);
  const Affine sa = kernels::to_affine(a), sb = kernels::to_affine(b);
  row.consistent = row.consistent && std::memcmp(&sa, &sb, sizeof sa) == 0;
  row.bound_split = (double(parts.ones.size()) / rates.mixed_per_s +
                     double(sp.rest.n) * sp.rest.windows / rates.mixed_per_s +
                     2.0 * sp.rest.windows * sp.rest.buckets / rates.xyzz_per_s) *
                    1e3;
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
    std::printf("%5s %3s %3s %9s %9s %9s %8s %9s %9s %9s %9s %9s %8s %7s %s\n", "log_n", "c", "W",
                "e2e ms", "bound", "sppark", "x sppark", "resident", "bound", "sparse", "split",
                "bound", "sort ms", "GiB", "");
    for (unsigned k : o.log_n) {
      const Row r = g2 ? run_size<G2Affine>(dev, main, copy, t, ready, rates, k, o)
                       : run_size<G1Affine>(dev, main, copy, t, ready, rates, k, o);
      const auto ref = g2 ? std::optional<double>{} : sppark_ms(k);
      char ref_s[16] = "-", speedup[16] = "-";
      if (ref) {
        std::snprintf(ref_s, sizeof ref_s, "%.1f", *ref);
        std::snprintf(speedup, sizeof speedup, "%.2fx", *ref / r.e2e);
      }
      std::printf("%5u %3u %3u %9.2f %9.2f %9s %8s %9.2f %9.2f %9.2f %9.2f %9.2f %8.2f %7.2f %s\n",
                  r.log_n, r.c, r.windows, r.e2e, r.bound_e2e, ref_s, speedup, r.resident,
                  r.bound_resident, r.sparse, r.split, r.bound_split, r.sort, r.scratch_gib,
                  r.consistent ? "" : "RESULTS DIFFER between paths");
      std::fflush(stdout);
      if (!r.consistent) return 1;
    }
    std::printf(
        "bound (resident) = n*W mixed additions + 2*W*2^(c-1) XYZZ additions at the measured "
        "rates; bound (e2e) adds the scalars' and the first part's bytes at the measured pinned "
        "H2D rate (the later parts' copies hide under additions); sparse: 40 %% zeros, 50 %% ones, "
        "10 %% full-size, by the dense path; split: the same by sparse_msm (the split made on the "
        "host beforehand), its bound the ones at the mixed-addition rate plus the rest's "
        "Pippenger bound; sppark: "
        "mult_pippenger from pinned host memory on the same kind of GPU; GiB: scratch\n");
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
