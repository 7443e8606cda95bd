// Files of field elements; see kernel_element_file.hpp.
#include "tools/commands/kernel_element_file.hpp"

#include <cstdint>
#include <fstream>

#include "kernels/ntt.hpp"
#include "tools/cli/input_file.hpp"

namespace stoker::tools::kernel_cli {

using kernels::Fr;

bool read_elements(const std::string& path, std::optional<unsigned>& log_n, std::vector<Fr>& out,
                   std::string& error) {
  const auto sized = input_size(path);
  if (!sized) {
    error = sized.error().what();
    return false;
  }
  const std::uint64_t size = *sized;
  if (log_n) {
    const std::uint64_t want = std::uint64_t{32} << *log_n;
    if (size != want) {
      error = path + ": size is " + std::to_string(size) + " bytes, expected 32 * 2^" +
              std::to_string(*log_n) + " = " + std::to_string(want);
      return false;
    }
  } else {
    const std::uint64_t n = size / 32;
    if (size % 32 || n < 2 || (n & (n - 1)) || n > (std::uint64_t{1} << kernels::kMaxLogN)) {
      error = path + ": size is " + std::to_string(size) +
              " bytes, not 32 * 2^K for some K in 1.." + std::to_string(kernels::kMaxLogN);
      return false;
    }
    unsigned k = 0;
    while ((std::uint64_t{1} << k) < n) ++k;
    log_n = k;
  }
  const std::size_t n = std::size_t{1} << *log_n;
  std::ifstream f(path, std::ios::binary);
  std::vector<unsigned char> bytes(n * 32);
  if (!f.read(reinterpret_cast<char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()))) {
    error = path + ": read failed";
    return false;
  }
  out.resize(n);
  for (std::size_t i = 0; i < n; ++i)
    if (!Fr::from_bytes(&bytes[32 * i], out[i])) {
      error = path + ": element " + std::to_string(i) + " is not below r (not canonical)";
      return false;
    }
  return true;
}

// Writes the elements through OutputFile: whole or not at all, through a
// symlink, never over a FIFO or a device.
bool write_elements(const OutputFile& out, const std::vector<Fr>& v, std::string& error) {
  std::string bytes(v.size() * 32, '\0');
  for (std::size_t i = 0; i < v.size(); ++i)
    v[i].to_bytes(reinterpret_cast<unsigned char*>(&bytes[32 * i]));
  if (auto e = out.write(bytes)) {
    error = e.what();
    return false;
  }
  return true;
}

}  // namespace stoker::tools::kernel_cli
