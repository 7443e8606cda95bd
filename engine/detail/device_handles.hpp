// The streams and events a DeviceRunner and its parts create at start-up,
// with errors that name the device: "device 0 (NVIDIA H200): creating an
// event: ...".
#pragma once

#include <string>
#include <utility>

#include "common/error.hpp"
#include "devices/device.hpp"

namespace stoker::engine::detail {

// The start of every such error: "device 0 (NVIDIA H200): ".
inline std::string device_where(const devices::Device& device) {
  return "device " + std::to_string(device.index()) + " (" + device.info().name + "): ";
}

inline Error make_stream(devices::Device& device, devices::StreamPriority priority,
                         devices::Stream& out, const std::string& where) {
  auto s = device.create_stream(priority);
  if (!s) return Error{s.error().code, where + "creating a stream: " + s.error().what()};
  out = std::move(*s);
  return {};
}

inline Error make_event(devices::Device& device, devices::EventKind kind, devices::Event& out,
                        const std::string& where) {
  auto e = device.create_event(kind);
  if (!e) return Error{e.error().code, where + "creating an event: " + e.error().what()};
  out = std::move(*e);
  return {};
}

}  // namespace stoker::engine::detail
