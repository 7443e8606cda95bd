#include "tools/commands/run_report.hpp"

#include <algorithm>
#include <cstdio>
#include <type_traits>

#include "tools/bench/bench_stats.hpp"

namespace stoker::tools {
namespace {

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

}  // namespace

void print_engine_lines(const engine::Engine& e, const engine::Partition& partition) {
  const auto st = e.stats();
  std::printf("  device memory per partition: %.1f MiB; device budget %.1f MiB",
              static_cast<double>(partition.device_bytes()) / (1 << 20),
              static_cast<double>(st.device_budget_limit.empty() ? 0 : st.device_budget_limit[0]) /
                  (1 << 20));
  if (!st.device_resident_bytes.empty() && st.device_resident_bytes[0] != 0)
    std::printf(", %.1f MiB of it resident SRS points",
                static_cast<double>(st.device_resident_bytes[0]) / (1 << 20));
  std::printf("\n");
  for (std::size_t d = 0; d < e.devices().size(); ++d)
    std::printf("  device %zu: %s%s%s\n", d, e.devices()[d].info().name.c_str(),
                st.device_cpus[d].empty() ? "" : ", its threads on CPUs ",
                st.device_cpus[d].c_str());
}

void print_summary(const engine::JobReport& report, bool succeeded,
                   const engine::workloads::WorkloadJob& built) {
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
  if (!succeeded) return;
  if (!built.verifies)
    std::printf("  not verified (--verify checks every partition on the CPU)\n");
  else
    std::printf("  verified: %s\n", built.verification.c_str());
}

Json json_fields(const std::vector<engine::workloads::WorkloadField>& fields) {
  Json j = Json::object();
  for (const auto& f : fields)
    std::visit(
        [&](const auto& v) {
          if constexpr (std::is_same_v<std::decay_t<decltype(v)>,
                                       std::vector<engine::workloads::WorkloadField>>)
            j[f.key] = json_fields(v);
          else
            j[f.key] = v;
        },
        f.value);
  return j;
}

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

}  // namespace stoker::tools
