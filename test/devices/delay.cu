#include <cuda_runtime.h>

#include <chrono>
#include <thread>

#include "test/devices/delay.hpp"
#include "devices/device.hpp"

namespace stoker::test {
namespace {
__global__ void spin_kernel(long long ns) {
  long long start;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
  for (;;) {
    long long now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    if (now - start >= ns) break;
  }
}
__global__ void store_kernel(int* p, int v) { *p = v; }
}  // namespace

std::error_code enqueue_delay(devices::Stream& stream, int ms) {
  if (stream.backend() == devices::Backend::host)
    return stream.enqueue_host([ms] {
      std::this_thread::sleep_for(std::chrono::milliseconds(ms));
      return std::error_code{};
    });
  stream.device().make_current();
  spin_kernel<<<1, 1, 0, static_cast<cudaStream_t>(stream.native())>>>(ms * 1000000LL);
  return make_cuda_error(cudaGetLastError());
}

std::error_code enqueue_store(devices::Stream& stream, int* p, int v) {
  if (stream.backend() == devices::Backend::host)
    return stream.enqueue_host([p, v] {
      *p = v;
      return std::error_code{};
    });
  stream.device().make_current();
  store_kernel<<<1, 1, 0, static_cast<cudaStream_t>(stream.native())>>>(p, v);
  return make_cuda_error(cudaGetLastError());
}
}  // namespace stoker::test
