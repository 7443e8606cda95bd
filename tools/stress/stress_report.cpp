// A stress run's report (StressReport, tools/stress/stress_driver.hpp) as
// JSON for --json and as the text `stoker stress` prints.
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "tools/stress/stress_driver.hpp"

namespace stoker::tools::stress {

std::string to_json(const StressReport& r) {
  using Json = nlohmann::ordered_json;
  Json j;
  j["seed"] = r.seed;
  j["backend"] = r.backend;
  j["devices"] = r.devices;
  j["ok"] = r.ok;
  j["rounds"] = r.rounds;
  j["jobs_submitted"] = r.jobs_submitted;
  j["jobs_completed"] = r.jobs_completed;
  j["jobs_succeeded"] = r.jobs_succeeded;
  j["partitions_done"] = r.partitions_done;
  j["bytes_in"] = r.bytes_in;
  j["wall_s"] = r.wall_s;
  j["jobs_per_s"] = r.jobs_per_s;
  j["partitions_per_s"] = r.partitions_per_s;
  j["latency_ms"] = {
      {"p50", r.latency_p50_ms}, {"p99", r.latency_p99_ms}, {"max", r.latency_max_ms}};
  Json faults = Json::object();
  for (int f = 1; f < kFaultKinds; ++f)
    faults[fault_name(static_cast<Fault>(f))] = {
        {"injected", r.faults_injected[static_cast<std::size_t>(f)]},
        {"survived", r.faults_survived[static_cast<std::size_t>(f)]}};
  j["faults"] = std::move(faults);
  j["collateral"] = r.collateral;
  j["devices_broken"] = r.devices_broken;
  j["cancellations"] = {{"requested", r.cancels_requested},
                        {"aborted", r.cancels_aborted},
                        {"finished_first", r.cancels_too_late}};
  Json tokens = Json::object();
  for (int t = 0; t < kTokenKinds; ++t)
    tokens[token_name(static_cast<Token>(t))] = r.by_token[static_cast<std::size_t>(t)];
  j["tokens"] = std::move(tokens);
  j["workloads"] = {{"synthetic", r.synthetic_jobs},
                    {"blend", r.blend_jobs},
                    {"ntt_msm_h", r.ntt_msm_h_jobs},
                    {"ntt_msm_h_verified", r.ntt_msm_h_verified}};
  j["srs"] = {{"log_n", r.srs_log_n},
              {"bytes_per_device", r.srs_bytes},
              {"loads", r.srs_loads},
              {"evictions", r.srs_evictions}};
  j["inputs"] = {{"pinned", r.inputs_by_kind[0]},
                 {"registered", r.inputs_by_kind[1]},
                 {"pageable", r.inputs_by_kind[2]},
                 {"produced", r.inputs_by_kind[3]}};
  j["memory"] = {{"host_budget_limit", r.host_budget_limit},
                 {"peak_host_budget_in_use", r.peak_host_budget_in_use},
                 {"peak_demand", r.peak_demand},
                 {"pressure_samples", r.pressure_samples},
                 {"samples", r.samples},
                 {"peak_pinned_in_use", r.peak_pinned_in_use},
                 {"peak_pinned_pooled", r.peak_pinned_pooled},
                 {"peak_device_in_use", r.peak_device_in_use}};
  j["threads"] = {{"baseline", r.threads_baseline}, {"after", r.threads_after}};
  j["notes"] = r.notes;
  j["resource_failure_count"] = r.resource_failure_count;
  j["resource_failures"] = r.resource_failures;
  j["violation_count"] = r.violation_count;
  j["violations"] = r.violations;
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string summarize(const StressReport& r) {
  char buf[512];
  std::string s;
  auto mib = [](std::size_t b) { return static_cast<double>(b) / (1 << 20); };
  std::snprintf(buf, sizeof buf,
                "stoker stress: seed %llu, %s backend, %zu device(s), %zu round(s), %.1f s\n"
                "  jobs: %zu submitted, %zu completed, %zu succeeded; %.1f jobs/s, %.1f "
                "partitions/s\n"
                "  job latency: p50 %.2f ms, p99 %.2f ms, max %.2f ms\n",
                static_cast<unsigned long long>(r.seed), r.backend.c_str(), r.devices, r.rounds,
                r.wall_s, r.jobs_submitted, r.jobs_completed, r.jobs_succeeded, r.jobs_per_s,
                r.partitions_per_s, r.latency_p50_ms, r.latency_p99_ms, r.latency_max_ms);
  s += buf;
  s += "  faults injected/survived:";
  for (int f = 1; f < kFaultKinds; ++f) {
    std::snprintf(buf, sizeof buf, " %s %zu/%zu", fault_name(static_cast<Fault>(f)),
                  r.faults_injected[static_cast<std::size_t>(f)],
                  r.faults_survived[static_cast<std::size_t>(f)]);
    s += buf;
  }
  std::snprintf(buf, sizeof buf,
                "\n  collateral failures (jobs on a device a kernel fault broke): %zu; devices "
                "broken: %zu\n"
                "  cancellations: %zu requested, %zu aborted, %zu finished first\n",
                r.collateral, r.devices_broken, r.cancels_requested, r.cancels_aborted,
                r.cancels_too_late);
  s += buf;
  std::snprintf(buf, sizeof buf,
                "  workloads: synthetic %zu, blend %zu, ntt_msm_h %zu (%zu succeeded, verified "
                "with the toy secret)\n",
                r.synthetic_jobs, r.blend_jobs, r.ntt_msm_h_jobs, r.ntt_msm_h_verified);
  s += buf;
  if (r.srs_log_n != 0) {
    std::snprintf(buf, sizeof buf,
                  "  toy SRS: 2^%u, %zu bytes on each device, loaded in %zu round(s), evicted in "
                  "%zu\n",
                  r.srs_log_n, r.srs_bytes, r.srs_loads, r.srs_evictions);
    s += buf;
  }
  s += "  tokens:";
  for (int t = 0; t < kTokenKinds; ++t) {
    std::snprintf(buf, sizeof buf, " %s %zu", token_name(static_cast<Token>(t)),
                  r.by_token[static_cast<std::size_t>(t)]);
    s += buf;
  }
  std::snprintf(buf, sizeof buf,
                "; inputs: pinned %zu, registered %zu, pageable %zu, produced %zu\n"
                "  memory: host budget %.2f MiB, peak in use %.2f MiB, peak demand in flight "
                "%.2f MiB (over budget in %zu of %zu samples)\n"
                "          peak pinned in use %.2f MiB (pooled %.2f MiB), peak device %.2f MiB\n"
                "  threads: %d before, %d after\n",
                r.inputs_by_kind[0], r.inputs_by_kind[1], r.inputs_by_kind[2], r.inputs_by_kind[3],
                mib(r.host_budget_limit), mib(r.peak_host_budget_in_use), mib(r.peak_demand),
                r.pressure_samples, r.samples, mib(r.peak_pinned_in_use), mib(r.peak_pinned_pooled),
                mib(r.peak_device_in_use), r.threads_baseline, r.threads_after);
  s += buf;
  for (const auto& n : r.notes) s += "  note: " + n + "\n";
  if (r.resource_failure_count != 0) {
    s += "  resource failures (what the machine refused, not the engine's doing): " +
         std::to_string(r.resource_failure_count) + "\n";
    for (const auto& f : r.resource_failures) s += "    " + f + "\n";
  }
  if (r.violation_count == 0) {
    s += "  invariants: all held\n";
  } else {
    s += "  VIOLATIONS: " + std::to_string(r.violation_count) + "\n";
    for (const auto& v : r.violations) s += "    " + v + "\n";
  }
  return s;
}

}  // namespace stoker::tools::stress
