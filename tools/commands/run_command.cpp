// stoker run: the engine's main job. By default the ntt_msm_h workload:
// producers write a, b and c = a * b straight into pinned memory, the GPUs
// compute the Groth16 H polynomial of each partition and its MSM over the
// SRS's H-query points, resident on every GPU; --verify checks every point
// on the CPU with the toy SRS's secret. --workload hpoly stops at h (and
// brings it back); --workload synthetic keeps the integer workload of the
// engine's own tests (copy-bound to compute-bound by --rounds).
#include "tools/commands/run_command.hpp"

#include <unistd.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "engine/engine.hpp"
#include "engine/workloads/hpoly_workload.hpp"
#include "engine/workloads/ntt_msm_h_workload.hpp"
#include "engine/workloads/synthetic.hpp"
#include "kernels/g1_encoding.hpp"
#include "tools/bench/bench_stats.hpp"
#include "tools/cli/command_line.hpp"
#include "tools/cli/json_output.hpp"
#include "tools/cli/output_file.hpp"
#include "tools/cli/progress_bar.hpp"
#include "tools/commands/run_srs.hpp"

namespace stoker::tools {
namespace {

const std::string kHelp = std::string(R"(usage: stoker run [options]
  --workload W        ntt_msm_h (default), hpoly or synthetic
  --partitions N      partitions in the job (default: ntt_msm_h and hpoly 4 per GPU, 8 on the
                      host backend; synthetic 16 per GPU, 8 on the host backend)
  --seed S            data seed (default 1)
  --trace FILE        write the timeline as Chrome trace JSON (Perfetto, chrome://tracing)
  --json              machine-readable summary
  --no-progress       no progress bar
  --cold              skip pinning the host pool and growing the device pools ahead of the
                      job, so the job pays for them (the NTT tables and the engine's staging
                      buffers are still made before it)
ntt_msm_h (H polynomial of a, b, c, then its MSM over the SRS's H-query points, one G1
point out per partition) and hpoly (the H polynomial alone, h out):
  --log-n K           partition size 2^K (ntt_msm_h 2..28, hpoly 1..28; default: 24 on GPUs,
                      ntt_msm_h 10 and hpoly 14 on the host backend)
  --verify            check every partition on the CPU (default on the host backend; on GPUs
                      it costs CPU time beside the producers). ntt_msm_h: the point equals
                      [(A(t)B(t) - C(t)) / d] G for the toy SRS's secret (t, d); hpoly:
                      h(x)(x^n - 1) == A(x)B(x) - C(x) at a random x
  --no-verify         do not check
ntt_msm_h:
  --srs FILE          the H-query points, 96 bytes each (the G1 encoding of `stoker msm`), at
                      least 2^K - 1; loaded once onto every GPU. Default: the toy SRS for K,
                      generated (on GPUs kept in a cache file, toy-srs-2^K-seed-S.g1 under
                      $XDG_CACHE_HOME/stoker or ~/.cache/stoker). A toy SRS's secret derives
                      from its seed: for testing only, never for proofs anyone relies on
  --srs-seed S        the toy SRS's seed (default 1): to generate it, and for --verify with
                      --srs FILE written by `stoker srs generate --seed S`
  --srs-upload HOW    how the points reach GPUs after the first: broadcast (default; NCCL
                      from the first GPU where peers reach it) or each (every GPU uploads
                      from pinned host memory over its own link)
  --keep-h            bring h back too (and --verify checks it)
hpoly:
  --h-memory M        where h lands: registered (default; page-locked once before the job, so
                      the D2H writes it in place) or pageable (through a pinned bounce block
                      and a host copy per partition); --output-memory M says the same
synthetic (implied by --size-mib, --rounds or --pageable):
  --size-mib M        input MiB per partition (default: 256 on GPUs, 4 on the host backend)
  --rounds R          integer mixing rounds per output word: 0 copy-bound .. 1000 compute-bound (default 16)
  --pageable          inputs from caller-owned std::vector through pinned staging (default: pinned producers)
  --registered        inputs generated before the job in caller memory page-locked once: the job
                      copies and computes only, so a copy-bound run measures the engine's H2D
  --output-memory M   where outputs land: pageable (default; a pinned bounce block and a host
                      copy per partition) or registered (page-locked once before the job, so
                      the D2H writes them in place)
)") + kEngineOptionsHelp;

struct StageMedians {
  double producer = 0, h2d = 0, kernels = 0, d2h = 0;
};

StageMedians stage_medians(const engine::JobReport& r) {
  std::vector<double> prod, h2d, k, d2h;
  for (const auto& p : r.parts) {
    if (p.device < 0) continue;  // never ran
    prod.push_back(p.producer.ms);
    h2d.push_back(p.h2d.ms);
    k.push_back(p.kernels.ms);
    d2h.push_back(p.d2h.ms);
  }
  return {median(prod), median(h2d), median(k), median(d2h)};
}

// The --json summary; `extra` (the workload's fields) goes after the stage
// medians. Field names are read by scripts (tools/scripts/ab) and checks:
// keep them.
Json json_report(const engine::JobReport& r, const engine::Engine& e, const Json& extra) {
  Json j;
  j["job"] = r.name;
  j["backend"] = devices::to_string(e.devices().backend());
  j["devices"] = e.devices().size();
  j["partitions"] = r.partitions;
  j["partitions_done"] = r.partitions_done;
  j["wall_ms"] = r.wall_ms;
  j["partitions_per_s"] = r.partitions_per_s();
  j["bytes_in"] = r.bytes_in();
  j["bytes_out"] = r.bytes_out();
  j["bytes_registered"] = r.bytes_registered();
  j["h2d_gbps"] = r.wall_ms > 0 ? r.bytes_in() / r.wall_ms / 1e6 : 0.0;
  j["d2h_gbps"] = r.wall_ms > 0 ? r.bytes_out() / r.wall_ms / 1e6 : 0.0;
  j["bound_ms"] = r.bound_ms;
  j["fill_drain_ms"] = r.fill_drain_ms;
  const auto m = stage_medians(r);
  j["producer_ms_median"] = m.producer;
  j["h2d_ms_median"] = m.h2d;
  j["kernels_ms_median"] = m.kernels;
  j["d2h_ms_median"] = m.d2h;
  // The kernels' steps (ntt_msm_h: hpoly, msm), each a median over partitions.
  Json steps = Json::object();
  for (std::size_t i = 0; i < r.kernel_steps.size(); ++i) {
    std::vector<double> v;
    for (const auto& p : r.parts)
      if (i < p.kernel_steps_ms.size()) v.push_back(p.kernel_steps_ms[i]);
    steps[r.kernel_steps[i]] = median(v);
  }
  j["kernel_steps_ms_median"] = steps;
  for (const auto& [key, value] : extra.items()) j[key] = value;
  std::vector<double> h2d_busy;
  for (std::size_t d = 0; d < r.device_busy.size(); ++d)
    h2d_busy.push_back(r.wall_ms > 0 ? r.h2d_busy_ms(d) / r.wall_ms : 0.0);
  j["device_busy"] = r.device_busy;
  j["h2d_busy"] = h2d_busy;
  j["device_cpus"] = e.stats().device_cpus;
  j["error"] = r.error;
  return j;
}

double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int run_command(int argc, char** argv) {
  CommandLine cl("run", kHelp);
  engine::Config config;
  engine::workloads::SyntheticOptions so;
  engine::workloads::HpolyOptions ho;
  engine::workloads::NttMsmHOptions mo;
  std::string srs_path;
  std::uint64_t srs_seed = 1;
  std::string workload;  // empty: chosen from the options given
  constexpr std::size_t kMaxSize = std::numeric_limits<std::size_t>::max();
  std::optional<std::size_t> partitions, size_mib;
  std::optional<unsigned> log_n;
  std::uint64_t seed = 1;
  bool json = false, no_progress = false, registered_inputs = false, cold = false;
  bool verify_on = false, verify_off = false;
  std::string output_memory, h_memory;
  std::string trace;
  cl.choice("--workload", workload, {"ntt_msm_h", "hpoly", "synthetic"});
  cl.number("--partitions", partitions, std::size_t{1}, kMaxSize);
  cl.number("--log-n", log_n, engine::workloads::kHpolyMinLogN, engine::workloads::kHpolyMaxLogN);
  cl.choice("--output-memory", output_memory, {"registered", "pageable"});
  cl.choice("--h-memory", h_memory, {"registered", "pageable"});
  cl.exclusive({"--output-memory", "--h-memory"});
  cl.value("--srs", srs_path);
  cl.number("--srs-seed", srs_seed);
  std::string srs_upload = "broadcast";
  cl.choice("--srs-upload", srs_upload, {"broadcast", "each"});
  cl.flag("--keep-h", mo.keep_h);
  cl.flag("--verify", verify_on);
  cl.flag("--no-verify", verify_off);
  cl.exclusive({"--verify", "--no-verify"});
  cl.number("--size-mib", size_mib, std::size_t{1}, kMaxSize >> 20);
  cl.number("--rounds", so.rounds, 0, std::numeric_limits<int>::max());
  cl.number("--seed", seed);
  cl.flag("--pageable", so.pageable);
  cl.flag("--registered", registered_inputs);
  cl.exclusive({"--pageable", "--registered"});  // two kinds of input
  cl.value("--trace", trace);
  cl.flag("--json", json);
  cl.flag("--no-progress", no_progress);
  cl.flag("--cold", cold);
  cl.engine_options(config);
  if (auto rc = cl.parse(argc, argv)) return *rc;
  const std::string synthetic_option =
      cl.first_given({"--size-mib", "--rounds", "--pageable", "--registered"});
  const std::string hpoly_option = cl.first_given({"--log-n", "--h-memory"});
  const std::string h_memory_option = cl.first_given({"--h-memory"});
  const std::string srs_option = cl.first_given({"--srs", "--srs-seed", "--srs-upload", "--keep-h"});
  const bool progress = !no_progress && isatty(STDOUT_FILENO);
  const int verify = verify_on ? 1 : verify_off ? 0 : -1;  // -1: the backend's default
  const std::string& memory = output_memory.empty() ? h_memory : output_memory;
  const int outputs_registered = memory.empty() ? -1 : memory == "registered";
  if (workload.empty())
    workload = !synthetic_option.empty()                        ? "synthetic"
               : !h_memory_option.empty() && srs_option.empty() ? "hpoly"
                                                                : "ntt_msm_h";
  // hpoly's h registered by default (a prover reuses its h buffers);
  // synthetic outputs in ordinary memory unless asked.
  const bool h_registered = outputs_registered != 0;
  const bool synthetic_outputs_registered = outputs_registered == 1;
  if (workload != "synthetic" && !synthetic_option.empty())
    return cl.usage_error(synthetic_option + " applies to --workload synthetic, not " + workload);
  if (workload == "synthetic" && !hpoly_option.empty())
    return cl.usage_error(hpoly_option + " applies to --workload " +
                          (hpoly_option == "--log-n" ? "ntt_msm_h or hpoly" : "hpoly") +
                          ", not synthetic");
  if (workload != "ntt_msm_h" && !srs_option.empty())
    return cl.usage_error(srs_option + " applies to --workload ntt_msm_h, not " + workload);
  if (workload == "ntt_msm_h" && !h_memory_option.empty())
    return cl.usage_error(h_memory_option + " applies to --workload hpoly, not ntt_msm_h");
  if (workload == "ntt_msm_h" && log_n && *log_n < engine::workloads::kNttMsmHMinLogN)
    return cl.usage_error("--log-n " + std::to_string(*log_n) + ": ntt_msm_h needs at least " +
                          std::to_string(engine::workloads::kNttMsmHMinLogN));
  const bool hpoly = workload == "hpoly";
  const bool msm_h = workload == "ntt_msm_h";
  // Checked now: a bad path fails before the job.
  std::optional<OutputFile> trace_file;
  if (!trace.empty()) {
    auto f = OutputFile::check(trace);
    if (!f) return cl.usage_error("--trace: " + f.error().what());
    trace_file.emplace(std::move(*f));
  }

  boost::asio::io_context io;
  auto engine = engine::Engine::create(io.get_executor(), config);
  if (!engine) {
    std::fprintf(stderr, "stoker run: %s\n", engine.error().what().c_str());
    return 1;
  }
  auto& e = **engine;
  const bool gpu = e.devices().backend() == devices::Backend::cuda;
  const std::size_t devices = e.devices().size();
  const bool verifying = verify >= 0 ? verify == 1 : !gpu;

  std::shared_ptr<engine::workloads::SyntheticRun> synthetic_run;
  std::shared_ptr<engine::workloads::HpolyRun> hpoly_run;
  std::shared_ptr<engine::workloads::NttMsmHRun> msm_h_run;
  RunSrs run_srs;
  double h_setup_s = 0;  // allocating, zeroing and page-locking every h
  Result<engine::Job> job = Error{Errc::invalid_argument, "no workload"};
  if (msm_h) {
    mo.partitions = partitions.value_or(gpu ? 4 * devices : 8);
    mo.log_n = log_n.value_or(gpu ? 24 : 10);
    mo.seed = seed;
    mo.verify = verifying;
    mo.name = "ntt_msm_h-2^" + std::to_string(mo.log_n);
    mo.devices = &e.devices();
    const auto limits = e.stats().device_budget_limit;
    if (!limits.empty()) mo.device_budget_bytes = *std::min_element(limits.begin(), limits.end());
    mo.limits.pinned_budget_bytes = e.config().host_budget_bytes;
    if (verifying) mo.secret = engine::workloads::toy_srs_secret(srs_seed);
    auto loaded = load_run_srs(e, srs_path, mo.log_n, srs_seed, srs_upload == "broadcast");
    if (!loaded) {
      std::fprintf(stderr, "stoker run: %s\n", loaded.error().what().c_str());
      return 1;
    }
    run_srs = std::move(*loaded);
    mo.srs = run_srs.srs;
    job = engine::workloads::make_ntt_msm_h_job(mo, msm_h_run);
  } else if (hpoly) {
    ho.partitions = partitions.value_or(gpu ? 4 * devices : 8);
    ho.log_n = log_n.value_or(gpu ? 24 : 14);
    ho.seed = seed;
    ho.verify = verifying;
    ho.name = "hpoly-2^" + std::to_string(ho.log_n);
    if (h_registered) ho.registered_outputs = e.devices().backend();
    ho.limits.pinned_budget_bytes = e.config().host_budget_bytes;  // refused before allocating
    const auto t0 = std::chrono::steady_clock::now();
    job = engine::workloads::make_hpoly_job(ho, hpoly_run);
    h_setup_s = seconds_since(t0);
  } else {
    so.partitions = partitions.value_or(gpu ? 16 * devices : 8);
    so.input_bytes = size_mib.value_or(gpu ? 256 : 4) << 20;
    so.seed = seed;
    if (registered_inputs) so.registered_inputs = e.devices().backend();
    if (synthetic_outputs_registered) so.registered_outputs = e.devices().backend();
    so.limits.pinned_budget_bytes = e.config().host_budget_bytes;
    so.name = so.pageable ? "synthetic-pageable"
                          : (registered_inputs ? "synthetic-registered" : "synthetic-pinned");
    job = engine::workloads::make_synthetic_job(so, synthetic_run);
    if (job && !verifying) job->verify = nullptr;
  }
  if (!job) {
    std::fprintf(stderr, "stoker run: %s\n", job.error().what().c_str());
    return 1;
  }
  const std::size_t n_partitions = job->partitions.size();
  if (!json) {
    if (msm_h) {
      const std::size_t vec_bytes = (std::size_t{1} << mo.log_n) * sizeof(kernels::Fr);
      const auto& t = run_srs.srs.load_times();
      std::printf(
          "stoker run: ntt_msm_h, %zu partitions of 2^%u (a, b, c: %.1f MiB in, one G1 point%s "
          "out each; %s) on %zu %s device(s), depth %d\n"
          "  SRS: %zu points (%.1f MiB) %s%s; on every device in %.2f s (read %.2f s, upload "
          "%.2f s%s, check %.2f s)\n",
          mo.partitions, mo.log_n, 3.0 * vec_bytes / (1 << 20), mo.keep_h ? " and h" : "",
          verifying ? "verified on the CPU" : "not verified", devices,
          devices::to_string(e.devices().backend()), e.config().pipeline_depth,
          run_srs.srs.points(), static_cast<double>(run_srs.srs.bytes()) / (1 << 20),
          run_srs.source.c_str(),
          run_srs.generate_s > 0
              ? (" in " + std::to_string(run_srs.generate_s).substr(0, 5) + " s").c_str()
              : "",
          t.total_s, t.read_s, t.upload_s,
          t.broadcast_used ? (", broadcast " + std::to_string(t.broadcast_s).substr(0, 5) +
                              " s after an NCCL set-up of " +
                              std::to_string(t.nccl_setup_s).substr(0, 5) + " s beside the upload")
                                 .c_str()
                           : "",
          t.check_s);
    } else if (hpoly) {
      const std::size_t vec_bytes = (std::size_t{1} << ho.log_n) * sizeof(kernels::Fr);
      std::printf(
          "stoker run: hpoly, %zu partitions of 2^%u (a, b, c: %.1f MiB in, h: %.1f MiB out "
          "each; pinned producers%s; %s) on %zu %s device(s), depth %d\n"
          "  h in %s, set up in %.2f s\n",
          ho.partitions, ho.log_n, 3.0 * vec_bytes / (1 << 20), 1.0 * vec_bytes / (1 << 20),
          e.config().early_upload ? ", copied share by share" : ", copied whole",
          verifying ? "verified on the CPU" : "not verified", devices,
          devices::to_string(e.devices().backend()), e.config().pipeline_depth,
          h_registered ? "registered memory (D2H in place)"
                       : "pageable memory (bounce block + host copy)",
          h_setup_s);
    } else {
      std::printf(
          "stoker run: synthetic, %zu partitions x %zu MiB (%s inputs, %s outputs, %d rounds) "
          "on %zu %s device(s), depth %d\n",
          so.partitions, so.input_bytes >> 20,
          so.pageable ? "pageable" : (registered_inputs ? "registered" : "pinned-producer"),
          synthetic_outputs_registered ? "registered" : "pageable", so.rounds, devices,
          devices::to_string(e.devices().backend()), e.config().pipeline_depth);
    }
    const auto st = e.stats();
    std::printf(
        "  device memory per partition: %.1f MiB; device budget %.1f MiB",
        static_cast<double>(job->partitions[0].device_bytes()) / (1 << 20),
        static_cast<double>(st.device_budget_limit.empty() ? 0 : st.device_budget_limit[0]) /
            (1 << 20));
    if (!st.device_resident_bytes.empty() && st.device_resident_bytes[0] != 0)
      std::printf(", %.1f MiB of it resident SRS points",
                  static_cast<double>(st.device_resident_bytes[0]) / (1 << 20));
    std::printf("\n");
    const auto cpus = e.stats().device_cpus;
    for (std::size_t d = 0; d < devices; ++d)
      std::printf("  device %zu: %s%s%s\n", d, e.devices()[d].info().name.c_str(),
                  cpus[d].empty() ? "" : ", its threads on CPUs ", cpus[d].c_str());
  }
  // Twiddle tables on every GPU before timing: otherwise each GPU's first
  // partition builds them inside its launch.
  double prepare_s = 0;
  if ((hpoly || msm_h) && gpu) {
    const unsigned k = msm_h ? mo.log_n : ho.log_n;
    const auto t0 = std::chrono::steady_clock::now();
    const auto ec = msm_h ? engine::workloads::ntt_msm_h_prepare(e.devices(), k)
                          : engine::workloads::hpoly_prepare(e.devices(), k);
    if (ec) {
      std::fprintf(stderr, "stoker run: building the NTT tables of 2^%u: %s\n", k,
                   ec.message().c_str());
      return 1;
    }
    prepare_s = seconds_since(t0);
    if (!json) std::printf("  NTT tables of 2^%u built on every GPU in %.2f s\n", k, prepare_s);
  }
  // Warm the pinned pool first so the timed job measures the steady state,
  // not cudaHostAlloc (which also blocks the process's other CUDA calls).
  if (cold) {
    if (!json) std::printf("  cold: no pinned pool or device pool reserved ahead\n");
  } else {
    const auto t0 = std::chrono::steady_clock::now();
    const auto count = std::min(n_partitions, e.lookahead());
    if (auto ec = e.reserve_pinned(job->partitions[0], count))
      std::fprintf(stderr,
                   "stoker run: could not pin the pool ahead (%s); it will grow during the job\n",
                   ec.message().c_str());
    else if (!json)
      std::printf("  pinned pool: %.0f MiB reserved for %zu partitions in flight in %.2f s\n",
                  static_cast<double>(e.stats().pinned_bytes_pooled) / (1u << 20), count,
                  seconds_since(t0));
  }
  // And the devices' memory pools: mapping device memory takes time too, and
  // the job's first copy would wait for it.
  if (!cold) {
    const auto t0 = std::chrono::steady_clock::now();
    e.reserve_device(job->partitions[0]);
    if (!json && gpu)
      std::printf("  device memory pools grown for %d partitions in flight in %.3f s\n",
                  e.config().pipeline_depth, seconds_since(t0));
  }
  if (progress && !json)
    job->progress = [columns = terminal_columns(STDOUT_FILENO)](std::size_t done,
                                                                std::size_t total) {
      std::printf("\r%s", progress_line(done, total, columns).c_str());
      if (done == total) std::printf("\n");
      std::fflush(stdout);
    };
  const auto warm = e.stats();
  std::error_code result;
  engine::JobReport report;
  e.async_submit(std::move(*job), [&](std::error_code ec, engine::JobReport r) {
    result = ec;
    report = std::move(r);
  });
  io.run();

  // Pool growth during the job costs 0.05-0.5 s/GiB on CUDA: say so when it happened.
  if (const auto after = e.stats();
      !json && after.pinned_slab_allocations != warm.pinned_slab_allocations)
    std::printf("  pinned pool grew during the job: %zu slabs pinned, %zu given back\n",
                after.pinned_slab_allocations - warm.pinned_slab_allocations,
                after.pinned_slabs_trimmed - warm.pinned_slabs_trimmed);
  bool trace_written = true;
  if (trace_file) {
    if (auto err = trace_file->write(
            [&](std::ostream& out) { engine::write_chrome_trace(out, {report}); })) {
      std::fprintf(stderr, "stoker run: the trace: %s\n", err.what().c_str());
      trace_written = false;
    }
  }
  if (json) {
    Json extra;
    extra["workload"] = workload;
    extra["log_n"] = msm_h ? mo.log_n : hpoly ? ho.log_n : 0u;
    extra["verified"] = verifying && !result && (!msm_h || msm_h_run->all_verified());
    extra["prepare_ms"] = prepare_s * 1e3;
    extra["h_memory"] = !hpoly ? "" : h_registered ? "registered" : "pageable";
    extra["output_memory"] =
        (hpoly ? h_registered : !msm_h && synthetic_outputs_registered) ? "registered" : "pageable";
    if (msm_h) {
      const auto& t = run_srs.srs.load_times();
      extra["keep_h"] = mo.keep_h;
      extra["srs"] = {{"points", run_srs.srs.points()},
                      {"bytes", run_srs.srs.bytes()},
                      {"source", run_srs.source},
                      {"generate_s", run_srs.generate_s},
                      {"load_s", t.total_s},
                      {"read_s", t.read_s},
                      {"upload_s", t.upload_s},
                      {"broadcast_s", t.broadcast_s},
                      {"broadcast", t.broadcast_used},
                      {"nccl_setup_s", t.nccl_setup_s},
                      {"check_s", t.check_s}};
      Json points = Json::array();
      if (!result)
        for (std::size_t p = 0; p < msm_h_run->sums.size(); ++p) {
          unsigned char bytes[kernels::kG1EncodedBytes];
          kernels::encode_g1(msm_h_run->point(p), bytes);
          static const char* hex = "0123456789abcdef";
          std::string text;
          for (auto b : bytes) text += {hex[b >> 4], hex[b & 15]};
          points.push_back(text);
        }
      extra["points"] = points;
    }
    extra["cold"] = cold;
    std::printf("%s\n", json_text(json_report(report, e, extra)).c_str());
  } else {
    std::printf("%s", engine::summarize(report).c_str());
    // What the producers achieved together: bytes they wrote over the span
    // from the first one's start to the last one's end (a lower bound on
    // what they can do; it includes any time they waited for the GPUs).
    double first = -1, last = 0, produced_bytes = 0;
    for (const auto& p : report.parts)
      if (p.producer.ms > 0) {
        first = first < 0 ? p.producer.start_ms : std::min(first, p.producer.start_ms);
        last = std::max(last, p.producer.start_ms + p.producer.ms);
        produced_bytes += static_cast<double>(p.bytes_in);
      }
    if (first >= 0 && last > first)
      std::printf(
          "  producers: %.2f GiB in %.1f ms from the first start to the last end (%.2f GB/s)\n",
          produced_bytes / (1 << 30), last - first, produced_bytes / (last - first) / 1e6);
    if (!result) {
      if (!verifying)
        std::printf("  not verified (--verify checks every partition on the CPU)\n");
      else if (msm_h)
        std::printf(
            "  verified: every point equals [(A(t)B(t) - C(t)) / d] G for the toy SRS's secret%s\n",
            mo.keep_h ? ", and every h satisfies h(t)(t^n - 1) == A(t)B(t) - C(t)" : "");
      else if (hpoly)
        std::printf(
            "  verified: every h satisfies h(x)(x^n - 1) == A(x)B(x) - C(x) at a random x\n");
      else
        std::printf("  verified: every partition matches the CPU version\n");
    }
  }
  if (result) {
    std::fprintf(stderr, "stoker run: job failed: %s\n", report.error.c_str());
    return 1;
  }
  return trace_written ? 0 : 1;
}

}  // namespace stoker::tools
