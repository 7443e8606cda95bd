// The fill paths of the hpoly producer (engine/workloads/detail/hpoly_fill.hpp):
// on a CPU with BMI2 and ADX (and AVX-512 IFMA) the fast paths write the
// same bits as the portable one, and the IFMA lanes' Montgomery product
// equals Fr's on edge values and random pairs (the ADX product's own test is
// test/kernels/fr_mul_adx_test.cpp). Where the CPU or the build lacks a
// path, its tests skip.
// GCC 12's avx512fintrin.h trips -W(maybe-)uninitialized where the IFMA
// product's intrinsics are inlined (GCC bug 105593): off before the include.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include "engine/workloads/detail/hpoly_fill.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "engine/workloads/detail/hpoly_fill_ifma.hpp"
#include "kernels/detail/fr_mul_ifma.hpp"
#include "test/kernels/fr_test_util.hpp"

namespace stoker::engine::workloads::detail {
namespace {

using kernels::Fr;

struct Vectors {
  std::vector<Fr> a, b, c;
  explicit Vectors(std::size_t n) : a(n), b(n), c(n) {}
};

Vectors fill(FillPath path, std::size_t first, std::size_t count, bool with_c, bool nontemporal) {
  Vectors v(count);
  hpoly_fill_path(path, 42, 3, first, count, v.a.data(), v.b.data(), with_c ? v.c.data() : nullptr,
                  nontemporal);
  return v;
}

bool same(const std::vector<Fr>& x, const std::vector<Fr>& y) {
  return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(Fr)) == 0;
}

// `path` against the portable path on ranges whose counts are and are not
// multiples of eight (the lanes path's width), with and without c (the
// verifier's call), into std::vectors and into 64-byte aligned buffers
// (what the engine's pinned blocks are, and what non-temporal vector stores
// need).
void expect_same_bits_as_portable(FillPath path) {
  struct Range {
    std::size_t first, count;
  };
  struct Free {
    void operator()(Fr* p) const { std::free(p); }
  };
  for (const Range r :
       {Range{0, 4096}, Range{123457, 1001}, Range{(std::size_t{1} << 28) - 5, 5}, Range{77, 15}})
    for (const bool nontemporal : {false, true}) {
      SCOPED_TRACE(::testing::Message()
                   << r.count << " from " << r.first << ", nontemporal " << nontemporal);
      const auto portable = fill(FillPath::portable, r.first, r.count, true, nontemporal);
      const auto v = fill(path, r.first, r.count, true, nontemporal);
      EXPECT_TRUE(same(v.a, portable.a)) << "a";
      EXPECT_TRUE(same(v.b, portable.b)) << "b";
      EXPECT_TRUE(same(v.c, portable.c)) << "c";
      const auto no_c = fill(path, r.first, r.count, false, nontemporal);
      EXPECT_TRUE(same(no_c.a, portable.a) && same(no_c.b, portable.b)) << "without c";
      const std::size_t bytes = (r.count * sizeof(Fr) + 63) / 64 * 64;
      std::unique_ptr<Fr, Free> a(static_cast<Fr*>(std::aligned_alloc(64, bytes))),
          b(static_cast<Fr*>(std::aligned_alloc(64, bytes))),
          c(static_cast<Fr*>(std::aligned_alloc(64, bytes)));
      hpoly_fill_path(path, 42, 3, r.first, r.count, a.get(), b.get(), c.get(), nontemporal);
      EXPECT_EQ(std::memcmp(a.get(), portable.a.data(), r.count * sizeof(Fr)), 0) << "aligned a";
      EXPECT_EQ(std::memcmp(b.get(), portable.b.data(), r.count * sizeof(Fr)), 0) << "aligned b";
      EXPECT_EQ(std::memcmp(c.get(), portable.c.data(), r.count * sizeof(Fr)), 0) << "aligned c";
      for (std::size_t i = 0; i < r.count; ++i)
        ASSERT_EQ(portable.c[i], portable.a[i] * portable.b[i]) << "element " << r.first + i;
    }
}

TEST(HpolyFill, AdxPathWritesTheSameBitsAsThePortablePath) {
  if (!fill_adx_supported()) GTEST_SKIP() << "no BMI2/ADX path in this build or on this CPU";
  expect_same_bits_as_portable(FillPath::adx);
}

#if defined(STOKER_HPOLY_IFMA)
TEST(HpolyFill, IfmaPathWritesTheSameBitsAsThePortablePath) {
  if (!fill_ifma_supported()) GTEST_SKIP() << "no AVX-512 IFMA path on this CPU";
  expect_same_bits_as_portable(FillPath::ifma);
}

TEST(HpolyFill, IfmaProductEqualsFrProductOnEdgeValuesAndRandomPairs) {
  if (!fill_ifma_supported()) GTEST_SKIP() << "no AVX-512 IFMA on this CPU";
  const auto edges = kernels::test::fr_edge_values();
  // Every pair of edge values, eight lanes at a time (lanes differ).
  std::vector<Fr> xs, ys;
  for (const Fr& a : edges)
    for (const Fr& b : edges) {
      xs.push_back(a);
      ys.push_back(b);
    }
  std::mt19937_64 rng(20261202);
  for (int i = 0; i < 200000; ++i) {
    xs.push_back(kernels::test::random_fr(rng));
    ys.push_back(kernels::test::random_fr(rng));
  }
  while (xs.size() % 8) {
    xs.push_back(Fr::one());
    ys.push_back(Fr::one());
  }
  std::vector<Fr> zs(xs.size());
  for (std::size_t i = 0; i < xs.size(); i += 8)
    kernels::detail::fr_mul_ifma8(&xs[i], &ys[i], &zs[i]);
  for (std::size_t i = 0; i < xs.size(); ++i)
    ASSERT_EQ(zs[i], xs[i] * ys[i]) << kernels::test::fr_to_hex(xs[i]) << " * "
                                    << kernels::test::fr_to_hex(ys[i]) << " (pair " << i << ")";
}
#endif

}  // namespace
}  // namespace stoker::engine::workloads::detail
