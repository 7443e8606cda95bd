// SrsResidency: what an Srs handle refers to. The device copies and the
// counts live here; the engine thread owns `jobs_using` and the waiters,
// the flags are atomics so that handles read them from any thread.
#pragma once

#include <atomic>
#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/system/error_code.hpp>
#include <cstddef>
#include <future>
#include <string>
#include <utility>
#include <vector>

#include "devices/device.hpp"
#include "devices/device_buffer.hpp"
#include "engine/srs.hpp"

namespace stoker::engine::detail {

class KeyRegistry;

using EvictHandler = boost::asio::any_completion_handler<void(boost::system::error_code)>;

struct SrsResidency {
  const KeyRegistry* registry = nullptr;  // the one that loaded it
  std::size_t points = 0;
  std::string label;
  SrsLoadTimes times;
  // Indexed by engine device; the buffers are freed together, once no job
  // uses them, by the engine (never while `released` is false and a job
  // holds the residency).
  std::vector<const devices::Device*> devices;
  std::vector<devices::DeviceBuffer> buffers;
  // The load's NCCL communicators being destroyed in the background; the
  // buffers are freed (and the eviction completes) only after it.
  std::future<void> nccl_teardown;
  std::atomic<bool> evicting{false};
  std::atomic<bool> released{false};
  // Engine thread only.
  std::size_t jobs_using = 0;
  std::vector<std::pair<EvictHandler, boost::asio::any_io_executor>> evict_waiters;
};

}  // namespace stoker::engine::detail
