#include "devices/nccl_communicator.hpp"

#include <nccl.h>

#include <string>
#include <utility>

#include "devices/device.hpp"

namespace stoker::devices {
namespace {

// Codes are ncclResult_t values; messages come from ncclGetErrorString.
class NcclCategory final : public std::error_category {
 public:
  const char* name() const noexcept override { return "nccl"; }
  std::string message(int c) const override {
    return ncclGetErrorString(static_cast<ncclResult_t>(c));
  }
};

const std::error_category& nccl_category() noexcept {
  static const NcclCategory category;
  return category;
}

std::error_code make_nccl_error(ncclResult_t r) noexcept {
  if (r == ncclSuccess) return {};
  return {static_cast<int>(r), nccl_category()};
}

// "CUDA devices 0 (GPU 0), 2 (GPU 1)": the ordinals NCCL saw and the
// indices stoker's messages elsewhere use.
std::string describe_devices(const std::vector<const Device*>& devices) {
  std::string s = devices.size() == 1 ? "CUDA device " : "CUDA devices ";
  for (std::size_t i = 0; i < devices.size(); ++i) {
    if (i > 0) s += ", ";
    s += std::to_string(devices[i]->info().ordinal) + " (GPU " +
         std::to_string(devices[i]->index()) + ")";
  }
  return s;
}

// NCCL's own detail of its last failure, where it kept one.
std::string last_nccl_detail() {
  const char* detail = ncclGetLastError(nullptr);
  return detail != nullptr && *detail != '\0' ? std::string(" (") + detail + ")" : std::string();
}

std::error_code invalid() {
  return make_error_code(Errc::invalid_argument);
}

// The host backend's broadcast, joined as NCCL joins the ranks' streams:
// each rank's copy waits for the root's stream to reach the broadcast (the
// work that filled the root's buffer), and the root's stream waits for
// every copy (later work there may overwrite what the copies read).
// Events are made first, so a failure to make one enqueues nothing.
std::error_code host_broadcast(std::span<void* const> buffers, std::size_t bytes, int root,
                               std::span<Stream* const> streams) {
  const auto n = buffers.size();
  Stream& root_stream = *streams[root];
  auto reached = root_stream.device().create_event(EventKind::ordering);
  if (!reached) return reached.error().code;
  std::vector<Event> copied(n);
  for (std::size_t r = 0; r < n; ++r) {
    if (static_cast<int>(r) == root) continue;
    auto e = streams[r]->device().create_event(EventKind::ordering);
    if (!e) return e.error().code;
    copied[r] = std::move(*e);
  }
  if (auto ec = root_stream.record(*reached)) return ec;
  for (std::size_t r = 0; r < n; ++r) {
    if (static_cast<int>(r) == root) continue;
    Stream& s = *streams[r];
    if (auto ec = s.wait(*reached)) return ec;
    if (buffers[r] != buffers[root])
      if (auto ec = s.copy(buffers[r], buffers[root], bytes)) return ec;
    if (auto ec = s.record(copied[r])) return ec;
    if (auto ec = root_stream.wait(copied[r])) return ec;
  }
  return {};
}

}  // namespace

NcclCommunicator::NcclCommunicator() noexcept = default;

Result<NcclCommunicator> NcclCommunicator::create(const DeviceSet& set) {
  if (set.empty())
    return Error{Errc::invalid_argument, "NCCL communicator over an empty device set"};
  NcclCommunicator c;
  c.backend_ = set.backend();
  for (std::size_t i = 0; i < set.size(); ++i) c.devices_.push_back(&set[i]);
  if (c.backend_ != Backend::cuda) return c;

  std::vector<int> ordinals;
  for (const Device* d : c.devices_) ordinals.push_back(d->info().ordinal);
  std::vector<ncclComm_t> comms(ordinals.size(), nullptr);
  // ncclCommInitAll makes each of the devices current in turn.
  KeepCurrentDevice keep(true);
  const auto r = ncclCommInitAll(comms.data(), static_cast<int>(ordinals.size()), ordinals.data());
  if (r != ncclSuccess)
    return Error{make_nccl_error(r), "ncclCommInitAll over " + describe_devices(c.devices_) + ": " +
                                         ncclGetErrorString(r) + last_nccl_detail()};
  c.comms_.assign(comms.begin(), comms.end());
  return c;
}

NcclCommunicator::NcclCommunicator(NcclCommunicator&& other) noexcept
    : backend_(other.backend_),
      devices_(std::exchange(other.devices_, {})),
      comms_(std::exchange(other.comms_, {})) {}

NcclCommunicator& NcclCommunicator::operator=(NcclCommunicator&& other) noexcept {
  if (this != &other) {
    destroy();
    backend_ = other.backend_;
    devices_ = std::exchange(other.devices_, {});
    comms_ = std::exchange(other.comms_, {});
  }
  return *this;
}

NcclCommunicator::~NcclCommunicator() {
  destroy();
}

void NcclCommunicator::destroy() noexcept {
  if (!comms_.empty()) {
    KeepCurrentDevice keep(true);
    // Finalizing is collective over the ranks; one thread holds them all,
    // so it is one group, else the first rank would wait for the others.
    ncclGroupStart();
    for (ncclComm* comm : comms_) ncclCommFinalize(comm);
    ncclGroupEnd();
    for (ncclComm* comm : comms_) ncclCommDestroy(comm);
  }
  comms_.clear();
  devices_.clear();
}

std::error_code NcclCommunicator::broadcast(std::span<void* const> buffers, std::size_t bytes,
                                            int root, std::span<Stream* const> streams) {
  const auto n = devices_.size();
  if (n == 0 || buffers.size() != n || streams.size() != n) return invalid();
  if (root < 0 || root >= static_cast<int>(n)) return invalid();
  for (std::size_t r = 0; r < n; ++r) {
    if (buffers[r] == nullptr || streams[r] == nullptr || !streams[r]->valid()) return invalid();
    if (streams[r]->backend() != backend_ || &streams[r]->device() != devices_[r]) return invalid();
  }
  if (bytes == 0) return {};
  if (backend_ != Backend::cuda) return host_broadcast(buffers, bytes, root, streams);

  KeepCurrentDevice keep(true);
  if (const auto r = ncclGroupStart(); r != ncclSuccess) return make_nccl_error(r);
  ncclResult_t first = ncclSuccess;
  for (std::size_t i = 0; i < n && first == ncclSuccess; ++i)
    first = ncclBroadcast(buffers[i], buffers[i], bytes, ncclChar, root, comms_[i],
                          static_cast<cudaStream_t>(streams[i]->native()));
  // The group is closed even after a failed call, or this thread's next
  // NCCL call would still be inside it.
  const auto end = ncclGroupEnd();
  return make_nccl_error(first != ncclSuccess ? first : end);
}

}  // namespace stoker::devices
