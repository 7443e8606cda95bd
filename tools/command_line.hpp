// What every stoker command does first: answer -h/--help, build the
// engine Config from STOKER_* variables and the engine options on its
// command line (consumed from `args`), and create the files it will write
// once its work is done, naming the command in any error.
#pragma once

#include <cerrno>
#include <cstdio>
#include <cstring>
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
    "  --pageable-inputs stage|register --streaming on|off\n"
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

// Creates (or truncates) `path` for output written after the command's
// work, so that a path that cannot be written fails before that work rather
// than after it. nullopt after printing "stoker <command>: cannot create
// <path>: <the OS's reason>".
inline std::optional<std::ofstream> create_output_file(const char* command,
                                                       const std::string& path) {
  errno = 0;
  std::ofstream f(path);
  if (!f) {
    std::fprintf(stderr, "stoker %s: cannot create %s: %s\n", command, path.c_str(),
                 errno ? std::strerror(errno) : "unknown error");
    return std::nullopt;
  }
  return f;
}

// Closes a file from create_output_file once written; false after printing
// "stoker <command>: could not write <what> to <path>: <the OS's reason>".
inline bool close_output_file(const char* command, std::ofstream& f, const std::string& path,
                              const char* what) {
  if (f) errno = 0;  // else keep the reason a write already failed for
  f.close();
  if (!f) {
    std::fprintf(stderr, "stoker %s: could not write %s to %s: %s\n", command, what, path.c_str(),
                 errno ? std::strerror(errno) : "unknown error");
    return false;
  }
  return true;
}

}  // namespace stoker::tools
