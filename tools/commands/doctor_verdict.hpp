// The pure logic behind `stoker info` and `stoker doctor`: turning measured
// figures into a plain verdict, and the statistics and text helpers they
// share. Nothing here touches a device or the clock, so every line of the
// verdict can be tested from given figures.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace stoker::tools {

// Median of the samples (mean of the middle two for an even count); nullopt
// for none. Doctor reports medians so one stalled repetition does not count.
std::optional<double> median(std::vector<double> samples);

// "7.9x" below 10, "31x" from 10 on: ratios read as the field reports them.
std::string format_ratio(double r);

// A count of bytes for people: "256 MiB", "1.0 GiB", "60.0 MiB".
std::string format_bytes(std::uint64_t bytes);

// One GPU's transfer figures in GB/s (1e9 bytes per second), medians over the
// repetitions; nullopt where the measurement failed or was skipped.
struct TransferFigures {
  std::optional<double> pinned_h2d, pinned_d2h;
  std::optional<double> pageable_h2d, pageable_d2h;
  std::optional<double> registered_h2d, registered_d2h;
  // H2D and D2H at once on two streams, each direction's own rate: below the
  // one-way figures where the link or the host side is shared by both.
  std::optional<double> duplex_h2d, duplex_d2h;
  // While `writer_threads` host threads stream-write their own buffers.
  std::optional<double> loaded_pinned_h2d, loaded_pageable_h2d;
};

struct PeerFigure {
  int src = 0, dst = 0;
  bool direct = false;  // peer access enabled; otherwise the copy went through the host
  std::optional<double> gbps;
};

struct DoctorFigures {
  std::vector<TransferFigures> gpus;  // one per GPU, in DeviceSet order
  int writer_threads = 0;
  std::optional<double> all_gpus_h2d;  // aggregate GB/s with every GPU copying at once
  std::vector<PeerFigure> peers;       // every ordered pair; empty with one GPU
  std::optional<double> host_alloc_s_per_gib;
  std::optional<double> host_register_s_per_gib;
};

// Per-figure median over the GPUs: what "this machine" does.
TransferFigures summarize(const std::vector<TransferFigures>& gpus);

// The plain verdict, one sentence per line: how much slower the pageable
// path is, what host memory load does to it, which feeding path to use,
// whether the host can feed every GPU at once, what the peer links give,
// and whether registering beats allocating pinned memory.
std::vector<std::string> doctor_verdict(const DoctorFigures& f);

}  // namespace stoker::tools
