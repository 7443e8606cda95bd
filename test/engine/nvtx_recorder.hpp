// A profiler stand-in for the NVTX tests: linked into a test binary, it
// attaches to NVTX the way Nsight Systems does (a static injection) and
// records every range the process opens, so a test can check names,
// payloads and nesting without a profiler.
#pragma once

#include <cstdint>
#include <string>
#include <thread>
#include <vector>

namespace stoker::test::nvtx_recorder {

struct Event {
  enum Kind { push, pop, start, end } kind;
  std::thread::id thread;
  std::string domain, name;  // name: the registered string or the ASCII label
  std::uint64_t payload = 0;
  std::uint64_t id = 0;  // start/end: the range id
};

// Whether the recorder attached (NVTX called its initialisation).
bool attached();
// The events recorded since the last take(), in order.
std::vector<Event> take();

}  // namespace stoker::test::nvtx_recorder
