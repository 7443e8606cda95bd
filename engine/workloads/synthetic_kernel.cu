#include <cuda_runtime.h>

#include "common/error.hpp"
#include "engine/workloads/mix_words.hpp"
#include "engine/workloads/synthetic.hpp"

namespace stoker::engine::workloads {
namespace {

__global__ void synthetic_kernel(const uint4* __restrict__ in, std::uint32_t* __restrict__ out,
                                 std::size_t n, int rounds) {
  for (std::size_t i = blockIdx.x * std::size_t{blockDim.x} + threadIdx.x; i < n;
       i += std::size_t{gridDim.x} * blockDim.x) {
    const uint4 v = in[i];  // 16-byte loads, coalesced
    out[i] = detail::mix_words(v.x, v.y, v.z, v.w, rounds);
  }
}

}  // namespace

std::error_code synthetic_gpu(const std::uint32_t* in, std::uint32_t* out, std::size_t out_words,
                              int rounds, void* cuda_stream) {
  int device = 0, sms = 0;
  cudaGetDevice(&device);
  cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  constexpr int kThreads = 256;
  const auto want = (out_words + kThreads - 1) / kThreads;
  const auto blocks = static_cast<unsigned>(std::min<std::size_t>(want, std::size_t(sms) * 8));
  synthetic_kernel<<<blocks, kThreads, 0, static_cast<cudaStream_t>(cuda_stream)>>>(
      reinterpret_cast<const uint4*>(in), out, out_words, rounds);
  return make_cuda_error(cudaGetLastError());
}

}  // namespace stoker::engine::workloads
