// What every stoker command does first: answer -h/--help, build the
// engine Config from STOKER_* variables and the engine options on its
// command line (consumed from `args`), and create the files it will write
// once its work is done, naming the command in any error.
#pragma once

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "engine/config.hpp"

namespace stoker::tools {

// The engine options every engine-running command accepts (engine/config.hpp).
inline constexpr const char* kEngineOptionsHelp =
    "engine options: --backend auto|cuda|host --devices 0,1 --host-devices N --slowdown 1,2\n"
    "  --depth N --host-budget-mib M --device-budget-mib M --workers N\n"
    "  --chunk-mib M (or --chunk-kib K) --staging-threads N --staging-ring-mib M\n"
    "  --pageable-inputs stage|register --early-upload on|off --bind-threads on|off\n"
    "  --copy-priority low|normal|high --compute-priority low|normal|high\n";

// Prints `help` and returns true when the arguments ask for it.
inline bool print_help_if_asked(const std::vector<std::string>& args, const char* help) {
  for (const auto& a : args)
    if (a == "-h" || a == "--help") {
      std::fputs(help, stdout);
      return true;
    }
  return false;
}

// nullopt after printing "stoker <command>: <what is wrong>" to stderr.
inline std::optional<engine::Config> engine_config(const char* command,
                                                   std::vector<std::string>& args) {
  auto base = engine::Config::from_env();
  if (!base) {
    std::fprintf(stderr, "stoker %s: %s\n", command, base.error().what().c_str());
    return std::nullopt;
  }
  auto config = base->apply_args(args);
  if (!config) {
    std::fprintf(stderr, "stoker %s: %s\n", command, config.error().what().c_str());
    return std::nullopt;
  }
  return std::move(*config);
}

}  // namespace stoker::tools
