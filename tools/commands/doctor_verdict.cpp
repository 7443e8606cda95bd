#include "tools/commands/doctor_verdict.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace stoker::tools {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
// Below this ratio two paths count as equally fast: repetitions on a real
// machine scatter by a few per cent.
constexpr double kSame = 1.1;
// From this ratio on the slower path is worth avoiding.
constexpr double kMatters = 1.5;

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string gbps(double v) {
  return fixed(v, 1) + " GB/s";
}

std::string sec(double v) {
  return fixed(v, 2) + " s/GiB";
}

std::optional<double> median_of(const std::vector<TransferFigures>& gpus,
                                std::optional<double> TransferFigures::*field) {
  std::vector<double> v;
  for (const auto& g : gpus)
    if (g.*field) v.push_back(*(g.*field));
  return median(std::move(v));
}

}  // namespace

std::optional<double> median(std::vector<double> samples) {
  if (samples.empty()) return std::nullopt;
  const auto n = samples.size();
  std::sort(samples.begin(), samples.end());
  if (n % 2 == 1) return samples[n / 2];
  return (samples[n / 2 - 1] + samples[n / 2]) / 2;
}

std::string format_ratio(double r) {
  if (!std::isfinite(r)) return "?x";
  return (r < 10 ? fixed(r, 1) : fixed(r, 0)) + "x";
}

std::string format_bytes(std::uint64_t bytes) {
  const double b = static_cast<double>(bytes);
  if (bytes >= (std::uint64_t{1} << 30)) return fixed(b / kGiB, 1) + " GiB";
  if (bytes >= (std::uint64_t{1} << 20)) {
    if (bytes % (std::uint64_t{1} << 20) == 0) return std::to_string(bytes >> 20) + " MiB";
    return fixed(b / (1024.0 * 1024.0), 1) + " MiB";
  }
  if (bytes >= 1024) return fixed(b / 1024.0, 1) + " KiB";
  return std::to_string(bytes) + " B";
}

TransferFigures summarize(const std::vector<TransferFigures>& gpus) {
  using T = TransferFigures;
  TransferFigures s;
  s.pinned_h2d = median_of(gpus, &T::pinned_h2d);
  s.pinned_d2h = median_of(gpus, &T::pinned_d2h);
  s.pageable_h2d = median_of(gpus, &T::pageable_h2d);
  s.pageable_d2h = median_of(gpus, &T::pageable_d2h);
  s.registered_h2d = median_of(gpus, &T::registered_h2d);
  s.registered_d2h = median_of(gpus, &T::registered_d2h);
  s.duplex_h2d = median_of(gpus, &T::duplex_h2d);
  s.duplex_d2h = median_of(gpus, &T::duplex_d2h);
  s.loaded_pinned_h2d = median_of(gpus, &T::loaded_pinned_h2d);
  s.loaded_pageable_h2d = median_of(gpus, &T::loaded_pageable_h2d);
  return s;
}

std::vector<std::string> doctor_verdict(const DoctorFigures& f) {
  std::vector<std::string> lines;
  const TransferFigures s = summarize(f.gpus);
  const auto positive = [](const std::optional<double>& v) { return v && *v > 0; };

  // Pageable against pinned, idle and under host memory load.
  double worst = 0;  // the largest pinned/pageable ratio seen
  if (positive(s.pinned_h2d) && positive(s.pageable_h2d)) {
    const double r = *s.pinned_h2d / *s.pageable_h2d;
    worst = r;
    std::string line = r < kSame
                           ? "pageable H2D is as fast as pinned here (" + gbps(*s.pageable_h2d) +
                                 " vs " + gbps(*s.pinned_h2d) + ")"
                           : "pageable H2D is " + format_ratio(r) + " slower than pinned here (" +
                                 gbps(*s.pageable_h2d) + " vs " + gbps(*s.pinned_h2d) + ")";
    if (positive(s.loaded_pageable_h2d)) {
      const double rl = *s.pinned_h2d / *s.loaded_pageable_h2d;
      worst = std::max(worst, rl);
      line += "; under host memory load (" + std::to_string(f.writer_threads) +
              " writer threads) " + format_ratio(rl) + " (" + gbps(*s.loaded_pageable_h2d) + ")";
    }
    lines.push_back(line);
  }
  if (positive(s.pinned_h2d) && positive(s.loaded_pinned_h2d)) {
    const double r = *s.pinned_h2d / *s.loaded_pinned_h2d;
    if (r >= kSame)
      lines.push_back("pinned H2D drops to " + gbps(*s.loaded_pinned_h2d) +
                      " under the same load (" + format_ratio(r) +
                      " slower): the DMA engines share host memory bandwidth with the CPU, so "
                      "leave memory bandwidth to the feeding path");
    else
      lines.push_back("pinned H2D holds " + gbps(*s.loaded_pinned_h2d) + " under the same load");
  }
  // Both directions at once: a full-duplex link keeps each near its one-way
  // figure; a shared one splits about one direction's rate between them.
  if (positive(s.pinned_h2d) && positive(s.pinned_d2h) && positive(s.duplex_h2d) &&
      positive(s.duplex_d2h)) {
    const double one_way = std::max(*s.pinned_h2d, *s.pinned_d2h);
    const double both = *s.duplex_h2d + *s.duplex_d2h;
    if (both < 1.5 * one_way)
      lines.push_back("H2D and D2H share the link: at once they move " + gbps(*s.duplex_h2d) +
                      " + " + gbps(*s.duplex_d2h) + " against " + gbps(one_way) +
                      " one way, so a partition's H2D slows while another's D2H runs");
    else
      lines.push_back("the link is full duplex: H2D and D2H at once move " + gbps(*s.duplex_h2d) +
                      " + " + gbps(*s.duplex_d2h) + " (H2D at " +
                      std::to_string(static_cast<int>(100 * *s.duplex_h2d / *s.pinned_h2d + 0.5)) +
                      " % of its one-way rate)");
  }
  if (worst >= kMatters)
    lines.push_back(
        "feed this machine from pinned memory (PinnedVec / PinnedPool): producers write straight "
        "into pinned storage, and pageable inputs go through the pinned staging path");
  else if (worst > 0)
    lines.push_back(
        "pageable and pinned are close here; stoker still feeds from pinned memory (PinnedVec / "
        "PinnedPool), but pageable inputs cost little on this machine");

  if (positive(s.pinned_d2h) && positive(s.pageable_d2h)) {
    const double r = *s.pinned_d2h / *s.pageable_d2h;
    if (r >= kMatters)
      lines.push_back("pageable D2H is " + format_ratio(r) + " slower than pinned (" +
                      gbps(*s.pageable_d2h) + " vs " + gbps(*s.pinned_d2h) +
                      "): results should land in pinned memory too");
  }

  // Registering memory the caller owns against allocating pinned memory.
  if (positive(s.registered_h2d) && positive(s.pinned_h2d)) {
    const double r = *s.registered_h2d / *s.pinned_h2d;
    lines.push_back("cudaHostRegister'ed memory copies at " + gbps(*s.registered_h2d) + " (" +
                    fixed(100 * r, 0) + " % of cudaHostAlloc memory)");
  }
  if (positive(f.host_register_s_per_gib) && positive(f.host_alloc_s_per_gib)) {
    const double reg = *f.host_register_s_per_gib, alloc = *f.host_alloc_s_per_gib;
    if (reg < alloc)
      lines.push_back("cudaHostRegister costs " + sec(reg) + " against " + sec(alloc) +
                      " for cudaHostAlloc (" + format_ratio(alloc / reg) +
                      " cheaper): memory a producer already owns can be registered once and "
                      "reused instead of copied into fresh pinned memory; neither call belongs "
                      "on the hot path");
    else
      lines.push_back("cudaHostRegister costs " + sec(reg) + ", no less than cudaHostAlloc's " +
                      sec(alloc) +
                      ": allocate pinned memory up front (PinnedPool) rather than "
                      "registering");
  }
  if (positive(f.host_alloc_s_per_gib) && positive(s.pageable_h2d)) {
    const double copy_s_per_gib = kGiB / 1e9 / *s.pageable_h2d;
    if (*f.host_alloc_s_per_gib > copy_s_per_gib)
      lines.push_back("a fresh cudaHostAlloc per transfer (" + sec(*f.host_alloc_s_per_gib) +
                      ") would cost more than the pageable copy itself (" + sec(copy_s_per_gib) +
                      "): pool pinned memory, allocate it at start-up only");
  }

  // Feeding every GPU at once.
  const auto n = f.gpus.size();
  if (n > 1 && positive(f.all_gpus_h2d)) {
    double sum = 0;
    std::size_t counted = 0;
    for (const auto& g : f.gpus)
      if (positive(g.pinned_h2d)) {
        sum += *g.pinned_h2d;
        ++counted;
      }
    const std::string head =
        "all " + std::to_string(n) + " GPUs at once: " + gbps(*f.all_gpus_h2d) + " aggregate H2D";
    if (counted == n && sum > 0) {
      const double eff = *f.all_gpus_h2d / sum;
      if (eff >= 1 / kSame)
        lines.push_back(head + " (" + fixed(100 * eff, 0) + " % of " + std::to_string(n) +
                        " single-GPU links): the host feeds every link at full rate");
      else
        lines.push_back(head + ", only " + fixed(100 * eff, 0) + " % of " + std::to_string(n) +
                        " single-GPU links (" + gbps(sum) +
                        "): host memory or the PCIe root limits concurrent feeding, so "
                        "H2D-bound jobs scale less than " +
                        std::to_string(n) + "-fold");
    } else {
      lines.push_back(head);
    }
  }

  // Peer links.
  if (n < 2) {
    lines.push_back("one GPU: no concurrent feeding or peer copies to measure");
  } else if (!f.peers.empty()) {
    std::vector<double> direct;
    for (const auto& p : f.peers)
      if (p.direct && positive(p.gbps)) direct.push_back(*p.gbps);
    if (!direct.empty()) {
      const auto [lo, hi] = std::minmax_element(direct.begin(), direct.end());
      std::string line = "peer copies: " + gbps(*median(direct)) + " median over " +
                         std::to_string(direct.size()) + " direct links";
      if (*hi > *lo * kSame) line += " (" + gbps(*lo) + " to " + gbps(*hi) + ")";
      lines.push_back(line);
    }
    for (const auto& p : f.peers)
      if (!p.direct)
        lines.push_back("GPU " + std::to_string(p.src) + " -> GPU " + std::to_string(p.dst) +
                        " has no peer access: copies go through host memory" +
                        (positive(p.gbps) ? " at " + gbps(*p.gbps) : std::string{}));
  }
  return lines;
}

}  // namespace stoker::tools
