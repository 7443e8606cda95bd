// CPU reference of the NTT family: iterative radix-2 decimation in frequency
// (natural in, bit-reversed out), a bit-reversal permutation, then the
// inverse's scaling. Each stage is split across threads.
#include <cstdint>
#include <utility>
#include <vector>

#include "kernels/detail/parallel.hpp"
#include "kernels/ntt.hpp"

namespace stoker::kernels::cpu {
namespace {

std::uint64_t bit_reverse(std::uint64_t x, unsigned bits) {
  std::uint64_t r = 0;
  for (unsigned i = 0; i < bits; ++i) r |= ((x >> i) & 1) << (bits - 1 - i);
  return r;
}

// dst[i] = c0 * base^i for i in [0, n), each thread starting from a pow.
void geometric(Fr* dst, std::size_t n, Fr c0, Fr base, unsigned threads) {
  detail::parallel_for(n, threads, [&](std::size_t b, std::size_t e) {
    Fr x = c0 * base.pow(static_cast<std::uint64_t>(b));
    for (std::size_t i = b; i < e; ++i) {
      dst[i] = x;
      x *= base;
    }
  });
}

void scale_geometric(Fr* x, std::size_t n, Fr c0, Fr base, unsigned threads) {
  detail::parallel_for(n, threads, [&](std::size_t b, std::size_t e) {
    Fr f = c0 * base.pow(static_cast<std::uint64_t>(b));
    for (std::size_t i = b; i < e; ++i) {
      x[i] *= f;
      f *= base;
    }
  });
}

}  // namespace

void transform(NttKind kind, Fr* out, const Fr* in, unsigned log_n, std::size_t batch,
               unsigned threads) {
  if (log_n == 0 || log_n > kMaxLogN || batch == 0) return;
  threads = detail::resolve_threads(threads);
  const std::size_t n = std::size_t{1} << log_n, half = n / 2;
  const bool inverse = kind == NttKind::inverse || kind == NttKind::coset_inverse;
  Fr w = Fr::root_of_unity(log_n);
  if (inverse) w = w.inverse();
  std::vector<Fr> tw(half);
  geometric(tw.data(), half, Fr::one(), w, threads);

  const Fr g = Fr::generator();
  const Fr n_inv = Fr::from_u64(n).inverse();

  for (std::size_t v = 0; v < batch; ++v) {
    Fr* x = out + v * n;
    const Fr* src = in + v * n;
    if (x != src)
      detail::parallel_for(n, threads, [&](std::size_t b, std::size_t e) {
        for (std::size_t i = b; i < e; ++i) x[i] = src[i];
      });
    if (kind == NttKind::coset_forward) scale_geometric(x, n, Fr::one(), g, threads);

    for (std::size_t m = half; m >= 1; m >>= 1) {
      const std::size_t stride = half / m;  // twiddle of (j, m) is w_{2m}^j = w^(j * n/2m)
      detail::parallel_for(half, threads, [&](std::size_t b, std::size_t e) {
        for (std::size_t i = b; i < e; ++i) {
          const std::size_t j = i & (m - 1);
          const std::size_t i0 = ((i - j) << 1) + j, i1 = i0 + m;
          const Fr u = x[i0], t = x[i1];
          x[i0] = u + t;
          x[i1] = j ? (u - t) * tw[j * stride] : u - t;
        }
      });
    }

    detail::parallel_for(n, threads, [&](std::size_t b, std::size_t e) {
      for (std::size_t i = b; i < e; ++i) {
        const std::size_t r = bit_reverse(i, log_n);
        if (i < r) std::swap(x[i], x[r]);
      }
    });

    if (kind == NttKind::inverse)
      detail::parallel_for(n, threads, [&](std::size_t b, std::size_t e) {
        for (std::size_t i = b; i < e; ++i) x[i] *= n_inv;
      });
    if (kind == NttKind::coset_inverse) scale_geometric(x, n, n_inv, g.inverse(), threads);
  }
}

}  // namespace stoker::kernels::cpu
