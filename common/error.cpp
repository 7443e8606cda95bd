#include "common/error.hpp"

#include <cuda_runtime_api.h>

namespace stoker::common {
namespace {

class StokerCategory final : public std::error_category {
 public:
  const char* name() const noexcept override { return "stoker"; }
  std::string message(int c) const override {
    switch (static_cast<Errc>(c)) {
      case Errc::ok:
        return "success";
      case Errc::invalid_argument:
        return "invalid argument";
      case Errc::no_device:
        return "no usable device";
      case Errc::out_of_device_memory:
        return "out of device memory";
      case Errc::out_of_host_memory:
        return "out of host memory";
      case Errc::not_supported:
        return "operation not supported on this backend";
      case Errc::device_fault:
        return "device is in a sticky error state";
      case Errc::cancelled:
        return "cancelled";
      case Errc::timed_out:
        return "timed out";
      case Errc::shutting_down:
        return "shutting down";
      case Errc::kernel_failed:
        return "kernel failed";
      case Errc::verification_failed:
        return "verification failed";
      case Errc::io_error:
        return "I/O error";
      case Errc::callable_threw:
        return "a job's callable threw an exception";
    }
    return "unknown stoker error " + std::to_string(c);
  }
};

class CudaCategory final : public std::error_category {
 public:
  const char* name() const noexcept override { return "cuda"; }
  std::string message(int c) const override {
    // Both calls are pure lookups: safe without a driver, safe after a sticky error.
    const auto e = static_cast<cudaError_t>(c);
    return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
  }
};

}  // namespace

const std::error_category& stoker_category() noexcept {
  static const StokerCategory category;
  return category;
}

const std::error_category& cuda_category() noexcept {
  static const CudaCategory category;
  return category;
}

std::error_code make_error_code(Errc e) noexcept {
  return {static_cast<int>(e), stoker_category()};
}

std::error_code make_cuda_error(int cuda_error) noexcept {
  if (cuda_error == 0) return {};
  return {cuda_error, cuda_category()};
}

std::string cuda_message(std::string_view what, int cuda_error) {
  cudaGetLastError();
  return std::string(what) + ": " + cuda_category().message(cuda_error);
}

}  // namespace stoker::common
