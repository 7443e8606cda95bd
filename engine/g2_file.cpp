// G2 point files; see g2_file.hpp.
#include "engine/g2_file.hpp"

#include "engine/detail/point_file_reader.hpp"
#include "kernels/g2_encoding.hpp"

namespace stoker::engine {
namespace {

constexpr detail::PointFileFormat kFormat{kernels::kG2EncodedBytes, "192-byte G2 points"};

}  // namespace

Result<std::size_t> g2_file_points(const std::string& path) {
  return detail::point_file_points(path, kFormat);
}

Error read_g2_file(const std::string& path, std::span<kernels::G2Affine> out, unsigned threads) {
  return read_g2_file(path, 0, out, threads);
}

Error read_g2_file(const std::string& path, std::size_t first, std::span<kernels::G2Affine> out,
                   unsigned threads) {
  const auto decode = [out](const unsigned char* bytes, std::size_t i) {
    return kernels::decode_g2(bytes, out[i], kernels::SubgroupCheck::skip);
  };
  return detail::read_point_file(path, kFormat, first, out.size(), decode, threads);
}

}  // namespace stoker::engine
