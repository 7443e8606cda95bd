// The device work of examples/custom_workload.cpp: out[i] = in[i] * factor
// over floats, with a GPU version (a kernel on the partition's compute
// stream) and a CPU version (what the host backend runs).
#pragma once

#include "engine/engine.hpp"

namespace stoker::examples {

std::error_code scale_floats_gpu(const stoker::engine::KernelContext& ctx, float factor);
std::error_code scale_floats_cpu(const stoker::engine::KernelContext& ctx, float factor);

inline stoker::DeviceWork scale_floats(float factor) {
  return {[factor](const stoker::KernelContext& ctx) { return scale_floats_gpu(ctx, factor); },
          [factor](const stoker::KernelContext& ctx) { return scale_floats_cpu(ctx, factor); }};
}

}  // namespace stoker::examples
