// How each of the engine's threads starts and runs: named for top, perf and
// debuggers ("stoker-feed-0"; Linux keeps 15 characters) and bound near its
// device where `cpus` says where that is (a failure leaves it unbound:
// placement is a speed-up, never a reason to fail); then its io_context
// until that runs out of work.
#pragma once

#include <pthread.h>

#include <boost/asio/io_context.hpp>
#include <new>
#include <string>

#include "common/host_memory_limit.hpp"
#include "devices/cpu_set.hpp"

namespace stoker::engine::detail {

inline void enter_thread(const std::string& name, const devices::CpuSet& cpus) {
  (void)pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
  if (!cpus.empty()) (void)cpus.bind_this_thread();
}

// A job's callables run guarded (guarded_call.hpp), but the engine's own
// handlers allocate too (a launch's bookkeeping, a report's text), and one
// the system refuses host memory in the middle of a job cannot be unwound:
// the process ends as std::terminate would end it, but says first which
// thread (`what`) ran out and the host's limit.
inline void run_engine_thread(boost::asio::io_context& io, const std::string& what) noexcept {
  try {
    io.run();
  } catch (const std::bad_alloc&) {
    common::abort_out_of_host_memory(what);
  }
}

}  // namespace stoker::engine::detail
