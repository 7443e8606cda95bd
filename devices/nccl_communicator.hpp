// NcclCommunicator: a move-only owner of one NCCL communicator per device of
// a DeviceSet, in one process: rank i is set[i]. It moves bytes from one
// device to all the others (the SRS goes to the first GPU once and is
// broadcast from there, DESIGN.md).
//
// On CUDA the communicators come from ncclCommInitAll over the set's CUDA
// ordinals. Where peers cannot reach each other directly (no NVLink, no
// P2P over PCIe) NCCL still works: it routes through PCIe and host memory,
// only slower. On the host backend it is a stand-in with the same
// interface: a broadcast is an ordered memcpy on each rank's stream, so the
// engine above is the same code on both backends (DESIGN.md rule 6).
//
// Environment on the shared GPU machines: every run sets NCCL_NVLS_ENABLE=0.
// NCCL would otherwise use NVLink multicast (NVLS), and a program using it
// can put the host's GPUs, which others share, out of service. stoker does
// not set it itself: NCCL's settings belong to whoever runs the process,
// and the variable must already be set when NCCL first reads it.
//
// Ordering: broadcast() enqueues rank r's part on streams[r] and returns;
// as NCCL does, it joins the ranks' streams: no rank's copy starts before
// the root's stream has reached it, and the root's later work waits until
// every rank has its bytes. Completion is observed through events recorded
// on those streams afterwards.
//
// Thread safety: none per object. One thread at a time calls broadcast()
// on a communicator (NCCL's communicators are not safe to use from two
// threads at once); distinct communicators are independent.
//
// Lifetime: the DeviceSet must outlive the communicator. Destroying it
// waits for NCCL work already enqueued on its communicators to be flushed.
//
// Failure: create() and broadcast() report NCCL's failures as error codes
// of an `nccl` category whose message is ncclGetErrorString's; bad
// arguments are Errc::invalid_argument and nothing is enqueued.
#pragma once

#include <cstddef>
#include <span>
#include <system_error>
#include <vector>

#include "common/error.hpp"
#include "devices/device_info.hpp"
#include "devices/device_set.hpp"
#include "devices/stream.hpp"

struct ncclComm;  // nccl.h's, kept out of this header

namespace stoker::devices {

class NcclCommunicator {
 public:
  NcclCommunicator() noexcept;  // empty: no ranks
  // One rank per device of `set`, rank i = set[i]. Errors: invalid_argument
  // for an empty set; NCCL's failure, naming the CUDA devices.
  static Result<NcclCommunicator> create(const DeviceSet& set);

  NcclCommunicator(NcclCommunicator&& other) noexcept;
  NcclCommunicator& operator=(NcclCommunicator&& other) noexcept;
  NcclCommunicator(const NcclCommunicator&) = delete;
  NcclCommunicator& operator=(const NcclCommunicator&) = delete;
  ~NcclCommunicator();

  int ranks() const noexcept { return static_cast<int>(devices_.size()); }
  explicit operator bool() const noexcept { return !devices_.empty(); }

  // buffers[r] is `bytes` of device memory on rank r's device; the root's
  // bytes land in every other rank's buffer (the root's own is read only).
  // streams[r] belongs to rank r's device. Returns once enqueued. Errors
  // (nothing enqueued): invalid_argument for an empty communicator, spans
  // whose sizes are not ranks(), a root outside [0, ranks()), a null buffer
  // or stream, or a stream of another device; NCCL's failure otherwise.
  std::error_code broadcast(std::span<void* const> buffers, std::size_t bytes, int root,
                            std::span<Stream* const> streams);

 private:
  void destroy() noexcept;

  Backend backend_ = Backend::host;
  std::vector<const Device*> devices_;  // rank r's device
  std::vector<ncclComm*> comms_;        // CUDA: rank r's communicator; host: empty
};

}  // namespace stoker::devices
