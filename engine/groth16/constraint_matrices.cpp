#include "engine/groth16/constraint_matrices.hpp"

#include <algorithm>
#include <bit>
#include <new>
#include <string>

#include "common/host_memory_limit.hpp"
#include "kernels/detail/parallel.hpp"
#include "kernels/hpoly_odd_coset.hpp"

namespace stoker::engine::groth16 {

using kernels::Fr;

Result<ConstraintMatrices> ConstraintMatrices::from(const ProvingKey& key) {
  if (key.format != KeyFormat::snarkjs)
    return Error{Errc::invalid_argument,
                 "a bellman key has no constraint matrices: its prover hands a, b and c"};
  const std::size_t n = key.domain_size();
  for (std::size_t k = 0; k < key.coefficients.size(); ++k) {
    const auto& e = key.coefficients[k];
    if (e.matrix > 1 || e.row >= n || e.signal >= key.num_vars)
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
    // A and B at once, each a pass over every entry: the matrices are made
    // where a key is loaded for a GPU, which waits for them.
    kernels::detail::parallel_for(
        2, 2,
        [&](std::size_t lo, std::size_t hi) {
          for (std::size_t k = lo; k < hi; ++k)
            (k == 0 ? m.a_ : m.b_) = compress(key.coefficients, static_cast<std::uint32_t>(k), n);
        },
        1);
  } catch (const std::bad_alloc&) {
    return common::host_memory_refused("the constraint matrices of " +
                                       std::to_string(key.coefficients.size()) + " coefficients");
  }
  return m;
}

// A counting sort by row that keeps the file's order within a row, so sums
// are taken in the order snarkjs takes them (the result is the same either
// way; the order only matters to whoever reads a trace).
ConstraintMatrices::Rows ConstraintMatrices::compress(const std::vector<MatrixEntry>& entries,
                                                      std::uint32_t matrix, std::size_t rows) {
  Rows out;
  out.begin.assign(rows + 1, 0);
  for (const auto& e : entries)
    if (e.matrix == matrix) ++out.begin[e.row + 1];
  for (std::size_t i = 0; i < rows; ++i) out.begin[i + 1] += out.begin[i];
  out.signal.resize(out.begin[rows]);
  out.value.resize(out.begin[rows]);
  std::vector<std::uint64_t> next(out.begin.begin(), out.begin.end() - 1);
  for (const auto& e : entries) {
    if (e.matrix != matrix) continue;
    const auto at = next[e.row]++;
    out.signal[at] = e.signal;
    out.value[at] = e.value;
  }
  return out;
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

namespace {

// x * y, without the product where either is 0 or 1: witnesses are mostly
// 0 and 1 (bits, flags, selectors) and most coefficients 1, so most terms
// and most rows' c need no multiplication.
Fr times(const Fr& x, const Fr& y, const Fr& one) {
  if (x.is_zero() || y.is_zero()) return Fr::zero();
  if (x == one) return y;
  if (y == one) return x;
  return x * y;
}

}  // namespace

void ConstraintMatrices::evaluate_rows(std::span<const Fr> w, std::size_t begin, std::size_t end,
                                       Fr* a, Fr* b, Fr* c, Order order) const {
  const kernels::SnarkjsToNttIndex to_ntt(static_cast<unsigned>(std::countr_zero(rows_)));
  const Fr one = Fr::one();
  const std::size_t stop = std::min(end, rows_);
  // The witness values a row reads and the places it writes are scattered
  // over hundreds of MB: asked for kAhead rows early, their cache misses
  // overlap instead of following one another.
  constexpr std::size_t kAhead = 16;
  const auto prefetch = [&](std::size_t r) {
    for (auto k = a_.begin[r]; k < a_.begin[r + 1]; ++k) __builtin_prefetch(&w[a_.signal[k]]);
    for (auto k = b_.begin[r]; k < b_.begin[r + 1]; ++k) __builtin_prefetch(&w[b_.signal[k]]);
    const std::size_t at = order == Order::ntt ? to_ntt(r) : r;
    __builtin_prefetch(a + at, 1);
    __builtin_prefetch(b + at, 1);
    __builtin_prefetch(c + at, 1);
  };
  for (std::size_t r = begin; r < std::min(stop, begin + kAhead); ++r) prefetch(r);
  for (std::size_t i = begin; i < stop; ++i) {
    if (i + kAhead < stop) prefetch(i + kAhead);
    Fr sa = Fr::zero(), sb = Fr::zero();
    for (auto k = a_.begin[i]; k < a_.begin[i + 1]; ++k)
      sa += times(a_.value[k], w[a_.signal[k]], one);
    for (auto k = b_.begin[i]; k < b_.begin[i + 1]; ++k)
      sb += times(b_.value[k], w[b_.signal[k]], one);
    const std::size_t at = order == Order::ntt ? to_ntt(i) : i;
    a[at] = sa;
    b[at] = sb;
    c[at] = times(sa, sb, one);
  }
}

}  // namespace stoker::engine::groth16
