// The jobs of `stoker stress`: a deterministic random job mix (a spec per
// job, drawn from a seeded generator so a seed names the same mix on every
// run), building a spec into an engine::Job with the memory it lives in, the
// outcome each spec must have, and the check of a successful job's outputs.
//
// Three workloads: the engine's synthetic workload; "blend", the stress
// tool's own: one or two inputs of any kind (produced, pageable, registered,
// pinned PinnedVec), an output that lands in pageable or pinned memory, and
// device scratch the kernel writes; and ntt_msm_h (hpoly then the MSM over a
// toy SRS resident on every device, each partition's point verified with
// the toy secret). Faults are injected by spoiling a spec (bad input, a
// kernel or producer that reports an error, a failing check; for ntt_msm_h
// the failing check is the secret of another toy SRS).
#pragma once

#include <boost/asio/cancellation_type.hpp>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <system_error>
#include <vector>

#include "alloc/pinned_pool.hpp"
#include "alloc/pinned_vec.hpp"
#include "devices/device_set.hpp"
#include "devices/pinned_buffer.hpp"
#include "engine/job.hpp"
#include "engine/srs.hpp"
#include "engine/workloads/ntt_msm_h_workload.hpp"
#include "engine/workloads/synthetic.hpp"
#include "tools/stress/stress_blend.hpp"

namespace stoker::tools::stress {

// Every fault kind the mix injects; `none` is a job that must succeed.
enum class Fault : int {
  none,
  empty_input,         // a zero-size input buffer
  mismatched_sizes,    // blend or ntt_msm_h inputs of different sizes (the workload's validate)
  bad_device,          // affinity names a device index that does not exist
  too_big_for_device,  // a partition larger than every device budget
  too_big_for_host,    // a partition larger than the host budget
  kernel_error,        // the kernel (GPU and CPU version) reports an error
  producer_error,      // the producer reports an error
  verify_error,        // the check of a partition fails (ntt_msm_h: another SRS's secret)
  producer_throws,     // the producer throws an exception
  verify_throws,       // the workload's check of a partition throws
};
inline constexpr int kFaultKinds = 11;
const char* fault_name(Fault f) noexcept;

enum class Token : int { callback, future, awaitable, deferred };
inline constexpr int kTokenKinds = 4;
const char* token_name(Token t) noexcept;

enum class Workload : int { synthetic, blend, ntt_msm_h };
const char* workload_name(Workload w) noexcept;

// The toy SRS behind every ntt_msm_h job: its seed, and its secret verifies
// them. A verify_error job checks with toy_srs_secret(kStressSrsSeed + 1).
inline constexpr std::uint64_t kStressSrsSeed = 0x5eed5;
// ntt_msm_h sizes the mix draws: 2^4 up to MixLimits::ntt_max_log_n.
inline constexpr unsigned kStressNttMinLogN = 4;
// The largest on each backend: the host backend runs hpoly and the MSM on
// the CPU (tens of ms at 2^10), so its jobs stay small.
inline constexpr unsigned kStressNttMaxLogNHost = 10;
inline constexpr unsigned kStressNttMaxLogNGpu = 14;
// The largest log_n the mix may use: the backend's cap, and a, b and c each
// within `max_partition_bytes` (so a partition fits the host budget as the
// other workloads' do). 0 when not even 2^kStressNttMinLogN fits.
unsigned stress_ntt_max_log_n(devices::Backend backend, std::size_t max_partition_bytes);

// splitmix64 steps: the same sequence on every platform and standard
// library (std::uniform_int_distribution is not specified bit for bit).
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : s_(seed) {}
  std::uint64_t next();
  std::uint64_t below(std::uint64_t n) { return n == 0 ? 0 : next() % n; }
  double unit() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
  bool chance(double p) { return unit() < p; }

 private:
  std::uint64_t s_;
};
std::uint64_t mix_seed(std::uint64_t seed, std::uint64_t a, std::uint64_t b = 0);

struct PartSpec {
  std::size_t words = 0;                  // blend: words per input and of the output
  std::vector<engine::InputKind> inputs;  // blend: one or two
  bool pinned_output = false;             // blend: output lands in a PinnedVec directly
  std::size_t scratch_bytes = 0;          // blend: device scratch the kernel fills
};

struct JobSpec {
  std::uint64_t id = 0;  // also the data seed
  int round = 0, submitter = 0;
  std::size_t index = 0;  // the submitter's n-th job this round
  Workload workload = Workload::blend;
  int mix_rounds = 4;
  bool synthetic_pageable = false;
  bool synthetic_streamed = false;  // produced inputs copied share by share (share_align)
  std::size_t synthetic_bytes = 0;  // synthetic: input bytes per partition
  unsigned ntt_log_n = 0;           // ntt_msm_h: 2^ntt_log_n evaluations per partition
  std::size_t partitions = 1;
  std::vector<PartSpec> parts;  // blend
  int priority = 0;
  std::vector<int> affinity;  // empty: any device
  Token token = Token::callback;
  bool tuple = false;  // future/awaitable through as_tuple: the report (message) is seen
  Fault fault = Fault::none;
  std::size_t fault_partition = 0;
  int fault_device = -1;  // kernel_error: the device it runs (and, on the host backend, breaks)
  bool cancel = false;
  double cancel_after_ms = 0;
  boost::asio::cancellation_type cancel_type = boost::asio::cancellation_type::terminal;

  std::string name() const;      // r<round>.s<submitter>.j<index>
  std::string describe() const;  // everything needed to recognise the job
  // Whether the token hands the handler the JobReport (and so its message).
  bool sees_report() const { return token == Token::callback || token == Token::deferred || tuple; }
};

// What the generator may choose from.
struct MixLimits {
  std::size_t devices = 1;
  std::size_t max_partitions = 6;
  std::size_t max_partition_bytes = 256 << 10;  // per input
  std::size_t host_budget = 0;                  // the engine's host budget limit
  std::size_t device_memory = 0;                // largest device's total memory
  double fault_rate = 0.2;
  double cancel_rate = 0.15;
  double max_cancel_delay_ms = 15;
  // ntt_msm_h jobs: at most 2^ntt_max_log_n per partition (0: none in the
  // mix), `ntt_share` of the jobs.
  unsigned ntt_max_log_n = 0;
  double ntt_share = 0.2;
};

// Draws one job. `kernel_fault` forces a kernel_error job (the driver places
// at most one per engine lifetime: on the host backend it breaks a device).
JobSpec make_spec(Rng& rng, const MixLimits& limits, int round, int submitter, std::size_t index,
                  bool kernel_fault);

// Pinned bytes the engine takes from its pool for the job's partitions.
std::size_t pinned_demand(const engine::Job& job);

// The memory a job's inputs and outputs live in; must outlive the handler.
struct JobBuffers {
  struct Aligned {
    void operator()(std::uint32_t* p) const noexcept;
  };
  std::vector<std::vector<std::uint32_t>> pageable;
  std::vector<std::unique_ptr<std::uint32_t[], Aligned>> registered;
  std::vector<devices::HostRegistration> registrations;
  std::vector<std::vector<std::uint32_t>> outputs;
  std::vector<alloc::PinnedVec<std::uint32_t>> pinned_outputs;
  std::shared_ptr<engine::workloads::SyntheticRun> synthetic;
  std::shared_ptr<engine::workloads::NttMsmHRun> ntt;
  std::vector<std::span<const std::uint32_t>> out_views;  // blend: per partition
};

// What ntt_msm_h jobs are built against: the toy SRS (kStressSrsSeed) made
// for 2^log_n, resident on the engine, and the engine's devices. Jobs of
// 2^log_n or less use its first points.
struct NttSrs {
  engine::Srs srs;
  unsigned log_n = 0;
  const devices::DeviceSet* devices = nullptr;
};

// Builds the job; pinned inputs and outputs come from `pool`; an ntt_msm_h
// spec needs `ntt`. Errors name what could not be built (the stress tool's
// own resources or a missing SRS, not the engine).
Result<engine::Job> build_job(const JobSpec& spec, devices::Backend backend,
                              alloc::PinnedPool& pool, JobBuffers& buffers,
                              const NttSrs* ntt = nullptr);

// The outcome a spec must have when nothing else interferes: success (no
// code), or the error code and parts of the message that name it.
struct Expectation {
  std::error_code code;
  std::vector<std::string> message;
};
Expectation expected(const JobSpec& spec);

// Checks every output word of a successful job against the CPU version
// (ntt_msm_h: every partition checked with the toy secret and matched);
// empty when they all match, else the first mismatch.
std::string verify_outputs(const JobSpec& spec, const JobBuffers& buffers);

}  // namespace stoker::tools::stress
