// WorkloadOption: one setting a workload takes, described well enough for
// a program to read it from a command line, check it, print its help and
// draw values for it without knowing the workload (`stoker run` does the
// first three for every registered workload, engine/workloads/workload.hpp).
//
// Names are spelt as on a command line without the dashes ("log-n"); the
// messages about them put the dashes back ("--log-n"), because that is how
// a user gave them. Numbers are unsigned integers, read strictly
// (engine/strict_number.hpp) within [min, max].
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace stoker::engine::workloads {

struct WorkloadOption {
  enum class Kind {
    flag,     // given or not; takes no value
    integer,  // an unsigned integer in min..max
    choice,   // one of `choices`
    text,     // any text but the empty one (a path)
  };

  std::string name;  // "log-n"
  Kind kind = Kind::flag;
  std::string value_name;  // what help calls the value: "K", "FILE"; empty for a flag
  std::uint64_t min = 0, max = 0;
  std::vector<std::string> choices;
  // The value taken when the option is not given, as text: the workload
  // reads it as if given. Empty: none, or one that depends on the engine
  // (then `help` says which).
  std::string default_value;
  std::string help;  // what it does, one paragraph; help adds the default
  // Other names of the same option: giving two of them is an error.
  std::vector<std::string> aliases;

  static WorkloadOption flag(std::string name, std::string help);
  static WorkloadOption integer(std::string name, std::string value_name, std::uint64_t min,
                                std::uint64_t max, std::string default_value, std::string help);
  static WorkloadOption choice(std::string name, std::string value_name,
                               std::vector<std::string> choices, std::string default_value,
                               std::string help);
  static WorkloadOption text(std::string name, std::string value_name, std::string help);

  // Whether `n` is its name or one of its aliases.
  bool named(std::string_view n) const;
  // "--log-n", as messages and help show it.
  std::string flag_name() const { return "--" + name; }
  // What is wrong with `value` as its value in `workload`, in a message
  // that names the option and the value ("--rounds: 'x' is not an integer
  // in 0..2147483647", "--log-n 1: ntt_msm_h needs at least 2", "--keep-h
  // takes no value"), or "" when it is right.
  std::string problem(std::string_view value, std::string_view workload) const;
};

// "a, b or c": how messages and help list names and choices.
std::string or_list(const std::vector<std::string>& items);

}  // namespace stoker::engine::workloads
