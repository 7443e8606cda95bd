#include "tools/cli/command_line.hpp"

#include <algorithm>
#include <stdexcept>

#include "devices/device_set.hpp"
#include "tools/cli/counted.hpp"

namespace stoker::tools {

CommandLine::CommandLine(std::string command, std::string help)
    : command_(std::move(command)), help_(std::move(help)) {}

void CommandLine::add(Option o) {
  if (find(o.name) != nullptr)
    throw std::logic_error("stoker " + command_ + ": option " + o.name + " declared twice");
  options_.push_back(std::move(o));
}

CommandLine::Option* CommandLine::find(std::string_view name) {
  for (auto& o : options_)
    if (o.name == name) return &o;
  return nullptr;
}

void CommandLine::flag(std::string name, bool& out) {
  add({std::move(name), false, [&out](std::string_view) {
         out = true;
         return std::string();
       }});
}

void CommandLine::value(std::string name, std::string& out) {
  custom(std::move(name), [&out](std::string_view text) {
    out = text;
    return std::string();
  });
}

void CommandLine::values(std::string name, std::vector<std::string>& out) {
  Option o;
  o.name = std::move(name);
  o.repeatable = true;
  o.take = [&out](std::string_view text) {
    out.emplace_back(text);
    return std::string();
  };
  add(std::move(o));
}

void CommandLine::choice(std::string name, std::string& out, std::vector<std::string> choices) {
  custom(name, [&out, name, choices](std::string_view text) {
    if (std::find(choices.begin(), choices.end(), text) != choices.end()) {
      out = text;
      return std::string();
    }
    std::string list;
    for (std::size_t i = 0; i < choices.size(); ++i)
      list += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + choices[i];
    return name + ": '" + std::string(text) + "' is not " + list;
  });
}

void CommandLine::real(std::string name, double& out, double lo, double hi) {
  custom(name, [&out, name, lo, hi](std::string_view text) {
    const auto v = engine::parse_real(text, lo, hi);
    if (!v) return engine::real_problem(name, text, lo, hi);
    out = *v;
    return std::string();
  });
}

void CommandLine::gpu(std::string name, std::optional<int>& out) {
  custom(name, [&out, name](std::string_view text) {
    const auto v = engine::parse_integer(text, 0, 1023);
    if (!v) return engine::integer_problem(name, text, 0, 1023);
    if (auto problem = gpu_problem(name, *v); !problem.empty()) return problem;
    out = *v;
    return std::string();
  });
}

void CommandLine::custom(std::string name, std::function<std::string(std::string_view)> take) {
  add({std::move(name), true, std::move(take)});
}

void CommandLine::exclusive(std::vector<std::string> names) {
  exclusive_.push_back(std::move(names));
}

void CommandLine::engine_options(engine::Config& config) {
  config_ = &config;
  for (const auto name : engine::Config::setting_names()) {
    const std::string flag = "--" + std::string(name);
    custom(flag, [this, flag](std::string_view text) {
      engine_values_.emplace_back(flag, std::string(text));
      return std::string();
    });
  }
  exclusive({"--chunk-mib", "--chunk-kib"});
}

std::optional<int> CommandLine::parse(int argc, char** argv) {
  return parse(std::vector<std::string>(argv + 1, argv + argc));
}

std::optional<int> CommandLine::parse(const std::vector<std::string>& args) {
  // Help first, wherever it is: `stoker run --bogus --help` should help.
  for (const auto& a : args)
    if (a == "-h" || a == "--help") {
      std::fputs(help_.c_str(), stdout);
      if (!help_.empty() && help_.back() != '\n') std::fputc('\n', stdout);
      return 0;
    }
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (!a.starts_with("--"))
      return usage_error("unexpected argument '" + a + "' (options start with --; see --help)");
    const auto eq = a.find('=');
    const std::string name = a.substr(0, eq);
    Option* o = find(name);
    if (o == nullptr) return usage_error("unknown option '" + name + "' (see --help)");
    if (given(name) && !o->repeatable) return usage_error(name + " is given twice");
    for (const auto& group : exclusive_)
      if (std::find(group.begin(), group.end(), name) != group.end())
        for (const auto& other : group)
          if (other != name && given(other))
            return usage_error(other + " and " + name + ": give one of them, not both");
    given_.push_back(name);
    std::string text;
    if (!o->takes_value) {
      if (eq != std::string::npos) return usage_error(name + " takes no value");
    } else if (eq != std::string::npos) {
      text = a.substr(eq + 1);
    } else {
      if (i + 1 >= args.size()) return usage_error(name + " needs a value");
      // An option is never the value of the one before it; a value that
      // really starts with -- can be given as --name=--value.
      if (args[i + 1].starts_with("--"))
        return usage_error(name + " needs a value, not the option '" + args[i + 1] + "' (write " +
                           name + "=" + args[i + 1] + " if that is the value)");
      text = args[++i];
    }
    if (o->takes_value && text.empty()) return usage_error(name + " needs a value, not ''");
    if (auto problem = o->take(text); !problem.empty()) return usage_error(problem);
  }
  if (config_ != nullptr) {
    std::vector<std::string_view> overridden;
    for (const auto& [flag, text] : engine_values_)
      overridden.push_back(std::string_view(flag).substr(2));
    auto base = engine::Config::from_env(overridden);
    if (!base) return usage_error(base.error().what());
    engine::Config c = std::move(*base);
    for (const auto& [flag, text] : engine_values_)
      if (auto e = c.set(std::string_view(flag).substr(2), text, flag))
        return usage_error(e.what());
    if (auto e = c.validate()) return usage_error(e.what());
    if (auto problem = machine_problem(c); !problem.empty()) return usage_error(problem);
    *config_ = std::move(c);
  }
  return std::nullopt;
}

std::string CommandLine::setting_source(std::string_view name) const {
  const std::string flag = "--" + std::string(name);
  return given(flag) ? flag : engine::Config::variable_for(name);
}

// The checks devices::discover makes of the device settings, made before it
// so that each names the option or variable to change.
std::string CommandLine::machine_problem(const engine::Config& c) const {
  const auto& d = c.devices;
  const int gpus = devices::cuda_device_count();
  if (d.backend == devices::BackendChoice::cuda && gpus == 0)
    return setting_source("backend") + ": 'cuda', but this machine has no CUDA device";
  const bool on_cuda = d.backend == devices::BackendChoice::cuda ||
                       (d.backend == devices::BackendChoice::automatic && gpus > 0);
  if (on_cuda) {
    for (const int o : d.cuda_ordinals)
      if (auto problem = gpu_problem(setting_source("devices"), o); !problem.empty())
        return problem;
    if (d.host.device_count != 1 || !d.host.slowdown.empty())
      return setting_source(d.host.slowdown.empty() ? "host-devices" : "slowdown") +
             ": sets the host backend, but the backend is CUDA (" +
             (d.backend == devices::BackendChoice::cuda ? setting_source("backend")
                                                        : std::string("auto, and this machine has "
                                                                      "a GPU")) +
             "); ask for the host backend to use it";
    return {};
  }
  if (!d.cuda_ordinals.empty())
    return setting_source("devices") + ": names CUDA devices, but the backend is the host's" +
           (d.backend == devices::BackendChoice::automatic ? " (this machine has no CUDA device)"
                                                           : "");
  if (d.host.slowdown.size() > static_cast<std::size_t>(d.host.device_count))
    return setting_source("slowdown") + ": " + counted(d.host.slowdown.size(), "slowdown factor") +
           " for " + counted(static_cast<std::size_t>(d.host.device_count), "host device");
  return {};
}

std::string gpu_problem(std::string_view option, int ordinal) {
  const int gpus = devices::cuda_device_count();
  if (ordinal >= 0 && ordinal < gpus) return {};
  std::string problem = std::string(option) + " " + std::to_string(ordinal) + ": this machine has ";
  if (gpus == 0) return problem + "no CUDA device";
  return problem + counted(static_cast<std::size_t>(gpus), "CUDA device") + " (0.." +
         std::to_string(gpus - 1) + ")";
}

bool CommandLine::given(std::string_view name) const {
  return std::find(given_.begin(), given_.end(), name) != given_.end();
}

std::string CommandLine::first_given(const std::vector<std::string>& names) const {
  for (const auto& g : given_)
    if (std::find(names.begin(), names.end(), g) != names.end()) return g;
  return {};
}

int CommandLine::usage_error(const std::string& problem) const {
  std::fprintf(stderr, "stoker %s: %s\n", command_.c_str(), problem.c_str());
  return 2;
}

int CommandLine::failure(const std::string& problem) const {
  std::fprintf(stderr, "stoker %s: %s\n", command_.c_str(), problem.c_str());
  return 1;
}

}  // namespace stoker::tools
