// The built-in workloads as Workloads (workload.hpp), each adapting the
// builder of its own header (ntt_msm_h_workload.hpp, hpoly_workload.hpp,
// synthetic.hpp) to options given by name. Reached through the registry
// (workload_registry.hpp), never directly.
#pragma once

#include <memory>

#include "engine/workloads/workload.hpp"

namespace stoker::engine::workloads::builtin {

std::unique_ptr<Workload> make_ntt_msm_h_workload();
std::unique_ptr<Workload> make_hpoly_workload();
std::unique_ptr<Workload> make_synthetic_workload();
std::unique_ptr<Workload> make_groth16_workload();

}  // namespace stoker::engine::workloads::builtin
