// The command line of the kernels' subcommands (`stoker ntt`, `stoker
// hpoly`, `stoker bench ntt`, `stoker bench hpoly`): their options as text,
// read by CommandLine (tools/cli/command_line.hpp), and the --device every
// one of them takes. Internal to tools/commands/.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace stoker::tools::kernel_cli {

// The command line as text, read by CommandLine (tools/cli/command_line.hpp):
// --opt value or --opt=value, each once.
struct Args {
  std::map<std::string, std::string> values;
  std::map<std::string, bool> flags;
};

// Reads the command line into `a`: options in `value_names` take a value,
// those in `flag_names` none, and every command takes --device N (not with
// --cpu). nullopt to go on; otherwise the exit status (--help: 0, a usage
// error or a --device this machine lacks: 2), the problem printed. A
// --device this machine has is made the current CUDA device.
std::optional<int> parse(const std::string& name, const std::string& help, int argc, char** argv,
                         Args& a, std::vector<std::string> value_names,
                         const std::vector<std::string>& flag_names);

// --log-n's K, in 1..kernels::kMaxLogN.
std::optional<unsigned> parse_log_n(const std::string& s);

// Prints "stoker NAME: PROBLEM" and the synopsis; returns 2, bad usage.
int usage(const std::string& name, const std::string& problem, const char* synopsis);

}  // namespace stoker::tools::kernel_cli
