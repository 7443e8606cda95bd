// `stoker msm` as a user runs it, over G1 and G2, on the CPU: known results
// from files, and for each kind of bad input a non-zero exit, a message
// naming the file and the element's index, and no output file left behind.
// The expected points were computed independently, not with stoker's code:
// G1's below with Python integers, G2's with @noble/curves
// (test/kernels/data/bls_vectors.txt), and the vectors in test/tools/data by
// @noble/curves through its make_msm_vectors.mjs. The tests without --cpu
// take the GPU where there is one.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<unsigned char>;

struct Outcome {
  int status = -1;
  std::string output;  // stdout and stderr together
};

// `prefix` runs in the same shell first (a ulimit).
Outcome run_stoker(const std::string& args, const std::string& prefix = "") {
  Outcome r;
  const std::string cmd = prefix + std::string(STOKER_BINARY) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  std::array<char, 4096> buf;
  for (std::size_t n; (n = fread(buf.data(), 1, buf.size(), p)) > 0;)
    r.output.append(buf.data(), n);
  const int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

Bytes from_hex(const std::string& hex) {
  Bytes out;
  for (std::size_t i = 0; i + 1 < hex.size(); i += 2)
    out.push_back(static_cast<unsigned char>(std::stoul(hex.substr(i, 2), nullptr, 16)));
  return out;
}

// Uncompressed encodings (x then y, big-endian).
const Bytes kG = from_hex(
    "17f1d3a73197d7942695638c4fa9ac0fc3688c4f9774b905a14e3a3f171bac586c55e83ff97a1aeffb3af00adb22c6"
    "bb08b3f481e3aaa0f1a09e30ed741d8ae4fcf5e095d5d00af600db18cb2c04b3edd03cc744a2888ae40caa232946c5"
    "e7e1");
const Bytes k2G = from_hex(
    "0572cbea904d67468808c8eb50a9450c9721db309128012543902d0ac358a62ae28f75bb8f1c7c42c39a8c5529bf0f"
    "4e166a9d8cabc673a322fda673779d8e3822ba3ecb8670e461f73bb9021d5fd76a4c56d9d4cd16bd1bba8688197974"
    "9d28");
// [k] G for k = 0x2a5f9c7e3d1b0a8f6e4c2b1a09f8e7d6c5b4a39281706f5e4d3c2b1a09f8e7d6.
const Bytes kKG = from_hex(
    "02b5327cf56a0c3a9e8fd37d776511e6aebc715b8bebc4ca4884df744f6de393be498df931053a72a6687caf647baf"
    "2d0bb4f2bc55105de8bac0ff974aebbbf7dc7cfb9913dead6e4604d575f08e65883478a7711871e8189d6d2752b0d3"
    "1a2d");
// (4, sqrt(4^3 + 4)): on the curve, not in G1.
const Bytes kOutsideG1 = from_hex(
    "0000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000000"
    "04"
    "0a989badd40d6212b33cffc3f3763e9bc760f988c9926b26da9dd85e928483446346b8ed00e1de5d5ea93e354abe70"
    "6c");

// The G2 generator and [2] G2, uncompressed (x.c1, x.c0, y.c1, y.c0).
const Bytes kG2 = from_hex(
    "13e02b6052719f607dacd3a088274f65596bd0d09920b61ab5da61bbdc7f5049334cf11213945d57e5ac7d055d042b"
    "7e"
    "024aa2b2f08f0a91260805272dc51051c6e47ad4fa403b02b4510b647ae3d1770bac0326a805bbefd48056c8c121bd"
    "b8"
    "0606c4a02ea734cc32acd2b02bc28b99cb3e287e85a763af267492ab572e99ab3f370d275cec1da1aaa9075ff05f79"
    "be"
    "0ce5d527727d6e118cc9cdc6da2e351aadfd9baa8cbdd3a76d429a695160d12c923ac9cc3baca289e193548608b828"
    "01");
const Bytes k2G2 = from_hex(
    "0a4edef9c1ed7f729f520e47730a124fd70662a904ba1074728114d1031e1572c6c886f6b57ec72a6178288c47c335"
    "77"
    "1638533957d540a9d2370f17cc7ed5863bc0b995b8825e0ee1ea1e1e4d00dbae81f14b0bf3611b78c952aacab827a0"
    "53"
    "0f6d4552fa65dd2638b361543f887136a43253d9c66c411697003f7a13c308f5422e1aa0a59c8967acdefd8b6e36cc"
    "f3"
    "0468fb440d82b0630aeb8dca2b5256789a66da69bf91009cbfe6bd221e47aa8ae88dece9764bf3bd999d95d71e4c98"
    "99");

// The point at infinity in a group's encoding: 96 (G1) or 192 (G2) bytes.
Bytes infinity(std::size_t bytes = 96) {
  Bytes b(bytes, 0);
  b[0] = 0x40;
  return b;
}
Bytes infinity_g2() {
  return infinity(192);
}

Bytes read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  EXPECT_TRUE(f) << path;
  return Bytes(std::istreambuf_iterator<char>(f), {});
}
std::string data(const std::string& name) {
  return std::string(STOKER_MSM_DATA_DIR) + "/" + name;
}

// On E' and outside G2 (written by make_msm_vectors.mjs).
Bytes outside_g2() {
  return read_file(data("g2_outside.bin"));
}

// Little-endian 32-byte scalars.
Bytes scalar(std::uint64_t v) {
  Bytes b(32, 0);
  for (int i = 0; i < 8; ++i) b[i] = static_cast<unsigned char>(v >> (8 * i));
  return b;
}
Bytes scalar_k() {
  const std::uint64_t limbs[4] = {0x4d3c2b1a09f8e7d6ull, 0xc5b4a39281706f5eull,
                                  0x6e4c2b1a09f8e7d6ull, 0x2a5f9c7e3d1b0a8full};
  Bytes b(32);
  for (int i = 0; i < 32; ++i) b[i] = static_cast<unsigned char>(limbs[i / 8] >> (8 * (i % 8)));
  return b;
}
// r + delta (delta -1 gives r - 1).
Bytes r_plus(int delta) {
  const std::uint64_t limbs[4] = {0xffffffff00000001ull + static_cast<std::uint64_t>(delta),
                                  0x53bda402fffe5bfeull, 0x3339d80809a1d805ull,
                                  0x73eda753299d7d48ull};
  Bytes b(32);
  for (int i = 0; i < 32; ++i) b[i] = static_cast<unsigned char>(limbs[i / 8] >> (8 * (i % 8)));
  return b;
}

Bytes concat(const std::vector<Bytes>& parts) {
  Bytes out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

class MsmCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("stoker_msm_cli_" + std::to_string(::getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const Bytes& b) {
    const std::string p = (dir_ / name).string();
    std::ofstream(p, std::ios::binary).write(reinterpret_cast<const char*>(b.data()), b.size());
    return p;
  }
  std::string out() const { return (dir_ / "out.bin").string(); }
  Bytes read_out() const { return read_file(out()); }
  Outcome msm(const Bytes& points, const Bytes& scalars, const std::string& extra = "--cpu") {
    const std::string p = write("points.bin", points), s = write("scalars.bin", scalars);
    return run_stoker("msm --points " + p + " --scalars " + s + " --out " + out() + " " + extra);
  }
  Outcome msm_g2(const Bytes& points, const Bytes& scalars, const std::string& extra = "--cpu") {
    return msm(points, scalars, "--group g2 " + extra);
  }
  // A failure: non-zero exit, every piece of `says` in the message, no output.
  void expect_refused(const Outcome& r, const std::vector<std::string>& says) {
    EXPECT_NE(r.status, 0) << r.output;
    for (const auto& s : says) EXPECT_NE(r.output.find(s), std::string::npos) << r.output;
    EXPECT_FALSE(fs::exists(out())) << "an output file was left behind";
  }

  fs::path dir_;
};

TEST_F(MsmCli, WritesKnownSums) {
  Outcome r = msm(kG, scalar_k());
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(read_out(), kKG);

  // 1 G + 1 G + 0 (2G) + 5 infinity = 2G.
  r = msm(concat({kG, kG, k2G, infinity()}), concat({scalar(1), scalar(1), scalar(0), scalar(5)}));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(read_out(), k2G);

  // (r - 1) G + G = infinity.
  r = msm(concat({kG, kG}), concat({r_plus(-1), scalar(1)}));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(read_out(), infinity());
}

TEST_F(MsmCli, EmptyFilesGiveInfinity) {
  const Outcome r = msm({}, {});
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(read_out(), infinity());
}

TEST_F(MsmCli, RefusesSizesThatAreNotWholeElements) {
  Bytes short_points = concat({kG, kG});
  short_points.pop_back();
  expect_refused(msm(short_points, concat({scalar(1), scalar(2)})),
                 {"points.bin", "not a multiple of 96"});
  Bytes long_scalars = concat({scalar(1), scalar(2)});
  long_scalars.push_back(0);
  expect_refused(msm(concat({kG, kG}), long_scalars), {"scalars.bin", "not a multiple of 32"});
}

TEST_F(MsmCli, RefusesDifferentCounts) {
  expect_refused(msm(concat({kG, kG}), scalar(1)), {"2 points", "1 scalar"});
}

TEST_F(MsmCli, RefusesScalarNotBelowR) {
  expect_refused(msm(concat({kG, kG, kG}), concat({scalar(1), scalar(2), r_plus(0)})),
                 {"scalars.bin", "scalar 2", "not below r"});
  expect_refused(msm(concat({kG, kG}), concat({r_plus(1), scalar(2)})), {"scalar 0"});
}

TEST_F(MsmCli, RefusesBadFlagsNamingThePoint) {
  const Bytes s = concat({scalar(1), scalar(2), scalar(3)});
  Bytes bad = kG;
  bad[0] |= 0x80;
  expect_refused(msm(concat({kG, kG, bad}), s), {"points.bin", "point 2", "compressed"});
  bad = kG;
  bad[0] |= 0x20;
  expect_refused(msm(concat({kG, bad, kG}), s), {"point 1", "sign"});
  bad = infinity();
  bad[50] = 1;
  expect_refused(msm(concat({bad, kG, kG}), s), {"point 0", "infinity"});
  bad = kG;
  bad[0] = 0x1f;  // x >= q
  expect_refused(msm(concat({kG, bad, kG}), s), {"point 1", "not below"});
}

TEST_F(MsmCli, RefusesPointsOffTheCurveOrOutsideG1) {
  const Bytes s = concat({scalar(1), scalar(2), scalar(3)});
  Bytes off = kG;
  off[95] ^= 1;
  expect_refused(msm(concat({kG, kG, off}), s), {"points.bin", "point 2", "not on the curve"});
  expect_refused(msm(concat({kG, Bytes(96, 0), kG}), s), {"point 1", "not on the curve"});
  expect_refused(msm(concat({kG, kOutsideG1, kG}), s), {"point 1", "subgroup"});
}

// A file that is not points at all is refused at its first points, before
// memory for the whole file is taken: under a 1 GiB address-space limit a
// 3 GiB file of zeros (and its 1 GiB of scalars) still gets the point's
// reason, not "does not fit in host memory". Sanitizers reserve terabytes
// of address space, so there the limit cannot be set.
TEST_F(MsmCli, AFileOfZerosIsRefusedAtItsFirstPointBeforeTheRestIsRead) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "an address-space limit does not work under a sanitizer";
#endif
  const std::string p = (dir_ / "zeros.g1").string(), sc = (dir_ / "zeros.fr").string();
  std::ofstream(p).close();
  std::ofstream(sc).close();
  constexpr std::uintmax_t kPoints = std::uintmax_t{32} << 20;  // 3 GiB, sparse on disk
  fs::resize_file(p, 96 * kPoints);
  fs::resize_file(sc, 32 * kPoints);
  const auto r = run_stoker("msm --cpu --points " + p + " --scalars " + sc + " --out " + out(),
                            "ulimit -v 1048576; ");
  expect_refused(r, {"zeros.g1", "point 0", "not on the curve"});
}

TEST_F(MsmCli, TrustPointsSkipsTheCurveChecksButNotTheFormat) {
  Outcome r = msm(concat({kOutsideG1}), scalar(0), "--cpu --trust-points");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(read_out(), infinity());
  fs::remove(out());
  Bytes bad = kG;
  bad[0] |= 0x80;
  expect_refused(msm(bad, scalar(1), "--cpu --trust-points"), {"point 0", "compressed"});
}

TEST_F(MsmCli, RefusesBadCommandLines) {
  Outcome r = msm(kG, scalar(1), "--cpu --device 0");
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_FALSE(fs::exists(out()));
  r = run_stoker("msm --points " + write("p.bin", kG) + " --out " + out());
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("--scalars"), std::string::npos) << r.output;
  r = run_stoker("msm --points " + write("p.bin", kG) + " --scalars " + write("s.bin", scalar(1)) +
                 " --out " + dir_.string());
  EXPECT_NE(r.status, 0) << r.output;
  EXPECT_NE(r.output.find("directory"), std::string::npos) << r.output;
  r = run_stoker("msm --help");
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.output.find("--trust-points"), std::string::npos);
  EXPECT_NE(r.output.find("--group g1|g2"), std::string::npos);
}

TEST_F(MsmCli, RefusesAGroupOtherThanG1OrG2NamingIt) {
  for (const char* group : {"g3", "G2", "gt"}) {
    const Outcome r = msm(kG, scalar(1), std::string("--cpu --group ") + group);
    EXPECT_EQ(r.status, 2) << r.output;
    EXPECT_NE(r.output.find(std::string("'") + group + "' is not g1 or g2"), std::string::npos)
        << r.output;
    EXPECT_FALSE(fs::exists(out()));
  }
}

// The G1 tests leave --group out: G1 is the default. A file of G1
// points read as G2 fails on its size.
TEST_F(MsmCli, GroupG1IsTheDefaultAndItsPointsAreNotG2s) {
  Outcome r = msm(kG, scalar_k(), "--cpu --group g1");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(read_out(), kKG);
  fs::remove(out());
  // Three G1 points are 288 bytes.
  expect_refused(msm_g2(concat({kG, kG, kG}), concat({scalar(1), scalar(1), scalar(1)})),
                 {"points.bin", "not a multiple of 192"});
}

// Vectors of @noble/curves: generator multiples, a repeated point and the
// point at infinity, against scalars 0, 1, r - 1 and random ones.
TEST_F(MsmCli, SumsEqualNobleCurvesVectors) {
  for (const char* group : {"g1", "g2"})
    for (const char* where : {"--cpu", ""}) {
      const std::string g = group;
      const Outcome r =
          run_stoker("msm --group " + g + " " + where + " --points " + data(g + "_points.bin") +
                     " --scalars " + data(g + "_scalars.bin") + " --out " + out());
      ASSERT_EQ(r.status, 0) << g << " " << where << ": " << r.output;
      EXPECT_EQ(read_out(), read_file(data(g + "_sum.bin"))) << g << " " << where;
      fs::remove(out());
    }
}

TEST_F(MsmCli, G2WritesKnownSums) {
  Outcome r = msm_g2(kG2, scalar(1));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(read_out(), kG2);

  // 1 G + 1 G + 0 (2G) + 5 infinity = 2G.
  r = msm_g2(concat({kG2, kG2, k2G2, infinity_g2()}),
             concat({scalar(1), scalar(1), scalar(0), scalar(5)}));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(read_out(), k2G2);

  // (r - 1) G + G = infinity.
  r = msm_g2(concat({kG2, kG2}), concat({r_plus(-1), scalar(1)}));
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(read_out(), infinity_g2());
}

TEST_F(MsmCli, G2EmptyFilesGiveInfinity) {
  const Outcome r = msm_g2({}, {});
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(read_out(), infinity_g2());
}

TEST_F(MsmCli, G2RefusesSizesThatAreNotWholeElements) {
  Bytes short_points = concat({kG2, kG2});
  short_points.pop_back();
  expect_refused(msm_g2(short_points, concat({scalar(1), scalar(2)})),
                 {"points.bin", "size is 383 bytes", "not a multiple of 192", "G2"});
  Bytes long_scalars = concat({scalar(1), scalar(2)});
  long_scalars.push_back(0);
  expect_refused(msm_g2(concat({kG2, kG2}), long_scalars), {"scalars.bin", "not a multiple of 32"});
}

TEST_F(MsmCli, G2RefusesDifferentCounts) {
  expect_refused(msm_g2(concat({kG2, kG2}), scalar(1)), {"2 points", "1 scalar"});
  expect_refused(msm_g2(kG2, concat({scalar(1), scalar(1), scalar(1)})), {"1 point ", "3 scalars"});
}

TEST_F(MsmCli, G2RefusesScalarNotBelowR) {
  expect_refused(msm_g2(concat({kG2, kG2}), concat({scalar(1), r_plus(0)})),
                 {"scalars.bin", "scalar 1", "not below r"});
}

TEST_F(MsmCli, G2RefusesBadFlagsNamingThePoint) {
  const Bytes s = concat({scalar(1), scalar(2), scalar(3)});
  Bytes bad = kG2;
  bad[0] |= 0x80;
  expect_refused(msm_g2(concat({kG2, kG2, bad}), s), {"points.bin", "point 2", "compressed"});
  bad = kG2;
  bad[0] |= 0x20;
  expect_refused(msm_g2(concat({kG2, bad, kG2}), s), {"point 1", "sign"});
  bad = infinity_g2();
  bad[150] = 1;
  expect_refused(msm_g2(concat({bad, kG2, kG2}), s), {"point 0", "infinity"});
  bad = kG2;
  bad[0] = 0x1f;  // x.c1 >= q
  expect_refused(msm_g2(concat({kG2, bad, kG2}), s), {"point 1", "x.c1", "not below"});
  bad = kG2;
  bad[144] = 0x1f;  // y.c0 >= q
  expect_refused(msm_g2(concat({kG2, kG2, bad}), s), {"point 2", "y.c0", "not below"});
}

TEST_F(MsmCli, G2RefusesPointsOffTheCurveOrOutsideG2) {
  const Bytes s = concat({scalar(1), scalar(2), scalar(3)});
  Bytes off = kG2;
  off[191] ^= 1;
  expect_refused(msm_g2(concat({kG2, kG2, off}), s), {"points.bin", "point 2", "not on the curve"});
  expect_refused(msm_g2(concat({kG2, Bytes(192, 0), kG2}), s), {"point 1", "not on the curve"});
  expect_refused(msm_g2(concat({kG2, outside_g2(), kG2}), s), {"point 1", "subgroup G2"});
}

// G2 has no GPU point check: where a GPU takes the MSM, the points are
// checked on the CPU before they go there, and a bad one is still named.
TEST_F(MsmCli, G2PointsAreCheckedWithoutCpuToo) {
  const Bytes s = concat({scalar(1), scalar(2), scalar(3)});
  expect_refused(msm_g2(concat({kG2, kG2, outside_g2()}), s, ""), {"point 2", "subgroup G2"});
  // Beyond the first 4096 points, which are checked before the rest is read.
  std::vector<Bytes> points(4100, kG2), scalars(4100, scalar(1));
  points[4097] = outside_g2();
  expect_refused(msm_g2(concat(points), concat(scalars), ""), {"point 4097", "subgroup G2"});
}

TEST_F(MsmCli, G2AFileOfZerosIsRefusedAtItsFirstPointBeforeTheRestIsRead) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  GTEST_SKIP() << "an address-space limit does not work under a sanitizer";
#endif
  const std::string p = (dir_ / "zeros.g2").string(), sc = (dir_ / "zeros.fr").string();
  std::ofstream(p).close();
  std::ofstream(sc).close();
  constexpr std::uintmax_t kPoints = std::uintmax_t{16} << 20;  // 3 GiB, sparse on disk
  fs::resize_file(p, 192 * kPoints);
  fs::resize_file(sc, 32 * kPoints);
  const auto r =
      run_stoker("msm --group g2 --cpu --points " + p + " --scalars " + sc + " --out " + out(),
                 "ulimit -v 1048576; ");
  expect_refused(r, {"zeros.g2", "point 0", "not on the curve"});
}

// Decoding a G2 point checks that it is on E', so --trust-points leaves out
// the subgroup check alone.
TEST_F(MsmCli, G2TrustPointsSkipsTheSubgroupCheckButNotTheCurveOrTheFormat) {
  Outcome r = msm_g2(outside_g2(), scalar(1), "--cpu --trust-points");
  ASSERT_EQ(r.status, 0) << r.output;
  EXPECT_EQ(read_out(), outside_g2());
  fs::remove(out());
  Bytes off = kG2;
  off[191] ^= 1;
  expect_refused(msm_g2(off, scalar(1), "--cpu --trust-points"), {"point 0", "not on the curve"});
  Bytes bad = kG2;
  bad[0] |= 0x80;
  expect_refused(msm_g2(bad, scalar(1), "--cpu --trust-points"), {"point 0", "compressed"});
}

TEST_F(MsmCli, G2RefusesAnOutputThatIsAnInput) {
  const std::string p = write("points.bin", kG2), s = write("scalars.bin", scalar(1));
  const Outcome r =
      run_stoker("msm --group g2 --cpu --points " + p + " --scalars " + s + " --out " + p);
  EXPECT_EQ(r.status, 2) << r.output;
  EXPECT_NE(r.output.find("is the same file as --points"), std::string::npos) << r.output;
  EXPECT_EQ(read_file(p), kG2);
}

}  // namespace
