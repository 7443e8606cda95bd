// The kernels' subcommands' command line; see kernel_args.hpp.
#include "tools/commands/kernel_args.hpp"

#include <cuda_runtime_api.h>

#include <iostream>

#include "common/error.hpp"
#include "devices/device_set.hpp"
#include "engine/strict_number.hpp"
#include "kernels/ntt.hpp"
#include "tools/cli/command_line.hpp"

namespace stoker::tools::kernel_cli {

using engine::parse_integer;

std::optional<int> parse(const std::string& name, const std::string& help, int argc, char** argv,
                         Args& a, std::vector<std::string> value_names,
                         const std::vector<std::string>& flag_names) {
  CommandLine cl(name, help);
  std::optional<int> device;
  cl.gpu("--device", device);
  for (const auto& v : value_names)
    cl.custom(v, [&a, v](std::string_view text) {
      a.values[v] = text;
      return std::string();
    });
  for (const auto& f : flag_names) cl.flag(f, a.flags[f]);
  cl.exclusive({"--device", "--cpu"});
  if (auto rc = cl.parse(argc, argv)) return rc;
  std::erase_if(a.flags, [](const auto& f) { return !f.second; });
  // --device N: the GPU to run on (CUDA's numbering; the default is 0),
  // one this machine has (CommandLine::gpu checked it).
  if (device) {
    a.values["--device"] = std::to_string(*device);
    if (const cudaError_t e = cudaSetDevice(*device))
      return cl.failure(cuda_message("--device " + std::to_string(*device), e));
  }
  return std::nullopt;
}

std::optional<unsigned> parse_log_n(const std::string& s) {
  return parse_integer(s, 1u, kernels::kMaxLogN);
}

int usage(const std::string& name, const std::string& problem, const char* synopsis) {
  std::cerr << "stoker " << name << ": " << problem << "\nusage: " << synopsis << "\n";
  return 2;
}

}  // namespace stoker::tools::kernel_cli
