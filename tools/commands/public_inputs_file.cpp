// Public input files; see public_inputs_file.hpp.
#include "tools/commands/public_inputs_file.hpp"

#include <fstream>
#include <iterator>

namespace stoker::tools {

Result<std::vector<kernels::Fr>> read_public_inputs(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Error{Errc::io_error, path + ": cannot open"};
  const std::string bytes{std::istreambuf_iterator<char>(in), {}};
  if (bytes.size() % 32 != 0)
    return Error{Errc::invalid_argument, path + ": " + std::to_string(bytes.size()) +
                                             " bytes, not a whole number of 32-byte inputs"};
  std::vector<kernels::Fr> out(bytes.size() / 32);
  for (std::size_t i = 0; i < out.size(); ++i)
    if (!kernels::Fr::from_bytes(reinterpret_cast<const unsigned char*>(bytes.data()) + 32 * i,
                                 out[i]))
      return Error{Errc::invalid_argument,
                   path + ": input " + std::to_string(i) + " is not below r"};
  return out;
}

Error write_public_inputs(const OutputFile& out, std::span<const kernels::Fr> values) {
  std::string bytes(32 * values.size(), '\0');
  for (std::size_t i = 0; i < values.size(); ++i)
    values[i].to_bytes(reinterpret_cast<unsigned char*>(bytes.data()) + 32 * i);
  return out.write(bytes);
}

}  // namespace stoker::tools
