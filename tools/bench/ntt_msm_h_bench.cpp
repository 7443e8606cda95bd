// See ntt_msm_h_bench.hpp. The method is bench pipeline's: jobs built once
// and submitted as copies (bench_job.hpp), pools reserved before anything
// is timed, a warm-up then --reps timed runs, medians beside the model's
// bound, and the baseline and the engine taking turns. The steady state and
// the command are here; the shared steps in ntt_msm_h_bench_steps.*, the
// naive baseline in ntt_msm_h_baseline.*.
#include "tools/bench/ntt_msm_h_bench.hpp"

#include <algorithm>
#include <cstdio>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "common/host_memory_limit.hpp"
#include "devices/device_set.hpp"
#include "engine/engine.hpp"
#include "engine/workloads/ntt_msm_h_workload.hpp"
#include "engine/workloads/toy_srs.hpp"
#include "kernels/msm.hpp"
#include "tools/bench/bench_job.hpp"
#include "tools/bench/bench_stats.hpp"
#include "tools/bench/ntt_msm_h_baseline.hpp"
#include "tools/bench/ntt_msm_h_bench_steps.hpp"
#include "tools/cli/command_line.hpp"
#include "tools/cli/json_output.hpp"
#include "tools/cli/memory_guard.hpp"
#include "tools/cli/output_file.hpp"

namespace stoker::tools {
namespace {

using namespace ntt_msm_h_bench;
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
// engine 2.5x the naive baseline's rate (kBaselineTarget).
constexpr double kPipelineTarget = 1.05;
constexpr double kSpparkSpeedupTarget = 1.5;

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
      s.skipped = common::host_memory_refused("the SRS's points", s.srs_bytes).what();
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
              {"nccl_setup_s", s.load.nccl_setup_s},
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

int bench_ntt_msm_h(int argc, char** argv) {
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

}  // namespace

int bench_ntt_msm_h_command(int argc, char** argv) {
  return with_memory_guard("bench ntt_msm_h", [&] { return bench_ntt_msm_h(argc, argv); });
}

}  // namespace stoker::tools
