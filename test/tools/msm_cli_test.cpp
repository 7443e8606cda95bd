// `stoker msm` as a user runs it, on the CPU: known results from files, and
// for each kind of bad input a non-zero exit, a message naming the file and
// the element's index, and no output file left behind. The expected points
// were computed independently (Python integers), not with stoker's code.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
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

Bytes infinity() {
  Bytes b(96, 0);
  b[0] = 0x40;
  return b;
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
  Bytes read_out() const {
    std::ifstream f(out(), std::ios::binary);
    return Bytes(std::istreambuf_iterator<char>(f), {});
  }
  Outcome msm(const Bytes& points, const Bytes& scalars, const std::string& extra = "--cpu") {
    const std::string p = write("points.bin", points), s = write("scalars.bin", scalars);
    return run_stoker("msm --points " + p + " --scalars " + s + " --out " + out() + " " + extra);
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
}

}  // namespace
