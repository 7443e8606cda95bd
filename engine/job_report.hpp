// JobReport: what a job cost, measured, never guessed (DESIGN.md rule 7).
// Device stage times come from events (CUDA events on GPUs, host clocks on
// the host backend); host stage times from the steady clock.
#pragma once

#include <cstddef>
#include <iosfwd>
#include <string>
#include <vector>

namespace stoker::engine {

struct StageSpan {
  double start_ms = 0;  // since the job was submitted
  double ms = 0;        // duration
};

struct PartitionReport {
  std::size_t index = 0;
  int device = -1;
  int slot = -1;
  double queue_wait_ms = 0;  // ready (produced) until a slot took it; 0 if taken while streamed
  StageSpan producer;        // on a CPU worker
  StageSpan staging;         // pageable inputs: host copies into pinned staging, registrations
  StageSpan h2d, kernels, d2h;
  // The kernels' span split at the device work's marks (KernelContext::mark),
  // one duration per step of JobReport::kernel_steps; empty without marks.
  std::vector<double> kernel_steps_ms;
  std::size_t bytes_in = 0, bytes_out = 0;
  std::size_t bytes_registered = 0;  // pageable input bytes DMA'd in place (registered, not staged)
  double h2d_gbps() const { return h2d.ms > 0 ? bytes_in / h2d.ms / 1e6 : 0; }
  double d2h_gbps() const { return d2h.ms > 0 ? bytes_out / d2h.ms / 1e6 : 0; }
};

struct JobReport {
  std::string name;
  std::string error;  // empty on success: the message that goes with the error_code
  std::size_t partitions = 0;
  std::size_t partitions_done = 0;
  double wall_ms = 0;
  std::vector<double> device_busy;  // compute-stream busy fraction per engine device
  std::vector<std::string> device_names;
  std::vector<std::string> kernel_steps;  // Job::kernel_steps
  // DESIGN.md's model: sum over partitions of max(T_in, T_k, T_out) / GPUs,
  // and at least the largest such max (one partition runs on one GPU).
  double bound_ms = 0;
  // What a full pipeline cannot hide: at the start one partition's stages
  // before its longest, at the end the ones after it; the largest
  // T_in + T_k + T_out - max(T_in, T_k, T_out) over the partitions. A lone
  // partition's bound_ms + fill_drain_ms is the sum of its stages.
  double fill_drain_ms = 0;
  double h2d_gbps_model = 0, d2h_gbps_model = 0;
  // Slabs the pinned pool pinned while the job ran (for it or any job
  // beside it) and the bytes it holds more than at the start: 0 when the
  // pool was reserved ahead (Engine::reserve_pinned). Pinning costs 0.2-0.5
  // s/GiB under load and blocks the process's other CUDA calls meanwhile,
  // so a job timed while the pool grows measures the growth, not the
  // pipeline (bench pipeline's (b) did: 394-985 ms, docs/BENCHMARKS.md).
  std::size_t pinned_slabs_grown = 0, pinned_bytes_grown = 0;
  std::vector<PartitionReport> parts;

  double partitions_per_s() const { return wall_ms > 0 ? partitions_done / (wall_ms / 1e3) : 0; }
  std::size_t bytes_in() const;
  std::size_t bytes_out() const;
  std::size_t bytes_registered() const;  // pageable input bytes DMA'd in place
  // How long engine device `device`'s H2D stream carried this job's inputs:
  // the union of its partitions' H2D spans there. Staged partitions' spans
  // overlap (consecutive passes interleave on the stream), so their sum
  // would count some time twice. Over wall_ms it is the link's busy
  // fraction; bytes_in_on(device) over it, the link's rate while busy.
  double h2d_busy_ms(std::size_t device) const;
  std::size_t bytes_in_on(std::size_t device) const;
};

// Chrome trace JSON (Perfetto, chrome://tracing): one track per device stream
// (H2D, compute, D2H) plus producer and staging tracks.
// Sets r.bound_ms and r.fill_drain_ms from r.parts and the link model
// (r.h2d_gbps_model, r.d2h_gbps_model), the parts spread over `devices`.
void set_bound(JobReport& r, std::size_t devices);

void write_chrome_trace(std::ostream& out, const std::vector<JobReport>& jobs);
// A short human summary of one job.
std::string summarize(const JobReport& r);

}  // namespace stoker::engine
