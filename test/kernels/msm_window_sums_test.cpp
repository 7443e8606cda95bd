// cpu::finish_window_sums: the sum extra + sum_w 2^(c w) (y_w + s_w) from
// the bytes the GPU leaves, against the same sum by the logs of known
// points; and the headers it must refuse.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "kernels/msm.hpp"
#include "msm_cpu_test_util.hpp"

namespace stoker::kernels {
namespace {

template <typename Affine>
class MsmWindowSums : public ::testing::Test {};
TYPED_TEST_SUITE(MsmWindowSums, test::Groups, test::GroupNames);

template <typename Affine>
constexpr MsmGroup group_of() {
  return std::is_same_v<Affine, G2Affine> ? MsmGroup::g2 : MsmGroup::g1;
}

// The bytes of W windows of c bits: y[W], s[W], extra, as XYZZ.
template <typename Affine>
std::vector<unsigned char> window_sums(const std::vector<test::XyzzOf<Affine>>& items,
                                       unsigned windows, unsigned c) {
  std::vector<unsigned char> bytes(gpu::window_sums_bytes(group_of<Affine>(), windows));
  const gpu::MsmWindowSumsHeader h{static_cast<std::uint32_t>(group_of<Affine>()), windows, c, 0};
  std::memcpy(bytes.data(), &h, sizeof h);
  std::memcpy(bytes.data() + sizeof h, items.data(), items.size() * sizeof(items[0]));
  return bytes;
}

TYPED_TEST(MsmWindowSums, FinishesExtraPlusWindowsScaledByTheirPlace) {
  for (const auto& [windows, c] : {std::pair{0u, 0u}, {1u, 16u}, {3u, 5u}, {20u, 13u}}) {
    const auto in = test::known_log_points<TypeParam>(2 * windows + 1, 7 + windows);
    std::vector<test::XyzzOf<TypeParam>> items;
    for (const auto& p : in.points) items.push_back(to_xyzz(p));
    // y_w and s_w weigh 2^(c w); the extra weighs 1.
    std::vector<Fr> weight(2 * windows + 1, Fr::one());
    Fr place = Fr::one();
    for (unsigned w = 0; w < windows; ++w) {
      weight[w] = weight[windows + w] = place;
      for (unsigned b = 0; b < c; ++b) place += place;
    }
    const auto bytes = window_sums<TypeParam>(items, windows, c);
    test::XyzzOf<TypeParam> got;
    ASSERT_FALSE(cpu::finish_window_sums(bytes.data(), bytes.size(), got));
    const auto want = test::msm_by_logs(in, weight);
    const TypeParam a = to_affine(got), b = to_affine(want);
    EXPECT_EQ(std::memcmp(&a, &b, sizeof a), 0) << windows << " windows of " << c << " bits";
  }
}

TYPED_TEST(MsmWindowSums, RefusesShortBytesTheOtherGroupAndBadHeaders) {
  const auto in = test::known_log_points<TypeParam>(5, 3);
  std::vector<test::XyzzOf<TypeParam>> items;
  for (const auto& p : in.points) items.push_back(to_xyzz(p));
  auto bytes = window_sums<TypeParam>(items, 2, 8);
  test::XyzzOf<TypeParam> out;
  ASSERT_FALSE(cpu::finish_window_sums(bytes.data(), bytes.size(), out));
  EXPECT_TRUE(cpu::finish_window_sums(bytes.data(), bytes.size() - 1, out));
  EXPECT_TRUE(cpu::finish_window_sums(bytes.data(), 8, out));
  EXPECT_TRUE(cpu::finish_window_sums(nullptr, bytes.size(), out));
  auto with = [&](auto edit) {
    auto b = bytes;
    gpu::MsmWindowSumsHeader h;
    std::memcpy(&h, b.data(), sizeof h);
    edit(h);
    std::memcpy(b.data(), &h, sizeof h);
    return b;
  };
  const auto other = with([](auto& h) { h.group ^= 1; });
  EXPECT_TRUE(cpu::finish_window_sums(other.data(), other.size(), out));
  const auto many = with([](auto& h) { h.windows = gpu::kMsmMaxWindows + 1; });
  EXPECT_TRUE(cpu::finish_window_sums(many.data(), many.size(), out));
  const auto wide = with([](auto& h) { h.window_bits = 27; });
  EXPECT_TRUE(cpu::finish_window_sums(wide.data(), wide.size(), out));
}

}  // namespace
}  // namespace stoker::kernels
