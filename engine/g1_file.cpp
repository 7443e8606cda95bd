// G1 point files; see g1_file.hpp.
#include "engine/g1_file.hpp"

#include "engine/detail/point_file_reader.hpp"
#include "kernels/g1_encoding.hpp"

namespace stoker::engine {
namespace {

constexpr detail::PointFileFormat kFormat{kernels::kG1EncodedBytes, "96-byte G1 points"};

}  // namespace

Result<std::size_t> g1_file_points(const std::string& path) {
  return detail::point_file_points(path, kFormat);
}

Error read_g1_file(const std::string& path, std::span<kernels::G1Affine> out, unsigned threads) {
  return read_g1_file(path, 0, out, threads);
}

Error read_g1_file(const std::string& path, std::size_t first, std::span<kernels::G1Affine> out,
                   unsigned threads) {
  const auto decode = [out](const unsigned char* bytes, std::size_t i) {
    return kernels::decode_g1(bytes, out[i]);
  };
  return detail::read_point_file(path, kFormat, first, out.size(), decode, threads);
}

}  // namespace stoker::engine
