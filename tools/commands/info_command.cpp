#include "tools/commands/info_command.hpp"

#include <cuda_runtime.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <string_view>
#include <thread>

#include "devices/device_set.hpp"
#include "devices/meminfo.hpp"
#include "tools/cli/command_line.hpp"
#include "tools/cli/json_output.hpp"
#include "tools/commands/doctor_verdict.hpp"

namespace stoker::tools {
namespace {

constexpr const char* kUsage =
    "usage: stoker info [--json]\n"
    "Lists the devices stoker runs on (the CUDA GPUs, or the host backend when there is\n"
    "none) with their properties and peer topology, and the host's CPU and memory.\n"
    "  --json   one JSON object instead of text\n";

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line)) {
    if (line.rfind("model name", 0) != 0) continue;
    const auto colon = line.find(':');
    if (colon == std::string::npos) break;
    auto v = line.substr(colon + 1);
    const auto b = v.find_first_not_of(" \t");
    return b == std::string::npos ? std::string{} : v.substr(b);
  }
  return {};
}

std::string version(int v) {
  if (v <= 0) return "none";
  return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10);
}

std::string pcie_text(const devices::DeviceInfo& d) {
  const auto link = [](int gen, int width) {
    return "Gen" + std::to_string(gen) + " x" + std::to_string(width);
  };
  if (d.pcie_generation <= 0 && d.pcie_max_generation <= 0) return "not readable";
  if (d.pcie_max_generation <= 0) return link(d.pcie_generation, d.pcie_width);
  if (d.pcie_generation <= 0) return "max " + link(d.pcie_max_generation, d.pcie_max_width);
  if (d.pcie_generation == d.pcie_max_generation && d.pcie_width == d.pcie_max_width)
    return link(d.pcie_generation, d.pcie_width);
  return link(d.pcie_generation, d.pcie_width) + " now (an idle GPU trains down), max " +
         link(d.pcie_max_generation, d.pcie_max_width);
}

void print_text(const HostFacts& h, const devices::DeviceSet& set) {
  std::printf("host\n");
  std::printf("  %-20s %s%s%u hardware threads\n", "CPU", h.cpu_model.c_str(),
              h.cpu_model.empty() ? "" : ", ", h.cpu_threads);
  if (h.mem_total_bytes) {
    std::printf("  %-20s %s total", "memory", format_bytes(*h.mem_total_bytes).c_str());
    if (h.mem_available_bytes)
      std::printf(", %s available", format_bytes(*h.mem_available_bytes).c_str());
    std::printf("\n");
  } else {
    std::printf("  %-20s not readable (/proc/meminfo)\n", "memory");
  }
  std::printf("  %-20s driver %s, runtime %s\n", "CUDA", version(h.cuda_driver_version).c_str(),
              version(h.cuda_runtime_version).c_str());

  const bool cuda = set.backend() == devices::Backend::cuda;
  if (cuda)
    std::printf("backend: cuda, %zu GPU%s\n", set.size(), set.size() == 1 ? "" : "s");
  else
    std::printf("backend: host (no CUDA device visible; %zu emulated device%s on CPU threads)\n",
                set.size(), set.size() == 1 ? "" : "s");

  for (std::size_t i = 0; i < set.size(); ++i) {
    const auto& d = set[i].info();
    std::printf("\n");
    if (cuda) {
      std::printf("GPU %d  %s (CUDA ordinal %d)\n", d.index, d.name.c_str(), d.ordinal);
      std::printf("  %-20s %d.%d\n", "compute capability", d.cc_major, d.cc_minor);
      std::printf("  %-20s %d\n", "SMs", d.sm_count);
      std::printf("  %-20s %s\n", "memory", format_bytes(d.total_memory).c_str());
      std::printf("  %-20s %s\n", "L2", format_bytes(d.l2_bytes).c_str());
      std::printf("  %-20s %s (opt-in)\n", "shared per block",
                  format_bytes(static_cast<std::uint64_t>(d.max_shared_per_block)).c_str());
      std::printf("  %-20s %s\n", "PCIe", pcie_text(d).c_str());
      std::printf("  %-20s %s\n", "PCI bus id",
                  d.pci_bus_id.empty() ? "not readable" : d.pci_bus_id.c_str());
      if (d.numa_node >= 0)
        std::printf("  %-20s %d\n", "NUMA node", d.numa_node);
      else
        std::printf("  %-20s not readable\n", "NUMA node");
      std::printf("  %-20s %s\n", "CPU affinity",
                  d.cpu_affinity.empty() ? "not readable" : d.cpu_affinity.c_str());
    } else {
      std::printf("device %d  %s\n", d.index, d.name.c_str());
      std::printf("  %-20s %d\n", "CPU threads", d.sm_count);
      std::printf("  %-20s %s (emulated capacity)\n", "memory",
                  format_bytes(d.total_memory).c_str());
      std::printf("  %-20s %s\n", "slowdown", format_ratio(d.slowdown).c_str());
    }
  }

  const auto& t = set.topology();
  const auto n = set.size();
  std::printf("\n");
  if (n < 2) {
    std::printf("topology: one device, no peers\n");
    return;
  }
  std::printf("topology: peer access from row to column, with CUDA's performance rank (0 best)\n");
  const char* tag = cuda ? "GPU" : "dev";
  std::printf("  %-8s", "");
  for (std::size_t j = 0; j < n; ++j) std::printf(" %s %-5zu", tag, j);
  std::printf("\n");
  for (std::size_t i = 0; i < n; ++i) {
    std::printf("  %s %-4zu", tag, i);
    for (std::size_t j = 0; j < n; ++j) {
      std::string cell = "-";
      if (i != j) {
        const bool ok =
            i < t.peer_access.size() && j < t.peer_access[i].size() && t.peer_access[i][j];
        const int rank =
            i < t.peer_rank.size() && j < t.peer_rank[i].size() ? t.peer_rank[i][j] : -1;
        cell = ok ? (rank >= 0 ? "yes r" + std::to_string(rank) : std::string("yes")) : "no";
      }
      std::printf(" %-9s", cell.c_str());
    }
    std::printf("\n");
  }
}

// null where the driver did not say.
Json int_or_null(long long v, bool present) {
  return present ? Json(v) : Json(nullptr);
}
Json text_or_null(const std::string& s) {
  return s.empty() ? Json(nullptr) : Json(s);
}

Json device_json(const devices::DeviceInfo& d) {
  Json j;
  j["index"] = d.index;
  j["ordinal"] = d.ordinal;
  j["backend"] = devices::to_string(d.backend);
  j["name"] = d.name;
  j["compute_capability"] =
      d.backend == devices::Backend::cuda
          ? Json(std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor))
          : Json(nullptr);
  j["sm_count"] = d.sm_count;
  j["total_memory_bytes"] = d.total_memory;
  j["l2_bytes"] = d.l2_bytes;
  j["max_shared_per_block_bytes"] = d.max_shared_per_block;
  j["pci_bus_id"] = text_or_null(d.pci_bus_id);
  j["pcie"] = {{"generation", int_or_null(d.pcie_generation, d.pcie_generation > 0)},
               {"width", int_or_null(d.pcie_width, d.pcie_width > 0)},
               {"max_generation", int_or_null(d.pcie_max_generation, d.pcie_max_generation > 0)},
               {"max_width", int_or_null(d.pcie_max_width, d.pcie_max_width > 0)}};
  j["numa_node"] = int_or_null(d.numa_node, d.numa_node >= 0);
  j["cpu_affinity"] = text_or_null(d.cpu_affinity);
  j["slowdown"] = std::isfinite(d.slowdown) ? Json(d.slowdown) : Json(nullptr);
  return j;
}

void print_json(const HostFacts& h, const devices::DeviceSet& set) {
  Json j;
  j["host"] = host_facts_to_json(h);
  j["backend"] = devices::to_string(set.backend());
  j["devices"] = Json::array();
  for (std::size_t i = 0; i < set.size(); ++i) j["devices"].push_back(device_json(set[i].info()));
  const auto& t = set.topology();
  Json access = Json::array(), rank = Json::array();
  for (std::size_t i = 0; i < set.size(); ++i) {
    Json access_row = Json::array(), rank_row = Json::array();
    for (std::size_t j2 = 0; j2 < set.size(); ++j2) {
      const bool ok =
          i < t.peer_access.size() && j2 < t.peer_access[i].size() && t.peer_access[i][j2];
      const int r = i < t.peer_rank.size() && j2 < t.peer_rank[i].size() ? t.peer_rank[i][j2] : -1;
      access_row.push_back(ok);
      rank_row.push_back(int_or_null(r, r >= 0));
    }
    access.push_back(std::move(access_row));
    rank.push_back(std::move(rank_row));
  }
  j["topology"] = {{"peer_access", std::move(access)}, {"peer_rank", std::move(rank)}};
  std::printf("%s\n", json_text(j).c_str());
}

}  // namespace

HostFacts read_host_facts() {
  HostFacts h;
  h.cpu_threads = std::thread::hardware_concurrency();
  h.cpu_model = cpu_model();
  const devices::MemInfo m = devices::read_meminfo();
  h.mem_total_bytes = m.total_bytes;
  h.mem_available_bytes = m.available_bytes;
  // Both report success with 0 (or the compiled-in version) without a
  // driver; any failure simply leaves the version unknown.
  if (cudaDriverGetVersion(&h.cuda_driver_version) != cudaSuccess) {
    cudaGetLastError();
    h.cuda_driver_version = 0;
  }
  if (cudaRuntimeGetVersion(&h.cuda_runtime_version) != cudaSuccess) {
    cudaGetLastError();
    h.cuda_runtime_version = 0;
  }
  return h;
}

Json host_facts_to_json(const HostFacts& h) {
  const auto opt = [](const std::optional<std::uint64_t>& v) {
    return v ? Json(*v) : Json(nullptr);
  };
  Json j;
  j["cpu_threads"] = h.cpu_threads;
  j["cpu_model"] = text_or_null(h.cpu_model);
  j["mem_total_bytes"] = opt(h.mem_total_bytes);
  j["mem_available_bytes"] = opt(h.mem_available_bytes);
  j["cuda_driver_version"] = int_or_null(h.cuda_driver_version, h.cuda_driver_version > 0);
  j["cuda_runtime_version"] = int_or_null(h.cuda_runtime_version, h.cuda_runtime_version > 0);
  return j;
}

std::string host_facts_json(const HostFacts& h) {
  return json_text(host_facts_to_json(h));
}

int info_command(int argc, char** argv) {
  CommandLine cl("info", kUsage);
  bool json = false;
  cl.flag("--json", json);
  if (auto rc = cl.parse(argc, argv)) return *rc;
  const HostFacts host = read_host_facts();
  auto set = devices::discover();
  if (!set) {
    std::fprintf(stderr, "stoker info: device discovery failed: %s\n", set.error().what().c_str());
    return 1;
  }
  if (json)
    print_json(host, *set);
  else
    print_text(host, *set);
  return 0;
}

}  // namespace stoker::tools
