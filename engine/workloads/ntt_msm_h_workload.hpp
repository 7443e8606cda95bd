// The ntt_msm_h workload: the GPU phase of a Groth16 prover, one partition
// of a circuit at a time. Producers write a, b, c (n = 2^log_n evaluations
// each, as the hpoly workload makes them) straight into pinned memory; on
// the device hpoly turns them into h's coefficients in device memory and the
// MSM of h's first n - 1 coefficients over the circuit's H-query points
// follows on the same stream, reading h where hpoly left it and the points
// where they stay resident (an Srs loaded once, engine/srs.hpp). The
// partition's output is one G1 point: 192 bytes back over PCIe against
// 3 * 32 * n in. h comes back too only with keep_h.
//
// Verification (options.verify) needs the toy SRS's secret (tau, delta)
// (toy_srs.hpp): with the points [tau^i Z(tau) / delta] G, the MSM of h is
// [h(tau) Z(tau) / delta] G, and h(tau) Z(tau) = A(tau) B(tau) - C(tau) (Z
// of the job's size; a larger SRS's Z is put in for Z), so
// on a worker after the point landed the check evaluates A, B and C at tau
// from the regenerated evaluations (hpoly_sums: barycentric, no second NTT
// and no second MSM), multiplies the generator by the scalar on the CPU and
// compares. With keep_h it also checks the GPU's h itself: h(tau) by Horner
// against the same product, and its top coefficient zero. tau is the SRS's,
// the same for every partition, so the sums' weights w^i / (tau - w^i) are
// too: the job builder computes them (NttMsmHWeights, n * 32 bytes kept
// with the run), and per element the sums then regenerate a and b and take
// one Montgomery product and two unreduced ones. Where they are taken is
// chosen so that checking costs the GPU nothing: a partition's producer
// takes the sums of each share it writes (its inputs' sums do not depend
// on the GPU), except on the job's first partition per device, whose
// producer the devices wait for and whose check after its point lands runs
// under the next partitions' kernels; a check then only combines the
// shares' sums and multiplies the generator. Without that, the last
// partition's check after the last kernel left the GPU idle (2^24 x 4 on
// one H200: compute busy 77 % against 87 % without --verify).
//
// Device memory per partition: a, b, c (h overwrites a; a separate output
// with keep_h), the point, and the MSM's scratch on a GPU (plan_msm of
// n - 1 points on the engine's devices) or h on the host backend.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "devices/device_set.hpp"
#include "engine/job.hpp"
#include "engine/srs.hpp"
#include "engine/workloads/build_limits.hpp"
#include "engine/workloads/host_buffers.hpp"
#include "engine/workloads/hpoly_workload.hpp"
#include "engine/workloads/toy_srs.hpp"
#include "kernels/field.cuh"
#include "kernels/g1.cuh"
#include "kernels/msm.hpp"

namespace stoker::engine::workloads {

inline constexpr unsigned kNttMsmHMinLogN = 2;
inline constexpr unsigned kNttMsmHMaxLogN = 28;

struct NttMsmHOptions {
  std::size_t partitions = 4;
  unsigned log_n = 12;
  std::uint64_t seed = 1;  // of a, b, c
  // The H-query points, resident on the engine's devices: at least
  // toy_srs_points(log_n) of them (the first n - 1 are used).
  Srs srs;
  // The engine's devices, to size the MSM's scratch for them, and their
  // budget (EngineStats::device_budget_limit; 0: 85 % of each device's
  // memory, the engine's default).
  const devices::DeviceSet* devices = nullptr;
  std::size_t device_budget_bytes = 0;
  // Verification needs the toy SRS's secret (the SRS must be the toy one).
  bool verify = false;
  std::optional<ToySrsSecret> secret;
  bool keep_h = false;          // h of every partition comes back (run->h)
  unsigned verify_threads = 0;  // per partition being verified; 0: hardware threads
  unsigned cpu_threads = 0;     // the CPU kernels' threads on the host backend; 0: hardware
  int priority = 0;
  std::string name = "ntt_msm_h";
  BuildLimits limits;  // checked before anything is allocated
};

struct NttMsmHCheck {
  bool checked = false;
  bool ok = false;
  kernels::G1Affine expected;  // [(A(tau) B(tau) - C(tau)) / delta] G
  bool h_checked = false;      // keep_h: h(tau) Z(tau) == A B - C and h[n-1] == 0
  bool h_ok = false;
  bool sums_from_producer = false;  // A, B, C at tau were summed by the producer's shares
};

// A partition's sums at tau as its producer's shares take them.
struct NttMsmHProducedSums {
  std::mutex mutex;
  HpolySums sums{};          // of the shares ended so far
  std::size_t elements = 0;  // how many elements they cover (n: all)
  void add(const HpolySums& s, std::size_t count) {
    std::lock_guard lock(mutex);
    sums.a += s.a;
    sums.b += s.b;
    sums.c += s.c;
    elements += count;
  }
};

// The weights of the barycentric sums at tau for the job's domain
// (hpoly_weights), which every partition's check shares. The first call of
// get() computes them while any other waits for it; later calls return the
// same weights, whatever tau and log_n they pass (a job has one of each).
// Thread-safe; the memory (2^log_n * 32 bytes, which the builder counts)
// goes when the object does.
class NttMsmHWeights {
 public:
  // The weights, computed on `threads` threads (0: hardware threads) by the
  // first call; empty when their memory could not be had then, for this
  // call and every later one (each check then works out its weights as it
  // goes, as hpoly's does: the same result, slower).
  std::span<const kernels::Fr> get(const kernels::Fr& tau, unsigned log_n, unsigned threads);
  // How many times they were computed: 0 before the first get(), then 1.
  std::size_t computations() const { return computations_.load(); }

 private:
  std::once_flag once_;
  PageBuffer<kernels::Fr> data_;
  std::size_t size_ = 0;
  std::atomic<std::size_t> computations_{0};
};

// The job's outputs; keep it alive until the job's handler ran.
struct NttMsmHRun {
  NttMsmHOptions options;
  std::size_t n = 0;
  std::vector<kernels::G1Xyzz> sums;       // one per partition, as the MSM left it
  std::vector<PageBuffer<kernels::Fr>> h;  // keep_h only
  std::vector<NttMsmHCheck> checks;
  NttMsmHWeights weights;  // with options.verify
  // Per partition, with options.verify and without keep_h; empty otherwise.
  std::unique_ptr<NttMsmHProducedSums[]> produced_sums;
  // Partition p's point, affine (the form the files and checks use).
  kernels::G1Affine point(std::size_t p) const;
  std::span<const kernels::Fr> h_of(std::size_t p) const {
    return h.empty() ? std::span<const kernels::Fr>{} : std::span<const kernels::Fr>(h[p].get(), n);
  }
  // Every partition checked and matched.
  bool all_verified() const;
};

// Builds the job (Job::srs set, so the engine keeps the points resident
// while it runs). Errors name a bad option, an Srs too small for log_n,
// verify without a secret, or the size and the limit when the job would not
// fit options.limits; no exception escapes (on an error `run` is empty).
Result<Job> make_ntt_msm_h_job(const NttMsmHOptions& options, std::shared_ptr<NttMsmHRun>& run);

// The MSM's plan for one partition on device `ordinal`: the cost model's
// window, or the largest smaller one whose scratch lets two partitions sit
// beside the resident points (srs_bytes) within the device budget, so that
// one partition's copies run under the other's kernels (at 2^27 the cost
// model's window takes 44 GiB of scratch and a partition 56 GiB: one at a
// time in a 118 GiB budget beside a 12 GiB SRS, the 235 ms copy in never
// hidden; a window one bit smaller costs a few % more additions).
// device_budget_bytes 0: 85 % of the device's memory.
std::error_code ntt_msm_h_plan(int ordinal, unsigned log_n, std::size_t srs_bytes,
                               std::size_t device_budget_bytes, kernels::gpu::MsmPlan& plan);

// Device scratch one partition needs on `set`'s devices (the largest of
// them): the MSM's (ntt_msm_h_plan) on a GPU, h's on the host backend.
std::size_t ntt_msm_h_scratch_bytes(const devices::DeviceSet& set, unsigned log_n,
                                    std::size_t srs_bytes = 0, std::size_t device_budget_bytes = 0);

// hpoly_prepare plus the MSM's kernels, on every GPU of `set`.
std::error_code ntt_msm_h_prepare(const devices::DeviceSet& set, unsigned log_n);

// The check of partition `partition`'s point (and h when given) against the
// secret of a toy SRS of 2^srs_log_n - 1 points (srs_log_n >= log_n: a job
// uses the first 2^log_n - 1 points of a larger SRS, whose points carry
// Z(tau) of the SRS's size, so the expected point is
// [h(tau) Z_srs(tau) / delta] G); fills `check`. tau_weights: the sums'
// weights at tau for log_n (hpoly_weights), as a job's checks share them;
// empty: worked out as the check goes. Errc::verification_failed when it
// does not hold; Errc::invalid_argument for a bad log_n or srs_log_n, an h
// of another size, or weights that are not 2^log_n of tau's.
std::error_code ntt_msm_h_verify(std::uint64_t seed, std::size_t partition, unsigned log_n,
                                 unsigned srs_log_n, const ToySrsSecret& secret,
                                 const kernels::G1Affine& point, std::span<const kernels::Fr> h,
                                 unsigned threads, NttMsmHCheck* check = nullptr,
                                 std::span<const kernels::Fr> tau_weights = {});
// The same check with A, B, C's sums at tau given (all n elements' sums:
// hpoly_sums, or the sum of hpoly_sums_range over shares that cover them);
// no h.
std::error_code ntt_msm_h_verify_sums(const HpolySums& sums, unsigned log_n, unsigned srs_log_n,
                                      const ToySrsSecret& secret, const kernels::G1Affine& point,
                                      NttMsmHCheck* check = nullptr);

}  // namespace stoker::engine::workloads
