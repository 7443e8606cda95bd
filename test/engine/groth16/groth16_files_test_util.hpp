// What the Groth16 file tests share: the committed snarkjs / circom files,
// a scratch folder, byte patches, an independent reading of the
// container's section table (to aim a patch), points made to order, and a
// check that a message names what it should.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/g1.cuh"
#include "kernels/g1_encoding.hpp"
#include "kernels/g2.cuh"
#include "kernels/g2_encoding.hpp"

namespace stoker::engine::groth16::test {

using Bytes = std::vector<unsigned char>;

inline std::string data_file(std::string_view name) {
  return std::string(STOKER_GROTH16_DATA_DIR) + "/" + std::string(name);
}

inline Bytes read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return Bytes(std::istreambuf_iterator<char>(in), {});
}

inline std::string read_text(const std::string& path) {
  const Bytes b = read_bytes(path);
  return std::string(b.begin(), b.end());
}

inline void write_bytes(const std::string& path, const Bytes& b) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
}

// A folder of its own per test, removed with everything in it.
class ScratchDir {
 public:
  ScratchDir() {
    const auto* t = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = std::filesystem::temp_directory_path() /
           ("stoker_groth16_" + std::string(t->test_suite_name()) + "_" + t->name() + "_" +
            std::to_string(::getpid()));
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  std::string path(std::string_view name) const { return (dir_ / name).string(); }
  // `bytes` written to a file of this folder; its path.
  std::string file(std::string_view name, const Bytes& bytes) const {
    write_bytes(path(name), bytes);
    return path(name);
  }

 private:
  std::filesystem::path dir_;
};

inline void put_u32(Bytes& b, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) b.at(at + i) = static_cast<unsigned char>(v >> (8 * i));
}
inline std::uint32_t get_u32(const Bytes& b, std::size_t at) {
  std::uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = v << 8 | b.at(at + i);
  return v;
}
inline std::uint64_t get_u64(const Bytes& b, std::size_t at) {
  return std::uint64_t{get_u32(b, at)} | std::uint64_t{get_u32(b, at + 4)} << 32;
}

// Where a section's data lies in a .zkey / .wtns file, and where its
// 12-byte header starts; read here without the library.
struct SectionAt {
  std::size_t header, data, size;
};
inline std::map<std::uint32_t, SectionAt> sections(const Bytes& b) {
  std::map<std::uint32_t, SectionAt> s;
  std::size_t pos = 12;
  for (std::uint32_t k = 0; k < get_u32(b, 8); ++k) {
    const std::size_t size = static_cast<std::size_t>(get_u64(b, pos + 4));
    s[get_u32(b, pos)] = {pos, pos + 12, size};
    pos += 12 + size;
  }
  return s;
}

// The raw words of a point, as a zkey holds it.
template <typename Point>
void put_point(Bytes& b, std::size_t at, const Point& p) {
  std::memcpy(b.data() + at, &p, sizeof p);
}

inline kernels::G1Affine g1_times(std::uint64_t k) {
  const std::uint64_t s[4] = {k, 0, 0, 0};
  return kernels::to_affine(kernels::scalar_mul(kernels::G1Affine::generator(), s));
}
inline kernels::G2Affine g2_times(std::uint64_t k) {
  const std::uint64_t s[4] = {k, 0, 0, 0};
  return kernels::to_affine(kernels::scalar_mul(kernels::G2Affine::generator(), s));
}

// Points on the curves outside the order-r subgroups (almost every point
// of E(Fq) and E'(Fq2) is): the first x = 1, 2, ... that decompresses.
inline kernels::G1Affine g1_outside_subgroup() {
  for (std::uint8_t x = 1;; ++x) {
    unsigned char b[kernels::kG1CompressedBytes] = {0x80};
    b[kernels::kG1CompressedBytes - 1] = x;
    kernels::G1Affine p;
    if (!kernels::decode_g1_compressed(b, p, kernels::SubgroupCheck::skip) &&
        kernels::check_g1(p) == kernels::G1Error::not_in_subgroup)
      return p;
  }
}
inline kernels::G2Affine g2_outside_subgroup() {
  for (std::uint8_t x = 1;; ++x) {
    unsigned char b[kernels::kG2CompressedBytes] = {0x80};
    b[kernels::kG2CompressedBytes - 1] = x;  // x = x + 0 u
    kernels::G2Affine p;
    if (!kernels::decode_g2_compressed(b, p, kernels::SubgroupCheck::skip) &&
        kernels::check_g2(p) == kernels::G2Error::not_in_subgroup)
      return p;
  }
}

// Whether `message` holds every part, reported with the message.
inline ::testing::AssertionResult names(const std::string& message,
                                        std::initializer_list<std::string_view> parts) {
  for (std::string_view p : parts)
    if (message.find(p) == std::string::npos)
      return ::testing::AssertionFailure() << "'" << p << "' is not in: " << message;
  return ::testing::AssertionSuccess() << message;
}

}  // namespace stoker::engine::groth16::test
