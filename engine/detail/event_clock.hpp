// EventClock: a device's timing events read on the host's steady clock
// (DESIGN.md rule 7), and a pipeline slot's timing events read into the
// spans of its partition's report. An epoch event is recorded once, at
// creation, and the host clock read as soon as it has completed; an event's
// time is then that reading plus the event's time since the epoch.
// Thread safety: read-only once created (the waiter thread reads it).
#pragma once

#include <array>
#include <chrono>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "devices/device.hpp"
#include "engine/job.hpp"
#include "engine/job_report.hpp"

namespace stoker::engine::detail {

using Clock = std::chrono::steady_clock;

// The timing events a pipeline slot records around a partition's copies
// in, its kernels and its copies out, and the device work's marks
// (KernelContext::mark on a GPU).
struct StageEvents {
  devices::Event h2d0, h2d1, k0, k1, d2h0, d2h1;
  std::array<devices::Event, kMaxKernelMarks> marks;

  // Creates them all, in the order declared; errors name the device
  // (`where`, device_handles.hpp).
  Error create(devices::Device& device, const std::string& where);
};

// A partition's device steps, in ms since its job started.
struct StageTimes {
  StageSpan h2d, kernels, d2h;
  // The kernels' span split at the device work's marks; empty without marks.
  std::vector<double> kernel_steps_ms;
};

class EventClock {
 public:
  // Records the epoch on `stream` and waits for it; errors name the device
  // (`where`).
  static Result<EventClock> create(devices::Device& device, devices::Stream& stream,
                                   const std::string& where);
  // A clock without an epoch, to be assigned one made by create().
  EventClock() = default;

  // When `e` completed, in ms since `job_start`; 0 where it cannot be read.
  double ms(const devices::Event& e, Clock::time_point job_start) const;

  // The slot's spans, once its last event has completed. The kernels' steps
  // come from the first `gpu_marks` of `events.marks` on a GPU, or from
  // `host_marks`, the host backend's clock readings (the CPU kernels' start,
  // each mark, their end; cpu_kernels.hpp).
  StageTimes read(const StageEvents& events, Clock::time_point job_start, int gpu_marks,
                  const std::vector<Clock::time_point>* host_marks) const;

 private:
  devices::Event epoch_;
  Clock::time_point epoch_host_;
};

}  // namespace stoker::engine::detail
