// ntt_msm_h as a registered workload: its options, the SRS it loads on the
// engine (the request's SrsSource), make_ntt_msm_h_job, and the summary's
// banner and JSON fields.
#include <algorithm>
#include <limits>

#include "engine/workloads/builtin/builtin_workloads.hpp"
#include "engine/workloads/builtin/shared.hpp"
#include "engine/workloads/ntt_msm_h_workload.hpp"
#include "kernels/g1_encoding.hpp"

namespace stoker::engine::workloads::builtin {
namespace {

std::string hex(std::span<const unsigned char> bytes) {
  static const char* digits = "0123456789abcdef";
  std::string text;
  for (auto b : bytes) text += {digits[b >> 4], digits[b & 15]};
  return text;
}

std::vector<WorkloadField> srs_fields(const LoadedSrs& loaded) {
  const auto& t = loaded.srs.load_times();
  return {{"points", std::uint64_t{loaded.srs.points()}},
          {"bytes", std::uint64_t{loaded.srs.bytes()}},
          {"source", loaded.source},
          {"generate_s", loaded.generate_s},
          {"load_s", t.total_s},
          {"read_s", t.read_s},
          {"upload_s", t.upload_s},
          {"broadcast_s", t.broadcast_s},
          {"broadcast", t.broadcast_used},
          {"nccl_setup_s", t.nccl_setup_s},
          {"check_s", t.check_s}};
}

std::string banner(const Engine& engine, const NttMsmHOptions& o, const LoadedSrs& loaded) {
  const std::size_t vec_bytes = (std::size_t{1} << o.log_n) * sizeof(kernels::Fr);
  const auto& t = loaded.srs.load_times();
  const std::string generated =
      loaded.generate_s > 0 ? " in " + std::to_string(loaded.generate_s).substr(0, 5) + " s" : "";
  const std::string broadcast =
      t.broadcast_used ? ", broadcast " + std::to_string(t.broadcast_s).substr(0, 5) +
                             " s after an NCCL set-up of " +
                             std::to_string(t.nccl_setup_s).substr(0, 5) + " s beside the upload"
                       : "";
  return printf_text(
      "ntt_msm_h, %zu partitions of 2^%u (a, b, c: %.1f MiB in, one G1 point%s out each; %s) "
      "%s\n"
      "  SRS: %zu points (%.1f MiB) %s%s; on every device in %.2f s (read %.2f s, upload "
      "%.2f s%s, check %.2f s)\n",
      o.partitions, o.log_n, 3.0 * vec_bytes / (1 << 20), o.keep_h ? " and h" : "",
      o.verify ? "verified on the CPU" : "not verified", on_devices(engine).c_str(),
      loaded.srs.points(), static_cast<double>(loaded.srs.bytes()) / (1 << 20),
      loaded.source.c_str(), generated.c_str(), t.total_s, t.read_s, t.upload_s, broadcast.c_str(),
      t.check_s);
}

Workload::Description ntt_msm_h_description() {
  Workload::Description d;
  d.name = "ntt_msm_h";
  d.summary =
      "the H polynomial of a, b, c, then its MSM over the SRS's H-query points, one G1 point "
      "out per partition";
  d.partitions_default = "4 per GPU, 8 on the host backend";
  d.verification = "the point equals [(A(t)B(t) - C(t)) / d] G for the toy SRS's secret (t, d)";
  d.options = {
      WorkloadOption::integer("log-n", "K", kNttMsmHMinLogN, kNttMsmHMaxLogN, "",
                              "partition size 2^K, K in " + std::to_string(kNttMsmHMinLogN) + ".." +
                                  std::to_string(kNttMsmHMaxLogN) +
                                  " (default: 24 on GPUs, 10 on the host backend)"),
      WorkloadOption::text(
          "srs", "FILE",
          "the H-query points, 96 bytes each (the G1 encoding of `stoker msm`), at least 2^K - "
          "1; loaded once onto every GPU. Default: the toy SRS for K, generated (on GPUs kept in "
          "a cache file, toy-srs-2^K-seed-S.g1 under $XDG_CACHE_HOME/stoker or "
          "~/.cache/stoker). A toy SRS's secret derives from its seed: for testing only, never "
          "for proofs anyone relies on"),
      WorkloadOption::integer("srs-seed", "S", 0, std::numeric_limits<std::uint64_t>::max(), "1",
                              "the toy SRS's seed: to generate it, and for --verify with --srs "
                              "FILE written by `stoker srs generate --seed S`"),
      WorkloadOption::choice("srs-upload", "HOW", {"broadcast", "each"}, "broadcast",
                             "how the points reach GPUs after the first: broadcast (NCCL from "
                             "the first GPU where peers reach it) or each (every GPU uploads "
                             "from pinned host memory over its own link)"),
      WorkloadOption::flag("keep-h", "bring h back too (and --verify checks it)"),
  };
  return d;
}

Result<WorkloadJob> make_ntt_msm_h(Engine& engine, const WorkloadRequest& request,
                                   const WorkloadValues& values) {
  NttMsmHOptions o;
  o.partitions = partitions_for(engine, request, 4);
  o.log_n = values.number<unsigned>("log-n").value_or(on_gpus(engine) ? 24 : 10);
  o.seed = request.seed;
  o.verify = request.verify;
  o.keep_h = values.given("keep-h");
  o.name = "ntt_msm_h-2^" + std::to_string(o.log_n);
  o.devices = &engine.devices();
  const auto limits = engine.stats().device_budget_limit;
  if (!limits.empty()) o.device_budget_bytes = *std::min_element(limits.begin(), limits.end());
  o.limits.pinned_budget_bytes = engine.config().host_budget_bytes;
  const SrsRequest srs_request{values.text("srs").value_or(""), o.log_n,
                               *values.number<std::uint64_t>("srs-seed"),
                               values.text("srs-upload") == "broadcast"};
  if (o.verify) o.secret = toy_srs_secret(srs_request.seed);
  auto loaded =
      request.srs ? request.srs(engine, srs_request) : load_srs_or_toy(engine, srs_request);
  if (!loaded) return std::move(loaded).error();
  o.srs = loaded->srs;
  std::shared_ptr<NttMsmHRun> run;
  auto job = make_ntt_msm_h_job(o, run);
  if (!job) return std::move(job).error();

  WorkloadJob out;
  out.job = std::move(*job);
  out.run = run;
  out.banner = banner(engine, o, *loaded);
  out.verifies = o.verify;
  // An SRS of 2^K' - 1 points holds t^i Z'(t) / d with Z'(x) = x^(2^K') - 1,
  // so for K' > K the point is h(t) Z'(t) / d: the claim says which.
  const std::size_t srs_n = o.srs.points() + 1;
  out.verification =
      srs_n == (std::size_t{1} << o.log_n)
          ? std::string("every point equals [(A(t)B(t) - C(t)) / d] G for the toy SRS's secret")
          : printf_text(
                "every point equals [h(t) (t^%zu - 1) / d] G for the toy SRS's secret, h "
                "of this job's 2^%u points and t^%zu - 1 the vanishing polynomial of "
                "the SRS's %zu points",
                srs_n, o.log_n, srs_n, srs_n);
  if (o.keep_h) out.verification += ", and every h satisfies h(t)(t^n - 1) == A(t)B(t) - C(t)";
  out.all_verified = [run] { return run->all_verified(); };
  out.prepare_what = "NTT tables of 2^" + std::to_string(o.log_n);
  out.prepare = [devices = &engine.devices(), log_n = o.log_n] {
    return ntt_msm_h_prepare(*devices, log_n);
  };
  out.fields = [run, loaded = *loaded](bool succeeded) {
    std::vector<std::string> points;
    if (succeeded)
      for (std::size_t p = 0; p < run->sums.size(); ++p) {
        unsigned char bytes[kernels::kG1EncodedBytes];
        kernels::encode_g1(run->point(p), bytes);
        points.push_back(hex(bytes));
      }
    return std::vector<WorkloadField>{{"log_n", std::uint64_t{run->options.log_n}},
                                      {"h_memory", std::string()},
                                      {"output_memory", std::string("pageable")},
                                      {"keep_h", run->options.keep_h},
                                      {"srs", srs_fields(loaded)},
                                      {"points", points}};
  };
  return out;
}

}  // namespace

std::unique_ptr<Workload> make_ntt_msm_h_workload() {
  return make_workload(ntt_msm_h_description(), make_ntt_msm_h);
}

}  // namespace stoker::engine::workloads::builtin
