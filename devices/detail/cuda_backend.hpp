// The CUDA backend: Device, Stream and Event over the CUDA runtime. Every
// call first makes its device current on the calling thread, so any thread
// may use any device. Sticky errors (a faulting kernel) are remembered and
// reported by health().
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "devices/device.hpp"

namespace stoker::devices::detail {

// true for the CUDA errors that corrupt a context for good.
bool is_sticky_cuda_error(int cuda_error) noexcept;

class CudaDevice final : public Device {
 public:
  CudaDevice(int index, int ordinal, DeviceInfo info);
  ~CudaDevice() override;

  const DeviceInfo& info() const noexcept override { return info_; }
  Result<Stream> create_stream(StreamPriority priority) override;
  Result<Event> create_event(EventKind kind) override;
  Result<DeviceBuffer> allocate(std::size_t bytes) override;
  Result<void*> allocate_async(std::size_t bytes, Stream& stream) override;
  std::error_code free_async(void* ptr, Stream& stream) override;
  std::error_code configure_pool(std::size_t bytes) override;
  Result<std::size_t> pool_reserved_bytes() override;
  Result<MemoryInfo> memory_info() override;
  std::error_code health() const override;
  std::error_code make_current() override;

  // Turns a CUDA status into an error_code, remembering sticky ones.
  std::error_code check(int cuda_error) const noexcept;

 protected:
  void release(void* ptr, std::size_t bytes) noexcept override;

 private:
  DeviceInfo info_;
  mutable std::atomic<int> sticky_{0};
};

// Host memory calls (cudaHostAlloc, cudaHostRegister and their frees) run
// in the calling thread's current context; a thread that never chose one
// gets device 0's. That context may be one the process does not use (an
// engine on GPU 1 only) or one a faulting kernel has broken for good, and
// then every such call fails, though the memory is portable and any
// healthy GPU could pin it. discover() notes the GPUs a process uses,
// check() the ones lost to sticky errors (a sticky error is the context's,
// so it holds process-wide), and a PinningContext makes a usable one
// current for the length of a host memory call, then restores the caller's.
void note_usable_cuda_device(int ordinal) noexcept;
// The calling thread's current CUDA device, to restore later; -1 where
// there is none to restore: no driver, or a thread that never chose a
// device (no context current). cudaGetDevice says 0 there, and "restoring"
// that with cudaSetDevice(0) would create GPU 0's context (and take its
// memory) in a process that may not use GPU 0.
int device_to_restore() noexcept;
// Makes `device` current again; nothing for -1. Never leaves an error.
void restore_device(int device) noexcept;
void note_lost_cuda_device(int ordinal) noexcept;

class PinningContext {
 public:
  PinningContext() noexcept;
  ~PinningContext();
  PinningContext(const PinningContext&) = delete;
  PinningContext& operator=(const PinningContext&) = delete;

 private:
  int restore_ = -1;  // the caller's device, where this one switched
};

// What CUDA knows of the host memory at `p`: whether it is page-locked
// (cudaHostAlloc'd or cudaHostRegister'ed) and, where the driver says,
// the allocation or registration it belongs to ([start, start + size);
// size 0 where it does not say). Call it under a PinningContext.
struct LockedRange {
  bool locked = false;
  std::uintptr_t start = 0;
  std::size_t size = 0;
};
Result<LockedRange> locked_range(const void* p) noexcept;

// Fills a DeviceInfo for CUDA ordinal `ordinal` (properties, PCIe link and
// NUMA node from sysfs where readable).
Result<DeviceInfo> read_cuda_device_info(int ordinal);

}  // namespace stoker::devices::detail
