#include "engine/groth16/constraint_matrices.hpp"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstring>
#include <limits>
#include <new>
#include <string>
#include <utility>

#include "common/host_memory_limit.hpp"
#include "engine/groth16/detail/first_failure.hpp"
#include "kernels/detail/parallel.hpp"

namespace stoker::engine::groth16 {

using kernels::Fr;

namespace {

using namespace kernels::constraint_rows;

Kind kind_of_value(const Fr& v, const Fr& one, const Fr& minus_one) {
  return v == one ? kOne : v == minus_one ? kMinusOne : kOther;
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
    if (Error e = m.build(key.coefficients)) return e;
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
Error ConstraintMatrices::build(std::span<const MatrixEntry> entries) {
  const Fr one = Fr::one(), minus_one = -Fr::one();
  const auto words_of = [](Kind kind) -> std::uint32_t {
    return 1 + (kind == kOther ? kValueWords : 0);
  };
  const auto rows_of = [this](const MatrixEntry& e) -> Rows& { return e.matrix == 0 ? a_ : b_; };
  const auto claim = [](std::uint32_t& at, std::uint32_t words) {
    return std::atomic_ref<std::uint32_t>(at).fetch_add(words, std::memory_order_relaxed);
  };
  constexpr std::size_t kGrain = std::size_t{1} << 16;
  // 32-bit offsets hold any matrix of fewer than 2^32 words; more entries
  // than could fill them are counted whole first.
  constexpr std::uint64_t kMostWords = std::numeric_limits<std::uint32_t>::max();
  if (entries.size() > kMostWords / (1 + kValueWords)) {
    std::atomic<std::uint64_t> words[2] = {0, 0};
    kernels::detail::parallel_for(
        entries.size(), 0,
        [&](std::size_t lo, std::size_t hi) {
          std::uint64_t mine[2] = {0, 0};
          for (std::size_t k = lo; k < hi; ++k)
            if (!entries[k].value.is_zero())
              mine[entries[k].matrix] += words_of(kind_of_value(entries[k].value, one, minus_one));
          words[0] += mine[0];
          words[1] += mine[1];
        },
        kGrain);
    for (int m = 0; m < 2; ++m)
      if (words[m] >= kMostWords)
        return Error{Errc::invalid_argument,
                     std::string("the key's ") + (m == 0 ? "A" : "B") + " matrix takes " +
                         std::to_string(words[m].load()) + " words; its rows hold fewer than 2^32"};
  }
  for (Rows* m : {&a_, &b_}) m->begin.assign(rows_ + 1, 0);
  kernels::detail::parallel_for(
      entries.size(), 0,
      [&](std::size_t lo, std::size_t hi) {
        for (std::size_t k = lo; k < hi; ++k) {
          const auto& e = entries[k];
          if (!e.value.is_zero())
            claim(rows_of(e).begin[e.row + 1], words_of(kind_of_value(e.value, one, minus_one)));
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
          const Kind kind = kind_of_value(e.value, one, minus_one);
          const std::uint32_t at = claim(m.begin[e.row], words_of(kind));
          m.words[at] = term_word(e.signal, kind);
          if (kind == kOther) std::memcpy(&m.words[at + 1], &e.value, sizeof(Fr));
        }
      },
      kGrain);
  for (Rows* m : {&a_, &b_}) {
    std::copy_backward(m->begin.begin(), m->begin.end() - 1, m->begin.end());
    m->begin[0] = 0;
  }
  return {};
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
  kernels::cpu::evaluate_constraint_rows(a_.view(), b_.view(), w.data(),
                                         static_cast<unsigned>(std::countr_zero(rows_)), begin, end,
                                         a, b, c, order);
}

ConstraintMatrices::Image ConstraintMatrices::image() const {
  Image im;
  const auto bytes = [](const std::vector<std::uint32_t>& v) {
    return v.size() * sizeof(std::uint32_t);
  };
  im.a_begin = 0;
  im.a_words = im.a_begin + bytes(a_.begin);
  im.b_begin = im.a_words + bytes(a_.words);
  im.b_words = im.b_begin + bytes(b_.begin);
  im.bytes = im.b_words + bytes(b_.words);
  return im;
}

void ConstraintMatrices::copy_image(std::size_t offset, std::span<std::byte> out) const {
  const Image im = image();
  const std::pair<std::size_t, const std::vector<std::uint32_t>*> parts[] = {
      {im.a_begin, &a_.begin},
      {im.a_words, &a_.words},
      {im.b_begin, &b_.begin},
      {im.b_words, &b_.words}};
  const std::size_t end = offset + out.size();
  if (end > im.bytes) {
    const std::size_t from = std::max(offset, im.bytes);
    std::memset(out.data() + (from - offset), 0, end - from);
  }
  for (const auto& [at, v] : parts) {
    const std::size_t part_end = at + v->size() * sizeof(std::uint32_t);
    const std::size_t lo = std::max(at, offset), hi = std::min(part_end, end);
    if (lo >= hi) continue;
    std::memcpy(out.data() + (lo - offset),
                reinterpret_cast<const std::byte*>(v->data()) + (lo - at), hi - lo);
  }
}

}  // namespace stoker::engine::groth16
