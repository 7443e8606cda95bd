// engine/groth16/wtns_file.hpp against the witnesses `snarkjs wtns
// calculate` made with circom's wasm witness generators (data/).
#include "engine/groth16/wtns_file.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>

#include "engine/groth16/snarkjs_json.hpp"
#include "groth16_files_test_util.hpp"

namespace stoker::engine::groth16 {
namespace {

using kernels::Fr;
using namespace test;

WitnessValues read_ok(const std::string& path) {
  auto w = read_wtns(path);
  EXPECT_TRUE(w.ok()) << w.error().what();
  return w.ok() ? std::move(*w) : WitnessValues{};
}

std::string refusal(const std::string& path) {
  auto w = read_wtns(path);
  EXPECT_FALSE(w.ok()) << path << " was read";
  return w.ok() ? std::string{} : w.error().what();
}

TEST(WtnsFile, ReadsTheMultipliersWiresInCircomsOrder) {
  const WitnessValues w = read_ok(data_file("multiplier.wtns"));
  ASSERT_EQ(w.size(), 26u);
  EXPECT_EQ(w[0], Fr::one());
  const std::uint64_t y[12] = {2, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37, 41};
  Fr product = Fr::from_u64(3);
  for (int i = 0; i < 12; ++i) {
    EXPECT_EQ(w[3 + i], Fr::from_u64(y[i]));
    product *= Fr::from_u64(y[i]);
    if (i < 11) {
      EXPECT_EQ(w[15 + i], product) << "acc[" << i + 1 << "]";
    }
  }
  EXPECT_EQ(w[1], product);          // the public output first
  EXPECT_EQ(w[2], Fr::from_u64(3));  // then the public input x
}

TEST(WtnsFile, PublicWiresAreSnarkjsPublicJson) {
  for (const char* c : {"multiplier", "bits", "nopublic"}) {
    const WitnessValues w = read_ok(data_file(std::string(c) + ".wtns"));
    auto pub = read_public_json(data_file(std::string(c) + "_public.json"));
    ASSERT_TRUE(pub.ok()) << pub.error().what();
    ASSERT_LE(pub->size() + 1, w.size());
    for (std::size_t i = 0; i < pub->size(); ++i) EXPECT_EQ((*pub)[i], w[1 + i]) << c << " " << i;
  }
}

TEST(WtnsFile, BitsWitnessIsMostlyZerosAndOnes) {
  const WitnessValues w = read_ok(data_file("bits.wtns"));
  ASSERT_EQ(w.size(), 100u);
  const std::uint64_t x = 3735928559, y = 4042322160;
  EXPECT_EQ(w[1], Fr::from_u64(x & y));
  EXPECT_EQ(w[2], Fr::from_u64(y));
  std::size_t bits = 0;
  for (const Fr& v : w) bits += v == Fr::zero() || v == Fr::one();
  EXPECT_EQ(bits, 97u);  // w[0] = 1 and the 96 bits: all but out, y and x
}

TEST(WtnsFile, WrittenWitnessIsCircomsBytes) {
  ScratchDir dir;
  for (const char* c : {"multiplier", "bits", "nopublic"}) {
    const std::string original = data_file(std::string(c) + ".wtns");
    const WitnessValues w = read_ok(original);
    const std::string copy = dir.path(std::string(c) + ".wtns");
    const Error e = write_wtns(copy, w);
    ASSERT_FALSE(e) << e.what();
    EXPECT_EQ(read_bytes(copy), read_bytes(original)) << c;
  }
}

TEST(WtnsFile, RefusesAnotherFieldVersionOrValueWidth) {
  ScratchDir dir;
  EXPECT_TRUE(
      names(refusal(data_file("multiplier_bn128.wtns")),
            {"section 1 (header)",
             "21888242871839275222246405745257275088548364400416034343698204186575808495617 "
             "(bn128's r)",
             "not BLS12-381's scalar field"}));
  const Bytes full = read_bytes(data_file("multiplier.wtns"));
  Bytes b = full;
  put_u32(b, 4, 1);
  EXPECT_TRUE(names(refusal(dir.file("v1.wtns", b)), {"wtns version 1", "version 2"}));
  b = full;
  put_u32(b, sections(full).at(1).data, 48);
  EXPECT_TRUE(names(refusal(dir.file("n8.wtns", b)), {"section 1 (header)", "n8 = 48"}));
  EXPECT_TRUE(names(refusal(data_file("multiplier.zkey")), {"not a .wtns file", "'zkey'"}));
}

TEST(WtnsFile, RefusesAValueNotBelowRNamingItsIndex) {
  ScratchDir dir;
  Bytes b = read_bytes(data_file("multiplier.wtns"));
  const std::size_t v5 = sections(b).at(2).data + 5 * 32;
  std::fill(b.begin() + v5, b.begin() + v5 + 32, 0xff);
  EXPECT_TRUE(names(
      refusal(dir.file("r.wtns", b)),
      {"section 2 (witness values)", "value 5 (byte " + std::to_string(v5) + ")", "not below r"}));
}

// Witnesses of millions of values are read in pieces on every thread:
// every piece lands in its place, and of two bad values in different
// pieces the first is named, whichever thread met it.
TEST(WtnsFile, ReadsWitnessesOfManyPiecesAndNamesTheFirstBadValue) {
  ScratchDir dir;
  constexpr std::size_t kValues = 3 * 65536 + 123;  // pieces of 65536 values
  std::vector<Fr> w(kValues);
  w[0] = Fr::one();
  for (std::size_t i = 1; i < kValues; ++i) w[i] = Fr::from_u64(i * 2654435761u);
  const std::string path = dir.path("many.wtns");
  ASSERT_FALSE(write_wtns(path, w));
  for (unsigned threads : {1u, 4u}) {
    auto read = read_wtns(path, threads);
    ASSERT_TRUE(read.ok()) << read.error().what();
    ASSERT_EQ(read->size(), kValues);
    EXPECT_TRUE(std::ranges::equal(*read, w)) << threads << " threads";
  }
  Bytes b = read_bytes(path);
  const std::size_t values_at = sections(b).at(2).data;
  for (std::size_t bad : {std::size_t{2} * 65536 + 7, std::size_t{65536} + 3})
    std::fill(b.begin() + values_at + 32 * bad, b.begin() + values_at + 32 * bad + 32, 0xff);
  const std::string bad_path = dir.file("bad.wtns", b);
  for (unsigned threads : {1u, 4u}) {
    auto read = read_wtns(bad_path, threads);
    ASSERT_FALSE(read.ok());
    EXPECT_TRUE(
        names(read.error().what(),
              {"value 65539 (byte " + std::to_string(values_at + 32 * 65539) + ")", "not below r"}))
        << read.error().what();
  }
}

TEST(WtnsFile, RefusesTruncationAndCountsThatDisagree) {
  ScratchDir dir;
  const Bytes full = read_bytes(data_file("multiplier.wtns"));
  const auto s = sections(full);
  Bytes b(full.begin(), full.end() - 32);
  EXPECT_TRUE(names(refusal(dir.file("cut.wtns", b)),
                    {"section 2 (witness values) is truncated", "32 bytes missing"}));
  b = full;
  put_u32(b, s.at(1).data + 36, 27);
  EXPECT_TRUE(names(refusal(dir.file("n.wtns", b)),
                    {"section 2 (witness values)", "832 bytes where nWitness = 27", "864"}));
  b = full;
  put_u32(b, s.at(2).header, 3);
  EXPECT_TRUE(
      names(refusal(dir.file("missing.wtns", b)), {"section 2 (witness values) is missing"}));
}

// A witness inside a larger file or shared-memory object, as a client of
// the daemon hands one over: read in place, the same values as the file.
TEST(WtnsFile, ReadsAWitnessFromAWindowOfALargerFile) {
  ScratchDir dir;
  const Bytes wtns = read_bytes(data_file("multiplier.wtns"));
  Bytes padded(1000, 0x5a);
  padded.insert(padded.end(), wtns.begin(), wtns.end());
  padded.resize(padded.size() + 777, 0x5a);
  const std::string path = dir.file("padded.bin", padded);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);
  auto w = read_wtns(FileWindow{fd, "shm:/w bytes 1000..", 1000, wtns.size()});
  ASSERT_TRUE(w.ok()) << w.error().what();
  EXPECT_EQ(*w, read_ok(data_file("multiplier.wtns")));
  // One byte short of the witness: the container's own check names it.
  auto cut = read_wtns(FileWindow{fd, "shm:/w", 1000, wtns.size() - 1});
  ASSERT_FALSE(cut.ok());
  EXPECT_TRUE(names(cut.error().what(), {"shm:/w", "truncated"})) << cut.error().what();
  // A window past the end of the object.
  auto past = read_wtns(FileWindow{fd, "shm:/w", 1000, padded.size()});
  ASSERT_FALSE(past.ok());
  EXPECT_TRUE(names(past.error().what(),
                    {"shm:/w", "run past its " + std::to_string(padded.size()) + " bytes"}))
      << past.error().what();
  ::close(fd);
}

}  // namespace
}  // namespace stoker::engine::groth16
