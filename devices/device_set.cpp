#include "devices/device_set.hpp"

#include <cuda_runtime.h>

#include <cstddef>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "devices/cpu_set.hpp"
#include "devices/detail/cuda_backend.hpp"
#include "devices/detail/host_backend.hpp"

namespace stoker::devices {
namespace {

Topology cuda_topology(const std::vector<int>& ordinals) {
  const auto n = ordinals.size();
  Topology t;
  t.peer_access.assign(n, std::vector<bool>(n, false));
  t.peer_rank.assign(n, std::vector<int>(n, -1));
  for (std::size_t i = 0; i < n; ++i) {
    for (std::size_t j = 0; j < n; ++j) {
      if (i == j) continue;
      int can = 0;
      if (cudaDeviceCanAccessPeer(&can, ordinals[i], ordinals[j]) != cudaSuccess) continue;
      t.peer_access[i][j] = can != 0;
      int rank = -1;
      if (can && cudaDeviceGetP2PAttribute(&rank, cudaDevP2PAttrPerformanceRank, ordinals[i],
                                           ordinals[j]) == cudaSuccess)
        t.peer_rank[i][j] = rank;
    }
  }
  return t;
}

Result<DeviceSet> discover_cuda(const DiscoverOptions& options) {
  const int count = cuda_device_count();
  if (count == 0)
    return Error{Errc::no_device, "CUDA backend requested but no CUDA device is visible"};
  // The host backend's shape would be ignored here: say so rather than run
  // on GPUs the caller thought were emulated.
  if (options.host.device_count != 1 || !options.host.slowdown.empty() ||
      !options.host.cpu_affinity.empty())
    return Error{Errc::invalid_argument,
                 "host backend options (device count " + std::to_string(options.host.device_count) +
                     ", " + std::to_string(options.host.slowdown.size()) + " slowdown factors, " +
                     std::to_string(options.host.cpu_affinity.size()) +
                     " CPU lists) were given but the backend is CUDA; ask for the host "
                     "backend to use them"};
  std::vector<int> ordinals = options.cuda_ordinals;
  if (ordinals.empty())
    for (int i = 0; i < count; ++i) ordinals.push_back(i);
  std::vector<std::unique_ptr<Device>> devices;
  for (std::size_t i = 0; i < ordinals.size(); ++i) {
    const int o = ordinals[i];
    if (o < 0 || o >= count)
      return Error{Errc::invalid_argument, "CUDA device " + std::to_string(o) +
                                               " does not exist (this machine has " +
                                               std::to_string(count) + ")"};
    for (std::size_t k = 0; k < i; ++k)
      if (ordinals[k] == o)
        return Error{Errc::invalid_argument, "CUDA device " + std::to_string(o) + " listed twice"};
    auto info = detail::read_cuda_device_info(o);
    if (!info) return std::move(info).error();
    devices.push_back(
        std::make_unique<detail::CudaDevice>(static_cast<int>(i), o, std::move(*info)));
  }
  for (int o : ordinals) detail::note_usable_cuda_device(o);
  return DeviceSet(Backend::cuda, std::move(devices), cuda_topology(ordinals));
}

Result<DeviceSet> discover_host(const DiscoverOptions& options) {
  // Silently running on emulated devices when GPUs were named would report
  // figures for a machine the caller did not ask for.
  if (!options.cuda_ordinals.empty())
    return Error{
        Errc::invalid_argument,
        "CUDA devices were named (" + std::to_string(options.cuda_ordinals.size()) +
            ") but the backend is the host's" +
            (options.backend == BackendChoice::automatic ? " (no CUDA device is visible)" : "") +
            "; the host backend's device count is set on its own"};
  const HostBackendOptions& o = options.host;
  if (o.device_count < 1 || o.device_count > 64)
    return Error{Errc::invalid_argument,
                 "host backend device count must be 1..64, not " + std::to_string(o.device_count)};
  if (o.slowdown.size() > static_cast<std::size_t>(o.device_count))
    return Error{Errc::invalid_argument, std::to_string(o.slowdown.size()) +
                                             " slowdown factors given for " +
                                             std::to_string(o.device_count) + " host devices"};
  if (o.cpu_affinity.size() > static_cast<std::size_t>(o.device_count))
    return Error{Errc::invalid_argument, std::to_string(o.cpu_affinity.size()) +
                                             " CPU lists given for " +
                                             std::to_string(o.device_count) + " host devices"};
  if (o.memory_bytes == 0)
    return Error{Errc::invalid_argument, "host backend device memory must be > 0 bytes"};
  std::vector<std::unique_ptr<Device>> devices;
  for (int i = 0; i < o.device_count; ++i) {
    const double f = i < static_cast<int>(o.slowdown.size()) ? o.slowdown[i] : 1.0;
    if (!(f >= 1.0 && f <= 1000.0))
      return Error{Errc::invalid_argument, "host device " + std::to_string(i) +
                                               ": slowdown factor must be in [1, 1000], not " +
                                               std::to_string(f)};
    const std::string cpus = i < static_cast<int>(o.cpu_affinity.size()) ? o.cpu_affinity[i] : "";
    if (!cpus.empty())
      if (auto parsed = CpuSet::parse(cpus); !parsed)
        return Error{parsed.error().code,
                     "host device " + std::to_string(i) + ": " + parsed.error().what()};
    devices.push_back(std::make_unique<detail::HostDevice>(i, f, o.memory_bytes, cpus));
  }
  Topology t;
  const auto n = static_cast<std::size_t>(o.device_count);
  // Host memory is one address space: every emulated device reaches every other.
  t.peer_access.assign(n, std::vector<bool>(n, true));
  t.peer_rank.assign(n, std::vector<int>(n, 0));
  for (std::size_t i = 0; i < n; ++i) {
    t.peer_access[i][i] = false;
    t.peer_rank[i][i] = -1;
  }
  return DeviceSet(Backend::host, std::move(devices), std::move(t));
}

}  // namespace

int cuda_device_count() noexcept {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) {
    cudaGetLastError();  // no driver or no device: not an error for us
    return 0;
  }
  return n;
}

Result<DeviceSet> discover(const DiscoverOptions& options) {
  switch (options.backend) {
    case BackendChoice::cuda:
      return discover_cuda(options);
    case BackendChoice::host:
      return discover_host(options);
    case BackendChoice::automatic:
      if (cuda_device_count() > 0) return discover_cuda(options);
      return discover_host(options);
  }
  return Error{Errc::invalid_argument, "unknown backend choice"};
}

KeepCurrentDevice::KeepCurrentDevice(bool cuda) noexcept
    : device_(cuda ? detail::device_to_restore() : -1) {}

KeepCurrentDevice::~KeepCurrentDevice() {
  detail::restore_device(device_);
}

}  // namespace stoker::devices
