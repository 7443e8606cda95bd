// How each of a DeviceRunner's threads starts: named for top, perf and
// debuggers ("stoker-feed-0"; Linux keeps 15 characters) and bound near its
// device where `cpus` says where that is (a failure leaves it unbound:
// placement is a speed-up, never a reason to fail).
#pragma once

#include <pthread.h>

#include <string>

#include "devices/cpu_set.hpp"

namespace stoker::engine::detail {

inline void enter_thread(const std::string& name, const devices::CpuSet& cpus) {
  (void)pthread_setname_np(pthread_self(), name.substr(0, 15).c_str());
  if (!cpus.empty()) (void)cpus.bind_this_thread();
}

}  // namespace stoker::engine::detail
