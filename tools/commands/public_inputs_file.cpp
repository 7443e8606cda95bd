// Public input files; see public_inputs_file.hpp.
#include "tools/commands/public_inputs_file.hpp"

#include <fstream>
#include <iterator>
#include <new>

#include "common/host_memory_limit.hpp"
#include "tools/cli/input_file.hpp"

namespace stoker::tools {

Result<std::vector<kernels::Fr>> read_public_inputs(const std::string& path) {
  // The size first: a file that is not inputs is refused before it is
  // read, one that is too large before memory is taken for it.
  const auto size = input_size(path);
  if (!size) return size.error();
  if (*size % 32 != 0)
    return Error{Errc::invalid_argument, path + ": " + std::to_string(*size) +
                                             " bytes, not a whole number of 32-byte inputs"};
  const std::string what = path + ": " + std::to_string(*size / 32) + " public inputs";
  // The file's bytes and the inputs.
  const std::size_t need = 2 * static_cast<std::size_t>(*size);
  if (Error e = common::check_host_memory(what, need)) return e;
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{Errc::io_error, path + ": cannot open"};
  std::string bytes;
  std::vector<kernels::Fr> out;
  try {
    bytes.assign(std::istreambuf_iterator<char>(in), {});
    out.resize(bytes.size() / 32);
  } catch (const std::bad_alloc&) {
    return common::host_memory_refused(what, need);
  }
  if (bytes.size() != *size)
    return Error{Errc::io_error, path + ": " + std::to_string(bytes.size()) + " bytes read of " +
                                     std::to_string(*size)};
  for (std::size_t i = 0; i < out.size(); ++i)
    if (!kernels::Fr::from_bytes(reinterpret_cast<const unsigned char*>(bytes.data()) + 32 * i,
                                 out[i]))
      return Error{Errc::invalid_argument,
                   path + ": input " + std::to_string(i) + " is not below r"};
  return out;
}

std::string encode_public_inputs(std::span<const kernels::Fr> values) {
  std::string bytes(32 * values.size(), '\0');
  for (std::size_t i = 0; i < values.size(); ++i)
    values[i].to_bytes(reinterpret_cast<unsigned char*>(bytes.data()) + 32 * i);
  return bytes;
}

}  // namespace stoker::tools
