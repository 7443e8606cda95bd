// The rows' evaluation on the CPU: one share of rows on the calling thread,
// the witness values each row reads asked for ahead of use.
#include <algorithm>
#include <bit>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "kernels/constraint_rows.hpp"
#include "kernels/hpoly_odd_coset.hpp"

namespace stoker::kernels::cpu {
namespace {

using namespace constraint_rows;

// *to = x, past the caches (SSE2: every x86-64 has it); elsewhere a store.
void stream_store(Fr* to, const Fr& x) {
#if defined(__SSE2__)
  auto* dst = reinterpret_cast<__m128i*>(to);
  const auto* src = reinterpret_cast<const __m128i*>(&x);
  _mm_stream_si128(dst, _mm_load_si128(src));
  _mm_stream_si128(dst + 1, _mm_load_si128(src + 1));
#else
  *to = x;
#endif
}

// Orders the streamed stores before those that follow.
void stream_fence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

void prefetch_row(const ConstraintRows& m, std::size_t r, const Fr* w) {
  for (std::uint32_t k = m.begin[r], end = m.begin[r + 1]; k < end;) {
    const std::uint32_t word = m.words[k];
    __builtin_prefetch(w + wire_of(word));
    k += term_words(word);
  }
}

}  // namespace

void evaluate_constraint_rows(ConstraintRows a_rows, ConstraintRows b_rows, const Fr* w,
                              unsigned log_n, std::size_t begin, std::size_t end, Fr* a, Fr* b,
                              Fr* c, RowOrder order) {
  const std::size_t rows = std::size_t{1} << log_n;
  const SnarkjsToNttIndex to_ntt(log_n);
  const std::size_t stop = std::min(end, rows);
  // The witness values a row reads are scattered over hundreds of MB:
  // asked for kAhead rows early, their cache misses overlap instead of
  // following one another. (Rows stay in snarkjs's order, where a
  // circuit's wires are read near one another.)
  constexpr std::size_t kAhead = 16;
  const auto prefetch = [&](std::size_t r) {
    prefetch_row(a_rows, r, w);
    prefetch_row(b_rows, r, w);
    if (order == RowOrder::ntt) return;  // stored past the caches, below
    __builtin_prefetch(a + r, 1);
    __builtin_prefetch(b + r, 1);
    __builtin_prefetch(c + r, 1);
  };
  for (std::size_t r = begin; r < std::min(stop, begin + kAhead); ++r) prefetch(r);
  for (std::size_t i = begin; i < stop; ++i) {
    if (i + kAhead < stop) prefetch(i + kAhead);
    const Fr sa = row_at(a_rows, i, w), sb = row_at(b_rows, i, w), sc = times(sa, sb);
    if (order == RowOrder::snarkjs) {
      a[i] = sa;
      b[i] = sb;
      c[i] = sc;
    } else {
      // In stoker's order consecutive rows land far apart: stored past the
      // caches, the writes need no read of the lines they land in first
      // (2^22 PoRep-shaped rows on one core of a 2-core VM: 1.43 -> 0.74 s).
      const std::size_t at = to_ntt(i);
      stream_store(a + at, sa);
      stream_store(b + at, sb);
      stream_store(c + at, sc);
    }
  }
  // Streamed stores are not ordered with the stores that tell another
  // thread this share is done; the fence orders them.
  if (order == RowOrder::ntt) stream_fence();
}

}  // namespace stoker::kernels::cpu
