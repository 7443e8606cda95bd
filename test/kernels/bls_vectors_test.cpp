// The G1 and G2 encodings, scalar multiples and the pairing against
// @noble/curves, an independent implementation: data/bls_vectors.txt
// (written by data/make_bls_vectors.mjs) holds [k]G1 and [k]G2 for a few
// dozen k, compressed and uncompressed, and e([a]G1, [b]G2) for two (a, b).
// Our [k]G must encode to the same bytes, the bytes must decode to our
// point, and our pairing must give the same Fq12.
#include <gtest/gtest.h>

#include <cstdint>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "kernels/g1_encoding.hpp"
#include "kernels/g2_encoding.hpp"
#include "kernels/pairing.hpp"

namespace stoker::kernels {
namespace {

struct Vector {
  std::string group;  // g1, g2 or gt
  std::uint64_t k[4];
  std::vector<unsigned char> compressed, uncompressed;  // g1, g2
  std::uint64_t b[4];                                   // gt: e([k]G1, [b]G2)
  std::vector<unsigned char> gt;                        // 12 x 48 bytes
};

std::vector<unsigned char> from_hex(const std::string& s) {
  std::vector<unsigned char> out(s.size() / 2);
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<unsigned char>(std::stoul(s.substr(2 * i, 2), nullptr, 16));
  return out;
}

// 32 bytes big-endian to little-endian limbs.
void scalar_limbs(const std::string& hex, std::uint64_t out[4]) {
  const std::vector<unsigned char> kb = from_hex(hex);
  for (int i = 0; i < 4; ++i) {
    out[i] = 0;
    for (int b = 0; b < 8; ++b) out[i] = (out[i] << 8) | kb[8 * (3 - i) + b];
  }
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
    std::string group, k, second, third;
    fields >> group >> k >> second;
    Vector v{group, {}, {}, {}, {}, {}};
    scalar_limbs(k, v.k);
    if (group == "gt") {
      scalar_limbs(second, v.b);
      fields >> third;
      v.gt = from_hex(third);
    } else {
      fields >> third;
      v.compressed = from_hex(second);
      v.uncompressed = from_hex(third);
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

TEST(BlsVectors, PairingMatchesNoble) {
  const std::vector<Vector> vs = load();
  ASSERT_GE(count(vs, "gt"), 2u);
  for (const auto& v : vs) {
    if (v.group != "gt") continue;
    ASSERT_EQ(v.gt.size(), 12 * 48u);
    const G1Affine p = to_affine(scalar_mul(G1Affine::generator(), v.k));
    const G2Affine q = to_affine(scalar_mul(G2Affine::generator(), v.b));
    const Fq12 e = cpu::pairing(p, q);
    // c0.c0.c0, c0.c0.c1, ..., c1.c2.c1, each 48 bytes big-endian.
    const Fq* coefficients = &e.c0.c0.c0;
    static_assert(sizeof(Fq12) == 12 * sizeof(Fq), "Fq12 is 12 Fq in tower order");
    for (int i = 0; i < 12; ++i) {
      std::vector<unsigned char> bytes(48);
      point_encoding_detail::write_fq(coefficients[i], bytes.data());
      EXPECT_EQ(bytes,
                std::vector<unsigned char>(v.gt.begin() + 48 * i, v.gt.begin() + 48 * i + 48))
          << "coefficient " << i;
    }
  }
}

}  // namespace
}  // namespace stoker::kernels
