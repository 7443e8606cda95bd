// hpoly as a registered workload: its options, make_hpoly_job (timed: it
// page-locks every h), and the summary's banner and JSON fields.
#include <chrono>

#include "common/elapsed.hpp"
#include "engine/workloads/builtin/builtin_workloads.hpp"
#include "engine/workloads/builtin/shared.hpp"
#include "engine/workloads/hpoly_workload.hpp"

namespace stoker::engine::workloads::builtin {
namespace {

WorkloadOption h_memory_option() {
  auto o = WorkloadOption::choice(
      "h-memory", "M", {"registered", "pageable"}, "registered",
      "where h lands: registered (page-locked once before the job, so the D2H writes it in "
      "place) or pageable (through a pinned bounce block and a host copy per partition)");
  o.aliases = {"output-memory"};
  return o;
}

Workload::Description hpoly_description() {
  Workload::Description d;
  d.name = "hpoly";
  d.summary = "the H polynomial alone, h out";
  d.partitions_default = "4 per GPU, 8 on the host backend";
  d.verification = "h(x)(x^n - 1) == A(x)B(x) - C(x) at a random x";
  d.options = {WorkloadOption::integer("log-n", "K", kHpolyMinLogN, kHpolyMaxLogN, "",
                                       "partition size 2^K, K in " + std::to_string(kHpolyMinLogN) +
                                           ".." + std::to_string(kHpolyMaxLogN) +
                                           " (default: 24 on GPUs, 14 on the host backend)"),
               h_memory_option()};
  return d;
}

Result<WorkloadJob> make_hpoly(Engine& engine, const WorkloadRequest& request,
                               const WorkloadValues& values) {
  HpolyOptions o;
  o.partitions = partitions_for(engine, request, 4);
  o.log_n = values.number<unsigned>("log-n").value_or(on_gpus(engine) ? 24 : 14);
  o.seed = request.seed;
  o.verify = request.verify;
  o.name = "hpoly-2^" + std::to_string(o.log_n);
  // A prover reuses its h buffers, so they are registered unless asked.
  const bool registered = values.text("h-memory") == "registered";
  if (registered) o.registered_outputs = engine.devices().backend();
  o.limits.pinned_budget_bytes = engine.config().host_budget_bytes;  // refused before allocating
  std::shared_ptr<HpolyRun> run;
  const auto t0 = std::chrono::steady_clock::now();
  auto job = make_hpoly_job(o, run);
  const double setup_s = common::seconds_since(t0);  // allocating, zeroing, page-locking every h
  if (!job) return std::move(job).error();

  const std::size_t vec_bytes = (std::size_t{1} << o.log_n) * sizeof(kernels::Fr);
  WorkloadJob out;
  out.job = std::move(*job);
  out.run = run;
  out.banner = printf_text(
      "hpoly, %zu partitions of 2^%u (a, b, c: %.1f MiB in, h: %.1f MiB out each; pinned "
      "producers%s; %s) %s\n"
      "  h in %s, set up in %.2f s\n",
      o.partitions, o.log_n, 3.0 * vec_bytes / (1 << 20), 1.0 * vec_bytes / (1 << 20),
      engine.config().early_upload ? ", copied share by share" : ", copied whole",
      o.verify ? "verified on the CPU" : "not verified", on_devices(engine).c_str(),
      registered ? "registered memory (D2H in place)"
                 : "pageable memory (bounce block + host copy)",
      setup_s);
  out.verifies = o.verify;
  out.verification = "every h satisfies h(x)(x^n - 1) == A(x)B(x) - C(x) at a random x";
  out.prepare_what = "NTT tables of 2^" + std::to_string(o.log_n);
  out.prepare = [devices = &engine.devices(), log_n = o.log_n] {
    return hpoly_prepare(*devices, log_n);
  };
  const std::string memory = registered ? "registered" : "pageable";
  out.fields = [log_n = o.log_n, memory](bool) {
    return std::vector<WorkloadField>{
        {"log_n", std::uint64_t{log_n}}, {"h_memory", memory}, {"output_memory", memory}};
  };
  return out;
}

}  // namespace

std::unique_ptr<Workload> make_hpoly_workload() {
  return make_workload(hpoly_description(), make_hpoly);
}

}  // namespace stoker::engine::workloads::builtin
