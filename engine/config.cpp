#include "engine/config.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <limits>
#include <thread>

#include "engine/strict_number.hpp"

namespace stoker::engine {
namespace {

// A count or size given as text: the range keeps every value within what
// its field holds after scaling (MiB to bytes, narrowing to int), so none
// wraps into some other number that validation would pass. Counts and
// sizes whose field uses 0 for "chosen from the machine" start at 1 here:
// leaving the setting out asks for that default, and a 0 typed on a
// command line is refused rather than read as "the default" in silence.
struct NumberSetting {
  const char* name;
  long long lo, hi;
};
constexpr long long kMaxMib = static_cast<long long>(std::numeric_limits<std::size_t>::max() >> 20);
constexpr NumberSetting kNumbers[] = {
    {"host-devices", 1, 64},
    {"depth", 2, 16},
    {"host-budget-mib", 1, kMaxMib},
    {"device-budget-mib", 1, kMaxMib},
    {"chunk-mib", 1, 1024},          // 64 KiB..1 GiB in all
    {"chunk-kib", 64, 1024 * 1024},  // finer, for chunks meant to stay in cache
    {"workers", 1, 1024},
    {"staging-threads", 1, 64},
    {"staging-ring-mib", 1, 16 * 1024},
};

constexpr double kMaxSlowdown = 1000;

Result<long long> number(std::string_view source, std::string_view text, long long lo,
                         long long hi) {
  if (auto v = parse_integer(text, lo, hi)) return *v;
  return Error{Errc::invalid_argument, integer_problem(source, text, lo, hi)};
}

Error bad_choice(std::string_view source, std::string_view value, const char* choices) {
  return {Errc::invalid_argument,
          std::string(source) + ": '" + std::string(value) + "' is not " + choices};
}

// A comma-separated list: every item must be there ("0,,1" and ",,," are
// refused, not read as "0,1" and "all devices").
Result<std::vector<std::string_view>> list(std::string_view source, std::string_view text,
                                           const char* what) {
  std::vector<std::string_view> out;
  for (std::size_t start = 0;;) {
    const std::size_t comma = text.find(',', start);
    const std::string_view item = text.substr(start, comma - start);
    if (item.empty())
      return Error{Errc::invalid_argument, std::string(source) + ": '" + std::string(text) +
                                               "' is not a list of " + what +
                                               " (an item is empty)"};
    out.push_back(item);
    if (comma == std::string_view::npos) return out;
    start = comma + 1;
  }
}

// The STOKER_* variable of a setting: STOKER_ and the name in capitals,
// except where the variable says more than the option does.
std::string variable_name(std::string_view name) {
  if (name == "depth") return "STOKER_PIPELINE_DEPTH";
  if (name == "slowdown") return "STOKER_HOST_SLOWDOWN";
  std::string var = "STOKER_";
  for (char ch : name) var += ch == '-' ? '_' : static_cast<char>(std::toupper(ch));
  return var;
}

const std::string_view kNames[] = {
    "backend",         "devices",           "slowdown",        "host-devices", "depth",
    "host-budget-mib", "device-budget-mib", "chunk-mib",       "chunk-kib",    "workers",
    "staging-threads", "staging-ring-mib",  "pageable-inputs", "early-upload", "bind-threads",
    "copy-priority",   "compute-priority"};

}  // namespace

std::span<const std::string_view> Config::setting_names() {
  return kNames;
}

std::string Config::variable_for(std::string_view name) {
  return variable_name(name);
}

bool Config::in_env(std::string_view name) {
  return std::getenv(variable_name(name).c_str()) != nullptr;
}

Error Config::set(std::string_view name, std::string_view value, std::string_view source) {
  Config& c = *this;
  if (name == "backend") {
    if (value == "auto")
      c.devices.backend = devices::BackendChoice::automatic;
    else if (value == "cuda")
      c.devices.backend = devices::BackendChoice::cuda;
    else if (value == "host")
      c.devices.backend = devices::BackendChoice::host;
    else
      return bad_choice(source, value, "auto, cuda or host");
    return {};
  }
  if (name == "devices") {
    auto items = list(source, value, "CUDA device ordinals");
    if (!items) return items.error();
    std::vector<int> ordinals;
    for (const auto item : *items) {
      const auto v = parse_integer(item, 0, 1023);
      if (!v)
        return {Errc::invalid_argument,
                std::string(source) + ": '" + std::string(item) + "' is not a CUDA device ordinal"};
      for (int o : ordinals)
        if (o == *v)
          return {Errc::invalid_argument, std::string(source) + ": '" + std::string(value) +
                                              "' names device " + std::string(item) + " twice"};
      ordinals.push_back(*v);
    }
    c.devices.cuda_ordinals = std::move(ordinals);
    return {};
  }
  if (name == "slowdown") {
    auto items = list(source, value, "slowdown factors");
    if (!items) return items.error();
    std::vector<double> factors;
    // A factor below 1 would make an emulated device faster than the CPU
    // that runs it: not a slowdown. Above kMaxSlowdown the host backend
    // refuses it (devices/device_set.cpp), so it is refused here, where
    // the option or the variable can be named.
    for (const auto item : *items) {
      const auto v = parse_real(item, 1, kMaxSlowdown);
      if (!v) return {Errc::invalid_argument, real_problem(source, item, 1, kMaxSlowdown)};
      factors.push_back(*v);
    }
    c.devices.host.slowdown = std::move(factors);
    return {};
  }
  if (name == "copy-priority" || name == "compute-priority") {
    devices::StreamPriority p;
    if (value == "low")
      p = devices::StreamPriority::low;
    else if (value == "normal")
      p = devices::StreamPriority::normal;
    else if (value == "high")
      p = devices::StreamPriority::high;
    else
      return bad_choice(source, value, "low, normal or high");
    (name == "copy-priority" ? c.copy_priority : c.compute_priority) = p;
    return {};
  }
  if (name == "pageable-inputs") {
    if (value == "stage")
      c.pageable_inputs = PageableInputs::stage;
    else if (value == "register")
      c.pageable_inputs = PageableInputs::register_in_place;
    else
      return bad_choice(source, value, "stage or register");
    return {};
  }
  if (name == "early-upload" || name == "bind-threads") {
    bool& on = name == "early-upload" ? c.early_upload : c.bind_threads;
    if (value == "on")
      on = true;
    else if (value == "off")
      on = false;
    else
      return bad_choice(source, value, "on or off");
    return {};
  }
  for (const auto& n : kNumbers) {
    if (name != n.name) continue;
    auto v = number(source, value, n.lo, n.hi);
    if (!v) return v.error();
    const auto u = static_cast<std::size_t>(*v);
    if (name == "host-devices")
      c.devices.host.device_count = static_cast<int>(*v);
    else if (name == "depth")
      c.pipeline_depth = static_cast<int>(*v);
    else if (name == "host-budget-mib")
      c.host_budget_bytes = u << 20;
    else if (name == "device-budget-mib")
      c.device_budget_bytes = u << 20;
    else if (name == "chunk-mib")
      c.staging_chunk_bytes = u << 20;
    else if (name == "chunk-kib")
      c.staging_chunk_bytes = u << 10;
    else if (name == "workers")
      c.worker_threads = static_cast<int>(*v);
    else if (name == "staging-threads")
      c.staging_threads = static_cast<int>(*v);
    else if (name == "staging-ring-mib")
      c.staging_ring_bytes = u << 20;
    return {};
  }
  return {Errc::invalid_argument, "unknown setting " + std::string(source)};
}

Config Config::resolved(devices::Backend backend, std::size_t devices) const {
  Config c = *this;
  const unsigned hw = std::thread::hardware_concurrency();
  if (c.host_budget_bytes == 0) {
    const auto pages = static_cast<std::size_t>(sysconf(_SC_PHYS_PAGES));
    const auto page = static_cast<std::size_t>(sysconf(_SC_PAGE_SIZE));
    c.host_budget_bytes = std::max<std::size_t>(pages * page / 2, std::size_t{1} << 30);
  }
  if (c.worker_threads == 0) c.worker_threads = std::max(2, static_cast<int>(hw));
  if (c.staging_threads == 0)
    c.staging_threads = std::clamp(static_cast<int>(hw / std::max<std::size_t>(1, devices)), 4, 16);
  const double link_gbps = backend == devices::Backend::cuda ? 55.0 : 10.0;
  if (c.h2d_gbps == 0) c.h2d_gbps = link_gbps;
  if (c.d2h_gbps == 0) c.d2h_gbps = link_gbps;
  return c;
}

Result<Config> Config::from_env() {
  return from_env({});
}

Result<Config> Config::from_env(std::span<const std::string_view> overridden) {
  const auto given = [&](std::string_view name) {
    return std::find(overridden.begin(), overridden.end(), name) != overridden.end();
  };
  // Either chunk option sets the chunk, so it overrides both variables.
  const bool chunk_given = given("chunk-mib") || given("chunk-kib");
  Config c;
  std::string chunk_var;
  for (const auto name : kNames) {
    const bool chunk = name == "chunk-mib" || name == "chunk-kib";
    if (given(name) || (chunk && chunk_given)) continue;
    const std::string var = variable_name(name);
    const char* v = std::getenv(var.c_str());
    if (v == nullptr) continue;
    if (chunk) {
      if (!chunk_var.empty())
        return Error{Errc::invalid_argument,
                     chunk_var + " and " + var + " both set the staging chunk: set one"};
      chunk_var = var;
    }
    if (auto e = c.set(name, v, var)) return e;
  }
  // Read where the copy runs (engine/detail/nontemporal_copy.cpp), checked
  // here so that a typo is refused like any other setting's.
  if (const char* v = std::getenv("STOKER_STAGING_COPY"))
    if (std::string_view(v) != "auto" && std::string_view(v) != "memcpy")
      return Error{bad_choice("STOKER_STAGING_COPY", v, "auto or memcpy")};
  if (auto e = c.validate()) return e;
  return c;
}

Result<Config> Config::apply_args(std::vector<std::string>& args) const {
  Config c = *this;
  std::vector<std::string> rest;
  std::vector<std::string_view> seen;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto& a = args[i];
    const auto name = setting_of(a);
    if (name.empty()) {
      rest.push_back(a);
      continue;
    }
    const std::string flag = "--" + std::string(name);
    std::string value;
    if (a.size() > flag.size()) {
      value = a.substr(flag.size() + 1);
    } else {
      if (i + 1 >= args.size() || args[i + 1].starts_with("--"))
        return Error{Errc::invalid_argument, flag + " needs a value"};
      value = args[++i];
    }
    const bool chunk = name == "chunk-mib" || name == "chunk-kib";
    for (const auto s : seen)
      if (s == name || (chunk && (s == "chunk-mib" || s == "chunk-kib")))
        return Error{Errc::invalid_argument,
                     s == name
                         ? flag + " is given twice"
                         : "--chunk-mib and --chunk-kib both set the staging chunk: give one"};
    seen.push_back(name);
    if (auto e = c.set(name, value, flag)) return e;
  }
  if (auto e = c.validate()) return e;
  args = std::move(rest);
  return c;
}

std::string_view Config::setting_of(std::string_view arg) {
  if (!arg.starts_with("--")) return {};
  const std::string_view body = arg.substr(
      2, arg.find('=') == std::string_view::npos ? std::string_view::npos : arg.find('=') - 2);
  for (const auto name : kNames)
    if (body == name) return name;
  return {};
}

Error Config::validate() const {
  if (pipeline_depth < 2 || pipeline_depth > 16)
    return {Errc::invalid_argument,
            "pipeline depth must be 2..16 (copies overlap kernels only from 2), not " +
                std::to_string(pipeline_depth)};
  if (staging_chunk_bytes < (std::size_t{64} << 10) || staging_chunk_bytes > (std::size_t{1} << 30))
    return {Errc::invalid_argument, "staging chunk must be 64 KiB..1 GiB, not " +
                                        std::to_string(staging_chunk_bytes) + " bytes"};
  if (staging_ring_bytes > (std::size_t{16} << 30))
    return {Errc::invalid_argument, "staging ring must be at most 16 GiB per device, not " +
                                        std::to_string(staging_ring_bytes) + " bytes"};
  if (worker_threads < 0 || worker_threads > 1024)
    return {Errc::invalid_argument,
            "worker threads must be 0..1024, not " + std::to_string(worker_threads)};
  if (staging_threads < 0 || staging_threads > 64)
    return {Errc::invalid_argument,
            "staging threads must be 0..64 (0: chosen from the machine), not " +
                std::to_string(staging_threads)};
  if (devices.host.device_count < 1 || devices.host.device_count > 64)
    return {Errc::invalid_argument,
            "host device count must be 1..64, not " + std::to_string(devices.host.device_count)};
  if (h2d_gbps < 0 || d2h_gbps < 0)
    return {Errc::invalid_argument, "link rates must not be negative"};
  return {};
}

}  // namespace stoker::engine
