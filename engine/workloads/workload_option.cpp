#include "engine/workloads/workload_option.hpp"

#include <algorithm>

#include "engine/strict_number.hpp"

namespace stoker::engine::workloads {

WorkloadOption WorkloadOption::flag(std::string name, std::string help) {
  WorkloadOption o;
  o.name = std::move(name);
  o.help = std::move(help);
  return o;
}

WorkloadOption WorkloadOption::integer(std::string name, std::string value_name, std::uint64_t min,
                                       std::uint64_t max, std::string default_value,
                                       std::string help) {
  WorkloadOption o;
  o.name = std::move(name);
  o.kind = Kind::integer;
  o.value_name = std::move(value_name);
  o.min = min;
  o.max = max;
  o.default_value = std::move(default_value);
  o.help = std::move(help);
  return o;
}

WorkloadOption WorkloadOption::choice(std::string name, std::string value_name,
                                      std::vector<std::string> choices, std::string default_value,
                                      std::string help) {
  WorkloadOption o;
  o.name = std::move(name);
  o.kind = Kind::choice;
  o.value_name = std::move(value_name);
  o.choices = std::move(choices);
  o.default_value = std::move(default_value);
  o.help = std::move(help);
  return o;
}

WorkloadOption WorkloadOption::text(std::string name, std::string value_name, std::string help) {
  WorkloadOption o;
  o.name = std::move(name);
  o.kind = Kind::text;
  o.value_name = std::move(value_name);
  o.help = std::move(help);
  return o;
}

bool WorkloadOption::named(std::string_view n) const {
  return n == name || std::find(aliases.begin(), aliases.end(), n) != aliases.end();
}

std::string WorkloadOption::problem(std::string_view value, std::string_view workload) const {
  const std::string shown = flag_name();
  switch (kind) {
    case Kind::flag:
      return value.empty() ? std::string() : shown + " takes no value";
    case Kind::integer: {
      // A number outside what any workload could take reads as the parser
      // says it everywhere; one that another workload might take says what
      // this one needs.
      const auto v = parse_integer<std::uint64_t>(value);
      if (!v) return integer_problem(shown, value, min, max);
      if (*v < min)
        return shown + " " + std::string(value) + ": " + std::string(workload) +
               " needs at least " + std::to_string(min);
      if (*v > max)
        return shown + " " + std::string(value) + ": " + std::string(workload) + " needs at most " +
               std::to_string(max);
      return {};
    }
    case Kind::choice:
      if (std::find(choices.begin(), choices.end(), value) != choices.end()) return {};
      return shown + ": '" + std::string(value) + "' is not " + or_list(choices);
    case Kind::text:
      return value.empty() ? shown + " needs a value, not ''" : std::string();
  }
  return {};
}

std::string or_list(const std::vector<std::string>& items) {
  std::string list;
  for (std::size_t i = 0; i < items.size(); ++i)
    list += (i == 0 ? "" : i + 1 == items.size() ? " or " : ", ") + items[i];
  return list;
}

}  // namespace stoker::engine::workloads
