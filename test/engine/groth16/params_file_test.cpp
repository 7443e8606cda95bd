// engine/groth16/params_file.hpp: a toy bellman key written and read back,
// its bytes laid out as bellperson's Parameters::write lays them, and
// every refusal of the reader.
#include "engine/groth16/params_file.hpp"

#include <gtest/gtest.h>

#include "groth16_files_test_util.hpp"
#include "kernels/g1_encoding.hpp"
#include "kernels/g2_encoding.hpp"

namespace stoker::engine::groth16 {
namespace {

using kernels::G1Affine;
using kernels::G2Affine;
using namespace test;

// n = 8 (7 H points), 2 public wires (3 IC points), 5 private wires; A
// without one wire, B with four: bellman drops the points at infinity.
// Points are small multiples of the generators, L holds one infinity.
ProvingKey toy_key() {
  ProvingKey k;
  k.format = KeyFormat::bellman;
  k.log_n = 3;
  k.num_public = 2;
  k.num_vars = 8;
  std::uint64_t m = 2;
  const auto g1 = [&m](std::size_t n) {
    PointVector<G1Affine> v;
    for (std::size_t i = 0; i < n; ++i) v.push_back(g1_times(m++));
    return v;
  };
  k.vk.alpha_1 = g1_times(m++);
  k.beta_1 = g1_times(m++);
  k.delta_1 = g1_times(m++);
  k.vk.beta_2 = g2_times(m++);
  k.vk.gamma_2 = G2Affine::generator();
  k.vk.delta_2 = g2_times(m++);
  k.vk.ic = g1(3);
  k.h = g1(7);
  k.l = g1(5);
  k.l[2] = G1Affine::infinity();
  k.a = g1(7);
  k.b_g1 = g1(4);
  for (int i = 0; i < 4; ++i) k.b_g2.push_back(g2_times(m++));
  return k;
}

bool same(const G1Affine& a, const G1Affine& b) {
  return a.x == b.x && a.y == b.y;
}
bool same(const G2Affine& a, const G2Affine& b) {
  return a.x == b.x && a.y == b.y;
}
template <typename Point>
bool same(const PointVector<Point>& a, const PointVector<Point>& b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (!same(a[i], b[i])) return false;
  return true;
}

// Byte offsets of the toy key's file.
constexpr std::size_t kFixed = 96 * 3 + 192 * 3;  // 864
constexpr std::size_t kIcCount = kFixed, kHCount = kIcCount + 4 + 3 * 96, kH = kHCount + 4,
                      kLCount = kH + 7 * 96, kL = kLCount + 4, kACount = kL + 5 * 96,
                      kA = kACount + 4, kB1Count = kA + 7 * 96, kB2Count = kB1Count + 4 + 4 * 96,
                      kB2 = kB2Count + 4, kEnd = kB2 + 4 * 192;

void put_u32_be(Bytes& b, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) b.at(at + i) = static_cast<unsigned char>(v >> (24 - 8 * i));
}

class ParamsFile : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = dir_.path("toy.params");
    const Error e = write_params(path_, key_);
    ASSERT_FALSE(e) << e.what();
    bytes_ = read_bytes(path_);
  }
  std::string refusal(const Bytes& b, PointCheck check = PointCheck::full) {
    const std::string p = dir_.file("bad.params", b);
    auto k = read_params(p, check);
    EXPECT_FALSE(k.ok()) << "read";
    if (k.ok()) return {};
    EXPECT_EQ(k.error().code, make_error_code(Errc::invalid_argument)) << k.error().what();
    return k.error().what();
  }
  ScratchDir dir_;
  ProvingKey key_ = toy_key();
  std::string path_;
  Bytes bytes_;
};

TEST_F(ParamsFile, LayoutIsBellpersons) {
  ASSERT_EQ(bytes_.size(), kEnd);
  unsigned char p[96];
  kernels::encode_g1(key_.vk.alpha_1, p);
  EXPECT_TRUE(std::equal(p, p + 96, bytes_.begin()));
  kernels::encode_g1(key_.delta_1, p);
  EXPECT_TRUE(std::equal(p, p + 96, bytes_.begin() + 96 + 96 + 192 + 192));
  const auto count = [&](std::size_t at) {
    return std::uint32_t{bytes_[at]} << 24 | std::uint32_t{bytes_[at + 1]} << 16 |
           std::uint32_t{bytes_[at + 2]} << 8 | bytes_[at + 3];
  };
  EXPECT_EQ(count(kIcCount), 3u);
  EXPECT_EQ(count(kHCount), 7u);
  EXPECT_EQ(count(kLCount), 5u);
  EXPECT_EQ(count(kACount), 7u);
  EXPECT_EQ(count(kB1Count), 4u);
  EXPECT_EQ(count(kB2Count), 4u);
  EXPECT_EQ(bytes_[kL + 2 * 96], 0x40);  // the infinity flag
  unsigned char q[192];
  kernels::encode_g2(key_.b_g2[3], q);
  EXPECT_TRUE(std::equal(q, q + 192, bytes_.begin() + kB2 + 3 * 192));
}

TEST_F(ParamsFile, ReadsBackTheKeyWithItsShapeFromTheCounts) {
  auto k = read_params(path_);
  ASSERT_TRUE(k.ok()) << k.error().what();
  EXPECT_EQ(k->format, KeyFormat::bellman);
  EXPECT_EQ(k->log_n, 3u);
  EXPECT_EQ(k->num_public, 2u);
  EXPECT_EQ(k->num_vars, 8u);
  EXPECT_TRUE(same(k->vk.alpha_1, key_.vk.alpha_1) && same(k->beta_1, key_.beta_1) &&
              same(k->delta_1, key_.delta_1) && same(k->vk.beta_2, key_.vk.beta_2) &&
              same(k->vk.gamma_2, key_.vk.gamma_2) && same(k->vk.delta_2, key_.vk.delta_2));
  EXPECT_TRUE(same(k->vk.ic, key_.vk.ic));
  EXPECT_TRUE(same(k->h, key_.h));
  EXPECT_TRUE(same(k->l, key_.l));
  EXPECT_TRUE(same(k->a, key_.a));
  EXPECT_TRUE(same(k->b_g1, key_.b_g1));
  EXPECT_TRUE(same(k->b_g2, key_.b_g2));
  EXPECT_TRUE(k->coefficients.empty());
  EXPECT_TRUE(read_params(path_, PointCheck::trusted).ok());
}

// A verifier reads the header and IC only: a file cut right after IC still
// gives the verifying key, and a bad IC point is still refused.
TEST_F(ParamsFile, VerifyingKeyComesFromTheHeadAlone) {
  const Bytes head(bytes_.begin(), bytes_.begin() + kHCount);
  auto vk = read_params_verifying_key(dir_.file("head.params", head));
  ASSERT_TRUE(vk.ok()) << vk.error().what();
  EXPECT_TRUE(same(vk->alpha_1, key_.vk.alpha_1) && same(vk->beta_2, key_.vk.beta_2) &&
              same(vk->gamma_2, key_.vk.gamma_2) && same(vk->delta_2, key_.vk.delta_2));
  EXPECT_TRUE(same(vk->ic, key_.vk.ic));
  const Bytes cut(bytes_.begin(), bytes_.begin() + kHCount - 1);
  auto short_ic = read_params_verifying_key(dir_.file("cut.params", cut));
  ASSERT_FALSE(short_ic.ok());
  EXPECT_NE(short_ic.error().what().find("IC"), std::string::npos) << short_ic.error().what();
}

TEST_F(ParamsFile, TruncatedFileNamesWhatIsCutAndWhere) {
  const auto cut = [&](std::size_t n) { return Bytes(bytes_.begin(), bytes_.begin() + n); };
  EXPECT_TRUE(names(refusal(cut(500)), {"truncated: gamma_g2 at byte 384", "ends at byte 500"}));
  EXPECT_TRUE(names(refusal(cut(kLCount + 2)),
                    {"truncated: the L count at byte " + std::to_string(kLCount)}));
  EXPECT_TRUE(
      names(refusal(cut(kH + 100)), {"H: truncated: 7 points from byte " + std::to_string(kH),
                                     "672 bytes", "572 bytes missing"}));
  Bytes extra = bytes_;
  extra.push_back(1);
  EXPECT_TRUE(names(refusal(extra), {"1 bytes after B_G2, from byte " + std::to_string(kEnd)}));
}

TEST_F(ParamsFile, RefusesCountsThatBreakTheShape) {
  Bytes b = bytes_;
  put_u32_be(b, kIcCount, 0);
  EXPECT_TRUE(names(refusal(b), {"the IC count at byte 864 is 0"}));
  b = bytes_;
  put_u32_be(b, kHCount, 6);
  EXPECT_TRUE(names(refusal(b), {"the H count 6 at byte " + std::to_string(kHCount),
                                 "not n - 1 for a power of two"}));
  b = bytes_;
  put_u32_be(b, kACount, 9);
  EXPECT_TRUE(names(refusal(b), {"the A count 9", "exceeds the IC + L = 8 wires"}));
  b = bytes_;
  put_u32_be(b, kB2Count, 3);
  EXPECT_TRUE(names(refusal(b), {"the B_G2 count 3", "B_G1 count 4"}));
}

TEST_F(ParamsFile, RefusesBadPointsNamingVectorIndexAndByte) {
  Bytes b = bytes_;
  b[kL + 3 * 96] |= 0x80;
  EXPECT_TRUE(names(refusal(b),
                    {"L: point 3 (byte " + std::to_string(kL + 3 * 96) + ")", "compressed flag"}));
  b = bytes_;
  kernels::encode_g1(g1_outside_subgroup(), b.data() + kA + 4 * 96);
  EXPECT_TRUE(
      names(refusal(b), {"A: point 4 (byte " + std::to_string(kA + 4 * 96) + ")", "not in G1"}));
  EXPECT_TRUE(read_params(dir_.file("trusted.params", b), PointCheck::trusted).ok());
  b = bytes_;
  kernels::encode_g2(g2_outside_subgroup(), b.data() + kB2 + 192);
  EXPECT_TRUE(names(refusal(b), {"B_G2: point 1", "not in G2"}));
  b = bytes_;
  b[kB2 + 2 * 192 + 191] ^= 1;  // G2 decoding checks the curve, trusted or not
  EXPECT_TRUE(names(refusal(b, PointCheck::trusted), {"B_G2: point 2", "not on the curve"}));
  b = bytes_;
  std::fill(b.begin() + 96, b.begin() + 96 + 48, 0x1f);  // beta_g1's x above q
  EXPECT_TRUE(names(refusal(b), {"beta_g1 (byte 96)", "x is not below"}));
}

// Large vectors are read in pieces on several threads: every point lands
// in its place, and of two bad points the first in the file is named.
TEST_F(ParamsFile, ReadsVectorsOfManyPiecesAndNamesTheFirstBadPoint) {
  ProvingKey k = key_;
  k.log_n = 17;
  k.h.assign((std::size_t{1} << 17) - 1, G1Affine::generator());
  for (std::size_t i = 0; i < k.h.size(); i += 997) k.h[i] = g1_times(i + 2);
  const std::string path = dir_.path("large.params");
  ASSERT_FALSE(write_params(path, k));
  auto read = read_params(path, PointCheck::trusted, 4);
  ASSERT_TRUE(read.ok()) << read.error().what();
  EXPECT_TRUE(same(read->h, k.h));
  EXPECT_TRUE(same(read->b_g2, k.b_g2));

  Bytes b = read_bytes(path);
  const std::size_t h_at = kH;  // the header and IC are the toy key's
  b[h_at + 100000 * 96] |= 0x80;
  b[h_at + 40000 * 96] |= 0x80;
  auto refused = read_params(dir_.file("large-bad.params", b), PointCheck::trusted, 4);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(names(refused.error().what(),
                    {"H: point 40000 (byte " + std::to_string(h_at + 40000 * 96) + ")"}))
      << refused.error().what();
}

TEST_F(ParamsFile, WriterRefusesKeysItCannotHold) {
  ProvingKey k = key_;
  k.h.pop_back();
  EXPECT_TRUE(names(write_params(dir_.path("w.params"), k).what(), {"write_params", "H has 6"}));
  k = key_;
  k.b_g2.pop_back();
  EXPECT_TRUE(names(write_params(dir_.path("w.params"), k).what(), {"B_G1 and B_G2 have 4 and 3"}));
  k = key_;
  k.format = KeyFormat::snarkjs;
  EXPECT_TRUE(names(write_params(dir_.path("w.params"), k).what(), {"snarkjs form"}));
  EXPECT_FALSE(std::filesystem::exists(dir_.path("w.params")));
}

}  // namespace
}  // namespace stoker::engine::groth16
