// WorkloadRegistry: the workloads a program can run by name, in the order
// they were added. workload_registry() is the process's own, holding the
// built-in ones (ntt_msm_h, hpoly, synthetic) from its first use; a program
// adds its own there before it looks any up, and `stoker run`, the
// benchmarks and the examples find them all by name.
//
//   auto& registry = stoker::engine::workloads::workload_registry();
//   if (auto e = registry.add(std::make_unique<Scale>())) ...  // e.what() names the clash
//   const Workload* w = registry.find("scale");
//
// Thread safety: add, find and list may be called from any thread; a
// Workload stays where it is for the registry's lifetime, so a pointer from
// find stays valid.
#pragma once

#include <memory>
#include <mutex>
#include <string_view>
#include <vector>

#include "common/error.hpp"
#include "engine/workloads/workload.hpp"

namespace stoker::engine::workloads {

class WorkloadRegistry {
 public:
  // Adds `workload` after those there. Errc::invalid_argument naming it
  // when a workload of that name is there already (the registry keeps the
  // first), or when it is null.
  Error add(std::unique_ptr<Workload> workload);
  // The workload called `name`, or null.
  const Workload* find(std::string_view name) const;
  // Every workload, in the order added: the first is the default.
  std::vector<const Workload*> list() const;

 private:
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<Workload>> workloads_;
};

// Adds ntt_msm_h, hpoly and synthetic, in that order.
Error add_builtin_workloads(WorkloadRegistry& registry);

// The process's registry, with the built-in workloads.
WorkloadRegistry& workload_registry();

}  // namespace stoker::engine::workloads
