#include "engine/groth16/constraint_matrices.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif
#include <new>
#include <string>

#include "common/host_memory_limit.hpp"
#include "engine/groth16/detail/first_failure.hpp"
#include "kernels/detail/parallel.hpp"
#include "kernels/hpoly_odd_coset.hpp"

namespace stoker::engine::groth16 {

using kernels::Fr;

namespace {

// A term's word: the wire in the low 30 bits, the coefficient's kind above.
constexpr std::uint32_t kWireBits = 30;
constexpr std::uint32_t kWireMask = (std::uint32_t{1} << kWireBits) - 1;
enum Kind : std::uint32_t { kOther = 0, kOne = 1, kMinusOne = 2 };
constexpr std::size_t kValueWords = sizeof(Fr) / sizeof(std::uint32_t);

Kind kind_of(const Fr& v, const Fr& one, const Fr& minus_one) {
  return v == one ? kOne : v == minus_one ? kMinusOne : kOther;
}

// x * y, without the product where either is 0 or 1: witnesses are mostly
// 0 and 1 (bits, flags, selectors), so most rows' c needs no multiplication.
Fr times(const Fr& x, const Fr& y, const Fr& one) {
  if (x.is_zero() || y.is_zero()) return Fr::zero();
  if (x == one) return y;
  if (y == one) return x;
  return x * y;
}

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

}  // namespace

Result<ConstraintMatrices> ConstraintMatrices::from(const ProvingKey& key) {
  if (key.format != KeyFormat::snarkjs)
    return Error{Errc::invalid_argument,
                 "a bellman key has no constraint matrices: its prover hands a, b and c"};
  if (key.num_vars > kWireMask)
    return Error{Errc::invalid_argument,
                 "the key's circuit has " + std::to_string(key.num_vars) +
                     " wires; its constraint matrices hold fewer than 2^30"};
  const std::size_t n = key.domain_size();
  const auto& entries = key.coefficients;
  const std::size_t k =
      detail::first_failure(entries.size(), 0, std::size_t{1} << 16, [&](std::size_t i) {
        const auto& e = entries[i];
        return e.matrix <= 1 && e.row < n && e.signal < key.num_vars;
      });
  if (k < entries.size()) {
    const auto& e = entries[k];
    return Error{Errc::invalid_argument,
                 "constraint matrix entry " + std::to_string(k) + " (matrix " +
                     std::to_string(e.matrix) + ", row " + std::to_string(e.row) + ", signal " +
                     std::to_string(e.signal) + ") is outside the key's " + std::to_string(n) +
                     " rows and " + std::to_string(key.num_vars) + " wires"};
  }
  ConstraintMatrices m;
  m.rows_ = n;
  m.wires_ = key.num_vars;
  try {
    m.build(key.coefficients);
  } catch (const std::bad_alloc&) {
    return common::host_memory_refused("the constraint matrices of " +
                                       std::to_string(key.coefficients.size()) + " coefficients");
  }
  return m;
}

// Both matrices in two passes over the entries on every thread (the
// matrices are made where a key is loaded for a GPU, which waits for them):
// each row's words counted by atomic additions, then each entry written at
// the next place of its row, claimed by an atomic addition too. A row's
// terms lie in whichever order the threads claimed them: the sums mod r are
// the same in any order. A coefficient of 0 adds nothing and is left out.
void ConstraintMatrices::build(std::span<const MatrixEntry> entries) {
  const Fr one = Fr::one(), minus_one = -Fr::one();
  const auto words_of = [](Kind kind) -> std::uint64_t {
    return 1 + (kind == kOther ? kValueWords : 0);
  };
  const auto rows_of = [this](const MatrixEntry& e) -> Rows& { return e.matrix == 0 ? a_ : b_; };
  const auto claim = [](std::uint64_t& at, std::uint64_t words) {
    return std::atomic_ref<std::uint64_t>(at).fetch_add(words, std::memory_order_relaxed);
  };
  constexpr std::size_t kGrain = std::size_t{1} << 16;
  for (Rows* m : {&a_, &b_}) m->begin.assign(rows_ + 1, 0);
  kernels::detail::parallel_for(
      entries.size(), 0,
      [&](std::size_t lo, std::size_t hi) {
        for (std::size_t k = lo; k < hi; ++k) {
          const auto& e = entries[k];
          if (!e.value.is_zero())
            claim(rows_of(e).begin[e.row + 1], words_of(kind_of(e.value, one, minus_one)));
        }
      },
      kGrain);
  for (Rows* m : {&a_, &b_}) {
    for (std::size_t i = 0; i < rows_; ++i) m->begin[i + 1] += m->begin[i];
    m->words.resize(m->begin[rows_]);
  }
  // begin[r] is the next free word of row r while the entries are placed,
  // and then the start of row r + 1: shifted by one row, the starts again.
  kernels::detail::parallel_for(
      entries.size(), 0,
      [&](std::size_t lo, std::size_t hi) {
        for (std::size_t k = lo; k < hi; ++k) {
          const auto& e = entries[k];
          if (e.value.is_zero()) continue;
          auto& m = rows_of(e);
          const Kind kind = kind_of(e.value, one, minus_one);
          const std::uint64_t at = claim(m.begin[e.row], words_of(kind));
          m.words[at] = e.signal | (static_cast<std::uint32_t>(kind) << kWireBits);
          if (kind == kOther) std::memcpy(&m.words[at + 1], &e.value, sizeof(Fr));
        }
      },
      kGrain);
  for (Rows* m : {&a_, &b_}) {
    std::copy_backward(m->begin.begin(), m->begin.end() - 1, m->begin.end());
    m->begin[0] = 0;
  }
}

Error ConstraintMatrices::evaluate(std::span<const Fr> w, std::span<Fr> a, std::span<Fr> b,
                                   std::span<Fr> c, unsigned threads) const {
  if (w.size() != wires_)
    return Error{Errc::invalid_argument, "the witness has " + std::to_string(w.size()) +
                                             " values; the key's circuit has " +
                                             std::to_string(wires_) + " wires"};
  if (a.size() != rows_ || b.size() != rows_ || c.size() != rows_)
    return Error{Errc::invalid_argument,
                 "a, b and c must hold the domain's " + std::to_string(rows_) + " points each"};
  kernels::detail::parallel_for(
      rows_, threads,
      [&](std::size_t lo, std::size_t hi) {
        evaluate_rows(w, lo, hi, a.data(), b.data(), c.data(), Order::snarkjs);
      },
      1024);
  return {};
}

void ConstraintMatrices::evaluate_rows(std::span<const Fr> w, std::size_t begin, std::size_t end,
                                       Fr* a, Fr* b, Fr* c, Order order) const {
  const kernels::SnarkjsToNttIndex to_ntt(static_cast<unsigned>(std::countr_zero(rows_)));
  const Fr one = Fr::one();
  const std::size_t stop = std::min(end, rows_);
  // The witness values a row reads are scattered over hundreds of MB:
  // asked for kAhead rows early, their cache misses overlap instead of
  // following one another. (Rows stay in snarkjs's order, where a
  // circuit's wires are read near one another.)
  constexpr std::size_t kAhead = 16;
  const auto prefetch_row = [&](const Rows& m, std::size_t r) {
    for (auto k = m.begin[r]; k < m.begin[r + 1];) {
      const std::uint32_t word = m.words[k];
      __builtin_prefetch(&w[word & kWireMask]);
      k += 1 + ((word >> kWireBits) == kOther ? kValueWords : 0);
    }
  };
  const auto row_of = [&](const Rows& m, std::size_t r) {
    Fr sum = Fr::zero();
    for (auto k = m.begin[r]; k < m.begin[r + 1];) {
      const std::uint32_t word = m.words[k++];
      const Fr& x = w[word & kWireMask];
      switch (word >> kWireBits) {
        case kOne:
          sum += x;
          break;
        case kMinusOne:
          sum -= x;
          break;
        default: {
          Fr v;
          std::memcpy(&v, &m.words[k], sizeof v);
          k += kValueWords;
          sum += times(v, x, one);
        }
      }
    }
    return sum;
  };
  const auto prefetch = [&](std::size_t r) {
    prefetch_row(a_, r);
    prefetch_row(b_, r);
    if (order == Order::ntt) return;  // stored past the caches, below
    __builtin_prefetch(a + r, 1);
    __builtin_prefetch(b + r, 1);
    __builtin_prefetch(c + r, 1);
  };
  for (std::size_t r = begin; r < std::min(stop, begin + kAhead); ++r) prefetch(r);
  for (std::size_t i = begin; i < stop; ++i) {
    if (i + kAhead < stop) prefetch(i + kAhead);
    const Fr sa = row_of(a_, i), sb = row_of(b_, i), sc = times(sa, sb, one);
    if (order == Order::snarkjs) {
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
  if (order == Order::ntt) stream_fence();
}

}  // namespace stoker::engine::groth16
