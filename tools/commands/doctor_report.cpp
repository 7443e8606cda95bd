#include "tools/commands/doctor_report.hpp"

#include <cmath>
#include <cstddef>
#include <cstdio>

#include "tools/cli/json_output.hpp"

namespace stoker::tools::doctor {
namespace {

// A figure in a table cell: "-" where it is missing.
std::string fmt(std::optional<double> v, int decimals = 1) {
  if (!v) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, *v);
  return buf;
}

}  // namespace

void print_text(const Report& r) {
  const auto& p = r.plan;
  const auto n = r.infos.size();
  std::printf("stoker doctor: %zu GPU%s, %s per copy, median of %d repetitions (+%d warm-up)\n", n,
              n == 1 ? "" : "s", format_bytes(p.copy_bytes).c_str(), p.reps, p.warmup);
  std::printf("host: %s%s%u hardware threads; CUDA contexts started in %.2f s\n",
              r.host.cpu_model.c_str(), r.host.cpu_model.empty() ? "" : ", ", r.host.cpu_threads,
              r.context_s);
  for (const auto* d : r.infos)
    std::printf("  GPU %d: %s, PCIe bus %s, NUMA node %d\n", d->index, d->name.c_str(),
                d->pci_bus_id.c_str(), d->numa_node);

  std::printf("\nhost memory API cost (wall clock, median of %d)\n", p.cost_reps);
  std::printf("  %-18s %-9s %8s s  %6s s/GiB   cudaFreeHost %s s\n", "cudaHostAlloc",
              format_bytes(r.alloc.bytes).c_str(), fmt(r.alloc.seconds, 3).c_str(),
              fmt(r.alloc.s_per_gib(), 2).c_str(), fmt(r.alloc.free_seconds, 3).c_str());
  std::printf("  %-18s %-9s %8s s  %6s s/GiB   cudaHostUnregister %s s\n", "cudaHostRegister",
              format_bytes(r.reg.bytes).c_str(), fmt(r.reg.seconds, 3).c_str(),
              fmt(r.reg.s_per_gib(), 2).c_str(), fmt(r.reg.free_seconds, 3).c_str());

  std::printf("\n%-42s", "transfers, GB/s (CUDA events)");
  for (std::size_t i = 0; i < n; ++i) std::printf("  GPU %-4zu", i);
  std::printf("\n");
  const std::string load = std::to_string(r.figures.writer_threads) + " writer threads";
  const auto row = [&](const std::string& label, std::optional<double> TransferFigures::*f) {
    std::printf("  %-40s", label.c_str());
    for (const auto& g : r.figures.gpus) std::printf("  %8s", fmt(g.*f).c_str());
    std::printf("\n");
  };
  using T = TransferFigures;
  row("H2D pinned (cudaHostAlloc)", &T::pinned_h2d);
  row("D2H pinned (cudaHostAlloc)", &T::pinned_d2h);
  row("H2D pageable (malloc, touched)", &T::pageable_h2d);
  row("D2H pageable (malloc, touched)", &T::pageable_d2h);
  row("H2D + D2H pinned at once: H2D", &T::duplex_h2d);
  row("H2D + D2H pinned at once: D2H", &T::duplex_d2h);
  row("H2D registered (cudaHostRegister)", &T::registered_h2d);
  row("D2H registered (cudaHostRegister)", &T::registered_d2h);
  if (r.figures.writer_threads > 0) {
    row("H2D pinned, " + load, &T::loaded_pinned_h2d);
    row("H2D pageable, " + load, &T::loaded_pageable_h2d);
    if (r.writers_gbps)
      std::printf("  (the writers wrote %.1f GB/s in total meanwhile)\n", *r.writers_gbps);
  }

  std::printf("\n");
  if (n > 1) {
    std::printf("all GPUs at once, H2D pinned: %s GB/s aggregate (wall clock); per GPU",
                fmt(r.figures.all_gpus_h2d).c_str());
    for (const double g : r.concurrent_per_gpu) std::printf(" %.1f", g);
    std::printf("\n\n%-42s", "peer copies, GB/s (cudaMemcpyPeerAsync)");
    for (std::size_t j = 0; j < n; ++j) std::printf("  to GPU %-2zu", j);
    std::printf("\n");
    for (std::size_t i = 0; i < n; ++i) {
      std::printf("  from GPU %-31zu", i);
      for (std::size_t j = 0; j < n; ++j) {
        std::string cell = "-";
        for (const auto& pf : r.figures.peers)
          if (pf.src == static_cast<int>(i) && pf.dst == static_cast<int>(j))
            cell = fmt(pf.gbps) + (pf.direct ? "" : " (host)");
        std::printf("  %9s", cell.c_str());
      }
      std::printf("\n");
    }
  } else {
    std::printf("one GPU: no concurrent or peer copies to measure\n");
  }

  std::printf("\nverdict\n");
  for (const auto& v : r.verdict) std::printf("  - %s\n", v.c_str());
  if (!r.errors.list.empty()) {
    std::printf("\nerrors (these figures are missing)\n");
    for (const auto& e : r.errors.list) std::printf("  - %s\n", e.c_str());
  }
}

void print_json(const Report& r) {
  const auto& p = r.plan;
  // null for a figure that is missing (its error is listed) or not finite.
  const auto num = [](std::optional<double> v) {
    return v && std::isfinite(*v) ? Json(*v) : Json(nullptr);
  };
  Json j;
  j["ok"] = r.errors.list.empty();
  j["copy_bytes"] = p.copy_bytes;
  j["reps"] = p.reps;
  j["warmup"] = p.warmup;
  j["writer_threads"] = r.figures.writer_threads;
  j["writer_bytes_each"] = p.writer_bytes;
  j["host"] = host_facts_to_json(r.host);
  j["context_start_s"] = num(r.context_s);
  const auto cost = [&](const CostFigure& c) {
    return Json{{"bytes", c.bytes},
                {"seconds", num(c.seconds)},
                {"s_per_gib", num(c.s_per_gib())},
                {"release_seconds", num(c.free_seconds)}};
  };
  j["host_alloc"] = cost(r.alloc);
  j["host_register"] = cost(r.reg);
  j["gpus"] = Json::array();
  for (std::size_t i = 0; i < r.infos.size(); ++i) {
    const auto& d = *r.infos[i];
    const auto& g = r.figures.gpus[i];
    j["gpus"].push_back(
        {{"index", d.index},
         {"ordinal", d.ordinal},
         {"name", d.name},
         {"pci_bus_id", d.pci_bus_id},
         {"pinned_h2d_gbps", num(g.pinned_h2d)},
         {"pinned_d2h_gbps", num(g.pinned_d2h)},
         {"pageable_h2d_gbps", num(g.pageable_h2d)},
         {"pageable_d2h_gbps", num(g.pageable_d2h)},
         {"duplex_h2d_gbps", num(g.duplex_h2d)},
         {"duplex_d2h_gbps", num(g.duplex_d2h)},
         {"registered_h2d_gbps", num(g.registered_h2d)},
         {"registered_d2h_gbps", num(g.registered_d2h)},
         {"loaded_pinned_h2d_gbps", num(g.loaded_pinned_h2d)},
         {"loaded_pageable_h2d_gbps", num(g.loaded_pageable_h2d)},
         {"concurrent_h2d_gbps",
          num(i < r.concurrent_per_gpu.size() ? std::optional<double>(r.concurrent_per_gpu[i])
                                              : std::nullopt)}});
  }
  j["all_gpus_h2d_gbps"] = num(r.figures.all_gpus_h2d);
  j["writers_write_gbps"] = num(r.writers_gbps);
  j["peers"] = Json::array();
  for (const auto& pf : r.figures.peers)
    j["peers"].push_back(
        {{"src", pf.src}, {"dst", pf.dst}, {"direct", pf.direct}, {"gbps", num(pf.gbps)}});
  j["verdict"] = r.verdict;
  j["errors"] = r.errors.list;
  std::printf("%s\n", json_text(j).c_str());
}

}  // namespace stoker::tools::doctor
