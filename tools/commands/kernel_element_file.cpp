// Files of field elements; see kernel_element_file.hpp.
#include "tools/commands/kernel_element_file.hpp"

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <new>

#include "common/host_memory_limit.hpp"
#include "kernels/ntt.hpp"
#include "tools/cli/input_file.hpp"

namespace stoker::tools::kernel_cli {

using kernels::Fr;

namespace {

// Elements per piece read or written: 4 MiB of file bytes.
constexpr std::size_t kPieceElements = std::size_t{1} << 17;

}  // namespace

std::optional<std::size_t> element_count(const std::string& path, std::optional<unsigned>& log_n,
                                         std::string& error) {
  const auto sized = input_size(path);
  if (!sized) {
    error = sized.error().what();
    return std::nullopt;
  }
  const std::uint64_t size = *sized;
  if (log_n) {
    const std::uint64_t want = std::uint64_t{32} << *log_n;
    if (size != want) {
      error = path + ": size is " + std::to_string(size) + " bytes, expected 32 * 2^" +
              std::to_string(*log_n) + " = " + std::to_string(want);
      return std::nullopt;
    }
  } else {
    const std::uint64_t n = size / 32;
    if (size % 32 || n < 2 || (n & (n - 1)) || n > (std::uint64_t{1} << kernels::kMaxLogN)) {
      error = path + ": size is " + std::to_string(size) +
              " bytes, not 32 * 2^K for some K in 1.." + std::to_string(kernels::kMaxLogN);
      return std::nullopt;
    }
    unsigned k = 0;
    while ((std::uint64_t{1} << k) < n) ++k;
    log_n = k;
  }
  return std::size_t{1} << *log_n;
}

bool read_elements(const std::string& path, std::span<Fr> out, std::string& error) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    error = path + ": cannot open";
    return false;
  }
  std::vector<unsigned char> bytes(std::min(out.size(), kPieceElements) * 32);
  for (std::size_t first = 0; first < out.size(); first += kPieceElements) {
    const std::size_t count = std::min(kPieceElements, out.size() - first);
    if (!f.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(count * 32))) {
      error = path + ": read failed at element " + std::to_string(first);
      return false;
    }
    for (std::size_t i = 0; i < count; ++i)
      if (!Fr::from_bytes(&bytes[32 * i], out[first + i])) {
        error = path + ": element " + std::to_string(first + i) + " is not below r (not canonical)";
        return false;
      }
  }
  return true;
}

bool write_elements(const OutputFile& out, const std::vector<Fr>& v, std::string& error) {
  std::string bytes;
  try {
    bytes.resize(v.size() * kWriteBytesPerElement);
  } catch (const std::bad_alloc&) {
    error = common::host_memory_refused(out.path() + ": the file's bytes",
                                        v.size() * kWriteBytesPerElement)
                .what();
    return false;
  }
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i].to_bytes(reinterpret_cast<unsigned char*>(&bytes[32 * i]));
  if (auto e = out.write(bytes)) {
    error = e.what();
    return false;
  }
  return true;
}

}  // namespace stoker::tools::kernel_cli
