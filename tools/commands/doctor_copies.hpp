// The GPU side of `stoker doctor`: one Rig per GPU (two streams, timing
// events, device memory, and pinned and pageable sources near the GPU) and
// the functions that time copies through it: each GPU alone, each GPU while
// a MemoryLoad writes host memory, every GPU at once, and every pair of
// peers.
//
// Copies are timed with CUDA events, the median over the repetitions after
// the warm-up; only the all-GPU aggregate uses the wall clock. Failure: a
// measurement that fails adds a line saying what failed to `Errors` and
// leaves its figure nullopt; the others still run. Threads: one caller at
// a time; the functions change the calling thread's current device.
#pragma once

#include <optional>
#include <vector>

#include "devices/device_set.hpp"
#include "devices/pinned_buffer.hpp"
#include "tools/commands/doctor_host_memory.hpp"
#include "tools/commands/doctor_plan.hpp"
#include "tools/commands/doctor_verdict.hpp"

namespace stoker::tools::doctor {

// One GPU's measurement kit. Usable only when `ready`: prepare() made all of it.
struct Rig {
  devices::Device* dev = nullptr;
  int ordinal = 0;
  devices::Stream stream;
  devices::Stream back;  // the D2H half of the both-ways measurement
  devices::Event start, stop, back_stop;
  devices::DeviceBuffer dbuf;
  devices::PinnedBuffer pinned;
  HostMemory pageable;
  bool ready = false;
};

// Starts every GPU's CUDA context, so that no later figure includes that
// one-off cost; returns the wall-clock seconds it took.
double start_contexts(devices::DeviceSet& set, Errors& errors);

// Makes the kit of `r` (r.dev set) for copies of plan.copy_bytes: streams,
// events, device memory, and pinned and pageable sources allocated near the
// GPU.
void prepare(Rig& r, const Plan& plan, Errors& errors);

// One ready GPU alone: H2D and D2H from pinned and pageable memory, both
// directions at once, and from `registration` when it holds memory.
void measure_transfers(Rig& r, const Plan& plan, const devices::HostRegistration& registration,
                       TransferFigures& g, Errors& errors);

// One ready GPU, H2D from pinned and pageable memory, meant to run while a
// MemoryLoad writes: fills the loaded_* figures.
void measure_loaded_transfers(Rig& r, const Plan& plan, TransferFigures& g, Errors& errors);

// H2D on every GPU at once.
struct ConcurrentFigures {
  std::optional<double> aggregate_gbps;  // total bytes over wall-clock time
  std::vector<double> per_gpu_gbps;      // each GPU's own event-timed rate
};
// Empty with one GPU, and (with an error) when not every GPU is ready or a
// copy fails.
ConcurrentFigures measure_concurrent(std::vector<Rig>& rigs, const Plan& plan, Errors& errors);

// Copies between every ordered pair of GPUs, with peer access where CUDA
// offers it (what this enabled is disabled again before returning) and
// staged through the host otherwise. Empty with one GPU.
std::vector<PeerFigure> measure_peers(std::vector<Rig>& rigs, const Plan& plan, Errors& errors);

}  // namespace stoker::tools::doctor
