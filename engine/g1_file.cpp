// G1 point files; see g1_file.hpp.
#include "engine/g1_file.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <vector>

#include "kernels/detail/parallel.hpp"
#include "kernels/g1_encoding.hpp"

namespace stoker::engine {
namespace {

using kernels::G1Affine;
using kernels::kG1EncodedBytes;

// Points read and decoded at a time: 96 MiB of file.
constexpr std::size_t kChunkPoints = std::size_t{1} << 20;

}  // namespace

Result<std::size_t> g1_file_points(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    return Error{Errc::io_error, path + ": cannot read (is a directory)"};
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) return Error{Errc::io_error, path + ": cannot read (" + ec.message() + ")"};
  if (size % kG1EncodedBytes)
    return Error{Errc::invalid_argument,
                 path + ": size is " + std::to_string(size) + " bytes, not a multiple of " +
                     std::to_string(kG1EncodedBytes) + " (96-byte G1 points)"};
  return static_cast<std::size_t>(size / kG1EncodedBytes);
}

Error read_g1_file(const std::string& path, std::span<G1Affine> out, unsigned threads) {
  return read_g1_file(path, 0, out, threads);
}

Error read_g1_file(const std::string& path, std::size_t first, std::span<G1Affine> out,
                   unsigned threads) {
  try {
    auto total = g1_file_points(path);
    if (!total) return std::move(total).error();
    if (first > *total || out.size() > *total - first)
      return Error{Errc::invalid_argument, path + ": holds " + std::to_string(*total) +
                                               " points, not the " + std::to_string(out.size()) +
                                               " asked for from point " + std::to_string(first)};
    if (out.empty()) return {};
    std::ifstream f(path, std::ios::binary);
    if (!f) return Error{Errc::io_error, path + ": cannot open"};
    if (!f.seekg(static_cast<std::streamoff>(first * kG1EncodedBytes)))
      return Error{Errc::io_error, path + ": cannot seek to point " + std::to_string(first)};

    const unsigned t = kernels::detail::resolve_threads(threads);
    std::vector<unsigned char> buf(std::min(out.size(), kChunkPoints) * kG1EncodedBytes);
    // Per thread: the first bad point of its range and why.
    std::vector<std::size_t> bad(t);
    std::vector<std::error_code> why(t);
    for (std::size_t done = 0; done < out.size(); done += kChunkPoints) {
      const std::size_t count = std::min(kChunkPoints, out.size() - done);
      if (!f.read(reinterpret_cast<char*>(buf.data()),
                  static_cast<std::streamsize>(count * kG1EncodedBytes)))
        return Error{Errc::io_error,
                     path + ": read failed at point " + std::to_string(first + done)};
      std::fill(bad.begin(), bad.end(), count);
      kernels::detail::parallel_for(
          count, t,
          [&](std::size_t thread, std::size_t b, std::size_t e) {
            for (std::size_t i = b; i < e; ++i)
              if (auto ec = kernels::decode_g1(&buf[i * kG1EncodedBytes], out[done + i])) {
                bad[thread] = i;
                why[thread] = ec;
                return;
              }
          },
          /*grain=*/4096);
      const auto worst = std::min_element(bad.begin(), bad.end());
      if (*worst < count)
        return Error{why[static_cast<std::size_t>(worst - bad.begin())],
                     path + ": point " + std::to_string(first + done + *worst) + ": " +
                         why[static_cast<std::size_t>(worst - bad.begin())].message()};
    }
    return {};
  } catch (const std::bad_alloc&) {
    return Error{Errc::out_of_host_memory, path + ": no memory for the read buffer"};
  }
}

}  // namespace stoker::engine
