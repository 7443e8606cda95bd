#include "engine/workloads/hpoly.hpp"

#include <algorithm>
#include <thread>

#include "kernels/detail/parallel.hpp"
#include "kernels/hpoly.hpp"
#include "kernels/ntt.hpp"

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace stoker::engine::workloads {

using kernels::Fr;

namespace {

// splitmix64's output function: a bijection of 64-bit words that mixes every
// input bit into every output bit, two multiplications.
inline std::uint64_t fmix(std::uint64_t z) {
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

constexpr std::uint64_t kGolden = 0x9e3779b97f4a7c15ull;

// One key per (seed, partition, stream): stream 0 is a, 1 is b, 2 the points.
inline std::uint64_t stream_key(std::uint64_t seed, std::size_t partition, unsigned stream) {
  return fmix(fmix(seed ^ 0x68706f6c79ull) + kGolden * (std::uint64_t{partition} + 1) +
              (std::uint64_t{stream} << 56));
}

// Element `index` of a stream: four counter-mode words, the top bit cleared
// (< 2^255 < 2r), then r subtracted once when the value is >= r.
inline Fr draw(std::uint64_t key, std::uint64_t index) {
  const std::uint64_t base = key + 4 * index * kGolden;
  std::uint64_t v[4] = {fmix(base), fmix(base + kGolden), fmix(base + 2 * kGolden),
                        fmix(base + 3 * kGolden) & 0x7fffffffffffffffull};
  using u128 = unsigned __int128;
  const std::uint64_t p[4] = {kernels::fr_detail::kP0, kernels::fr_detail::kP1,
                              kernels::fr_detail::kP2, kernels::fr_detail::kP3};
  std::uint64_t d[4], borrow = 0;
  for (int i = 0; i < 4; ++i) {
    const u128 t = static_cast<u128>(v[i]) - p[i] - borrow;
    d[i] = static_cast<std::uint64_t>(t);
    borrow = static_cast<std::uint64_t>(t >> 64) & 1;
  }
  // borrow: v < r, keep v. Branch-free: about one draw in ten subtracts.
  const std::uint64_t keep = 0 - borrow;
  Fr x;
  for (int i = 0; i < 4; ++i) x.l[i] = (v[i] & keep) | (d[i] & ~keep);
  return x;
}

inline void store(Fr* dst, const Fr& x, bool streaming) {
#if defined(__SSE2__)
  if (streaming) {
    auto* q = reinterpret_cast<__m128i*>(dst);
    _mm_stream_si128(
        q, _mm_set_epi64x(static_cast<long long>(x.l[1]), static_cast<long long>(x.l[0])));
    _mm_stream_si128(
        q + 1, _mm_set_epi64x(static_cast<long long>(x.l[3]), static_cast<long long>(x.l[2])));
    return;
  }
#endif
  *dst = x;
}

// Barycentric sums and h(x) over [lo, hi). With u_i = x w^-i,
// w^i / (x - w^i) = 1 / (u_i - 1); the denominators of a chunk are inverted
// together (batch inversion: one inversion, three multiplications each), and
// c_i t_i = a_i (b_i t_i) since c = a * b. About eight multiplications per
// element, plus regenerating a and b.
HpolySums sums_range(std::uint64_t seed, std::size_t partition, const Fr& w_inv, const Fr& x,
                     const Fr* h, std::size_t lo, std::size_t hi) {
  constexpr std::size_t kChunk = 2048;
  std::vector<Fr> a(kChunk), b(kChunk), d(kChunk), prefix(kChunk);
  HpolySums s{Fr::zero(), Fr::zero(), Fr::zero(), Fr::zero()};
  Fr u = x * w_inv.pow(static_cast<std::uint64_t>(lo));
  for (std::size_t begin = lo; begin < hi; begin += kChunk) {
    const std::size_t len = std::min(kChunk, hi - begin);
    hpoly_fill(seed, partition, begin, len, a.data(), b.data(), nullptr);
    Fr acc = Fr::one();
    for (std::size_t k = 0; k < len; ++k) {
      d[k] = u - Fr::one();
      prefix[k] = acc;  // product of the denominators before k
      acc *= d[k];
      u *= w_inv;
    }
    Fr inv = acc.inverse();  // 1 / (product of all of them)
    for (std::size_t k = len; k-- > 0;) {
      const Fr t = inv * prefix[k];  // 1 / d_k
      inv *= d[k];
      const Fr bt = b[k] * t;
      s.a += a[k] * t;
      s.b += bt;
      s.c += a[k] * bt;
    }
  }
  // h(x) restricted to [lo, hi): Horner, then shifted by x^lo.
  Fr acc = Fr::zero();
  for (std::size_t i = hi; i-- > lo;) acc = acc * x + h[i];
  s.hx = acc * x.pow(static_cast<std::uint64_t>(lo));
  return s;
}

}  // namespace

void hpoly_fill(std::uint64_t seed, std::size_t partition, std::size_t first, std::size_t count,
                Fr* a, Fr* b, Fr* c, bool streaming) {
  const std::uint64_t ka = stream_key(seed, partition, 0), kb = stream_key(seed, partition, 1);
  for (std::size_t k = 0; k < count; ++k) {
    const Fr x = draw(ka, first + k), y = draw(kb, first + k);
    store(a + k, x, streaming);
    store(b + k, y, streaming);
    if (c) store(c + k, x * y, streaming);
  }
#if defined(__SSE2__)
  // Non-temporal stores are weakly ordered: make them visible before the
  // engine hands the buffers to the DMA engine.
  if (streaming) _mm_sfence();
#endif
}

Fr hpoly_point(std::uint64_t seed, std::size_t partition, unsigned log_n) {
  const std::uint64_t key = stream_key(seed, partition, 2);
  const std::uint64_t n = std::uint64_t{1} << log_n;
  for (std::uint64_t i = 0;; ++i) {
    const Fr x = draw(key, i);
    if (x.pow(n) != Fr::one()) return x;  // off the domain: x - w^i is never zero
  }
}

HpolySums hpoly_sums(std::uint64_t seed, std::size_t partition, unsigned log_n,
                     std::span<const Fr> h, const Fr& x, unsigned threads) {
  const std::size_t n = std::size_t{1} << log_n;
  const Fr w_inv = Fr::root_of_unity(log_n).inverse();
  std::vector<HpolySums> parts(std::max<std::size_t>(1, kernels::detail::resolve_threads(threads)));
  kernels::detail::parallel_for(
      n, threads,
      [&](std::size_t t, std::size_t lo, std::size_t hi) {
        parts[t] = sums_range(seed, partition, w_inv, x, h.data(), lo, hi);
      },
      /*grain=*/8192);
  HpolySums s{Fr::zero(), Fr::zero(), Fr::zero(), Fr::zero()};
  for (const auto& p : parts) {
    s.a += p.a;
    s.b += p.b;
    s.c += p.c;
    s.hx += p.hx;
  }
  return s;
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
  for (std::size_t d = 0; d < set.size(); ++d) {
    if (auto ec = set[d].make_current()) return ec;
    if (auto ec = kernels::gpu::prepare(log_n)) return ec;
  }
  return {};
}

Result<Job> make_hpoly_job(const HpolyOptions& o, std::shared_ptr<HpolyRun>& run) {
  if (o.partitions == 0)
    return Error{Errc::invalid_argument, "hpoly job needs at least one partition"};
  if (o.log_n < kHpolyMinLogN || o.log_n > kHpolyMaxLogN)
    return Error{Errc::invalid_argument, "hpoly log_n must be " + std::to_string(kHpolyMinLogN) +
                                             ".." + std::to_string(kHpolyMaxLogN) + ", not " +
                                             std::to_string(o.log_n)};
  const unsigned log_n = o.log_n;
  const std::size_t n = std::size_t{1} << log_n, bytes = n * sizeof(Fr);
  run = std::make_shared<HpolyRun>();
  run->options = o;
  run->n = n;
  run->checks.assign(o.partitions, HpolyCheck{});
  run->h.reserve(o.partitions);
  // Zeroed here, before the job: a prover writes h into buffers it reuses,
  // and leaving the pages untouched would charge the job for first-touch
  // page faults (on the x2 VM also for growing its memory, ~3 s per 8 GiB).
  for (std::size_t p = 0; p < o.partitions; ++p)
    run->h.push_back(std::make_unique<Fr[]>(n));

  Job job;
  job.name = o.name;
  job.priority = o.priority;
  const unsigned cpu_threads = o.cpu_threads;
  for (std::size_t p = 0; p < o.partitions; ++p) {
    Partition part;
    for (int k = 0; k < 3; ++k) part.inputs.push_back(Input::produced(bytes));
    // Split: shares fill disjoint element ranges on several workers at once
    // (one 2^24 partition is about a second of one core's work).
    part.split_producer = [seed = o.seed, p, n](std::span<const std::span<std::byte>> produced,
                                                ProducerTask task) {
      if (produced.size() != 3) return make_error_code(Errc::invalid_argument);
      Fr* v[3];
      for (int k = 0; k < 3; ++k) {
        if (produced[k].size() != n * sizeof(Fr) ||
            reinterpret_cast<std::uintptr_t>(produced[k].data()) % alignof(Fr) != 0)
          return make_error_code(Errc::invalid_argument);
        v[k] = reinterpret_cast<Fr*>(produced[k].data());
      }
      const auto [begin, end] = task.range(n, 8);
      hpoly_fill(seed, p, begin, end - begin, v[0] + begin, v[1] + begin, v[2] + begin,
                 /*streaming=*/true);
      return std::error_code{};
    };
    part.outputs.push_back(
        Output::to(std::span(reinterpret_cast<std::byte*>(run->h[p].get()), bytes)));
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

}  // namespace stoker::engine::workloads
