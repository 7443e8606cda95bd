#include "engine/workloads/workload_values.hpp"

namespace stoker::engine::workloads {

void WorkloadValues::set(std::string name, std::string value) {
  for (auto& [n, v] : items_)
    if (n == name) {
      v = std::move(value);
      return;
    }
  items_.emplace_back(std::move(name), std::move(value));
}

bool WorkloadValues::given(std::string_view name) const {
  return text(name).has_value();
}

std::optional<std::string> WorkloadValues::text(std::string_view name) const {
  for (const auto& [n, v] : items_)
    if (n == name) return v;
  return std::nullopt;
}

}  // namespace stoker::engine::workloads
