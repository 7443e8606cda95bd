#include <cuda_runtime.h>

#include "test/engine/fault_kernel.hpp"

namespace stoker::test {
namespace {
__global__ void write_through(int* p) {
  *p = 1;
}
}  // namespace

std::error_code launch_faulting_kernel(void* stream) {
  // An address no allocation covers: a sticky cudaErrorIllegalAddress.
  write_through<<<1, 1, 0, static_cast<cudaStream_t>(stream)>>>(reinterpret_cast<int*>(0x10));
  return make_cuda_error(cudaGetLastError());
}
}  // namespace stoker::test
