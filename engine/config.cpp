#include "engine/config.hpp"

#include <charconv>
#include <cstdlib>
#include <limits>
#include <sstream>

namespace stoker::engine {
namespace {

Result<long long> parse_int(const std::string& what, const std::string& s) {
  long long v = 0;
  const auto* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, v);
  if (ec != std::errc{} || p != end)
    return Error{Errc::invalid_argument, what + ": '" + s + "' is not an integer"};
  return v;
}

Result<double> parse_double(const std::string& what, const std::string& s) {
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (s.empty() || end != s.c_str() + s.size())
    return Error{Errc::invalid_argument, what + ": '" + s + "' is not a number"};
  return v;
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  for (std::string item; std::getline(ss, item, ',');)
    if (!item.empty()) out.push_back(item);
  return out;
}

// One setting, from either source: name as in --name, value as text.
Error apply(Config& c, const std::string& name, const std::string& value) {
  const std::string what = "--" + name;
  if (name == "backend") {
    if (value == "auto")
      c.devices.backend = devices::BackendChoice::automatic;
    else if (value == "cuda")
      c.devices.backend = devices::BackendChoice::cuda;
    else if (value == "host")
      c.devices.backend = devices::BackendChoice::host;
    else
      return {Errc::invalid_argument, what + ": '" + value + "' is not auto, cuda or host"};
    return {};
  }
  if (name == "devices") {
    c.devices.cuda_ordinals.clear();
    for (const auto& s : split(value)) {
      auto v = parse_int(what, s);
      if (!v) return v.error();
      if (*v < 0 || *v > 1023)
        return {Errc::invalid_argument, what + ": '" + s + "' is not a CUDA device ordinal"};
      c.devices.cuda_ordinals.push_back(static_cast<int>(*v));
    }
    return {};
  }
  if (name == "slowdown") {
    c.devices.host.slowdown.clear();
    for (const auto& s : split(value)) {
      auto v = parse_double(what, s);
      if (!v) return v.error();
      c.devices.host.slowdown.push_back(*v);
    }
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
      return {Errc::invalid_argument, what + ": '" + value + "' is not low, normal or high"};
    (name == "copy-priority" ? c.copy_priority : c.compute_priority) = p;
    return {};
  }
  if (name == "pageable-inputs") {
    if (value == "stage")
      c.pageable_inputs = PageableInputs::stage;
    else if (value == "register")
      c.pageable_inputs = PageableInputs::register_in_place;
    else
      return {Errc::invalid_argument, what + ": '" + value + "' is not stage or register"};
    return {};
  }
  if (name == "early-upload" || name == "bind-threads") {
    bool& on = name == "early-upload" ? c.early_upload : c.bind_threads;
    if (value == "on")
      on = true;
    else if (value == "off")
      on = false;
    else
      return {Errc::invalid_argument, what + ": '" + value + "' is not on or off"};
    return {};
  }
  auto v = parse_int(what, value);
  if (!v) return v.error();
  if (*v < 0) return {Errc::invalid_argument, what + " must not be negative, not " + value};
  // Sizes in MiB or KiB must not wrap when scaled to bytes, counts must fit
  // an int: a wrapped value would pass validation as some other number.
  const int shift = name.ends_with("-mib") ? 20 : name.ends_with("-kib") ? 10 : -1;
  const unsigned long long most =
      shift >= 0 ? std::numeric_limits<std::size_t>::max() >> shift
                 : static_cast<unsigned long long>(std::numeric_limits<int>::max());
  if (static_cast<unsigned long long>(*v) > most)
    return {Errc::invalid_argument,
            what + " must be at most " + std::to_string(most) + ", not " + value};
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
  else if (name == "chunk-kib")  // finer, for chunks meant to stay in cache
    c.staging_chunk_bytes = u << 10;
  else if (name == "workers")
    c.worker_threads = static_cast<int>(*v);
  else if (name == "staging-threads")
    c.staging_threads = static_cast<int>(*v);
  else if (name == "staging-ring-mib")
    c.staging_ring_bytes = u << 20;
  else
    return {Errc::invalid_argument, "unknown setting " + what};
  return {};
}

const char* const kNames[] = {
    "backend",         "devices",           "slowdown",        "host-devices", "depth",
    "host-budget-mib", "device-budget-mib", "chunk-mib",       "chunk-kib",    "workers",
    "staging-threads", "staging-ring-mib",  "pageable-inputs", "early-upload",    "bind-threads",
    "copy-priority",   "compute-priority"};

}  // namespace

Result<Config> Config::from_env() {
  Config c;
  for (const char* name : kNames) {
    std::string var = "STOKER_";
    for (const char* p = name; *p; ++p)
      var += *p == '-' ? '_' : static_cast<char>(std::toupper(*p));
    // Environment names say what they hold: STOKER_DEPTH -> STOKER_PIPELINE_DEPTH etc.
    if (var == "STOKER_DEPTH") var = "STOKER_PIPELINE_DEPTH";
    if (var == "STOKER_SLOWDOWN") var = "STOKER_HOST_SLOWDOWN";
    if (const char* v = std::getenv(var.c_str()))
      if (auto e = apply(c, name, v)) return Error{e.code, var + ": " + e.what()};
  }
  if (auto e = c.validate()) return e;
  return c;
}

Result<Config> Config::apply_args(std::vector<std::string>& args) const {
  Config c = *this;
  std::vector<std::string> rest;
  for (std::size_t i = 0; i < args.size(); ++i) {
    const auto& a = args[i];
    bool used = false;
    for (const char* name : kNames) {
      const std::string flag = std::string("--") + name;
      std::string value;
      if (a == flag) {
        if (i + 1 >= args.size()) return Error{Errc::invalid_argument, flag + " needs a value"};
        value = args[++i];
      } else if (a.rfind(flag + "=", 0) == 0) {
        value = a.substr(flag.size() + 1);
      } else {
        continue;
      }
      if (auto e = apply(c, name, value)) return e;
      used = true;
      break;
    }
    if (!used) rest.push_back(a);
  }
  if (auto e = c.validate()) return e;
  args = std::move(rest);
  return c;
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
