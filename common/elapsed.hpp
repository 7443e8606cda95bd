// Time between steady_clock time points, as a double: ms_since(a, b) in
// milliseconds from a to b (b now unless given; reports, stress records),
// seconds_since(t0) in seconds from t0 to now (the tools' set-up steps).
// steady_clock because these measure intervals, which a change of the
// system's clock must not bend.
#pragma once

#include <chrono>

namespace stoker::common {

inline double ms_since(std::chrono::steady_clock::time_point a,
                       std::chrono::steady_clock::time_point b = std::chrono::steady_clock::now()) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

inline double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace stoker::common
