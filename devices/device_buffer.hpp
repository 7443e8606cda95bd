// DeviceBuffer: a move-only owner of device memory from Device::allocate.
// Its destructor frees (cudaFree, which synchronises; never on a hot path:
// alloc/'s device pools keep buffers for reuse).
#pragma once

#include <cstddef>
#include <utility>

namespace stoker::devices {

class Device;

class DeviceBuffer {
 public:
  DeviceBuffer() noexcept = default;
  DeviceBuffer(Device* device, void* ptr, std::size_t bytes) noexcept
      : device_(device), ptr_(ptr), bytes_(bytes) {}
  DeviceBuffer(DeviceBuffer&& o) noexcept { swap(o); }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    DeviceBuffer(std::move(o)).swap(*this);
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  ~DeviceBuffer() { reset(); }

  void* data() const noexcept { return ptr_; }
  template <typename T>
  T* as() const noexcept {
    return static_cast<T*>(ptr_);
  }
  std::size_t size() const noexcept { return bytes_; }
  explicit operator bool() const noexcept { return ptr_ != nullptr; }
  Device* device() const noexcept { return device_; }
  void reset() noexcept;

 private:
  void swap(DeviceBuffer& o) noexcept {
    std::swap(device_, o.device_);
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
  }
  Device* device_ = nullptr;
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

}  // namespace stoker::devices
