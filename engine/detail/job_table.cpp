#include "engine/detail/job_table.hpp"

#include <algorithm>

#include "common/elapsed.hpp"

namespace stoker::engine::detail {

JobState& JobTable::add(std::unique_ptr<JobState> state) {
  auto& job = *jobs_.emplace(state->seq, std::move(state)).first->second;
  const auto n = job.job.partitions.size();
  job.parts.resize(n);
  job.remaining = n;
  for (std::size_t i = 0; i < n; ++i) {
    auto& ps = job.parts[i];
    ps.device_bytes = job.job.partitions[i].device_bytes();
    ps.report.index = i;
    ps.report.bytes_in = job.job.partitions[i].input_bytes();
    ps.report.bytes_out = job.job.partitions[i].output_bytes();
    to_prepare_.insert(PartKey{-job.job.priority, job.seq, i});
  }
  return job;
}

JobState* JobTable::find(std::uint64_t seq) {
  auto it = jobs_.find(seq);
  return it == jobs_.end() ? nullptr : it->second.get();
}

std::vector<std::uint64_t> JobTable::seqs() const {
  std::vector<std::uint64_t> out;
  for (const auto& [seq, job] : jobs_) out.push_back(seq);
  return out;
}

std::optional<PartKey> JobTable::next_to_prepare() {
  if (lookahead_in_use_ >= max_lookahead_ || to_prepare_.empty()) return std::nullopt;
  const PartKey k = *to_prepare_.begin();
  to_prepare_.erase(to_prepare_.begin());
  return k;
}

std::optional<PartKey> JobTable::take_runnable(
    const std::function<bool(const JobState&, const PartState&)>& fits) {
  for (auto* from : {&ready_, &early_})
    for (auto it = from->begin(); it != from->end(); ++it) {
      const auto& job = *jobs_.at(it->seq);
      if (job.over() || !fits(job, job.parts[it->part])) continue;
      const PartKey k = *it;
      from->erase(it);
      return k;
    }
  return std::nullopt;
}

void JobTable::withdraw(JobState& job) {
  for (auto it = to_prepare_.begin(); it != to_prepare_.end();)
    it = it->seq == job.seq ? to_prepare_.erase(it) : std::next(it);
  for (auto it = ready_.begin(); it != ready_.end();) {
    if (it->seq == job.seq) {
      auto& ps = job.parts[it->part];
      ps.blocks.clear();
      advance(job, ps, PartEvent::withdrawn);
      it = ready_.erase(it);
    } else {
      ++it;
    }
  }
}

JobReport JobTable::report(const JobState& job, const ReportContext& c) {
  JobReport r;
  r.name = job.job.name;
  r.partitions = job.parts.size();
  r.partitions_done = job.parts.size() - job.remaining;
  r.wall_ms = common::ms_since(job.start);
  r.pinned_slabs_grown = c.pool_now.pinned_allocations - job.pool_at_start.pinned_allocations;
  r.pinned_bytes_grown = c.pool_now.bytes_pinned > job.pool_at_start.bytes_pinned
                             ? c.pool_now.bytes_pinned - job.pool_at_start.bytes_pinned
                             : 0;
  r.h2d_gbps_model = c.h2d_gbps;
  r.d2h_gbps_model = c.d2h_gbps;
  r.kernel_steps = job.job.kernel_steps;
  const std::size_t devices = c.device_names.size();
  r.device_busy.assign(devices, 0.0);
  r.device_names = c.device_names;
  std::vector<bool> ran(devices, false);  // ran a partition of this job
  for (const auto& ps : job.parts) {
    if (ps.phase != PartPhase::done) continue;
    if (ps.report.device >= 0) {
      r.device_busy[static_cast<std::size_t>(ps.report.device)] += ps.report.kernels.ms;
      ran[static_cast<std::size_t>(ps.report.device)] = true;
    }
    r.parts.push_back(ps.report);
  }
  // Spread over the devices that could take the work: those the job
  // allows, less any that faulted without running a partition of it. But
  // never below one partition's longest stage (fewer partitions than
  // devices leave devices idle).
  std::size_t devices_allowed = 0;
  for (std::size_t d = 0; d < devices; ++d)
    devices_allowed += job.allows(d) && (c.device_healthy[d] || ran[d]);
  set_bound(r, devices_allowed);
  for (auto& b : r.device_busy) b = r.wall_ms > 0 ? b / r.wall_ms : 0;
  if (job.cancelled)
    r.error = "job '" + job.job.name + "' cancelled after " + std::to_string(r.partitions_done) +
              " of " + std::to_string(r.partitions) + " partitions";
  else if (job.failure)
    r.error = job.failure.what();
  return r;
}

}  // namespace stoker::engine::detail
