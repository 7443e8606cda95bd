// The kernel subcommands' GPU; see kernel_gpu.hpp.
#include "tools/commands/kernel_gpu.hpp"

#include <limits>

#include "devices/pinned_buffer.hpp"
#include "engine/strict_number.hpp"
#include "kernels/field.cuh"

namespace stoker::tools::kernel_cli {
namespace {

using engine::parse_integer;
using kernels::Fr;

// The device --device names (already checked by parse), 0 without it.
int device_ordinal(const Args& a) {
  const auto it = a.values.find("--device");
  if (it == a.values.end()) return 0;
  return parse_integer(it->second, 0, std::numeric_limits<int>::max()).value_or(0);
}

// Copies `bytes` between host memory the caller owns and the device on the
// GPU's stream, page-locking the host range for the copy (devices/ DMAs only
// from page-locked memory), and waits for it.
std::error_code copy_and_wait(Gpu& gpu, void* dst, const void* src, std::size_t bytes, void* host,
                              std::string& error) {
  auto locked = devices::register_host(devices::Backend::cuda, host, bytes);
  if (!locked) {
    error = locked.error().what();
    return locked.error().code;
  }
  std::error_code ec = gpu.stream.copy(dst, src, bytes);
  if (!ec) ec = gpu.stream.synchronize();
  if (ec) error = "copy of " + std::to_string(bytes) + " bytes: " + ec.message();
  return ec;
}

}  // namespace

Result<Gpu> open_gpu(const Args& a) {
  devices::DiscoverOptions options;
  options.backend = devices::BackendChoice::cuda;
  options.cuda_ordinals = {device_ordinal(a)};
  auto set = devices::discover(options);
  if (!set) return std::move(set).error();
  devices::Device& device = (*set)[0];
  if (auto ec = device.make_current()) return Error{ec, "GPU " + std::to_string(device.index())};
  auto stream = device.create_stream();
  if (!stream) return std::move(stream).error();
  return Gpu{std::move(*set), std::move(*stream)};
}

// Room for `bytes` of data on the device (with 5 % and 64 MiB to spare
// for tables and the runtime).
bool check_device_room(devices::Device& device, std::size_t bytes, std::string& error) {
  const auto info = device.memory_info();
  if (!info) {
    error = "cannot query device memory (" + info.error().what() + ")";
    return false;
  }
  const std::size_t need = bytes + bytes / 20 + (std::size_t{64} << 20);
  if (need > info->free) {
    error = "needs about " + std::to_string(need >> 20) + " MiB of device memory, the device has " +
            std::to_string(info->free >> 20) + " MiB free of " + std::to_string(info->total >> 20);
    return false;
  }
  return true;
}

// `n` elements of device memory.
Result<devices::DeviceBuffer> allocate_elements(devices::Device& device, std::size_t n) {
  return device.allocate(n * sizeof(Fr));
}

std::error_code upload(Gpu& gpu, void* device_dst, const void* host_src, std::size_t bytes,
                       std::string& error) {
  return copy_and_wait(gpu, device_dst, host_src, bytes, const_cast<void*>(host_src), error);
}

std::error_code download(Gpu& gpu, void* host_dst, const void* device_src, std::size_t bytes,
                         std::string& error) {
  return copy_and_wait(gpu, host_dst, device_src, bytes, host_dst, error);
}

bool use_gpu(const Args& a) {
  return !a.flags.count("--cpu") && devices::cuda_device_count() > 0;
}

}  // namespace stoker::tools::kernel_cli
