// The synthetic workload behind `stoker run` and the pipeline benchmark:
// producers generate pseudo-random words straight into pinned memory, the
// kernel folds every four input words into one output word with `rounds`
// rounds of integer mixing (so runs can be copy-bound, balanced or
// compute-bound), and each partition's output is verified against the CPU
// version on sampled positions plus a full checksum.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <system_error>
#include <vector>

#include "devices/pinned_buffer.hpp"
#include "engine/job.hpp"
#include "engine/workloads/build_limits.hpp"
#include "engine/workloads/host_buffers.hpp"

namespace stoker::engine::workloads {

struct SyntheticOptions {
  std::size_t partitions = 16;
  std::size_t input_bytes = std::size_t{16} << 20;  // per partition, multiple of 16
  int rounds = 16;                                  // integer mixing rounds per output word
  bool pageable = false;  // true: caller-owned std::vector inputs through staging
  // Set to the engine's backend: the inputs are generated in caller memory
  // when the job is built and page-locked once for that backend's DMA
  // (Input::registered), as a prover registers buffers it reuses; the job
  // then copies and computes only, so a copy-bound run measures the
  // engine's H2D alone. Not with `pageable`.
  std::optional<devices::Backend> registered_inputs;
  // Set to the engine's backend: each output lands in page-aligned caller
  // memory page-locked once when the job is built, so the D2H writes it in
  // place (Output::to(.., true)), as hpoly's registered h does; unset, it
  // lands in a pinned bounce block and a worker copies it out.
  std::optional<devices::Backend> registered_outputs;
  std::uint64_t seed = 1;
  int priority = 0;
  std::string name = "synthetic";
  // Checked before anything is allocated (build_limits.hpp).
  BuildLimits limits;
};

// The job plus the memory its inputs and outputs live in; keep it alive
// until the job's handler ran (the job's lambdas hold it too).
struct SyntheticRun {
  SyntheticOptions options;
  std::vector<std::vector<std::uint32_t>> pageable_inputs;
  // With options.registered_inputs: the inputs, and their registrations,
  // declared after them so that the pages are unlocked before they are freed.
  std::vector<PageBuffer<std::uint32_t>> registered_inputs;
  std::vector<devices::HostRegistration> input_registrations;
  // Each partition's output words, in ordinary memory or, with
  // options.registered_outputs, in page buffers registered once (their
  // registrations declared after them, as the inputs').
  std::vector<std::span<std::uint32_t>> outputs;
  std::vector<std::vector<std::uint32_t>> output_storage;
  std::vector<PageBuffer<std::uint32_t>> registered_output_storage;
  std::vector<devices::HostRegistration> output_registrations;
  // Per partition, filled by verify: a sum of every output word, the same
  // on every backend for the same options and seed.
  std::vector<std::uint64_t> checksums;
};

// Builds the job; `run` receives the buffers. Errors name a bad option, or
// the size and the limit when the job would not fit options.limits; no
// exception escapes (on an error `run` is left empty).
Result<Job> make_synthetic_job(const SyntheticOptions& options, std::shared_ptr<SyntheticRun>& run);

// The arithmetic, shared by GPU and CPU so they agree bit for bit.
std::uint32_t synthetic_input_word(std::uint64_t seed, std::size_t partition, std::size_t index);
// Words first .. first + out.size() of a partition's input.
void synthetic_fill(std::uint64_t seed, std::size_t partition, std::span<std::uint32_t> out,
                    std::size_t first = 0);
void synthetic_cpu(const std::uint32_t* in, std::uint32_t* out, std::size_t out_words, int rounds);
std::error_code synthetic_gpu(const std::uint32_t* in, std::uint32_t* out, std::size_t out_words,
                              int rounds, void* cuda_stream);

}  // namespace stoker::engine::workloads
