// The hpoly workload: the GPU half of a Groth16 prover as engine
// partitions. Each partition has three produced inputs a, b, c and one
// output h, n = 2^log_n elements of 32 bytes each; the device work is
// kernels::gpu::hpoly (kernels::cpu::hpoly on the host backend), which turns
// the evaluations a, b, c into the n coefficients of h = (AB - C) / (x^n - 1).
//
// Producers play the synthesis threads: they write witness-like a and b
// (pseudo-random field elements) and c = a * b pointwise straight into the
// pinned produced buffers, so AB - C vanishes on the domain and h exists.
//
// Representation: every buffer (a, b, c and h) holds kernels::Fr as the
// kernels use it, i.e. Montgomery form (value * 2^256 mod r), fully reduced.
// The generator draws that internal representation directly (four random
// limbs, top bit cleared, r subtracted once if needed), so filling costs no
// conversion; the canonical value of an element is its representation times
// 2^-256. Data are a pure function of (seed, partition, index): runs are
// reproducible and the verifier regenerates a, b, c instead of keeping them
// (the pinned blocks go back to the pool once the partition's copies are done).
//
// Verification (options.verify) runs on an engine worker after h landed: at a
// point x drawn from (seed, partition), h(x) (x^n - 1) == A(x) B(x) - C(x),
// with A(x) from the evaluations by the barycentric formula
//   A(x) = (x^n - 1) / n * sum_i a_i w^i / (x - w^i),  w = omega_n,
// and the top coefficient of h must be zero (deg h <= n - 2). The weights
// w^i / (x - w^i) come from batch inversion in chunks (four Montgomery
// products per element); the sums take one more (b_i t_i) and two products
// that are summed unreduced (kernels/detail/fr_sum_of_products.hpp), plus
// regenerating a and b, split over `verify_threads` threads.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <system_error>
#include <vector>

#include "devices/device_set.hpp"
#include "devices/pinned_buffer.hpp"
#include "engine/job.hpp"
#include "engine/workloads/build_limits.hpp"
#include "engine/workloads/host_buffers.hpp"
#include "kernels/field.cuh"

namespace stoker::engine::workloads {

inline constexpr unsigned kHpolyMinLogN = 1;
// A 2^28 partition is 8 GiB per vector, 32 GiB on the device with h.
inline constexpr unsigned kHpolyMaxLogN = 28;

struct HpolyOptions {
  std::size_t partitions = 4;
  unsigned log_n = 12;
  std::uint64_t seed = 1;
  bool verify = true;
  unsigned verify_threads = 0;  // per partition being verified; 0: hardware threads
  unsigned cpu_threads = 0;     // kernels::cpu::hpoly threads on the host backend; 0: hardware
  int priority = 0;
  std::string name = "hpoly";
  // Where h lands. Unset: in pageable memory, so the engine's D2H goes to a
  // pinned bounce block from the pool and workers copy it out, one more read
  // and write of every h byte on the host memory that producers and DMA
  // share, and a block of the host budget per partition until then. Set to
  // the engine's backend: every h is page-locked for that backend's DMA once,
  // when the job is built (cudaHostRegister, ~0.1 s/GiB), and the D2H writes
  // it in place, as a prover that reuses its h buffers registers them once.
  std::optional<devices::Backend> registered_outputs;
  // Checked before anything is allocated (build_limits.hpp).
  BuildLimits limits;
};

// What verification found for one partition.
struct HpolyCheck {
  bool checked = false;  // verification ran (options.verify)
  bool ok = false;
  kernels::Fr x;          // the random point
  kernels::Fr lhs, rhs;   // h(x) (x^n - 1) and A(x) B(x) - C(x)
  bool top_zero = false;  // h[n-1] == 0
};

// The job's outputs; keep it alive until the job's handler ran (the job's
// lambdas hold it too). h[p] holds partition p's n coefficients once the job
// completed; checks[p] is filled by verify.
struct HpolyRun {
  HpolyOptions options;
  std::size_t n = 0;
  std::vector<PageBuffer<kernels::Fr>> h;  // page-aligned: registered with no neighbour
  // With options.registered_outputs, one per h; declared after h so that the
  // pages are unlocked before they are freed.
  std::vector<devices::HostRegistration> h_registrations;
  std::vector<HpolyCheck> checks;
  std::span<const kernels::Fr> output(std::size_t p) const { return {h[p].get(), n}; }
  bool h_registered() const { return !h_registrations.empty(); }
};

// Builds the job; `run` receives the output buffers. Errors name a bad
// option, an h that could not be page-locked, or the size and the limit when
// the job would not fit options.limits; no exception escapes (on an error
// `run` is left empty).
Result<Job> make_hpoly_job(const HpolyOptions& options, std::shared_ptr<HpolyRun>& run);

// Builds the twiddle tables of log_n on every CUDA device of `set` and loads
// the kernels (nothing on the host backend), so that no partition pays for
// them on the hot path. Without it the first partition of each (device,
// log_n) builds them inside its kernel launch (it allocates and waits, a few
// ms), and loading a kernel there may wait for the work queued ahead of it,
// holding up the next partition's copies by as long (a kernel's length).
std::error_code hpoly_prepare(const devices::DeviceSet& set, unsigned log_n);

// Elements [first, first + count) of partition `partition`'s a, b and c
// (c = a * b), written to a, b, c (c may be null). `nontemporal` uses
// non-temporal stores: for the producers, whose buffers the CPU does not read
// again; requires 16-byte aligned buffers.
void hpoly_fill(std::uint64_t seed, std::size_t partition, std::size_t first, std::size_t count,
                kernels::Fr* a, kernels::Fr* b, kernels::Fr* c, bool nontemporal = false);

// The producer of partition `partition`'s a, b, c: split into shares that
// fill disjoint element ranges on several workers at once (one 2^24
// partition is about a second of one core's work). Share t writes elements
// task.range(n, 8) of each vector, i.e. bytes range(bytes, kHpolyShareAlign),
// so the engine may copy each share as it ends (Partition::share_align).
inline constexpr std::size_t kHpolyShareAlign = 8 * sizeof(kernels::Fr);
SplitProducer hpoly_producer(std::uint64_t seed, std::size_t partition, unsigned log_n);

// The random point of partition `partition`; never on the domain of size 2^log_n.
kernels::Fr hpoly_point(std::uint64_t seed, std::size_t partition, unsigned log_n);

// Sum_i v_i w^i / (x - w^i) over the domain of size 2^log_n, for the
// evaluations of partition `partition` (which: 0 = a, 1 = b, 2 = c), and
// h(x) (zero when h is empty); the building blocks of verification, exposed
// so tests can check them against direct evaluation, and used at the toy
// SRS's secret point by the ntt_msm_h workload.
struct HpolySums {
  kernels::Fr a, b, c;  // barycentric sums (without the (x^n - 1) / n factor)
  kernels::Fr hx;       // h(x), Horner over the coefficients
};
HpolySums hpoly_sums(std::uint64_t seed, std::size_t partition, unsigned log_n,
                     std::span<const kernels::Fr> h, const kernels::Fr& x, unsigned threads = 0);

// The sums' weights at x: weights[i] = w^i / (x - w^i) = 1 / (x w^-i - 1)
// for i < weights.size() (2^log_n for hpoly_sums), x off the domain. Checks
// of several partitions at one point (ntt_msm_h's tau) compute them once:
// four Montgomery products per element, on `threads` threads.
void hpoly_weights(const kernels::Fr& x, unsigned log_n, std::span<kernels::Fr> weights,
                   unsigned threads = 0);

// hpoly_sums with the weights of x given (hpoly_weights, all 2^log_n of
// them; any other count is ignored and they are worked out as above): the
// same sums, without the four products per element the weights take.
HpolySums hpoly_sums(std::uint64_t seed, std::size_t partition, unsigned log_n,
                     std::span<const kernels::Fr> h, const kernels::Fr& x,
                     std::span<const kernels::Fr> weights, unsigned threads = 0);

// The sums a, b, c of hpoly_sums over elements [lo, hi) alone, on the
// calling thread, with all 2^log_n weights of x given (hx is zero): the
// shares of a partition's sums, which add up to hpoly_sums's.
HpolySums hpoly_sums_range(std::uint64_t seed, std::size_t partition, unsigned log_n,
                           const kernels::Fr& x, std::span<const kernels::Fr> weights,
                           std::size_t lo, std::size_t hi);

// Verifies h for partition `partition` at hpoly_point(); fills `check` when
// given. Errc::verification_failed when the identity does not hold,
// Errc::invalid_argument when h does not have 2^log_n elements.
std::error_code hpoly_verify(std::uint64_t seed, std::size_t partition, unsigned log_n,
                             std::span<const kernels::Fr> h, unsigned threads = 0,
                             HpolyCheck* check = nullptr);

}  // namespace stoker::engine::workloads
