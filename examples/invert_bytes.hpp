// The device work the examples share: out[i] = ~in[i], with a GPU version
// (a kernel on the partition's compute stream) and a CPU version (what the
// host backend runs), as every stoker partition needs both.
#pragma once

#include "engine/engine.hpp"

namespace stoker::examples {

std::error_code invert_bytes_gpu(const stoker::engine::KernelContext& ctx);
std::error_code invert_bytes_cpu(const stoker::engine::KernelContext& ctx);

inline stoker::DeviceWork invert_bytes() { return {invert_bytes_gpu, invert_bytes_cpu}; }

}  // namespace stoker::examples
