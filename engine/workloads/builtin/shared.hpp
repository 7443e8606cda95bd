// What the built-in workloads share: printf into a string for their
// banners, the banner's end that says where the job runs, and the rule for
// their partitions by default (so many per GPU, 8 on the host backend).
#pragma once

#include <cstdarg>
#include <cstdio>
#include <string>

#include "engine/engine.hpp"
#include "engine/workloads/workload.hpp"

namespace stoker::engine::workloads::builtin {

[[gnu::format(printf, 1, 2)]] inline std::string printf_text(const char* format, ...) {
  std::va_list args, again;
  va_start(args, format);
  va_copy(again, args);
  const int n = std::vsnprintf(nullptr, 0, format, args);
  va_end(args);
  std::string out(n > 0 ? static_cast<std::size_t>(n) : 0, '\0');
  if (n > 0) std::vsnprintf(out.data(), out.size() + 1, format, again);
  va_end(again);
  return out;
}

// "on 2 cuda device(s), depth 3"
inline std::string on_devices(const Engine& engine) {
  return printf_text("on %zu %s device(s), depth %d", engine.devices().size(),
                     devices::to_string(engine.devices().backend()),
                     engine.config().pipeline_depth);
}

inline bool on_gpus(const Engine& engine) {
  return engine.devices().backend() == devices::Backend::cuda;
}

inline std::size_t partitions_for(const Engine& engine, const WorkloadRequest& request,
                                  std::size_t per_gpu) {
  return request.partitions.value_or(on_gpus(engine) ? per_gpu * engine.devices().size() : 8);
}

}  // namespace stoker::engine::workloads::builtin
