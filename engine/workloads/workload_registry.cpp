#include "engine/workloads/workload_registry.hpp"

#include "engine/workloads/builtin/builtin_workloads.hpp"

namespace stoker::engine::workloads {

Error WorkloadRegistry::add(std::unique_ptr<Workload> workload) {
  if (!workload) return {Errc::invalid_argument, "no workload to register"};
  std::lock_guard lock(mutex_);
  for (const auto& w : workloads_)
    if (w->name() == workload->name())
      return {Errc::invalid_argument,
              "a workload named '" + workload->name() + "' is registered already"};
  workloads_.push_back(std::move(workload));
  return {};
}

const Workload* WorkloadRegistry::find(std::string_view name) const {
  std::lock_guard lock(mutex_);
  for (const auto& w : workloads_)
    if (w->name() == name) return w.get();
  return nullptr;
}

std::vector<const Workload*> WorkloadRegistry::list() const {
  std::lock_guard lock(mutex_);
  std::vector<const Workload*> out;
  for (const auto& w : workloads_) out.push_back(w.get());
  return out;
}

Error add_builtin_workloads(WorkloadRegistry& registry) {
  // The first is `stoker run`'s default: whole proofs, what the engine is for.
  for (auto make : {builtin::make_groth16_workload, builtin::make_ntt_msm_h_workload,
                    builtin::make_hpoly_workload, builtin::make_synthetic_workload})
    if (auto e = registry.add(make())) return e;
  return {};
}

WorkloadRegistry& workload_registry() {
  static WorkloadRegistry registry;
  [[maybe_unused]] static const bool builtins = !add_builtin_workloads(registry);
  return registry;
}

}  // namespace stoker::engine::workloads
