// The GPU version of the stress tool's blend workload; it shares its
// arithmetic with the CPU version (mix_words.hpp), so outputs agree bit
// for bit.
#include <cuda_runtime.h>

#include <algorithm>

#include "common/error.hpp"
#include "engine/workloads/mix_words.hpp"
#include "tools/stress/stress_blend.hpp"

namespace stoker::tools::stress {
namespace {

__global__ void blend_kernel(const std::uint32_t* __restrict__ a,
                             const std::uint32_t* __restrict__ b, std::uint32_t* __restrict__ out,
                             std::size_t n, std::uint32_t salt, int rounds) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x)
    out[i] = engine::workloads::detail::mix_words(a[i], b ? b[i] : 0x5bd1e995u,
                                                  static_cast<std::uint32_t>(i), salt, rounds);
}

}  // namespace

std::error_code blend_gpu(const std::uint32_t* a, const std::uint32_t* b, std::uint32_t* out,
                          std::size_t words, std::uint32_t salt, int rounds, void* scratch,
                          std::size_t scratch_bytes, void* cuda_stream) {
  auto stream = static_cast<cudaStream_t>(cuda_stream);
  // Scratch is written so that a wrong size or pointer shows up under
  // compute-sanitizer, as the CPU version's memset does under ASan.
  if (scratch != nullptr)
    if (auto e = cudaMemsetAsync(scratch, 0xab, scratch_bytes, stream); e != cudaSuccess)
      return make_cuda_error(e);
  int device = 0, sms = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  constexpr int kThreads = 256;
  const auto want = (words + kThreads - 1) / kThreads;
  const auto blocks = static_cast<unsigned>(
      std::max<std::size_t>(1, std::min<std::size_t>(want, std::size_t(sms) * 8)));
  blend_kernel<<<blocks, kThreads, 0, stream>>>(a, b, out, words, salt, rounds);
  return make_cuda_error(cudaGetLastError());
}

}  // namespace stoker::tools::stress
