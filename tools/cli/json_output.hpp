// JSON as the stoker commands print and write it (--json, reports, traces):
// built with nlohmann::json, so strings are escaped and numbers are JSON
// numbers whatever they hold. ordered_json keeps fields in the order a
// command sets them, so a person reading the output sees them grouped as
// the command means them; programs read them by name.
//
//   Json j;
//   j["workload"] = "hpoly";
//   j["wall_ms"] = 12.5;
//   j["device_busy"] = std::vector<double>{0.9, 0.8};
//   j["bound_ms"] = number_or_null(bound);   // null where not measured
//   std::printf("%s\n", json_text(j).c_str());
#pragma once

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>

namespace stoker::tools {

using Json = nlohmann::ordered_json;

// One line of JSON. Bytes that are not UTF-8 (a device name, an error
// message from a driver) become U+FFFD instead of throwing.
inline std::string json_text(const Json& j) {
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

// `v`, or null where it is not finite or not above zero (a figure that was
// not measured).
inline Json number_or_null(double v) {
  return std::isfinite(v) && v > 0 ? Json(v) : Json(nullptr);
}

}  // namespace stoker::tools
