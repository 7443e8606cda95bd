// The G1 and G2 encodings and scalar multiples against @noble/curves, an
// independent implementation: data/bls_vectors.txt (written by
// data/make_bls_vectors.mjs) holds [k]G1 and [k]G2 for a few dozen k,
// compressed and uncompressed. Our [k]G must encode to the same bytes, and
// the bytes must decode to our point.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/g1_encoding.hpp"
#include "kernels/g2_encoding.hpp"

namespace stoker::kernels {
namespace {

struct Vector {
  std::string group;  // g1 or g2
  std::uint64_t k[4];
  std::vector<unsigned char> compressed, uncompressed;
};

std::vector<unsigned char> from_hex(const std::string& s) {
  std::vector<unsigned char> out(s.size() / 2);
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<unsigned char>(std::stoul(s.substr(2 * i, 2), nullptr, 16));
  return out;
}

std::vector<Vector> load() {
  const std::string path = std::string(STOKER_KERNELS_TEST_DATA) + "/bls_vectors.txt";
  std::ifstream in(path);
  EXPECT_TRUE(in) << "cannot open " << path;
  std::vector<Vector> out;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string group, k, comp, uncomp;
    fields >> group >> k;
    if (group != "g1" && group != "g2") continue;
    fields >> comp >> uncomp;
    Vector v{group, {}, from_hex(comp), from_hex(uncomp)};
    const std::vector<unsigned char> kb = from_hex(k);  // 32 bytes big-endian
    for (int i = 0; i < 4; ++i) {
      v.k[i] = 0;
      for (int b = 0; b < 8; ++b) v.k[i] = (v.k[i] << 8) | kb[8 * (3 - i) + b];
    }
    out.push_back(std::move(v));
  }
  return out;
}

std::size_t count(const std::vector<Vector>& vs, const std::string& group) {
  std::size_t n = 0;
  for (const auto& v : vs) n += v.group == group;
  return n;
}

TEST(BlsVectors, G1MultiplesAndEncodingsMatchNoble) {
  const std::vector<Vector> vs = load();
  ASSERT_GE(count(vs, "g1"), 20u);
  for (const auto& v : vs) {
    if (v.group != "g1") continue;
    ASSERT_EQ(v.compressed.size(), kG1CompressedBytes);
    ASSERT_EQ(v.uncompressed.size(), kG1EncodedBytes);
    const G1Affine p = to_affine(scalar_mul(G1Affine::generator(), v.k));
    std::vector<unsigned char> c(kG1CompressedBytes), u(kG1EncodedBytes);
    encode_g1_compressed(p, c.data());
    encode_g1(p, u.data());
    EXPECT_EQ(c, v.compressed) << "k limb 0 " << v.k[0];
    EXPECT_EQ(u, v.uncompressed) << "k limb 0 " << v.k[0];

    G1Affine back;
    ASSERT_FALSE(decode_g1_compressed(v.compressed.data(), back));
    EXPECT_EQ(back.x, p.x);
    EXPECT_EQ(back.y, p.y);
    ASSERT_FALSE(decode_g1(v.uncompressed.data(), back));
    EXPECT_FALSE(check_g1(back));
    EXPECT_EQ(back.x, p.x);
    EXPECT_EQ(back.y, p.y);
  }
}

TEST(BlsVectors, G2MultiplesAndEncodingsMatchNoble) {
  const std::vector<Vector> vs = load();
  ASSERT_GE(count(vs, "g2"), 20u);
  for (const auto& v : vs) {
    if (v.group != "g2") continue;
    ASSERT_EQ(v.compressed.size(), kG2CompressedBytes);
    ASSERT_EQ(v.uncompressed.size(), kG2EncodedBytes);
    const G2Affine p = to_affine(scalar_mul(G2Affine::generator(), v.k));
    std::vector<unsigned char> c(kG2CompressedBytes), u(kG2EncodedBytes);
    encode_g2_compressed(p, c.data());
    encode_g2(p, u.data());
    EXPECT_EQ(c, v.compressed) << "k limb 0 " << v.k[0];
    EXPECT_EQ(u, v.uncompressed) << "k limb 0 " << v.k[0];

    G2Affine back;
    ASSERT_FALSE(decode_g2_compressed(v.compressed.data(), back));
    EXPECT_EQ(back.x, p.x);
    EXPECT_EQ(back.y, p.y);
    ASSERT_FALSE(decode_g2(v.uncompressed.data(), back));
    EXPECT_EQ(back.x, p.x);
    EXPECT_EQ(back.y, p.y);
  }
}

}  // namespace
}  // namespace stoker::kernels
