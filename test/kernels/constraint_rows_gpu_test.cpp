// The GPU's evaluation of constraint rows equals the CPU's bit for bit in
// stoker's order: terms of every kind (1, -1, other coefficients stored at
// any word alignment), empty rows, long rows, witnesses of 0s, 1s and
// others.
#include <cuda_runtime_api.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "common/error.hpp"
#include "device_vec.hpp"
#include "fr_test_util.hpp"
#include "kernels/constraint_rows.hpp"
#include "test/gpu_guard.hpp"

namespace stoker::kernels {
namespace {

using namespace constraint_rows;
using test::DeviceVec;

struct HostRows {
  std::vector<std::uint32_t> begin{0}, words;
  ConstraintRows view() const { return {begin.data(), words.data()}; }
};

HostRows random_rows(std::size_t rows, std::size_t vars, std::mt19937_64& rng) {
  HostRows m;
  for (std::size_t r = 0; r < rows; ++r) {
    // Mostly a few terms; some rows empty, a few long.
    const std::size_t terms = r % 97 == 0 ? 40 : rng() % 5;
    for (std::size_t t = 0; t < terms; ++t) {
      const auto wire = static_cast<std::uint32_t>(rng() % vars);
      const auto kind = static_cast<Kind>(rng() % 3);
      m.words.push_back(term_word(wire, kind));
      if (kind == kOther) {
        const Fr v = Fr::from_u64(rng()) * Fr::from_u64(rng());
        std::uint32_t w[kValueWords];
        std::memcpy(w, &v, sizeof v);
        m.words.insert(m.words.end(), w, w + kValueWords);
      }
    }
    m.begin.push_back(static_cast<std::uint32_t>(m.words.size()));
  }
  return m;
}

class DeviceWords {
 public:
  explicit DeviceWords(const std::vector<std::uint32_t>& h) {
    EXPECT_EQ(cudaMalloc(reinterpret_cast<void**>(&p_), std::max<std::size_t>(1, h.size()) * 4),
              cudaSuccess);
    EXPECT_EQ(cudaMemcpy(p_, h.data(), h.size() * 4, cudaMemcpyHostToDevice), cudaSuccess);
  }
  ~DeviceWords() { cudaFree(p_); }
  DeviceWords(const DeviceWords&) = delete;
  DeviceWords& operator=(const DeviceWords&) = delete;
  const std::uint32_t* get() const { return p_; }

 private:
  std::uint32_t* p_ = nullptr;
};

TEST(ConstraintRowsGpu, EqualsCpuInStokersOrder) {
  STOKER_REQUIRE_GPU();
  std::mt19937_64 rng(11);
  for (unsigned log_n : {0u, 1u, 6u, 13u, 17u}) {
    const std::size_t n = std::size_t{1} << log_n, vars = 3 * n + 5;
    const HostRows a = random_rows(n, vars, rng), b = random_rows(n, vars, rng);
    std::vector<Fr> w(vars);
    for (std::size_t i = 0; i < vars; ++i)
      w[i] = i % 3 == 0   ? Fr::zero()
             : i % 3 == 1 ? Fr::one()
                          : Fr::from_u64(rng()) * Fr::from_u64(rng());
    std::vector<Fr> want_a(n), want_b(n), want_c(n);
    cpu::evaluate_constraint_rows(a.view(), b.view(), w.data(), log_n, 0, n, want_a.data(),
                                  want_b.data(), want_c.data(), RowOrder::ntt);
    DeviceWords ab(a.begin), aw(a.words), bb(b.begin), bw(b.words);
    DeviceVec dw(w), da(n), db(n), dc(n);
    ASSERT_FALSE(gpu::evaluate_constraint_rows({ab.get(), aw.get()}, {bb.get(), bw.get()}, dw.get(),
                                               log_n, da.get(), db.get(), dc.get(), nullptr));
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    EXPECT_TRUE(da.download() == want_a) << "a, log_n " << log_n;
    EXPECT_TRUE(db.download() == want_b) << "b, log_n " << log_n;
    EXPECT_TRUE(dc.download() == want_c) << "c, log_n " << log_n;
  }
}

TEST(ConstraintRowsGpu, RefusesMissingBuffers) {
  STOKER_REQUIRE_GPU();
  DeviceVec v(2);
  const std::uint32_t* none = nullptr;
  EXPECT_EQ(gpu::evaluate_constraint_rows({none, none}, {none, none}, v.get(), 1, v.get(), v.get(),
                                          v.get(), nullptr),
            stoker::make_error_code(stoker::Errc::invalid_argument));
}

}  // namespace
}  // namespace stoker::kernels
