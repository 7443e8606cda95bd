// engine/groth16/zkey_file.hpp against the zkeys snarkjs 0.7.6 made for the
// circuits in data/ (multiplier: 12 products, x public, out public; bits:
// 32-bit ANDs; nopublic: nothing public), and against copies of them with
// one thing broken.
#include "engine/groth16/zkey_file.hpp"

#include <gtest/gtest.h>

#include <algorithm>

#include "engine/groth16/snarkjs_json.hpp"
#include "engine/groth16/wtns_file.hpp"
#include "groth16_files_test_util.hpp"

namespace stoker::engine::groth16 {
namespace {

using kernels::Fr;
using kernels::G1Affine;
using kernels::G2Affine;
using namespace test;

bool same(const G1Affine& a, const G1Affine& b) {
  return a.x == b.x && a.y == b.y;
}
bool same(const G2Affine& a, const G2Affine& b) {
  return a.x == b.x && a.y == b.y;
}
template <typename Point>
bool same(const PointVector<Point>& a, const PointVector<Point>& b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(),
                    [](const Point& x, const Point& y) { return same(x, y); });
}
bool same(const ProvingKey& a, const ProvingKey& b) {
  if (a.format != b.format || a.log_n != b.log_n || a.num_vars != b.num_vars ||
      a.num_public != b.num_public || a.coefficients.size() != b.coefficients.size())
    return false;
  for (std::size_t i = 0; i < a.coefficients.size(); ++i) {
    const MatrixEntry &x = a.coefficients[i], &y = b.coefficients[i];
    if (x.matrix != y.matrix || x.row != y.row || x.signal != y.signal || x.value != y.value)
      return false;
  }
  return same(a.vk.alpha_1, b.vk.alpha_1) && same(a.vk.beta_2, b.vk.beta_2) &&
         same(a.vk.gamma_2, b.vk.gamma_2) && same(a.vk.delta_2, b.vk.delta_2) &&
         same(a.vk.ic, b.vk.ic) && same(a.beta_1, b.beta_1) && same(a.delta_1, b.delta_1) &&
         same(a.a, b.a) && same(a.b_g1, b.b_g1) && same(a.b_g2, b.b_g2) && same(a.l, b.l) &&
         same(a.h, b.h);
}

ProvingKey read_ok(const std::string& path, PointCheck check = PointCheck::full) {
  auto k = read_zkey(path, check);
  EXPECT_TRUE(k.ok()) << k.error().what();
  return k.ok() ? std::move(*k) : ProvingKey{};
}

std::string refusal(const std::string& path, PointCheck check = PointCheck::full) {
  auto k = read_zkey(path, check);
  EXPECT_FALSE(k.ok()) << path << " was read";
  if (k.ok()) return {};
  EXPECT_EQ(k.error().code, make_error_code(Errc::invalid_argument)) << k.error().what();
  return k.error().what();
}

TEST(ZkeyFile, ReadsTheShapeCircomAndSnarkjsGaveEachCircuit) {
  const ProvingKey m = read_ok(data_file("multiplier.zkey"));
  EXPECT_EQ(m.format, KeyFormat::snarkjs);
  EXPECT_EQ(m.num_vars, 26u);   // circom: wires 26
  EXPECT_EQ(m.num_public, 2u);  // out, x
  EXPECT_EQ(m.log_n, 4u);       // 12 constraints + 2 public + 1 rows
  EXPECT_EQ(m.vk.ic.size(), 3u);
  EXPECT_EQ(m.a.size(), 26u);
  EXPECT_EQ(m.b_g1.size(), 26u);
  EXPECT_EQ(m.b_g2.size(), 26u);
  EXPECT_EQ(m.l.size(), 23u);
  EXPECT_EQ(m.h.size(), 16u);
  EXPECT_EQ(m.coefficients.size(), 12u * 2 + 3);

  const ProvingKey b = read_ok(data_file("bits.zkey"));
  EXPECT_EQ(b.num_vars, 100u);
  EXPECT_EQ(b.num_public, 2u);
  EXPECT_EQ(b.log_n, 7u);  // 99 constraints + 3 rows

  const ProvingKey n = read_ok(data_file("nopublic.zkey"));
  EXPECT_EQ(n.num_public, 0u);
  EXPECT_EQ(n.vk.ic.size(), 1u);
  EXPECT_EQ(n.log_n, 4u);
}

TEST(ZkeyFile, HeaderPointsAreTheExportedVerificationKeys) {
  for (const char* c : {"multiplier", "bits", "nopublic"}) {
    const ProvingKey k = read_ok(data_file(std::string(c) + ".zkey"));
    auto vk = read_verification_key_json(data_file(std::string(c) + "_verification_key.json"));
    ASSERT_TRUE(vk.ok()) << vk.error().what();
    EXPECT_TRUE(same(k.vk.alpha_1, vk->alpha_1)) << c;
    EXPECT_TRUE(same(k.vk.beta_2, vk->beta_2)) << c;
    EXPECT_TRUE(same(k.vk.gamma_2, vk->gamma_2)) << c;
    EXPECT_TRUE(same(k.vk.delta_2, vk->delta_2)) << c;
    EXPECT_TRUE(same(k.vk.ic, vk->ic)) << c;
    // snarkjs never re-randomises gamma.
    EXPECT_TRUE(same(k.vk.gamma_2, G2Affine::generator())) << c;
  }
}

TEST(ZkeyFile, CoefficientsEndWithOneRowPerPublicWire) {
  const ProvingKey k = read_ok(data_file("multiplier.zkey"));
  const std::size_t constraints = 12, first = k.coefficients.size() - (k.num_public + 1);
  for (std::size_t s = 0; s <= k.num_public; ++s) {
    const MatrixEntry& e = k.coefficients[first + s];
    EXPECT_EQ(e.matrix, 0u);
    EXPECT_EQ(e.row, constraints + s);
    EXPECT_EQ(e.signal, s);
    EXPECT_EQ(e.value, Fr::one());
  }
}

// Row c of the multiplier is acc[c] * y[c] = acc[c + 1] (wire 15 + c; the
// last row's product is out, wire 1), which circom writes as
// (-acc[c]) * y[c] = -acc[c + 1]: A times w and B times w, from the
// decoded coefficients and the decoded witness, multiply to minus it.
TEST(ZkeyFile, MultiplierRowsMultiplyToTheWitnessProducts) {
  const ProvingKey k = read_ok(data_file("multiplier.zkey"));
  auto w = read_wtns(data_file("multiplier.wtns"));
  ASSERT_TRUE(w.ok()) << w.error().what();
  ASSERT_EQ(k.domain_size(), 16u);
  std::vector<Fr> a(k.domain_size(), Fr::zero()), b(k.domain_size(), Fr::zero());
  for (const MatrixEntry& e : k.coefficients) {
    EXPECT_EQ(e.value, e.matrix == 0 && e.row < 12 ? -Fr::one() : Fr::one());
    (e.matrix == 0 ? a : b)[e.row] += e.value * (*w)[e.signal];
  }
  for (std::size_t c = 0; c < 12; ++c)
    EXPECT_EQ(a[c] * b[c], -(*w)[c == 11 ? 1 : 15 + c]) << "row " << c;
}

// A wire that no row of A (of B) uses has the point at infinity there: the
// bits circuit's AND wires appear in C only.
TEST(ZkeyFile, InfinityPointsAreTheWiresOutsideAMatrix) {
  const ProvingKey k = read_ok(data_file("bits.zkey"));
  std::vector<bool> in_a(k.num_vars), in_b(k.num_vars);
  for (const MatrixEntry& e : k.coefficients) (e.matrix == 0 ? in_a : in_b)[e.signal] = true;
  std::size_t a_inf = 0, b_inf = 0;
  for (std::size_t s = 0; s < k.num_vars; ++s) {
    EXPECT_EQ(k.a[s].is_infinity(), !in_a[s]) << "wire " << s;
    EXPECT_EQ(k.b_g1[s].is_infinity(), !in_b[s]) << "wire " << s;
    EXPECT_EQ(k.b_g2[s].is_infinity(), !in_b[s]) << "wire " << s;
    a_inf += k.a[s].is_infinity();
    b_inf += k.b_g1[s].is_infinity();
  }
  EXPECT_GE(a_inf, 32u);
  EXPECT_GE(b_inf, 32u);
}

// snarkjs's `zkey contribute` writes sections 1 to 10 in order, so the
// writer's file is the same bytes up to section 10 (its MPC section is
// the minimal one).
TEST(ZkeyFile, WrittenKeyIsSnarkjsBytesUpToTheMpcSectionAndReadsBackEqual) {
  ScratchDir dir;
  for (const char* c : {"multiplier", "bits", "nopublic"}) {
    const std::string original = data_file(std::string(c) + ".zkey");
    const ProvingKey k = read_ok(original);
    const std::string copy = dir.path(std::string(c) + ".zkey");
    const Error e = write_zkey(copy, k);
    ASSERT_FALSE(e) << e.what();
    const Bytes want = read_bytes(original), got = read_bytes(copy);
    const std::size_t mpc = sections(want).at(10).header;
    ASSERT_EQ(sections(got).at(10).header, mpc) << c;
    EXPECT_TRUE(std::equal(want.begin(), want.begin() + mpc, got.begin())) << c;
    EXPECT_EQ(got.size(), mpc + 12 + 68) << c;
    EXPECT_TRUE(same(read_ok(copy), k)) << c;
  }
}

// `groth16 setup` writes the sections in the order 1, 2, 4, 3, 9, 8, 5, 6,
// 7, 10; the reader goes by id.
TEST(ZkeyFile, ReadsSectionsInAnyOrder) {
  ScratchDir dir;
  const Bytes full = read_bytes(data_file("bits.zkey"));
  const auto s = sections(full);
  Bytes setup_order(full.begin(), full.begin() + 12);
  for (std::uint32_t id : {1, 2, 4, 3, 9, 8, 5, 6, 7, 10})
    setup_order.insert(setup_order.end(), full.begin() + s.at(id).header,
                       full.begin() + s.at(id).data + s.at(id).size);
  ASSERT_EQ(setup_order.size(), full.size());
  ASSERT_NE(setup_order, full);
  EXPECT_TRUE(same(read_ok(dir.file("setup.zkey", setup_order)), read_ok(data_file("bits.zkey"))));
}

TEST(ZkeyFile, WriterRefusesAKeyItCannotHold) {
  ScratchDir dir;
  ProvingKey k = read_ok(data_file("multiplier.zkey"));
  k.h.pop_back();
  Error e = write_zkey(dir.path("k.zkey"), k);
  EXPECT_TRUE(names(e.what(), {"write_zkey", "H has 15 points", "16"}));
  EXPECT_FALSE(std::filesystem::exists(dir.path("k.zkey")));
  k = read_ok(data_file("multiplier.zkey"));
  k.format = KeyFormat::bellman;
  e = write_zkey(dir.path("k.zkey"), k);
  EXPECT_TRUE(names(e.what(), {"bellman"}));
  k = read_ok(data_file("multiplier.zkey"));
  k.coefficients[3].signal = 26;
  e = write_zkey(dir.path("k.zkey"), k);
  EXPECT_TRUE(names(e.what(), {"coefficient 3", "signal 26"}));
}

TEST(ZkeyFile, TruncatedFileNamesTheSectionAndTheOffset) {
  ScratchDir dir;
  const Bytes full = read_bytes(data_file("multiplier.zkey"));
  const auto s = sections(full);
  const auto cut = [&](std::size_t size) {
    return dir.file("cut" + std::to_string(size) + ".zkey",
                    Bytes(full.begin(), full.begin() + size));
  };
  EXPECT_TRUE(names(refusal(cut(7)), {"truncated", "7 bytes", "header needs 12"}));
  // In the 12-byte header of the third section (snarkjs wrote them in id
  // order).
  const std::size_t h3 = s.at(3).header + 5;
  EXPECT_TRUE(names(refusal(cut(h3)), {"truncated at byte " + std::to_string(h3), "section 3 of 10",
                                       std::to_string(s.at(3).header)}));
  // Inside the A points and inside the last section.
  EXPECT_TRUE(
      names(refusal(cut(s.at(5).data + 1000)),
            {"section 5 (A points) is truncated",
             "2496 bytes from byte " + std::to_string(s.at(5).data), "1496 bytes missing"}));
  EXPECT_TRUE(names(refusal(cut(full.size() - 1)),
                    {"section 10 (MPC parameters) is truncated", "1 bytes missing"}));
}

TEST(ZkeyFile, RefusesDuplicatedAndMissingSectionsAndTrailingBytes) {
  ScratchDir dir;
  const Bytes full = read_bytes(data_file("multiplier.zkey"));
  const auto s = sections(full);
  Bytes dup = full;  // section 1 once more at the end
  dup.insert(dup.end(), full.begin() + s.at(1).header, full.begin() + s.at(1).data + 4);
  put_u32(dup, 8, 11);
  EXPECT_TRUE(names(refusal(dir.file("dup.zkey", dup)),
                    {"section 1 (protocol) appears twice", std::to_string(s.at(1).data)}));

  Bytes missing = full;
  put_u32(missing, s.at(8).header, 11);
  EXPECT_TRUE(
      names(refusal(dir.file("missing.zkey", missing)), {"section 8 (C points) is missing"}));

  Bytes extra = full;
  extra.push_back(0);
  EXPECT_TRUE(names(refusal(dir.file("extra.zkey", extra)),
                    {"1 bytes after the last of its 10 sections", std::to_string(full.size())}));
}

TEST(ZkeyFile, RefusesOtherProtocolsVersionsCurvesAndFiles) {
  ScratchDir dir;
  EXPECT_TRUE(names(refusal(data_file("multiplier_plonk.zkey")),
                    {"section 1 (protocol)", "a PLONK key (protocol 2)", "Groth16 (protocol 1)"}));
  Bytes fflonk = read_bytes(data_file("multiplier.zkey"));
  put_u32(fflonk, sections(fflonk).at(1).data, 10);
  EXPECT_TRUE(names(refusal(dir.file("fflonk.zkey", fflonk)), {"an FFLONK key (protocol 10)"}));

  EXPECT_TRUE(
      names(refusal(data_file("multiplier_bn128.zkey")),
            {"section 2 (Groth16 header)", "not over BLS12-381",
             "21888242871839275222246405745257275088696311157297823662689037894645226208583 "
             "(bn128's q)"}));
  Bytes version = read_bytes(data_file("multiplier.zkey"));
  put_u32(version, 4, 2);
  EXPECT_TRUE(names(refusal(dir.file("v2.zkey", version)), {"zkey version 2", "version 1"}));
  EXPECT_TRUE(names(refusal(data_file("multiplier.wtns")), {"not a .zkey file", "'wtns'"}));
  auto missing = read_zkey(dir.path("none.zkey"));
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().code, make_error_code(Errc::io_error));
  EXPECT_TRUE(names(missing.error().what(), {"none.zkey", "cannot open"}));
}

TEST(ZkeyFile, RefusesHeaderCountsThatDisagreeWithTheSections) {
  ScratchDir dir;
  const Bytes full = read_bytes(data_file("multiplier.zkey"));
  const std::size_t h = sections(full).at(2).data;
  Bytes vars = full;
  put_u32(vars, h + 88, 27);
  EXPECT_TRUE(names(refusal(dir.file("vars.zkey", vars)),
                    {"section 5 (A points)", "2496 bytes where nVars = 27", "2592"}));
  Bytes domain = full;
  put_u32(domain, h + 96, 17);
  EXPECT_TRUE(names(refusal(dir.file("domain.zkey", domain)),
                    {"section 2 (Groth16 header)", "domainSize 17",
                     "byte " + std::to_string(h + 96), "not a power of two"}));
  Bytes pub = full;
  put_u32(pub, h + 92, 26);
  EXPECT_TRUE(names(refusal(dir.file("pub.zkey", pub)), {"nPublic 26", "nVars 26"}));
}

TEST(ZkeyFile, RefusesCoefficientsOutsideTheKey) {
  ScratchDir dir;
  const Bytes full = read_bytes(data_file("multiplier.zkey"));
  const std::size_t rec5 = sections(full).at(4).data + 4 + 5 * 44;
  const std::string at = "record 5 (byte " + std::to_string(rec5) + ")";
  Bytes b = full;
  put_u32(b, rec5, 2);
  EXPECT_TRUE(
      names(refusal(dir.file("m.zkey", b)), {"section 4 (A and B coefficients)", at, "matrix 2"}));
  b = full;
  put_u32(b, rec5 + 4, 16);
  EXPECT_TRUE(names(refusal(dir.file("r.zkey", b)), {at, "row 16 is not below domainSize 16"}));
  b = full;
  put_u32(b, rec5 + 8, 26);
  EXPECT_TRUE(names(refusal(dir.file("s.zkey", b)), {at, "signal 26 is not below nVars 26"}));
  b = full;
  std::fill(b.begin() + rec5 + 12, b.begin() + rec5 + 44, 0xff);
  EXPECT_TRUE(names(refusal(dir.file("v.zkey", b)), {at, "value is not below r"}));
  b = full;
  put_u32(b, sections(full).at(4).data, 28);
  EXPECT_TRUE(names(refusal(dir.file("n.zkey", b)), {"nCoef = 28", "4 + 44 * 28"}));
}

// Many coefficients are read in pieces on several threads: every record
// lands in its place, and of two bad records the first in the file is named.
TEST(ZkeyFile, ReadsCoefficientsOfManyPiecesAndNamesTheFirstBadRecord) {
  ScratchDir dir;
  auto key = read_zkey(data_file("multiplier.zkey"));
  ASSERT_TRUE(key.ok()) << key.error().what();
  const std::size_t given = key->coefficients.size();
  for (std::uint32_t i = 0; key->coefficients.size() < 140000; ++i)
    key->coefficients.push_back({i % 2, i % 16, i % 26, Fr::from_u64(i)});
  const std::string path = dir.path("many.zkey");
  ASSERT_FALSE(write_zkey(path, *key));
  auto read = read_zkey(path, PointCheck::full, 4);
  ASSERT_TRUE(read.ok()) << read.error().what();
  ASSERT_EQ(read->coefficients.size(), key->coefficients.size());
  for (std::size_t i = given; i < key->coefficients.size(); i += 1009) {
    const auto &x = read->coefficients[i], &y = key->coefficients[i];
    ASSERT_TRUE(x.matrix == y.matrix && x.row == y.row && x.signal == y.signal &&
                x.value == y.value)
        << "record " << i;
  }

  Bytes b = read_bytes(path);
  const std::size_t records = sections(b).at(4).data + 4;
  put_u32(b, records + 100000 * 44, 2);
  put_u32(b, records + 70000 * 44 + 4, 16);
  auto refused = read_zkey(dir.file("bad.zkey", b), PointCheck::full, 4);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(
      names(refused.error().what(),
            {"record 70000 (byte " + std::to_string(records + 70000 * 44) + ")", "row 16"}));
}

TEST(ZkeyFile, RefusesBadPointsNamingSectionIndexAndByte) {
  ScratchDir dir;
  const Bytes full = read_bytes(data_file("multiplier.zkey"));
  const auto s = sections(full);
  const ProvingKey k = read_ok(data_file("multiplier.zkey"));
  const std::size_t a15 = s.at(5).data + 15 * 96;
  ASSERT_FALSE(k.a[15].is_infinity());

  Bytes b = full;  // y + 1: off the curve
  G1Affine p = k.a[15];
  p.y = p.y + kernels::Fq::one();
  put_point(b, a15, p);
  EXPECT_TRUE(names(
      refusal(dir.file("curve.zkey", b)),
      {"section 5 (A points): point 15 (byte " + std::to_string(a15) + ")", "not on the curve"}));

  b = full;
  put_point(b, a15, g1_outside_subgroup());
  const std::string outside = dir.file("outside.zkey", b);
  EXPECT_TRUE(names(refusal(outside), {"point 15", "on the curve but not in G1"}));
  EXPECT_TRUE(read_zkey(outside, PointCheck::trusted).ok());

  b = full;  // x all ones: not below q, refused even from a trusted file
  std::fill(b.begin() + a15, b.begin() + a15 + 48, 0xff);
  EXPECT_TRUE(
      names(refusal(dir.file("q.zkey", b), PointCheck::trusted), {"point 15", "x is not below q"}));

  b = full;
  const std::size_t b2 = s.at(7).data + 3 * 192;
  put_point(b, b2, g2_outside_subgroup());
  EXPECT_TRUE(
      names(refusal(dir.file("g2.zkey", b)),
            {"section 7 (B2 points): point 3 (byte " + std::to_string(b2) + ")", "not in G2"}));

  b = full;
  const std::size_t delta_2 = s.at(2).data + 772;
  G2Affine d = k.vk.delta_2;
  d.x.c1 = d.x.c1 + kernels::Fq::one();
  put_point(b, delta_2, d);
  EXPECT_TRUE(names(refusal(dir.file("delta.zkey", b)),
                    {"section 2 (Groth16 header): delta_2 (byte " + std::to_string(delta_2) + ")",
                     "not on the curve"}));
}

}  // namespace
}  // namespace stoker::engine::groth16
