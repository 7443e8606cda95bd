#include "engine/job_report.hpp"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <ostream>

namespace stoker::engine {

namespace {
std::size_t sum_over(const std::vector<PartitionReport>& parts,
                     std::size_t PartitionReport::*field) {
  std::size_t n = 0;
  for (const auto& p : parts) n += p.*field;
  return n;
}
}  // namespace

std::size_t JobReport::bytes_in() const {
  return sum_over(parts, &PartitionReport::bytes_in);
}
std::size_t JobReport::bytes_out() const {
  return sum_over(parts, &PartitionReport::bytes_out);
}
std::size_t JobReport::bytes_registered() const {
  return sum_over(parts, &PartitionReport::bytes_registered);
}

double JobReport::h2d_busy_ms(std::size_t device) const {
  std::vector<std::pair<double, double>> spans;
  for (const auto& p : parts)
    if (p.device == static_cast<int>(device) && p.h2d.ms > 0)
      spans.emplace_back(p.h2d.start_ms, p.h2d.start_ms + p.h2d.ms);
  std::sort(spans.begin(), spans.end());
  double busy = 0, covered_to = 0;
  for (auto [start, end] : spans) {
    start = std::max(start, covered_to);
    if (end > start) busy += end - start;
    covered_to = std::max(covered_to, end);
  }
  return busy;
}

std::size_t JobReport::bytes_in_on(std::size_t device) const {
  std::size_t n = 0;
  for (const auto& p : parts)
    if (p.device == static_cast<int>(device)) n += p.bytes_in;
  return n;
}

void write_chrome_trace(std::ostream& out, const std::vector<JobReport>& jobs) {
  // Complete events ("ph":"X") in microseconds; pid = device, tid = stream.
  // Built with nlohmann::json so that names (a job's, a device's) are
  // escaped and numbers written as JSON numbers whatever they hold.
  using json = nlohmann::ordered_json;
  enum Track { producer = 0, staging = 1, h2d = 2, kernels = 3, d2h = 4 };
  const char* track_names[] = {"producer (CPU)", "staging (CPU)", "H2D stream", "compute stream",
                               "D2H stream"};
  json events = json::array();
  std::size_t devices = 0;
  for (const auto& j : jobs) devices = std::max(devices, j.device_names.size());
  for (std::size_t d = 0; d < devices; ++d) {
    std::string name = "device " + std::to_string(d);
    for (const auto& j : jobs)
      if (d < j.device_names.size()) name += " (" + j.device_names[d] + ")";
    events.push_back({{"ph", "M"},
                      {"name", "process_name"},
                      {"pid", d},
                      {"args", {{"name", name.substr(0, name.find(')') + 1)}}}});
    for (int t = 0; t < 5; ++t)
      events.push_back({{"ph", "M"},
                        {"name", "thread_name"},
                        {"pid", d},
                        {"tid", t},
                        {"args", {{"name", track_names[t]}}}});
  }
  double offset = 0;  // jobs are laid end to end in submission order
  for (const auto& j : jobs) {
    for (const auto& p : j.parts) {
      const StageSpan* spans[] = {&p.producer, &p.staging, &p.h2d, &p.kernels, &p.d2h};
      for (int t = 0; t < 5; ++t) {
        if (spans[t]->ms <= 0) continue;
        events.push_back(
            {{"ph", "X"},
             {"pid", std::max(p.device, 0)},
             {"tid", t},
             {"ts", (offset + spans[t]->start_ms) * 1e3},
             {"dur", spans[t]->ms * 1e3},
             {"name", j.name + " #" + std::to_string(p.index)},
             {"args", {{"slot", p.slot}, {"bytes_in", p.bytes_in}, {"bytes_out", p.bytes_out}}}});
      }
    }
    offset += j.wall_ms;
  }
  // One event a line: a trace of thousands of events stays readable in a pager.
  out << "{\"traceEvents\":[\n";
  for (std::size_t i = 0; i < events.size(); ++i)
    out << (i ? ",\n" : "") << events[i].dump(-1, ' ', false, json::error_handler_t::replace);
  out << "\n]}\n";
}

std::string summarize(const JobReport& r) {
  char buf[512];
  std::string s;
  std::snprintf(
      buf, sizeof buf,
      "%s: %zu/%zu partitions in %.1f ms (%.1f partitions/s); in %.2f GB/s, out %.2f GB/s; "
      "model bound %.1f ms (measured/bound %.2fx), %.1f ms with one partition of fill and "
      "drain (%.2fx)\n",
      r.name.c_str(), r.partitions_done, r.partitions, r.wall_ms, r.partitions_per_s(),
      r.wall_ms > 0 ? r.bytes_in() / r.wall_ms / 1e6 : 0.0,
      r.wall_ms > 0 ? r.bytes_out() / r.wall_ms / 1e6 : 0.0, r.bound_ms,
      r.bound_ms > 0 ? r.wall_ms / r.bound_ms : 0.0, r.bound_ms + r.fill_drain_ms,
      r.bound_ms + r.fill_drain_ms > 0 ? r.wall_ms / (r.bound_ms + r.fill_drain_ms) : 0.0);
  s += buf;
  for (std::size_t d = 0; d < r.device_busy.size(); ++d) {
    const double h2d = r.h2d_busy_ms(d);
    std::snprintf(buf, sizeof buf,
                  "  device %zu (%s): compute busy %.0f %%, H2D busy %.0f %% (%.1f GB/s while "
                  "busy)\n",
                  d, d < r.device_names.size() ? r.device_names[d].c_str() : "?",
                  r.device_busy[d] * 100, r.wall_ms > 0 ? h2d / r.wall_ms * 100 : 0.0,
                  h2d > 0 ? r.bytes_in_on(d) / h2d / 1e6 : 0.0);
    s += buf;
  }
  // Where a partition's time goes: the stage medians show which one bounds
  // the pipeline (producers, staging, copies or kernels).
  if (!r.parts.empty()) {
    const auto median = [&](auto stage) {
      std::vector<double> v;
      for (const auto& p : r.parts) v.push_back(stage(p));
      std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
      return v[v.size() / 2];
    };
    std::snprintf(buf, sizeof buf,
                  "  per partition (median ms): queue %.2f, producer %.2f, staging %.2f, h2d %.2f "
                  "(%.1f GB/s), kernels %.2f, d2h %.2f\n",
                  median([](const PartitionReport& p) { return p.queue_wait_ms; }),
                  median([](const PartitionReport& p) { return p.producer.ms; }),
                  median([](const PartitionReport& p) { return p.staging.ms; }),
                  median([](const PartitionReport& p) { return p.h2d.ms; }),
                  median([](const PartitionReport& p) { return p.h2d_gbps(); }),
                  median([](const PartitionReport& p) { return p.kernels.ms; }),
                  median([](const PartitionReport& p) { return p.d2h.ms; }));
    s += buf;
  }
  if (!r.kernel_steps.empty() && !r.parts.empty()) {
    s += "  kernel steps (median ms):";
    for (std::size_t i = 0; i < r.kernel_steps.size(); ++i) {
      std::vector<double> v;
      for (const auto& p : r.parts)
        if (i < p.kernel_steps_ms.size()) v.push_back(p.kernel_steps_ms[i]);
      if (v.empty()) continue;
      std::nth_element(v.begin(), v.begin() + v.size() / 2, v.end());
      std::snprintf(buf, sizeof buf, "%s %s %.2f", i ? "," : "", r.kernel_steps[i].c_str(),
                    v[v.size() / 2]);
      s += buf;
    }
    s += "\n";
  }
  if (const std::size_t registered = r.bytes_registered(); registered > 0) {
    std::snprintf(buf, sizeof buf,
                  "  pageable inputs: %.0f MiB of the %.0f MiB in registered in place, the rest "
                  "staged\n",
                  static_cast<double>(registered) / (1u << 20),
                  static_cast<double>(r.bytes_in()) / (1u << 20));
    s += buf;
  }
  if (r.pinned_slabs_grown > 0) {
    std::snprintf(buf, sizeof buf,
                  "  note: the pinned pool pinned %zu slab(s) (%.0f MiB more held) while the job "
                  "ran; reserve it ahead (Engine::reserve_pinned) to time the steady state\n",
                  r.pinned_slabs_grown, static_cast<double>(r.pinned_bytes_grown) / (1u << 20));
    s += buf;
  }
  if (!r.error.empty()) s += "  error: " + r.error + "\n";
  return s;
}

void set_bound(JobReport& r, std::size_t devices) {
  double bound = 0, longest_part = 0;
  for (const auto& part : r.parts) {
    const double t_in = part.bytes_in / (r.h2d_gbps_model * 1e6);
    const double t_out = part.bytes_out / (r.d2h_gbps_model * 1e6);
    const double longest = std::max({t_in, part.kernels.ms, t_out});
    bound += longest;
    longest_part = std::max(longest_part, longest);
    r.fill_drain_ms = std::max(r.fill_drain_ms, t_in + part.kernels.ms + t_out - longest);
  }
  r.bound_ms =
      std::max(bound / static_cast<double>(std::max<std::size_t>(1, devices)), longest_part);
}

}  // namespace stoker::engine
