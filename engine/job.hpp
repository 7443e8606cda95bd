// Job and Partition: what a user hands to Engine::async_submit.
//
// A Job is N partitions plus a name and a priority. A partition declares its
// inputs, optionally a producer that fills them on a CPU worker (writing
// straight into pinned memory: the synthesis-to-GPU handoff), its device work
// (a GPU version and a CPU version for the host backend) and its outputs.
//
// Ownership and the hand-off contract: pinned inputs (PinnedVec) are moved
// into the engine and given back to their pool when the partition's copies
// are done. Pageable and registered inputs stay owned by the caller, who must
// keep them alive and untouched until the job's handler runs; likewise output
// destinations must stay alive until then.
#pragma once

#include <algorithm>
#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

#include "devices/device.hpp"
#include "engine/srs.hpp"

namespace stoker::engine {

enum class InputKind {
  pinned,      // engine-owned pinned storage: DMA straight from it
  registered,  // caller memory already page-locked (cudaHostRegister): DMA straight from it
  pageable,    // ordinary caller memory: per-device pinned staging, or registered in
               // place for its copies (Config::pageable_inputs; docs/ENGINE.md)
  produced,    // engine allocates pinned storage of the given size; the producer fills it
};

struct Input {
  InputKind kind = InputKind::pageable;
  const std::byte* data = nullptr;  // null for produced inputs until produced
  std::size_t bytes = 0;
  std::shared_ptr<void> owner;  // keeps pinned storage alive while in flight

  static Input pageable(std::span<const std::byte> s) {
    return {InputKind::pageable, s.data(), s.size(), nullptr};
  }
  static Input registered(std::span<const std::byte> s) {
    return {InputKind::registered, s.data(), s.size(), nullptr};
  }
  static Input produced(std::size_t bytes) {
    return {InputKind::produced, nullptr, bytes, nullptr};
  }
  // Takes ownership of any container of pinned memory with data() and size()
  // (alloc::PinnedVec<T>); its storage goes back to its pool when done.
  template <typename PinnedContainer>
  static Input pinned(PinnedContainer&& c) {
    using C = std::remove_cvref_t<PinnedContainer>;
    auto holder = std::make_shared<C>(std::forward<PinnedContainer>(c));
    const auto* p = reinterpret_cast<const std::byte*>(holder->data());
    const auto n = holder->size() * sizeof(*holder->data());
    return {InputKind::pinned, p, n, std::move(holder)};
  }
};

struct Output {
  std::byte* destination = nullptr;  // host memory the result lands in
  std::size_t bytes = 0;
  // true: destination is page-locked, whoever locked it (a PinnedVec or
  // other pool block, cudaHostAlloc, cudaHostRegister), so the D2H copy
  // lands there directly; false: through a pinned bounce block, then a host
  // copy. Unlike InputKind::pinned (storage the engine takes over and gives
  // back to its pool), it says nothing about who owns the memory; the name
  // stays so that callers' code keeps building.
  bool pinned = false;

  static Output to(std::span<std::byte> s, bool page_locked = false) {
    return {s.data(), s.size(), page_locked};
  }
};

// What device work sees: device pointers in the order the partition declared
// its inputs and outputs, plus scratch, and the stream to enqueue on.
struct KernelContext {
  devices::Device& device;
  devices::Stream& stream;  // the compute stream
  std::span<std::byte* const> inputs;
  std::span<const std::size_t> input_bytes;
  std::span<std::byte* const> outputs;
  std::span<const std::size_t> output_bytes;
  std::byte* scratch = nullptr;
  std::size_t scratch_bytes = 0;
  // Ends a step of the device work (Job::kernel_steps names them), so that
  // the report splits the partition's kernel time at each mark: on a GPU it
  // records a timing event on ctx.stream, on the host backend it reads the
  // clock. At most kMaxKernelMarks per partition; empty where nothing is timed.
  std::function<std::error_code()> mark;
};

// Timing events per pipeline slot: the groth16 workload's six steps (h and
// each of its five MSMs) take five.
inline constexpr int kMaxKernelMarks = 7;

// GPU version: enqueues kernels on ctx.stream (cudaStream_t = ctx.stream.native()).
// CPU version: runs synchronously on the host backend's stream worker.
// Both report errors by return value; a CPU error faults the emulated device
// the way a faulting kernel does on a GPU.
using KernelFn = std::function<std::error_code(const KernelContext&)>;

struct DeviceWork {
  KernelFn gpu;
  KernelFn cpu;
};

// Fills the partition's produced inputs, on a CPU worker thread. The spans
// are pinned memory in the order of the partition's produced inputs.
using Producer = std::function<std::error_code(std::span<const std::span<std::byte>> produced)>;

// One share of a split producer's work: share `index` of `count`.
struct ProducerTask {
  std::size_t index = 0;
  std::size_t count = 1;
  // This share of [0, n): contiguous, in order, sizes differing by at most
  // `align`, every boundary a multiple of `align`.
  std::pair<std::size_t, std::size_t> range(std::size_t n, std::size_t align = 1) const {
    const std::size_t units = (n + align - 1) / align;
    const auto at = [&](std::size_t i) { return std::min(n, units * i / count * align); };
    return {at(index), at(index + 1)};
  }
};

// A producer that fills its partition in shares, called once per share on
// different workers at the same time: synthesis of one large partition is
// itself parallel work, and one thread per partition cannot keep GPUs fed
// when the host budget allows only a few partitions in flight. Each share
// must write only its own part of the spans (ProducerTask::range helps).
using SplitProducer = std::function<std::error_code(std::span<const std::span<std::byte>> produced,
                                                    ProducerTask task)>;

struct Partition {
  std::vector<Input> inputs;
  // Required when any input is InputKind::produced: one of the two.
  Producer producer;
  SplitProducer split_producer;
  std::size_t producer_tasks = 0;  // shares of split_producer; 0: the engine picks
  // Non-zero: a promise that share t of the split producer writes exactly
  // bytes ProducerTask{t, count}.range(input.bytes, share_align) of every
  // produced input and no others. The engine then streams the partition: it
  // may take a device slot while the producer runs and copies each share's
  // bytes to the device as soon as that share has ended, so the first
  // kernel starts about one share's copy after the producer ends instead of
  // a whole partition's copy. Its H2D span then runs from the first share's
  // end to the last copy's end, waits for later shares included. Ignored
  // without a split producer; refused with a plain one.
  std::size_t share_align = 0;
  DeviceWork work;
  std::vector<Output> outputs;
  std::size_t scratch_bytes = 0;  // device scratch for the kernels
  std::string label;              // for reports and traces; defaults to the index

  std::size_t input_bytes() const;
  std::size_t output_bytes() const;
  std::size_t device_bytes() const { return input_bytes() + output_bytes() + scratch_bytes; }
};

struct Job {
  std::string name = "job";
  int priority = 0;  // higher runs first; ties by arrival
  std::vector<Partition> partitions;
  std::optional<std::vector<int>> devices;  // affinity: engine device indices allowed
  // Resident points the partitions' device work reads (Srs::points_on). The
  // job is refused once the Srs is being evicted, and holds its eviction
  // back until the job completes; its partitions get the device budget the
  // points leave.
  Srs srs;
  // Workload-specific check run before any GPU work, e.g. a, b, c sizes that
  // must match; an Error names the problem. The engine puts "job '<name>'
  // partition <index>: " before its message, so the message need not (and
  // should not) name the partition again.
  std::function<Error(const Partition&, std::size_t index)> validate;
  // Runs on a worker after a partition's outputs landed (e.g. checksums);
  // an error fails the job.
  std::function<std::error_code(const Partition&, std::size_t index)> verify;
  // Names of the steps the device work separates with KernelContext::mark
  // (one more than the marks), e.g. {"hpoly", "msm"}: the report's
  // kernel_steps_ms follow them.
  std::vector<std::string> kernel_steps;
  // Called after each finished partition, on the handler's executor.
  std::function<void(std::size_t done, std::size_t total)> progress;
};

}  // namespace stoker::engine
