#include "engine/workloads/hpoly_workload.hpp"

#include <algorithm>
#include <cstring>
#include <thread>

#include "common/splitmix64.hpp"
#include "engine/engine.hpp"
#include "engine/workloads/detail/hpoly_fill.hpp"
#include "engine/workloads/detail/hpoly_fill_ifma.hpp"
#include "kernels/detail/fr_mul_adx.hpp"
#include "kernels/hpoly.hpp"
#include "kernels/ntt.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif
// The adx fill exists where the ADX product does (kernels/detail/fr_mul_adx.hpp:
// x86-64, GCC or Clang, an optimizing build); elsewhere the portable path.
#if defined(STOKER_FR_MUL_ADX)
#define STOKER_HPOLY_ADX 1
#endif

namespace stoker::engine::workloads {

using kernels::Fr;

namespace {

// One key per (seed, partition, stream): stream 0 is a, 1 is b, 2 the points.
inline std::uint64_t stream_key(std::uint64_t seed, std::size_t partition, unsigned stream) {
  using common::splitmix64_mix;
  return splitmix64_mix(splitmix64_mix(seed ^ 0x68706f6c79ull) +
                        common::kSplitmix64Gamma * (std::uint64_t{partition} + 1) +
                        (std::uint64_t{stream} << 56));
}

// The words of a stream: wyrand's output function on the counter state
// key + counter * kWyStep, i.e. one 64x64->128 multiplication per word with
// its halves folded (splitmix64 needs two).
using detail::kWyMix;
using detail::kWyStep;

inline std::uint64_t wy(std::uint64_t state) {
  using u128 = unsigned __int128;
  const u128 p = static_cast<u128>(state) * (state ^ kWyMix);
  return static_cast<std::uint64_t>(p) ^ static_cast<std::uint64_t>(p >> 64);
}

// Element `index` of a stream: words 4 index .. 4 index + 3, the top one
// shifted right once (< 2^255 < 2r), then r subtracted once when the value
// is >= r (about one draw in ten).
inline Fr draw(std::uint64_t key, std::uint64_t index) {
  const std::uint64_t s = key + 4 * index * kWyStep;
  return Fr::reduce_once_host(
      Fr{{wy(s), wy(s + kWyStep), wy(s + 2 * kWyStep), wy(s + 3 * kWyStep) >> 1}});
}

inline void store(Fr* dst, const Fr& x, bool nontemporal) {
#if defined(__x86_64__)
  if (nontemporal) {
    // MOVNTI straight from the limbs' registers: no trip through a vector register.
    auto* q = reinterpret_cast<long long*>(dst);
    _mm_stream_si64(q, static_cast<long long>(x.l[0]));
    _mm_stream_si64(q + 1, static_cast<long long>(x.l[1]));
    _mm_stream_si64(q + 2, static_cast<long long>(x.l[2]));
    _mm_stream_si64(q + 3, static_cast<long long>(x.l[3]));
    return;
  }
#endif
  // Limb by limb: copying the struct makes GCC go through the stack to move
  // the four registers as two 16-byte vectors.
  dst->l[0] = x.l[0];
  dst->l[1] = x.l[1];
  dst->l[2] = x.l[2];
  dst->l[3] = x.l[3];
}

inline void fill_portable(std::uint64_t ka, std::uint64_t kb, std::size_t first, std::size_t count,
                          Fr* a, Fr* b, Fr* c, bool nontemporal) {
  for (std::size_t k = 0; k < count; ++k) {
    const Fr x = draw(ka, first + k), y = draw(kb, first + k);
    store(a + k, x, nontemporal);
    store(b + k, y, nontemporal);
    if (c) store(c + k, x * y, nontemporal);
  }
#if defined(__x86_64__)
  // Non-temporal stores are weakly ordered: make them visible before the
  // engine hands the buffers to the DMA engine.
  if (nontemporal) _mm_sfence();
#endif
}

#if defined(STOKER_HPOLY_ADX)

__attribute__((always_inline)) inline Fr draw_asm(std::uint64_t key, std::uint64_t index) {
  const std::uint64_t s = key + 4 * index * kWyStep;
  Fr v{{wy(s), wy(s + kWyStep), wy(s + 2 * kWyStep), wy(s + 3 * kWyStep) >> 1}};
  kernels::detail::fr_reduce_once_asm(v);
  return v;
}

// GCC's SLP vectorizer packs the limbs of the plain stores into 16-byte
// vectors through the stack, and the reloads miss store forwarding: without
// it, filling a and b alone takes half the time.
#if defined(__clang__)
#define STOKER_NO_SLP
#else
#define STOKER_NO_SLP optimize("no-tree-slp-vectorize")
#endif

// One instance per (nontemporal, with c), so the loop carries no tests.
template <bool kNontemporal, bool kWithC>
__attribute__((target("bmi2,adx"), STOKER_NO_SLP)) void fill_adx(std::uint64_t ka, std::uint64_t kb,
                                                                 std::size_t first,
                                                                 std::size_t count, Fr* a, Fr* b,
                                                                 Fr* c) {
  for (std::size_t k = 0; k < count; ++k) {
    const Fr x = draw_asm(ka, first + k), y = draw_asm(kb, first + k);
    store(a + k, x, kNontemporal);
    store(b + k, y, kNontemporal);
    if constexpr (kWithC) store(c + k, kernels::detail::fr_mul_adx(x, y), kNontemporal);
  }
  if constexpr (kNontemporal) _mm_sfence();
}
#undef STOKER_NO_SLP

#endif  // STOKER_HPOLY_ADX

}  // namespace

namespace detail {

bool fill_adx_supported() {
#if defined(STOKER_HPOLY_ADX)
  static const bool supported = kernels::detail::cpu_has_adx();
  return supported;
#else
  return false;
#endif
}

#if !defined(STOKER_HPOLY_IFMA)
bool fill_ifma_supported() {
  return false;
}
#endif

void hpoly_fill_path(FillPath path, std::uint64_t seed, std::size_t partition, std::size_t first,
                     std::size_t count, Fr* a, Fr* b, Fr* c, bool nontemporal) {
  const std::uint64_t ka = stream_key(seed, partition, 0), kb = stream_key(seed, partition, 1);
#if defined(STOKER_HPOLY_IFMA)
  if (path == FillPath::ifma) {
    // Eight at a time in AVX-512 lanes; the last count % 8 on the adx path
    // where there is one (sanitizer builds have none), else the portable one.
    const std::size_t lanes = count / 8 * 8;
    fill_ifma_lanes(ka, kb, first, lanes, a, b, c, nontemporal);
    first += lanes;
    count -= lanes;
    a += lanes;
    b += lanes;
    if (c) c += lanes;
    path = fill_adx_supported() ? FillPath::adx : FillPath::portable;
  }
#endif
#if defined(STOKER_HPOLY_ADX)
  if (path == FillPath::adx) {
    if (nontemporal)
      c ? fill_adx<true, true>(ka, kb, first, count, a, b, c)
        : fill_adx<true, false>(ka, kb, first, count, a, b, c);
    else
      c ? fill_adx<false, true>(ka, kb, first, count, a, b, c)
        : fill_adx<false, false>(ka, kb, first, count, a, b, c);
    return;
  }
#endif
  fill_portable(ka, kb, first, count, a, b, c, nontemporal);
}

}  // namespace detail


void hpoly_fill(std::uint64_t seed, std::size_t partition, std::size_t first, std::size_t count,
                Fr* a, Fr* b, Fr* c, bool nontemporal) {
  static const detail::FillPath path = detail::fill_ifma_supported()  ? detail::FillPath::ifma
                                       : detail::fill_adx_supported() ? detail::FillPath::adx
                                                                      : detail::FillPath::portable;
  detail::hpoly_fill_path(path, seed, partition, first, count, a, b, c, nontemporal);
}

Fr hpoly_point(std::uint64_t seed, std::size_t partition, unsigned log_n) {
  const std::uint64_t key = stream_key(seed, partition, 2);
  const std::uint64_t n = std::uint64_t{1} << log_n;
  for (std::uint64_t i = 0;; ++i) {
    const Fr x = draw(key, i);
    if (x.pow(n) != Fr::one()) return x;  // off the domain: x - w^i is never zero
  }
}

std::error_code hpoly_verify(std::uint64_t seed, std::size_t partition, unsigned log_n,
                             std::span<const Fr> h, unsigned threads, HpolyCheck* check) {
  if (log_n < kHpolyMinLogN || log_n > kHpolyMaxLogN || h.size() != (std::size_t{1} << log_n) ||
      h.data() == nullptr)
    return make_error_code(Errc::invalid_argument);
  const std::uint64_t n = std::uint64_t{1} << log_n;
  const Fr x = hpoly_point(seed, partition, log_n);
  const HpolySums s = hpoly_sums(seed, partition, log_n, h, x, threads);
  const Fr z = x.pow(n) - Fr::one();
  const Fr z_over_n = z * Fr::from_u64(n).inverse();
  const Fr ax = z_over_n * s.a, bx = z_over_n * s.b, cx = z_over_n * s.c;
  HpolyCheck r;
  r.checked = true;
  r.x = x;
  r.lhs = s.hx * z;
  r.rhs = ax * bx - cx;
  r.top_zero = h[n - 1].is_zero();
  r.ok = r.lhs == r.rhs && r.top_zero;
  if (check) *check = r;
  return r.ok ? std::error_code{} : make_error_code(Errc::verification_failed);
}

std::error_code hpoly_prepare(const devices::DeviceSet& set, unsigned log_n) {
  if (set.backend() != devices::Backend::cuda) return {};
  devices::KeepCurrentDevice keep(true);
  for (std::size_t d = 0; d < set.size(); ++d) {
    if (auto ec = set[d].make_current()) return ec;
    if (auto ec = kernels::gpu::prepare_hpoly(log_n)) return ec;
  }
  return {};
}

SplitProducer hpoly_producer(std::uint64_t seed, std::size_t partition, unsigned log_n) {
  const std::size_t n = std::size_t{1} << log_n;
  return [seed, partition, n](std::span<const std::span<std::byte>> produced, ProducerTask task) {
    if (produced.size() != 3) return make_error_code(Errc::invalid_argument);
    Fr* v[3];
    for (int k = 0; k < 3; ++k) {
      if (produced[k].size() != n * sizeof(Fr) ||
          reinterpret_cast<std::uintptr_t>(produced[k].data()) % alignof(Fr) != 0)
        return make_error_code(Errc::invalid_argument);
      v[k] = reinterpret_cast<Fr*>(produced[k].data());
    }
    const auto [begin, end] = task.range(n, kHpolyShareAlign / sizeof(Fr));
    hpoly_fill(seed, partition, begin, end - begin, v[0] + begin, v[1] + begin, v[2] + begin,
               /*nontemporal=*/true);
    return std::error_code{};
  };
}

namespace {

Result<Job> build_hpoly_job(const HpolyOptions& o, std::shared_ptr<HpolyRun>& run) {
  if (o.partitions == 0)
    return Error{Errc::invalid_argument, "hpoly job needs at least one partition"};
  if (o.log_n < kHpolyMinLogN || o.log_n > kHpolyMaxLogN)
    return Error{Errc::invalid_argument, "hpoly log_n must be " + std::to_string(kHpolyMinLogN) +
                                             ".." + std::to_string(kHpolyMaxLogN) + ", not " +
                                             std::to_string(o.log_n)};
  const unsigned log_n = o.log_n;
  const std::size_t n = std::size_t{1} << log_n, bytes = n * sizeof(Fr);
  // a, b, c produced into pinned blocks, h landing in one unless registered.
  Partition shape;
  for (int k = 0; k < 3; ++k) shape.inputs.push_back(Input::produced(bytes));
  shape.outputs.push_back(Output{nullptr, bytes, o.registered_outputs.has_value()});
  BuildNeeds needs;
  needs.workload = "hpoly";
  needs.partitions = o.partitions;
  needs.caller_bytes = bytes + sizeof(HpolyCheck) + kPartitionBookkeepingBytes;  // h and its check
  needs.pinned_bytes = Engine::pinned_bytes(shape);
  if (auto e = check_build(needs, o.limits)) return e;
  run = std::make_shared<HpolyRun>();
  run->options = o;
  run->n = n;
  run->checks.assign(o.partitions, HpolyCheck{});
  run->h.reserve(o.partitions);
  // Zeroed here, before the job: a prover writes h into buffers it reuses,
  // and leaving the pages untouched would charge the job for first-touch
  // page faults (on the x2 VM also for growing its memory, ~3 s per 8 GiB).
  for (std::size_t p = 0; p < o.partitions; ++p) {
    auto* mem = static_cast<Fr*>(allocate_pages(bytes));
    if (mem == nullptr)
      return Error{Errc::out_of_host_memory, "hpoly: no memory for h of partition " +
                                                 std::to_string(p) + " (" + std::to_string(bytes) +
                                                 " bytes)"};
    std::memset(mem, 0, bytes);
    run->h.emplace_back(mem);
  }
  if (o.registered_outputs)
    if (auto e = register_each(
            *o.registered_outputs, o.partitions, bytes,
            [&](std::size_t p) { return run->h[p].get(); }, run->h_registrations,
            "hpoly: page-locking h"))
      return e;

  Job job;
  job.name = o.name;
  job.priority = o.priority;
  const unsigned cpu_threads = o.cpu_threads;
  for (std::size_t p = 0; p < o.partitions; ++p) {
    Partition part;
    for (int k = 0; k < 3; ++k) part.inputs.push_back(Input::produced(bytes));
    part.split_producer = hpoly_producer(o.seed, p, log_n);
    part.share_align = kHpolyShareAlign;
    part.outputs.push_back(Output::to(
        std::span(reinterpret_cast<std::byte*>(run->h[p].get()), bytes), run->h_registered()));
    part.work.gpu = [log_n](const KernelContext& c) {
      return kernels::gpu::hpoly(
          reinterpret_cast<Fr*>(c.outputs[0]), reinterpret_cast<Fr*>(c.inputs[0]),
          reinterpret_cast<Fr*>(c.inputs[1]), reinterpret_cast<Fr*>(c.inputs[2]), log_n,
          static_cast<cudaStream_t>(c.stream.native()));
    };
    part.work.cpu = [log_n, cpu_threads](const KernelContext& c) {
      kernels::cpu::hpoly(reinterpret_cast<Fr*>(c.outputs[0]),
                          reinterpret_cast<const Fr*>(c.inputs[0]),
                          reinterpret_cast<const Fr*>(c.inputs[1]),
                          reinterpret_cast<const Fr*>(c.inputs[2]), log_n, cpu_threads);
      return std::error_code{};
    };
    part.label = o.name + "#" + std::to_string(p);
    job.partitions.push_back(std::move(part));
  }
  // The kernels read n elements from each of a, b, c and write n to h:
  // any other shape (a partition edited after building) is refused.
  job.validate = [bytes, log_n](const Partition& part, std::size_t) -> Error {
    if (part.inputs.size() != 3 || part.outputs.size() != 1)
      return {Errc::invalid_argument, "hpoly needs inputs a, b, c and output h, not " +
                                          std::to_string(part.inputs.size()) + " inputs and " +
                                          std::to_string(part.outputs.size()) + " outputs"};
    const char* names[] = {"a", "b", "c"};
    for (int k = 0; k < 3; ++k)
      if (part.inputs[static_cast<std::size_t>(k)].bytes != bytes)
        return {Errc::invalid_argument,
                std::string("hpoly input ") + names[k] + " has " +
                    std::to_string(part.inputs[static_cast<std::size_t>(k)].bytes) +
                    " bytes; log_n " + std::to_string(log_n) + " needs " + std::to_string(bytes)};
    if (part.outputs[0].bytes != bytes)
      return {Errc::invalid_argument,
              "hpoly output h has " + std::to_string(part.outputs[0].bytes) + " bytes; log_n " +
                  std::to_string(log_n) + " needs " + std::to_string(bytes)};
    return {};
  };
  if (o.verify)
    job.verify = [run_ptr = run, seed = o.seed, log_n, threads = o.verify_threads](const Partition&,
                                                                                   std::size_t p) {
      return hpoly_verify(seed, p, log_n, run_ptr->output(p), threads, &run_ptr->checks[p]);
    };
  return job;
}

}  // namespace

Result<Job> make_hpoly_job(const HpolyOptions& o, std::shared_ptr<HpolyRun>& run) {
  run.reset();
  auto job = guarded_build<Job>("hpoly", [&] { return build_hpoly_job(o, run); });
  if (!job) run.reset();  // nothing half-built stays allocated
  return job;
}

}  // namespace stoker::engine::workloads
