// A zkey's constraint matrices as a prover evaluates them: a = A w, b = B w
// and c = a b row by row, against the sums taken term by term, for
// coefficients of every kind (1, -1, 0, others); stoker's order is
// snarkjs's permuted, whatever shares a producer splits it into; keys the
// matrices cannot hold are refused naming why.
#include "engine/groth16/constraint_matrices.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <span>

#include "kernels/hpoly_odd_coset.hpp"

namespace stoker::engine::groth16 {
namespace {

using kernels::Fr;
using Order = ConstraintMatrices::Order;

Fr random_fr(std::mt19937_64& rng) {
  return Fr::from_u64(rng()) * Fr::from_u64(rng()) + Fr::from_u64(rng());
}

// A key of 2^log_n rows over `vars` wires whose entries' coefficients are
// 1, -1, 0 and random values in turn, a few to a row, some rows empty, a
// row's terms not adjacent in the list (as a writer may order them).
ProvingKey key_with_every_kind(unsigned log_n, std::size_t vars, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  ProvingKey key;
  key.format = KeyFormat::snarkjs;
  key.log_n = log_n;
  key.num_vars = vars;
  key.num_public = 1;
  const std::size_t n = key.domain_size();
  const Fr kinds[] = {Fr::one(), -Fr::one(), Fr::zero()};
  for (std::size_t t = 0; t < 3 * n; ++t) {
    const auto row = static_cast<std::uint32_t>(rng() % (n - n / 8));  // the last rows empty
    const auto signal = static_cast<std::uint32_t>(rng() % vars);
    const Fr value = t % 4 == 3 ? random_fr(rng) : kinds[t % 4];
    key.coefficients.push_back({static_cast<std::uint32_t>(rng() % 2), row, signal, value});
  }
  return key;
}

std::vector<Fr> witness_of(std::size_t vars, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Fr> w(vars);
  w[0] = Fr::one();
  for (std::size_t i = 1; i < vars; ++i)
    w[i] = i % 3 == 0 ? Fr::zero() : i % 3 == 1 ? Fr::one() : random_fr(rng);
  return w;
}

TEST(ConstraintMatrices, EvaluatesEveryRowAsItsTermsSumAndCIsTheirProduct) {
  const unsigned log_n = 8;
  const std::size_t n = std::size_t{1} << log_n, vars = 300;
  const auto key = key_with_every_kind(log_n, vars, 1);
  const auto w = witness_of(vars, 2);
  std::vector<Fr> want_a(n, Fr::zero()), want_b(n, Fr::zero());
  for (const auto& e : key.coefficients)
    (e.matrix == 0 ? want_a : want_b)[e.row] += e.value * w[e.signal];

  auto m = ConstraintMatrices::from(key);
  ASSERT_TRUE(m) << m.error().what();
  EXPECT_EQ(m->rows(), n);
  EXPECT_EQ(m->wires(), vars);
  std::vector<Fr> a(n), b(n), c(n);
  ASSERT_FALSE(m->evaluate(w, a, b, c, 3));
  for (std::size_t i = 0; i < n; ++i) {
    EXPECT_TRUE(a[i] == want_a[i]) << "a at row " << i;
    EXPECT_TRUE(b[i] == want_b[i]) << "b at row " << i;
    EXPECT_TRUE(c[i] == want_a[i] * want_b[i]) << "c at row " << i;
  }
  EXPECT_TRUE(a[n - 1].is_zero() && c[n - 1].is_zero()) << "a row without entries is 0";
}

TEST(ConstraintMatrices, StokersOrderIsSnarkjssPermutedInAnySharesOfIt) {
  const unsigned log_n = 10;
  const std::size_t n = std::size_t{1} << log_n, vars = 1000;
  auto m = ConstraintMatrices::from(key_with_every_kind(log_n, vars, 3));
  ASSERT_TRUE(m) << m.error().what();
  const auto w = witness_of(vars, 4);
  std::vector<Fr> a(n), b(n), c(n);
  ASSERT_FALSE(m->evaluate(w, a, b, c, 1));
  // Shares of uneven sizes, as a producer's tasks may be.
  std::vector<Fr> pa(n), pb(n), pc(n);
  for (std::size_t begin = 0, size = 1; begin < n; begin += size, size = size * 3 + 1)
    m->evaluate_rows(w, begin, std::min(n, begin + size), pa.data(), pb.data(), pc.data(),
                     Order::ntt);
  const kernels::SnarkjsToNttIndex to_ntt(log_n);
  for (std::size_t i = 0; i < n; ++i) {
    const std::size_t j = to_ntt(i);
    ASSERT_TRUE(pa[j] == a[i] && pb[j] == b[i] && pc[j] == c[i]) << "row " << i << " at " << j;
  }
  // Shares of snarkjs's order equal the whole.
  std::vector<Fr> sa(n), sb(n), sc(n);
  m->evaluate_rows(w, 0, 5, sa.data(), sb.data(), sc.data(), Order::snarkjs);
  m->evaluate_rows(w, 5, n, sa.data(), sb.data(), sc.data(), Order::snarkjs);
  EXPECT_TRUE(std::equal(sa.begin(), sa.end(), a.begin()) &&
              std::equal(sc.begin(), sc.end(), c.begin()));
}

// The image a device holds is the rows themselves: copied in pieces of any
// size it is one block, zero past its end, and evaluated from it the rows
// give what the matrices give.
TEST(ConstraintMatrices, ItsImageIsItsRowsInOneBlock) {
  const unsigned log_n = 9;
  const std::size_t n = std::size_t{1} << log_n, vars = 700;
  auto m = ConstraintMatrices::from(key_with_every_kind(log_n, vars, 7));
  ASSERT_TRUE(m) << m.error().what();
  const auto im = m->image();
  EXPECT_EQ(im.a_begin, 0u);
  EXPECT_EQ(im.a_words, (n + 1) * 4);
  EXPECT_LT(im.a_words, im.b_begin);
  EXPECT_EQ(im.b_words, im.b_begin + (n + 1) * 4);
  EXPECT_LT(im.b_words, im.bytes);
  // The whole, then in uneven pieces running past the end.
  std::vector<std::byte> whole(im.bytes + 100, std::byte{0x5a});
  m->copy_image(0, whole);
  for (std::size_t i = im.bytes; i < whole.size(); ++i)
    ASSERT_EQ(whole[i], std::byte{0}) << "byte " << i << " past the image";
  std::vector<std::byte> pieces(whole.size(), std::byte{0x33});
  for (std::size_t at = 0, size = 3; at < pieces.size(); at += size, size = size * 2 + 5)
    m->copy_image(at, std::span(pieces).subspan(at, std::min(size, pieces.size() - at)));
  EXPECT_TRUE(pieces == whole);
  // 4-byte words, as a device reads them.
  std::vector<std::uint32_t> words(whole.size() / 4);
  std::memcpy(words.data(), whole.data(), words.size() * 4);
  const auto* base = reinterpret_cast<const std::byte*>(words.data());
  const auto w = witness_of(vars, 8);
  std::vector<Fr> a(n), b(n), c(n), ia(n), ib(n), ic(n);
  m->evaluate_rows(w, 0, n, a.data(), b.data(), c.data(), Order::ntt);
  kernels::cpu::evaluate_constraint_rows(im.a(base), im.b(base), w.data(), log_n, 0, n, ia.data(),
                                         ib.data(), ic.data(), Order::ntt);
  EXPECT_TRUE(a == ia && b == ib && c == ic);
}

TEST(ConstraintMatrices, RefusesKeysItCannotHoldNamingWhy) {
  auto key = key_with_every_kind(4, 20, 5);
  key.format = KeyFormat::bellman;
  auto refused = ConstraintMatrices::from(key);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().what().find("bellman key has no constraint matrices"),
            std::string::npos);

  key.format = KeyFormat::snarkjs;
  const auto entry = [&](std::uint32_t matrix, std::uint32_t row, std::uint32_t signal) {
    auto k = key;
    k.coefficients[7] = {matrix, row, signal, Fr::one()};
    auto r = ConstraintMatrices::from(k);
    return r ? std::string("accepted") : r.error().what();
  };
  EXPECT_NE(entry(2, 0, 0).find("entry 7 (matrix 2, row 0, signal 0)"), std::string::npos);
  EXPECT_NE(entry(0, 16, 0).find("entry 7 (matrix 0, row 16, signal 0) is outside the key's 16 "
                                 "rows and 20 wires"),
            std::string::npos);
  EXPECT_NE(entry(1, 3, 20).find("signal 20"), std::string::npos);
  EXPECT_EQ(entry(1, 15, 19), "accepted");

  // A wire's number shares its word with the coefficient's kind.
  auto huge = key;
  huge.coefficients.clear();
  huge.num_vars = std::size_t{1} << 30;
  refused = ConstraintMatrices::from(huge);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().what().find("1073741824 wires"), std::string::npos)
      << refused.error().what();
}

TEST(ConstraintMatrices, EvaluateRefusesAWitnessOrOutputsOfTheWrongSize) {
  auto m = ConstraintMatrices::from(key_with_every_kind(4, 20, 6));
  ASSERT_TRUE(m) << m.error().what();
  std::vector<Fr> w(19), a(16), b(16), c(16), short_c(15);
  auto e = m->evaluate(w, a, b, c);
  ASSERT_TRUE(e);
  EXPECT_NE(e.what().find("the witness has 19 values; the key's circuit has 20 wires"),
            std::string::npos)
      << e.what();
  w.resize(20);
  e = m->evaluate(w, a, b, short_c);
  ASSERT_TRUE(e);
  EXPECT_NE(e.what().find("16 points each"), std::string::npos) << e.what();
}

}  // namespace
}  // namespace stoker::engine::groth16
