// `stoker bench ntt` and `stoker bench hpoly`; see kernel_commands.hpp.
#include <cuda_runtime_api.h>

#include <chrono>
#include <cstdio>
#include <iostream>
#include <limits>
#include <new>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "common/elapsed.hpp"
#include "common/host_memory_limit.hpp"
#include "devices/device_set.hpp"
#include "engine/strict_number.hpp"
#include "kernels/cpu_host_bytes.hpp"
#include "kernels/field.cuh"
#include "kernels/hpoly.hpp"
#include "kernels/ntt.hpp"
#include "tools/bench/bench_stats.hpp"
#include "tools/cli/json_output.hpp"
#include "tools/cli/memory_guard.hpp"
#include "tools/commands/kernel_args.hpp"
#include "tools/commands/kernel_commands.hpp"
#include "tools/commands/kernel_gpu.hpp"

namespace stoker::tools {
namespace {

using engine::integer_problem;
using engine::parse_integer;
using kernel_cli::allocate_elements;
using kernel_cli::Args;
using kernel_cli::check_device_room;
using kernel_cli::Gpu;
using kernel_cli::open_gpu;
using kernel_cli::parse;
using kernel_cli::parse_log_n;
using kernel_cli::upload;
using kernel_cli::usage;
using kernel_cli::use_gpu;
using kernels::Fr;

// `n` canonical elements, the same ones for the same seed.
std::vector<Fr> random_elements(std::size_t n, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Fr> v(n);
  for (auto& x : v)
    for (;;) {
      std::uint64_t l[4] = {rng(), rng(), rng(), rng() & 0x7fffffffffffffffull};
      if (Fr::is_canonical(l)) {
        x = Fr::from_canonical(l);
        break;
      }
    }
  return v;
}

struct Anchor {
  unsigned log_n;
  double ntt_ms, hpoly_ms;
};
// sppark on one H200 (docs/BENCHMARKS.md): forward NTT natural/natural and the
// seven NTTs of hpoly, device-resident, CUDA events.
constexpr Anchor kAnchors[] = {{20, 0.27, 2.0}, {24, 4.7, 34}, {26, 23.8, 166}, {27, 44.4, 323}};

std::optional<Anchor> anchor_for(unsigned log_n) {
  for (const auto& a : kAnchors)
    if (a.log_n == log_n) return a;
  return std::nullopt;
}

// Passes over memory per natural-order NTT of this implementation
// (kernels/detail/ntt_gpu.hpp): the DIF passes plus the bit reversal.
unsigned ntt_passes(unsigned log_n) {
  if (log_n <= 11) return 1;
  return 1 + (log_n - 11 + 9) / 10 + 1;
}

double peak_bandwidth_bytes_per_s(const devices::Device& device) {
  int khz = 0, bits = 0;
  const int ordinal = device.info().ordinal;
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrMemoryClockRate, ordinal) ||
      cudaDeviceGetAttribute(&bits, cudaDevAttrGlobalMemoryBusWidth, ordinal) || !khz || !bits) {
    cudaGetLastError();
    return 4.8e12;  // H200 datasheet
  }
  return 2.0 * khz * 1e3 * bits / 8.0;
}

struct BenchRow {
  unsigned log_n;
  double ms;
  double modmuls;      // nominal radix-2 butterfly multiplications
  double bytes;        // moved by this implementation
  double floor_bytes;  // one read and one write of every vector touched
};

// Median of `reps` runs of `body` on the GPU's stream after two warm-up runs,
// timed by timing events on that stream.
template <typename Body>
std::optional<double> time_gpu(Gpu& gpu, int reps, Body&& body, std::string& error) {
  auto start = gpu.device().create_event(devices::EventKind::timing);
  auto stop = gpu.device().create_event(devices::EventKind::timing);
  if (!start || !stop) {
    error = "timing events: " + (start ? stop : start).error().what();
    return std::nullopt;
  }
  std::vector<double> times;
  for (int r = -2; r < reps; ++r) {
    std::error_code ec = gpu.stream.record(*start);
    if (!ec) ec = body();
    if (!ec) ec = gpu.stream.record(*stop);
    if (!ec) ec = stop->synchronize();
    if (ec) {
      error = ec.message();
      return std::nullopt;
    }
    const auto ms = devices::elapsed_ms(*start, *stop);
    if (!ms) {
      error = ms.error().what();
      return std::nullopt;
    }
    if (r >= 0) times.push_back(*ms);
  }
  return median(times);
}

template <typename Body>
double time_cpu(int reps, Body&& body) {
  std::vector<double> times;
  for (int r = -1; r < reps; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    body();
    const auto t1 = std::chrono::steady_clock::now();
    if (r >= 0) times.push_back(common::ms_since(t0, t1));
  }
  return median(times);
}

void print_rows(const char* what, const std::vector<BenchRow>& rows, bool json, bool gpu, double bw,
                bool hpoly) {
  if (json) {
    Json out = Json::array();
    for (const auto& r : rows) {
      const auto anchor = anchor_for(r.log_n);
      out.push_back({{"bench", what},
                     {"backend", gpu ? "gpu" : "cpu"},
                     {"log_n", r.log_n},
                     {"ms", r.ms},
                     {"modmuls_per_s", r.modmuls / (r.ms * 1e-3)},
                     {"bytes_moved", r.bytes},
                     {"bandwidth_floor_ms", gpu ? r.bytes / bw * 1e3 : 0},
                     {"one_pass_floor_ms", gpu ? r.floor_bytes / bw * 1e3 : 0},
                     {"sppark_ms",
                      anchor ? Json(hpoly ? anchor->hpoly_ms : anchor->ntt_ms) : Json(nullptr)}});
    }
    std::cout << json_text(out) << "\n";
    return;
  }
  std::printf("%s on %s%s\n", what, gpu ? "GPU" : "CPU",
              gpu ? " (device-resident, CUDA events, median)" : " (median)");
  if (gpu) std::printf("peak memory bandwidth %.2f TB/s\n", bw / 1e12);
  std::printf("%6s %10s %14s %12s %12s %12s %10s\n", "log_n", "ms", "modmul/s", "GB moved",
              "floor ms", "1-pass ms", "sppark ms");
  for (const auto& r : rows) {
    const auto anchor = anchor_for(r.log_n);
    char anchor_s[32] = "-";
    if (anchor)
      std::snprintf(anchor_s, sizeof anchor_s, "%.2f", hpoly ? anchor->hpoly_ms : anchor->ntt_ms);
    std::printf("%6u %10.3f %14.3e %12.3f %12.3f %12.3f %10s\n", r.log_n, r.ms,
                r.modmuls / (r.ms * 1e-3), r.bytes / 1e9, gpu ? r.bytes / bw * 1e3 : 0.0,
                gpu ? r.floor_bytes / bw * 1e3 : 0.0, anchor_s);
  }
  std::printf(
      "modmul/s counts n/2 * log2 n butterfly multiplications per NTT; floor ms = bytes moved by "
      "these kernels at peak bandwidth; 1-pass ms = one read and one write of the data.\n");
}

int bench(int argc, char** argv, bool hpoly) {
  const char* synopsis =
      hpoly ? "stoker bench hpoly [--log-n 20,24,26] [--reps N] [--json] [--cpu | --device N]"
            : "stoker bench ntt [--log-n 20,24,26] [--reps N] [--json] [--cpu | --device N]";
  const std::string name = hpoly ? "bench hpoly" : "bench ntt";
  const std::string help =
      std::string("usage: ") + synopsis + "\n" +
      (hpoly ? "Times the H polynomial (7 NTTs and the pointwise step) device-resident.\n"
             : "Times the forward NTT (natural order in and out) device-resident.\n") +
      "  --log-n K,K,...  sizes 2^K, K in 1.." + std::to_string(kernels::kMaxLogN) +
      " (default 20,24,26)\n"
      "  --reps N         timed repetitions, median reported (default 10)\n"
      "  --json           one JSON array of rows\n"
      "  --cpu            the CPU version instead of the GPU\n"
      "  --device N       the GPU (default 0)\n";
  Args a;
  if (auto rc = parse(name, help, argc, argv, a, {"--log-n", "--reps"}, {"--json", "--cpu"}))
    return *rc;
  std::vector<unsigned> sizes;
  {
    std::stringstream ss(a.values.count("--log-n") ? a.values["--log-n"] : "20,24,26");
    std::string item;
    while (std::getline(ss, item, ',')) {
      auto k = parse_log_n(item);
      if (!k) return usage(name, integer_problem("--log-n", item, 1u, kernels::kMaxLogN), synopsis);
      sizes.push_back(*k);
    }
  }
  int reps = 10;
  if (a.values.count("--reps")) {
    const std::string& text = a.values["--reps"];
    const auto n = parse_integer(text, 1, std::numeric_limits<int>::max());
    if (!n)
      return usage(name, integer_problem("--reps", text, 1, std::numeric_limits<int>::max()),
                   synopsis);
    reps = *n;
  }
  const bool json = a.flags.count("--json") > 0;
  std::optional<Gpu> gpu;
  if (use_gpu(a)) {
    auto opened = open_gpu(a);
    if (!opened) {
      std::cerr << "stoker " << name << ": " << opened.error().what() << "\n";
      return 1;
    }
    gpu.emplace(std::move(*opened));
  }
  // Host memory per size: the inputs (a, b, c for hpoly) and, on the CPU,
  // a working copy of them, h and the kernel's own. Every size is checked
  // before the first runs.
  const auto host_need = [&](unsigned k) {
    const std::size_t n = std::size_t{1} << k, inputs = (hpoly ? 3 : 1) * n * sizeof(Fr);
    if (gpu) return inputs;
    return 2 * inputs + (hpoly ? n * sizeof(Fr) + kernels::cpu::hpoly_host_bytes(k)
                               : kernels::cpu::transform_host_bytes(k));
  };
  for (unsigned k : sizes)
    if (Error e = common::check_host_memory("2^" + std::to_string(k), host_need(k))) {
      std::cerr << "stoker " << name << ": " << e.what() << "\n";
      return 1;
    }
  const double bw = gpu ? peak_bandwidth_bytes_per_s(gpu->device()) : 0;
  std::vector<BenchRow> rows;
  for (unsigned k : sizes) {
    try {
      const std::size_t n = std::size_t{1} << k;
      const double elem = 32.0 * n;
      const double ntt_muls = 0.5 * n * k;
      const unsigned p = ntt_passes(k);
      BenchRow row{k, 0, hpoly ? 7 * ntt_muls : ntt_muls, 0,
                   hpoly ? 4 * elem + 2 * elem : 2 * elem};
      // Per pass one read and one write; hpoly: 7 NTTs share one final bit
      // reversal, and the pointwise step reads two more vectors.
      row.bytes = hpoly
                      ? (k <= 11 ? (7.0 * 2 + 4) * elem : (7.0 * (p - 1) + 1) * 2 * elem + 2 * elem)
                      : p * 2 * elem;
      const auto host = random_elements(hpoly ? 3 * n : n, 42 + k);
      std::string error;
      if (gpu) {
        if (!check_device_room(gpu->device(), (hpoly ? 4 : 1) * n * sizeof(Fr), error)) {
          std::cerr << "stoker " << name << ": 2^" << k << ": " << error << "\n";
          return 1;
        }
        // hpoly: a, b, c then h; ntt: the one vector, in place.
        auto data = allocate_elements(gpu->device(), host.size() + (hpoly ? n : 0));
        if (!data) {
          std::cerr << "stoker " << name << ": 2^" << k << ": " << data.error().what() << "\n";
          return 1;
        }
        Fr* d = data->as<Fr>();
        Fr* h = d + host.size();
        if (upload(*gpu, d, host.data(), host.size() * sizeof(Fr), error)) {
          std::cerr << "stoker " << name << ": 2^" << k << ": " << error << "\n";
          return 1;
        }
        if (auto ec = kernels::gpu::prepare(k)) {
          std::cerr << "stoker " << name << ": " << ec.message() << "\n";
          return 1;
        }
        const cudaStream_t stream = gpu->native();
        std::optional<double> ms;
        if (hpoly)
          ms = time_gpu(
              *gpu, reps, [&] { return kernels::gpu::hpoly(h, d, d + n, d + 2 * n, k, stream); },
              error);
        else
          ms = time_gpu(
              *gpu, reps, [&] { return kernels::gpu::ntt(d, d, k, 1, stream); }, error);
        if (!ms) {
          std::cerr << "stoker " << name << ": 2^" << k << ": " << error << "\n";
          return 1;
        }
        row.ms = *ms;
      } else {
        std::vector<Fr> work(host), h(hpoly ? n : 0);
        if (hpoly)
          row.ms = time_cpu(reps, [&] {
            kernels::cpu::hpoly(h.data(), work.data(), work.data() + n, work.data() + 2 * n, k);
          });
        else
          row.ms = time_cpu(reps, [&] { kernels::cpu::ntt(work.data(), work.data(), k); });
        row.bytes = 0;
      }
      rows.push_back(row);
    } catch (const std::bad_alloc&) {
      std::cerr << "stoker " << name << ": "
                << common::host_memory_refused("2^" + std::to_string(k), host_need(k)).what()
                << "\n";
      return 1;
    }
  }
  print_rows(hpoly ? "hpoly (7 NTTs + pointwise)" : "ntt (forward, natural/natural)", rows, json,
             gpu.has_value(), bw, hpoly);
  return 0;
}

}  // namespace

int bench_ntt_command(int argc, char** argv) {
  return with_memory_guard("bench ntt", [&] { return bench(argc, argv, false); });
}
int bench_hpoly_command(int argc, char** argv) {
  return with_memory_guard("bench hpoly", [&] { return bench(argc, argv, true); });
}

}  // namespace stoker::tools
