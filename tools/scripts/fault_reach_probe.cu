// Diagnostic for a machine with two GPUs, not built by CMake: after a
// kernel faults GPU 0 (illegal address), which threads can still use GPU 1
// (cudaMalloc, a kernel, portable cudaHostAlloc and cudaHostRegister, a
// copy from the pinned memory): the faulting thread, a thread that used
// GPU 0 before the fault, and fresh threads. The engine's answer to a fault
// on one GPU (keep the others, or treat the process as broken, as CUDA
// documents for sticky errors) follows from it. Build and run there:
//   nvcc -O2 -arch=sm_90 tools/scripts/fault_reach_probe.cu -o /tmp/probe
//   /tmp/probe
#include <cuda_runtime.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

namespace {

constexpr std::size_t kBytes = std::size_t{40} << 20;

__global__ void fault(int* p) { *p = 1; }
__global__ void touch(int* p) { p[threadIdx.x] += 1; }

// H2D rate from `host` on the current device, and what CUDA says `host` is.
void copy_rate(const char* who, void* host) {
  void* dev = nullptr;
  cudaStream_t s;
  cudaStreamCreate(&s);
  if (const auto e = cudaMalloc(&dev, kBytes)) {
    std::printf("  %s: cudaMalloc %s\n", who, cudaGetErrorName(e));
    return;
  }
  const auto t = std::chrono::steady_clock::now();
  for (int i = 0; i < 5; ++i) cudaMemcpyAsync(dev, host, kBytes, cudaMemcpyDefault, s);
  const auto e = cudaStreamSynchronize(s);
  const double ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count();
  cudaPointerAttributes a{};
  cudaPointerGetAttributes(&a, host);
  std::printf("  %s: H2D %s, %.1f GB/s, pointer type %d\n", who, cudaGetErrorName(e),
              5.0 * kBytes / ms / 1e6, static_cast<int>(a.type));
  cudaFree(dev);
  cudaStreamDestroy(s);
}

void use_gpu1(const char* who) {
  const auto set = cudaSetDevice(1);
  int current = -1;
  cudaGetDevice(&current);
  int* p = nullptr;
  const auto malloc_e = cudaMalloc(&p, 4096);
  if (!malloc_e) touch<<<1, 32>>>(p);
  const auto kernel_e = cudaDeviceSynchronize();
  void* pinned = nullptr;
  const auto alloc_e = cudaHostAlloc(&pinned, kBytes, cudaHostAllocPortable);
  std::printf("%s: cudaSetDevice(1) %s (current %d), cudaMalloc %s, kernel %s, cudaHostAlloc %s\n",
              who, cudaGetErrorName(set), current, cudaGetErrorName(malloc_e),
              cudaGetErrorName(kernel_e), cudaGetErrorName(alloc_e));
  if (!alloc_e) {
    copy_rate(who, pinned);
    cudaFreeHost(pinned);
  }
  void* mine = std::aligned_alloc(4096, kBytes);
  std::memset(mine, 0, kBytes);
  const auto reg_e = cudaHostRegister(mine, kBytes, cudaHostRegisterPortable);
  std::printf("%s: cudaHostRegister %s\n", who, cudaGetErrorName(reg_e));
  if (!reg_e) cudaHostUnregister(mine);
  std::free(mine);
}

}  // namespace

int main() {
  int n = 0;
  cudaGetDeviceCount(&n);
  if (n < 2) {
    std::printf("needs two GPUs, found %d\n", n);
    return 2;
  }
  for (int d = 0; d < 2; ++d) {
    cudaSetDevice(d);
    cudaFree(nullptr);
  }
  // A thread that used GPU 0 before the fault, waiting for it.
  std::mutex m;
  std::condition_variable cv;
  bool go = false;
  std::thread before([&] {
    cudaSetDevice(0);
    cudaFree(nullptr);
    std::unique_lock lock(m);
    cv.wait(lock, [&] { return go; });
    lock.unlock();
    use_gpu1("thread that used GPU 0 before the fault");
  });
  cudaSetDevice(0);
  fault<<<1, 1>>>(reinterpret_cast<int*>(0x10));
  std::printf("fault on GPU 0: %s\n", cudaGetErrorName(cudaDeviceSynchronize()));
  std::thread([] { use_gpu1("fresh thread"); }).join();
  {
    std::lock_guard lock(m);
    go = true;
  }
  cv.notify_all();
  before.join();
  use_gpu1("faulting thread");
  std::thread([] { use_gpu1("fresh thread, last"); }).join();
  return 0;
}
