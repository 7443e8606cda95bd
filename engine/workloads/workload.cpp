#include "engine/workloads/workload.hpp"

#include <algorithm>
#include <stdexcept>

#include "engine/workloads/build_limits.hpp"

namespace stoker::engine::workloads {
namespace {

bool valid_name(std::string_view name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

class FunctionWorkload final : public Workload {
 public:
  FunctionWorkload(Description description, MakeWorkloadJob make)
      : Workload(std::move(description)), make_(std::move(make)) {}

 protected:
  Result<WorkloadJob> make_job(Engine& engine, const WorkloadRequest& request,
                               const WorkloadValues& values) const override {
    return make_(engine, request, values);
  }

 private:
  MakeWorkloadJob make_;
};

std::string both(const std::string& a, const std::string& b) {
  return "--" + a + " and --" + b + ": give one of them, not both";
}

}  // namespace

Workload::Workload(Description description) : d_(std::move(description)) {
  const auto refuse = [&](const std::string& why) {
    throw std::invalid_argument("workload '" + d_.name + "': " + why);
  };
  if (!valid_name(d_.name)) refuse("its name is not [a-z0-9_]+");
  std::vector<std::string> names;
  for (const auto& o : d_.options) {
    names.push_back(o.name);
    names.insert(names.end(), o.aliases.begin(), o.aliases.end());
    if (o.kind == WorkloadOption::Kind::integer && o.min > o.max)
      refuse("--" + o.name + " has min " + std::to_string(o.min) + " above max " +
             std::to_string(o.max));
    if (o.kind == WorkloadOption::Kind::choice && o.choices.empty())
      refuse("--" + o.name + " has no choices");
    if (!o.default_value.empty())
      if (auto p = o.problem(o.default_value, d_.name); !p.empty()) refuse("default " + p);
  }
  for (const auto& n : names) {
    if (n.empty() || n.starts_with("-")) refuse("an option named '" + n + "'");
    if (std::count(names.begin(), names.end(), n) > 1) refuse("two options named --" + n);
  }
  for (const auto& group : d_.exclusive)
    for (const auto& n : group)
      if (option(n) == nullptr) refuse("--" + n + " in an exclusive group is not an option");
}

const WorkloadOption* Workload::option(std::string_view name) const {
  for (const auto& o : d_.options)
    if (o.named(name)) return &o;
  return nullptr;
}

Error Workload::check(const WorkloadValues& values) const {
  const auto& given = values.items();
  for (std::size_t i = 0; i < given.size(); ++i) {
    const auto& [name, value] = given[i];
    const WorkloadOption* o = option(name);
    if (o == nullptr)
      return {Errc::invalid_argument, "--" + name + " is not an option of workload " + d_.name};
    for (std::size_t j = 0; j < i; ++j) {
      const std::string& earlier = given[j].first;
      if (option(earlier) == o) return {Errc::invalid_argument, both(earlier, name)};
      for (const auto& group : d_.exclusive) {
        const auto in = [&](const std::string& n) {
          return std::any_of(group.begin(), group.end(),
                             [&](const std::string& g) { return option(g) == option(n); });
        };
        if (in(earlier) && in(name)) return {Errc::invalid_argument, both(earlier, name)};
      }
    }
    if (auto p = o->problem(value, d_.name); !p.empty()) return {Errc::invalid_argument, p};
  }
  return {};
}

Result<WorkloadJob> Workload::build(Engine& engine, const WorkloadRequest& request) const {
  if (auto e = check(request.values)) return e;
  return guarded_build<WorkloadJob>(d_.name.c_str(), [&]() -> Result<WorkloadJob> {
    WorkloadValues values;
    for (const auto& o : d_.options) {
      std::optional<std::string> v;
      for (const auto& [name, text] : request.values.items())
        if (o.named(name)) v = text;
      if (v)
        values.set(o.name, *v);
      else if (!o.default_value.empty())
        values.set(o.name, o.default_value);
    }
    return make_job(engine, request, values);
  });
}

std::unique_ptr<Workload> make_workload(Workload::Description description, MakeWorkloadJob make) {
  if (!make) throw std::invalid_argument("workload '" + description.name + "': no make_job");
  return std::make_unique<FunctionWorkload>(std::move(description), std::move(make));
}

}  // namespace stoker::engine::workloads
