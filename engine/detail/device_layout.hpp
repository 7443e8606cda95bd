// Where a partition's inputs, outputs and scratch lie in the one device
// allocation it gets on a pipeline slot, each at a 256-byte boundary, and
// what its kernels see of that memory.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

#include "devices/device.hpp"
#include "engine/job.hpp"

namespace stoker::engine::detail {

// A partition's device memory as its kernels see it. Held by value: the
// CPU version runs after the frame that enqueued it is gone
// (cpu_kernels.hpp).
struct KernelBuffers {
  std::vector<std::byte*> inputs, outputs;
  std::vector<std::size_t> input_bytes, output_bytes;
  std::byte* scratch = nullptr;
  std::size_t scratch_bytes = 0;

  // A context over these buffers (which must outlive it), with no mark.
  KernelContext context(devices::Device& device, devices::Stream& stream) const {
    return {device, stream, inputs, input_bytes, outputs, output_bytes, scratch, scratch_bytes, {}};
  }
};

struct DeviceLayout {
  static constexpr std::size_t kAlign = 256;

  std::vector<std::size_t> in_off, out_off;  // per input, per output
  std::size_t scratch_off = 0;
  std::size_t bytes = 0;  // the whole allocation

  static DeviceLayout of(const Partition& p) {
    DeviceLayout l;
    for (const auto& in : p.inputs)
      l.in_off.push_back(std::exchange(l.bytes, l.bytes + align_up(in.bytes)));
    for (const auto& out : p.outputs)
      l.out_off.push_back(std::exchange(l.bytes, l.bytes + align_up(out.bytes)));
    l.scratch_off = l.bytes;
    l.bytes += align_up(p.scratch_bytes);
    return l;
  }

  // What the kernels of `p`, laid out in memory at `base`, see.
  KernelBuffers buffers(std::byte* base, const Partition& p) const {
    KernelBuffers b;
    for (std::size_t i = 0; i < p.inputs.size(); ++i) {
      b.inputs.push_back(base + in_off[i]);
      b.input_bytes.push_back(p.inputs[i].bytes);
    }
    for (std::size_t i = 0; i < p.outputs.size(); ++i) {
      b.outputs.push_back(base + out_off[i]);
      b.output_bytes.push_back(p.outputs[i].bytes);
    }
    b.scratch = p.scratch_bytes ? base + scratch_off : nullptr;
    b.scratch_bytes = p.scratch_bytes;
    return b;
  }

  static std::size_t align_up(std::size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }
};

}  // namespace stoker::engine::detail
