// Srs: G1 points resident on every device of an engine, loaded once and
// used by every job that names it (the H-query points of a circuit's
// structured reference string, which never change between proofs).
//
// Engine::load_srs reads the points (a file in the G1 encoding, or points in
// memory) through pinned blocks of the engine's pool, charged to its host
// budget while they are in flight, and uploads them to the first device; the
// other devices receive them from it by an NCCL broadcast over NVLink where
// the first device's peers can reach it (389 GB/s peer against 55 GB/s for
// each device's own PCIe upload, docs/BENCHMARKS.md), or upload from the
// same pinned blocks where they cannot. Each device's copy is charged to its
// device budget for as long as it is resident: partitions then get what is
// left.
//
// Lifetime: an Srs is a shared handle; copies refer to the same resident
// points. Engine::async_evict_srs frees them: jobs submitted after the call
// that name the Srs are refused; jobs already submitted run to their end and
// the memory is freed when the last of them completes, then the eviction
// completes. Destroying the engine frees every Srs it holds; handles left
// over then refer to nothing (points_on gives null).
//
// Thread safety: every const member may be called from any thread.
#pragma once

#include <atomic>
#include <cstddef>
#include <functional>
#include <limits>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "common/error.hpp"
#include "devices/device.hpp"
#include "kernels/g1.cuh"

namespace stoker::engine {

namespace detail {
struct SrsResidency;
}

struct SrsLoadOptions {
  // Skip the check that every point is on the curve and in G1 (on the first
  // device after its upload on a GPU, on the CPU on the host backend). The
  // form of each point (flags, coordinates below q) is always checked.
  bool trust_points = false;
  // With more than one device: broadcast from the first device with NCCL
  // (false: every device uploads from the pinned blocks, the slower path,
  // kept for measuring the broadcast against it).
  bool broadcast = true;
  std::string label = "srs";  // for errors and reports
  // The slots from g2_from to the end hold G2 points, two G1-sized slots
  // each (a Groth16 key's B_G2 query beside its G1 queries): checked on E'
  // and in G2 rather than as G1 points. The default: every slot is a G1
  // point.
  std::size_t g2_from = std::numeric_limits<std::size_t>::max();
  // The slots from raw_from to the end hold bytes that are not points (a
  // snarkjs key's constraint rows beside its queries): neither checked nor
  // converted, resident with the points. At or after g2_from.
  std::size_t raw_from = std::numeric_limits<std::size_t>::max();
  // What a failed check calls the point whose first slot is `slot` (default:
  // "point <slot>").
  std::function<std::string(std::size_t slot)> name_point;
  // The points pass through pinned blocks of this many slots (0: 2^21, 192
  // MiB); smaller only to test the boundaries between blocks.
  std::size_t chunk_points = 0;
  // The fill's errors name their source themselves (a key's file, section
  // and byte): passed on as they are rather than after the label.
  bool fill_errors_named = false;
  // The fill writes coordinates in canonical form, not Montgomery (a
  // bellman key's, as its file stores them): each chunk is converted where
  // it lands, by the uploading GPUs after their copies, or by the CPU
  // before its check on the host backend (kernels/fq_montgomery.hpp).
  bool canonical = false;
};

// Writes slots [first, first + out.size()) of the points being loaded into
// `out`, a pinned block on their way to the devices (it may run threads of
// its own); an error it returns ends the load.
using SrsFill = std::function<Error(std::size_t first, std::span<kernels::G1Affine> out)>;

// The fill of several arrays' points laid end to end (a proving key's
// queries, each in a vector of its own), copied on every thread: one
// thread's copy held a 2^24 key's 13.2 GB to 2.6 GB/s on the way onto an
// H100. The arrays must outlive the fill.
SrsFill gather_segments(std::span<const std::span<const kernels::G1Affine>> segments);

// Where a load's time went, in seconds (host clock around each phase).
struct SrsLoadTimes {
  double read_s = 0;    // file reads and decoding, summed over chunks
  double upload_s = 0;  // from the first read to the last upload's end
  // Making NCCL's communicators for the broadcast, on a thread of its own
  // beside the upload: total_s holds only what the upload did not hide.
  double nccl_setup_s = 0;
  double broadcast_s = 0;  // the broadcast's transfer to the other devices
  // Curve and subgroup check: on a GPU, the wait for it after the points
  // are on every device (each device checks a share, an uploading device
  // as the chunks land); on the host backend, the CPU's check of each chunk.
  double check_s = 0;
  double total_s = 0;
  bool broadcast_used = false;
  // On GPUs, the group checked by random buckets (kernels::gpu::
  // check_points_batched), but for ranges of fewer than kBatchCheckFrom
  // points; false where each point was tested (trusted points, the host
  // backend, or no room on the devices for the batch's scratch).
  bool check_batched = false;
};

class Srs {
 public:
  Srs() noexcept = default;

  explicit operator bool() const noexcept { return state_ != nullptr; }
  std::size_t points() const noexcept;
  std::size_t bytes() const noexcept { return points() * sizeof(kernels::G1Affine); }
  const std::string& label() const noexcept;
  const SrsLoadTimes& load_times() const noexcept;
  // Eviction asked for (no new job may use it).
  bool evicting() const noexcept;
  // Freed: evicted and no job left using it, or its engine destroyed.
  bool released() const noexcept;
  // The points on `device` (a device of the engine that loaded it), null
  // for any other device or once released. Device work reads them from its
  // KernelContext's device.
  const kernels::G1Affine* points_on(const devices::Device& device) const noexcept;

  // The same resident points.
  friend bool operator==(const Srs& a, const Srs& b) noexcept { return a.state_ == b.state_; }

  // For the engine.
  explicit Srs(std::shared_ptr<detail::SrsResidency> s) noexcept : state_(std::move(s)) {}
  const std::shared_ptr<detail::SrsResidency>& residency() const noexcept { return state_; }

 private:
  std::shared_ptr<detail::SrsResidency> state_;
};

}  // namespace stoker::engine
