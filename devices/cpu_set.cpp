#include "devices/cpu_set.hpp"

#include <pthread.h>
#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <iterator>
#include <memory>

namespace stoker::devices {
namespace {

// No host has a million CPUs; a larger number is a typo, not a set to allocate.
constexpr int kMostCpus = 1 << 20;

// A kernel cpu_set_t sized for `count` CPUs (glibc's fixed one stops at
// 1024, which large hosts pass).
struct DynamicCpuSet {
  explicit DynamicCpuSet(std::size_t count)
      : set(CPU_ALLOC(static_cast<int>(count)), &free_set), bytes(CPU_ALLOC_SIZE(count)) {
    if (set) CPU_ZERO_S(bytes, set.get());
  }
  static void free_set(cpu_set_t* s) { CPU_FREE(s); }
  std::unique_ptr<cpu_set_t, void (*)(cpu_set_t*)> set;
  std::size_t bytes;
};

// sched_getaffinity for `tid` (0: the calling thread), growing the set
// until the kernel's mask fits.
CpuSet read_affinity(pid_t tid) {
  for (std::size_t count = 1024; count <= (std::size_t{1} << 20); count *= 4) {
    DynamicCpuSet s(count);
    if (!s.set) return {};
    if (sched_getaffinity(tid, s.bytes, s.set.get()) == 0) {
      std::vector<int> cpus;
      for (std::size_t i = 0; i < count; ++i)
        if (CPU_ISSET_S(i, s.bytes, s.set.get())) cpus.push_back(static_cast<int>(i));
      return CpuSet(std::move(cpus));
    }
    if (errno != EINVAL) return {};  // EINVAL: the mask is wider than the set
  }
  return {};
}

}  // namespace

CpuSet::CpuSet(std::vector<int> cpus) : cpus_(std::move(cpus)) {
  std::erase_if(cpus_, [](int c) { return c < 0 || c >= kMostCpus; });
  std::sort(cpus_.begin(), cpus_.end());
  cpus_.erase(std::unique(cpus_.begin(), cpus_.end()), cpus_.end());
}

Result<CpuSet> CpuSet::parse(std::string_view cpulist) {
  const auto bad = [&](const std::string& why) {
    return Error{Errc::invalid_argument, "cpulist '" + std::string(cpulist) + "': " + why};
  };
  // sysfs ends its files with a newline.
  std::string_view text = cpulist;
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  if (text.empty()) return bad("no CPU in it");
  const auto number = [&](std::string_view s, int& out) {
    const auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc{} && p == s.data() + s.size() && !s.empty() && out >= 0 &&
           out < kMostCpus;
  };
  std::vector<int> cpus;
  while (!text.empty()) {
    const auto comma = text.find(',');
    const std::string_view item = text.substr(0, comma);
    text = comma == std::string_view::npos ? std::string_view{} : text.substr(comma + 1);
    if (comma != std::string_view::npos && text.empty()) return bad("ends with a comma");
    const auto dash = item.find('-');
    int first = 0, last = 0;
    if (!number(item.substr(0, dash), first))
      return bad("'" + std::string(item) + "' is not a CPU number or range");
    last = first;
    if (dash != std::string_view::npos && !number(item.substr(dash + 1), last))
      return bad("'" + std::string(item) + "' is not a CPU number or range");
    if (last < first) return bad("range " + std::string(item) + " runs backwards");
    for (int c = first; c <= last; ++c) cpus.push_back(c);
  }
  return CpuSet(std::move(cpus));
}

CpuSet CpuSet::allowed() {
  return read_affinity(0);
}

CpuSet CpuSet::of_thread(int tid) {
  return read_affinity(static_cast<pid_t>(tid));
}

bool CpuSet::contains(const CpuSet& other) const {
  return std::includes(cpus_.begin(), cpus_.end(), other.cpus_.begin(), other.cpus_.end());
}

CpuSet CpuSet::intersect(const CpuSet& other) const {
  std::vector<int> both;
  std::set_intersection(cpus_.begin(), cpus_.end(), other.cpus_.begin(), other.cpus_.end(),
                        std::back_inserter(both));
  return CpuSet(std::move(both));
}

std::string CpuSet::to_string() const {
  std::string s;
  for (std::size_t i = 0; i < cpus_.size();) {
    std::size_t j = i;
    while (j + 1 < cpus_.size() && cpus_[j + 1] == cpus_[j] + 1) ++j;
    if (!s.empty()) s += ',';
    s += std::to_string(cpus_[i]);
    if (j > i) s += '-' + std::to_string(cpus_[j]);
    i = j + 1;
  }
  return s;
}

std::error_code CpuSet::bind_this_thread() const {
  if (cpus_.empty()) return make_error_code(Errc::invalid_argument);
  DynamicCpuSet s(static_cast<std::size_t>(cpus_.back()) + 1);
  if (!s.set) return std::make_error_code(std::errc::not_enough_memory);
  for (int c : cpus_) CPU_SET_S(static_cast<std::size_t>(c), s.bytes, s.set.get());
  if (const int e = pthread_setaffinity_np(pthread_self(), s.bytes, s.set.get()); e != 0)
    return {e, std::generic_category()};
  return {};
}

CpuSet cpus_near(const DeviceInfo& info) {
  if (info.cpu_affinity.empty()) return {};
  auto local = CpuSet::parse(info.cpu_affinity);
  if (!local) return {};
  const CpuSet allowed = CpuSet::allowed();
  CpuSet near = local->intersect(allowed);
  if (near.empty() || near.contains(allowed)) return {};
  return near;
}

}  // namespace stoker::devices
