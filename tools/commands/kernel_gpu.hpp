// The GPU a kernel subcommand runs on, through devices/: opening the device
// --device names, checking it has room, and copying elements to and from
// it, every copy on the command's one stream. Failures come back as an
// error text naming what failed. Internal to tools/commands/.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <string>
#include <system_error>

#include "common/error.hpp"
#include "devices/device_set.hpp"
#include "tools/commands/kernel_args.hpp"

namespace stoker::tools::kernel_cli {

// The GPU a command runs on, through devices/: the set that owns it and one
// stream for every copy, kernel and timing event, so nothing runs on the
// default stream.
struct Gpu {
  devices::DeviceSet set;
  devices::Stream stream;
  devices::Device& device() const { return set[0]; }
  cudaStream_t native() const { return static_cast<cudaStream_t>(stream.native()); }
};

// Opens the GPU --device names (0 without it) and a stream on it.
Result<Gpu> open_gpu(const Args& a);

// Room for `bytes` of data on the device (with 5 % and 64 MiB to spare
// for tables and the runtime).
bool check_device_room(devices::Device& device, std::size_t bytes, std::string& error);

// `n` elements of device memory.
Result<devices::DeviceBuffer> allocate_elements(devices::Device& device, std::size_t n);

// Copy `bytes` between host memory the caller owns and the device on the
// GPU's stream, page-locking the host range for the copy (devices/ DMAs only
// from page-locked memory), and wait for it.
std::error_code upload(Gpu& gpu, void* device_dst, const void* host_src, std::size_t bytes,
                       std::string& error);
std::error_code download(Gpu& gpu, void* host_dst, const void* device_src, std::size_t bytes,
                         std::string& error);

// The GPU unless --cpu or this machine has none.
bool use_gpu(const Args& a);

}  // namespace stoker::tools::kernel_cli
