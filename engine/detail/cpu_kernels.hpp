// The host backend's stand-in for a partition's kernels (DESIGN.md rule 6):
// the partition's CPU version (DeviceWork::cpu) run on the compute stream's
// worker, in stream order, with the clock read at its start, at each mark
// and at its end.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <system_error>
#include <vector>

#include "devices/device.hpp"
#include "engine/detail/device_layout.hpp"
#include "engine/job.hpp"

namespace stoker::engine::detail {

using Clock = std::chrono::steady_clock;

// Enqueues `cpu` on `stream` (the compute stream of `device`, a host
// backend device). A throw faults the emulated device, as an error returned
// does; the exception's text goes to *thrown before the fault, so the job's
// message can carry it. *marks gets the task's own clock readings: its
// start, each mark, and its end where it marked anything (the stream's
// events are read on another clock's footing). `index` names the partition
// in the NVTX range.
std::error_code enqueue_cpu_kernels(devices::Device& device, devices::Stream& stream,
                                    KernelBuffers buffers, KernelFn cpu, std::size_t index,
                                    std::shared_ptr<std::string> thrown,
                                    std::shared_ptr<std::vector<Clock::time_point>> marks);

}  // namespace stoker::engine::detail
