// WorkloadValues: the options a caller gives a workload, by name, as text
// (as a command line has them), in the order given. Workload::check says
// whether they suit a workload; the workload's builder then reads them
// typed, with the declared defaults filled in (workload.hpp).
//
//   WorkloadRequest request;
//   request.values.set("log-n", "12");
//   request.values.set("keep-h");  // a flag
//   auto built = registry.find("ntt_msm_h")->build(engine, request);
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/strict_number.hpp"

namespace stoker::engine::workloads {

class WorkloadValues {
 public:
  // Option `name` given with `value` ("" for a flag); a second set of the
  // same name replaces the first.
  void set(std::string name, std::string value = {});
  bool given(std::string_view name) const;
  // The text given for `name`, or nullopt.
  std::optional<std::string> text(std::string_view name) const;
  // The value given for `name` as a T, or nullopt when it is not given or
  // is not a T (Workload::check refuses that before a builder reads it).
  template <StrictInteger T>
  std::optional<T> number(std::string_view name) const {
    const auto t = text(name);
    return t ? parse_integer<T>(*t) : std::nullopt;
  }
  // Name and text of each option given, in the order given.
  const std::vector<std::pair<std::string, std::string>>& items() const { return items_; }

 private:
  std::vector<std::pair<std::string, std::string>> items_;
};

}  // namespace stoker::engine::workloads
