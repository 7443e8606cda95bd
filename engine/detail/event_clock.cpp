#include "engine/detail/event_clock.hpp"

#include "common/elapsed.hpp"
#include "engine/detail/device_handles.hpp"

namespace stoker::engine::detail {

Error StageEvents::create(devices::Device& device, const std::string& where) {
  for (auto* e : {&h2d0, &h2d1, &k0, &k1, &d2h0, &d2h1})
    if (auto err = make_event(device, devices::EventKind::timing, *e, where)) return err;
  for (auto& e : marks)
    if (auto err = make_event(device, devices::EventKind::timing, e, where)) return err;
  return {};
}

Result<EventClock> EventClock::create(devices::Device& device, devices::Stream& stream,
                                      const std::string& where) {
  EventClock c;
  if (auto err = make_event(device, devices::EventKind::timing, c.epoch_, where)) return err;
  if (auto ec = stream.record(c.epoch_)) return Error{ec, where + "recording the epoch event"};
  if (auto ec = c.epoch_.synchronize()) return Error{ec, where + "waiting for the epoch event"};
  c.epoch_host_ = Clock::now();
  return c;
}

double EventClock::ms(const devices::Event& e, Clock::time_point job_start) const {
  auto ms = devices::elapsed_ms(epoch_, e);
  if (!ms) return 0;
  return common::ms_since(job_start, epoch_host_) + *ms;
}

StageTimes EventClock::read(const StageEvents& events, Clock::time_point job_start, int gpu_marks,
                            const std::vector<Clock::time_point>* host_marks) const {
  StageTimes t;
  const double h0 = ms(events.h2d0, job_start), h1 = ms(events.h2d1, job_start);
  const double k0 = ms(events.k0, job_start), k1 = ms(events.k1, job_start);
  const double d0 = ms(events.d2h0, job_start), d1 = ms(events.d2h1, job_start);
  t.h2d = {h0, h1 - h0};
  t.kernels = {k0, k1 - k0};
  if (host_marks && host_marks->size() > 2)
    for (std::size_t i = 1; i < host_marks->size(); ++i)
      t.kernel_steps_ms.push_back(common::ms_since((*host_marks)[i - 1], (*host_marks)[i]));
  std::vector<double> at;
  for (int i = 0; i < gpu_marks; ++i)
    at.push_back(ms(events.marks[static_cast<std::size_t>(i)], job_start));
  double prev = k0;
  for (const double x : at) {
    t.kernel_steps_ms.push_back(x - prev);
    prev = x;
  }
  if (!at.empty()) t.kernel_steps_ms.push_back(k1 - prev);
  t.d2h = {d0, d1 - d0};
  return t;
}

}  // namespace stoker::engine::detail
