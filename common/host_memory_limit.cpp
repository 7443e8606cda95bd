#include "common/host_memory_limit.hpp"

#include <sys/resource.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "common/bytes_str.hpp"

namespace stoker::common {
namespace {

std::size_t rlimit_bytes(int resource) {
  rlimit r{};
  if (getrlimit(resource, &r) != 0 || r.rlim_cur == RLIM_INFINITY) return 0;
  return static_cast<std::size_t>(r.rlim_cur);
}

std::size_t physical_bytes() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  if (pages <= 0 || page <= 0) return 0;
  return static_cast<std::size_t>(pages) * static_cast<std::size_t>(page);
}

// What the process takes of `source` now, from /proc/self/statm: its
// mapped size (the address space) or its data and stack (what RLIMIT_DATA
// counts). 0 where it cannot be read.
std::size_t statm_bytes(HostMemoryLimit::Source source) {
  FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return 0;
  unsigned long size = 0, resident = 0, shared = 0, text = 0, lib = 0, data = 0;
  const int got =
      std::fscanf(f, "%lu %lu %lu %lu %lu %lu", &size, &resident, &shared, &text, &lib, &data);
  std::fclose(f);
  if (got != 6) return 0;
  const long page = sysconf(_SC_PAGE_SIZE);
  if (page <= 0) return 0;
  const unsigned long pages = source == HostMemoryLimit::Source::address_space ? size : data;
  return static_cast<std::size_t>(pages) * static_cast<std::size_t>(page);
}

}  // namespace

std::size_t mapped_bytes() { return statm_bytes(HostMemoryLimit::Source::address_space); }

HostMemoryLimit HostMemoryLimit::current() {
  HostMemoryLimit l;
  const auto take = [&l](std::size_t bytes, Source source) {
    if (bytes != 0 && (l.bytes == 0 || bytes < l.bytes)) {
      l.bytes = bytes;
      l.source = source;
    }
  };
  take(physical_bytes(), Source::physical);
  take(rlimit_bytes(RLIMIT_DATA), Source::data_segment);
  take(rlimit_bytes(RLIMIT_AS), Source::address_space);
  return l;
}

std::size_t HostMemoryLimit::in_use() const {
  if (source != Source::address_space && source != Source::data_segment) return 0;
  return statm_bytes(source);
}

std::string HostMemoryLimit::describe() const {
  switch (source) {
    case Source::address_space:
      return "the address-space limit (ulimit -v) is " + bytes_with_units(bytes);
    case Source::data_segment:
      return "the data-segment limit (ulimit -d) is " + bytes_with_units(bytes);
    case Source::physical:
      return "this machine has " + bytes_with_units(bytes) + " of memory";
    case Source::unknown:
      break;
  }
  return "the host's memory limit is unknown";
}

Error check_host_memory(std::string_view what, std::size_t bytes) {
  const auto limit = HostMemoryLimit::current();
  if (limit.bytes == 0 || bytes <= limit.bytes) return {};
  return {Errc::out_of_host_memory, std::string(what) + " needs " + bytes_with_units(bytes) +
                                        " of host memory; " + limit.describe()};
}

namespace {

Error refused(std::string_view what, const std::string& size) {
  const auto limit = HostMemoryLimit::current();
  std::string used;
  if (const std::size_t n = limit.in_use(); n != 0)
    used = ", " + bytes_with_units(n) + " of it in use";
  return {Errc::out_of_host_memory, std::string(what) + ": " + std::string(kRefusedBySystem) + " " +
                                        size + "host memory; " + limit.describe() + used};
}

}  // namespace

Error host_memory_refused(std::string_view what, std::size_t bytes) {
  return refused(what, bytes_with_units(bytes) + " of ");
}

Error host_memory_refused(std::string_view what) {
  return refused(what, "");
}

void abort_out_of_host_memory(std::string_view what) noexcept {
  try {
    const Error e = host_memory_refused("stoker: " + std::string(what));
    std::fprintf(stderr, "%s; it cannot go on\n", e.what().c_str());
  } catch (...) {  // no memory even for the message
    std::fprintf(stderr, "stoker: %.*s: out of host memory; it cannot go on\n",
                 static_cast<int>(what.size()), what.data());
  }
  std::fflush(stderr);
  std::abort();
}

}  // namespace stoker::common
