// CommandLine: how every stoker command reads its arguments, so that all of
// them behave alike. Options are declared with the variable they fill;
// parse() then
// - takes `--opt value` and `--opt=value` for every option;
// - refuses an option as the value of the one before it (`--trace --json`
//   is a missing value, not a file named --json; `--trace=--json` is that
//   file);
// - refuses an option given twice and options declared exclusive
//   (`--verify --no-verify`), instead of letting the last one win;
// - reads numbers strictly (engine/strict_number.hpp, the parser Config
//   uses for STOKER_* variables) within the declared range;
// - answers -h/--help with the command's help text (exit 0);
// - reads the engine's settings, when asked, from STOKER_* variables and
//   then the engine options (engine/config.hpp); an error from a variable
//   names the variable.
// - gives an option precedence over its STOKER_* variable: the variable of
//   a setting given on the command line is not read at all;
// - checks the devices asked for against the machine (--device N, and the
//   engine's --backend, --devices, --host-devices, --slowdown or their
//   variables) before any device is opened, naming the option or variable.
// Exit statuses are the same in every command: 0 done, 1 a failure while
// running, 2 a usage error: the command line or a STOKER_* variable is
// wrong, on its face or for this machine (--devices 5 on a one-GPU host,
// --backend cuda without a GPU). Messages are "stoker <command>: <problem>".
//
// CLI11 (Debian libcli11-dev 2.1.2) was tried for this and not kept: with
// its defaults it took `--trace --json` as a file named --json, read
// `--partitions -1` as 18446744073709551615, "010" as 8 and "0x10" as 16,
// accepted a repeated flag, named the option but not the variable for a
// bad environment value, and used its own exit codes (104-114). Binding
// every option as text and re-checking it would have left CLI11 doing only
// the splitting at `=`, for 11 s of compile time per file that includes it.
//
// A new command, in full:
//
//   int msm_command(int argc, char** argv) {
//     CommandLine cl("msm", kHelp);  // kHelp: what --help prints
//     std::string points, out_path;
//     unsigned log_n = 20;
//     std::optional<std::uint64_t> seed;  // absent: chosen later
//     bool json = false;
//     cl.value("--points", points);
//     cl.value("--out", out_path);
//     cl.number("--log-n", log_n, 1u, 28u);
//     cl.number("--seed", seed);
//     cl.flag("--json", json);
//     engine::Config config;
//     cl.engine_options(config);  // only for commands that run the engine
//     if (auto rc = cl.parse(argc, argv)) return *rc;  // --help, or a usage error printed
//     if (points.empty()) return cl.usage_error("--points is required");
//     auto out = OutputFile::check(out_path);  // tools/cli/output_file.hpp
//     if (!out) return cl.usage_error(out.error().what());
//     ...
//     if (auto e = out->write(bytes)) return cl.failure(e.what());
//     return 0;
//   }
#pragma once

#include <cstdio>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "engine/config.hpp"
#include "engine/strict_number.hpp"

namespace stoker::tools {

// The engine options every engine-running command accepts (engine/config.hpp).
inline constexpr const char* kEngineOptionsHelp =
    "engine options (and their STOKER_* variables, engine/config.hpp):\n"
    "  --backend auto|cuda|host --devices 0,1 --host-devices N --slowdown 1,2\n"
    "  --depth N --host-budget-mib M --device-budget-mib M --workers N\n"
    "  --chunk-mib M (or --chunk-kib K) --staging-threads N --staging-ring-mib M\n"
    "  --pageable-inputs stage|register --early-upload on|off --bind-threads on|off\n"
    "  --copy-priority low|normal|high --compute-priority low|normal|high\n"
    "  Counts and sizes are 1 or more; leave one out for its default (chosen from the\n"
    "  machine: half of memory for the host budget, hardware threads for workers).\n"
    "  Slowdown factors are 1..1000, one per host device. An option overrides its\n"
    "  variable, which is then not read.\n";

class CommandLine {
 public:
  // `command` as in messages ("run", "bench ntt"); `help` printed by --help.
  CommandLine(std::string command, std::string help);

  // An option that takes no value. Declaring a name twice throws
  // std::logic_error, whatever the kind.
  void flag(std::string name, bool& out);
  // An option that takes any text but the empty string.
  void value(std::string name, std::string& out);
  // An option that may be given more than once (`--allow-dir A --allow-dir
  // B`), each value appended in command-line order.
  void values(std::string name, std::vector<std::string>& out);
  // One of `choices` ("--workload: 'x' is not hpoly or synthetic").
  void choice(std::string name, std::string& out, std::vector<std::string> choices);
  // An integer in lo..hi.
  template <engine::StrictInteger T>
  void number(std::string name, T& out, T lo = std::numeric_limits<T>::min(),
              T hi = std::numeric_limits<T>::max()) {
    custom(name, [&out, name, lo, hi](std::string_view text) -> std::string {
      const auto v = engine::parse_integer(text, lo, hi);
      if (!v) return engine::integer_problem(name, text, lo, hi);
      out = *v;
      return {};
    });
  }
  template <engine::StrictInteger T>
  void number(std::string name, std::optional<T>& out, T lo = std::numeric_limits<T>::min(),
              T hi = std::numeric_limits<T>::max()) {
    custom(name, [&out, name, lo, hi](std::string_view text) -> std::string {
      const auto v = engine::parse_integer(text, lo, hi);
      if (!v) return engine::integer_problem(name, text, lo, hi);
      out = *v;
      return {};
    });
  }
  // A CUDA device ordinal this machine has ("--device 3: this machine has 2
  // CUDA devices (0..1)" otherwise).
  void gpu(std::string name, std::optional<int>& out);
  // A real number in lo..hi (NaN never is).
  void real(std::string name, double& out, double lo, double hi);
  // Anything else: `take` returns what is wrong with the text, or "" when
  // it took it. The problem is printed as is, so it should name the option.
  void custom(std::string name, std::function<std::string(std::string_view)> take);
  // Options that say opposite or the same things: at most one of them.
  void exclusive(std::vector<std::string> names);
  // The engine options, read over Config::from_env() into `config` at the
  // end of parse(), then validated.
  void engine_options(engine::Config& config);

  // nullopt: go on. Otherwise the exit status: 0 after --help, 2 after a
  // usage error (printed).
  std::optional<int> parse(int argc, char** argv);
  std::optional<int> parse(const std::vector<std::string>& args);

  // Where the engine setting `name` ("devices") came from, for a message:
  // its option when given, else its STOKER_* variable.
  std::string setting_source(std::string_view name) const;

  // Whether `name` was on the command line.
  bool given(std::string_view name) const;
  // The first of `names` on the command line, or empty.
  std::string first_given(const std::vector<std::string>& names) const;
  // Every option on the command line, in its order.
  const std::vector<std::string>& given() const { return given_; }

  // Print "stoker <command>: <problem>" and return the exit status.
  int usage_error(const std::string& problem) const;  // 2
  int failure(const std::string& problem) const;      // 1

  const std::string& command() const { return command_; }

 private:
  struct Option {
    std::string name;
    bool takes_value = true;
    std::function<std::string(std::string_view)> take;
    bool repeatable = false;
  };
  Option* find(std::string_view name);
  std::string machine_problem(const engine::Config& c) const;
  void add(Option o);

  std::string command_, help_;
  std::vector<Option> options_;
  std::vector<std::vector<std::string>> exclusive_;
  std::vector<std::string> given_;  // in command-line order
  engine::Config* config_ = nullptr;
  std::vector<std::pair<std::string, std::string>> engine_values_;  // name, value
};

// What is wrong with CUDA device `ordinal` as the value of `option` on this
// machine, or "" when it has that device.
std::string gpu_problem(std::string_view option, int ordinal);

}  // namespace stoker::tools
