#include "tools/commands/doctor_command.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "devices/cpu_set.hpp"
#include "devices/device_set.hpp"
#include "devices/pinned_buffer.hpp"
#include "tools/cli/command_line.hpp"
#include "tools/cli/json_output.hpp"
#include "tools/commands/doctor_verdict.hpp"
#include "tools/commands/info_command.hpp"

namespace stoker::tools {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kMiB = std::size_t{1} << 20;
constexpr std::size_t kGiB = std::size_t{1} << 30;
// Fast paths move at least this much between two events, so launch latency
// and event resolution stay far below a per cent even with --quick sizes.
constexpr std::size_t kMinTimedBytes = 256 * kMiB;
// Writers write in chunks of this size so they notice a stop request quickly.
constexpr std::size_t kWriterChunk = 16 * kMiB;

constexpr const char* kUsage =
    "usage: stoker doctor [--quick] [--json] [--size-mib N] [--reps N] [--writers N]\n"
    "Measures how this machine can feed its GPUs (pinned, pageable and registered\n"
    "transfers, under host memory load, all GPUs at once, peer copies, the cost of\n"
    "pinning) and prints a verdict.\n"
    "  --quick        fewer repetitions and smaller sizes: the whole run takes seconds\n"
    "  --json         one JSON object instead of text\n"
    "  --size-mib N   bytes per copy in MiB (default 256, 64 with --quick)\n"
    "  --reps N       timed repetitions per figure, after one warm-up (default 7, 3 with --quick)\n"
    "  --writers N    host threads writing memory during the loaded measurements\n"
    "                 (default: hardware threads - 2, at least 1; 0 skips them)\n";

struct Options {
  bool json = false;
  bool quick = false;
  std::optional<std::size_t> size_mib;
  std::optional<int> reps;
  std::optional<int> writers;
};

// What one run does, derived from the options.
struct Plan {
  std::size_t copy_bytes = 0;
  int reps = 0;
  int warmup = 1;
  int fast_copies = 1;         // copies between two events on the fast paths
  std::size_t cost_bytes = 0;  // size whose cudaHostAlloc / cudaHostRegister is timed
  int cost_reps = 0;
  int writers = 0;
  std::size_t writer_bytes = 0;  // each writer's own buffer
};

// Returns the options, or sets `status` (0 after --help, 2 after a usage
// error, printed).
std::optional<Options> parse_options(int argc, char** argv, int& status) {
  Options o;
  CommandLine cl("doctor", kUsage);
  cl.flag("--json", o.json);
  cl.flag("--quick", o.quick);
  cl.number("--size-mib", o.size_mib, std::size_t{1}, std::size_t{65536});
  cl.number("--reps", o.reps, 1, 1000);
  cl.number("--writers", o.writers, 0, 4096);
  if (auto rc = cl.parse(argc, argv)) {
    status = *rc;
    return std::nullopt;
  }
  return o;
}

Plan make_plan(const Options& o) {
  Plan p;
  p.copy_bytes = o.size_mib.value_or(o.quick ? 64 : 256) * kMiB;
  p.reps = o.reps.value_or(o.quick ? 3 : 7);
  p.fast_copies = static_cast<int>(std::max<std::size_t>(1, kMinTimedBytes / p.copy_bytes));
  p.cost_bytes = o.quick ? 256 * kMiB : kGiB;
  p.cost_reps = o.quick ? 1 : 3;
  const int hw = static_cast<int>(std::thread::hardware_concurrency());
  p.writers = o.writers.value_or(std::max(1, hw - 2));
  // Each writer's buffer dwarfs any last-level cache, so the writes reach DRAM.
  p.writer_bytes = o.quick ? 64 * kMiB : 256 * kMiB;
  return p;
}

double seconds_since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

struct FreeDeleter {
  void operator()(void* p) const noexcept { std::free(p); }
};
using HostMemory = std::unique_ptr<void, FreeDeleter>;

// malloc'd, touched host memory: the pageable memory a producer fills.
HostMemory touched_memory(std::size_t bytes) {
  HostMemory m(std::malloc(bytes));
  if (m) std::memset(m.get(), 1, bytes);
  return m;
}

// Runs `f` on a thread bound to `cpulist` (a GPU's local CPUs), so that memory
// it first touches lands on the GPU's NUMA node; runs it here when the list
// is unknown.
void run_near(const std::string& cpulist, const std::function<void()>& f) {
  const auto cpus = devices::CpuSet::parse(cpulist);
  if (!cpus) return f();
  std::thread t([&] {
    (void)cpus->bind_this_thread();  // a hint: failure is harmless
    f();
  });
  t.join();
}

// Host threads that stream-write their own buffers until destroyed: the host
// memory load of a busy prover (synthesis threads) next to the copies.
class MemoryLoad {
 public:
  MemoryLoad(int threads, std::size_t bytes) : bytes_(bytes) {
    for (int i = 0; i < threads; ++i)
      threads_.emplace_back([this](std::stop_token stop) { write(stop); });
    // Measure only once every buffer exists and has been written once, so
    // page faults are not part of the load.
    while (ready_.load() < threads) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    written_.store(0);
    t0_ = Clock::now();
  }
  MemoryLoad(const MemoryLoad&) = delete;
  MemoryLoad& operator=(const MemoryLoad&) = delete;
  ~MemoryLoad() {
    for (auto& t : threads_) t.request_stop();
  }  // std::jthread joins

  int failed() const { return failed_.load(); }
  // Host write bandwidth the writers achieved since they all started.
  double write_gbps() const {
    const double s = seconds_since(t0_);
    return s > 0 ? static_cast<double>(written_.load()) / 1e9 / s : 0;
  }

 private:
  void write(std::stop_token stop) {
    HostMemory buf(std::malloc(bytes_));
    if (!buf) {
      failed_.fetch_add(1);
      ready_.fetch_add(1);
      return;
    }
    auto* p = static_cast<unsigned char*>(buf.get());
    int value = 1;
    std::memset(p, value, bytes_);
    ready_.fetch_add(1);
    while (!stop.stop_requested()) {
      ++value;
      for (std::size_t off = 0; off < bytes_ && !stop.stop_requested(); off += kWriterChunk) {
        const std::size_t n = std::min(kWriterChunk, bytes_ - off);
        // memset's string stores put more load on memory than plain vector
        // stores (measured: pinned H2D 30 vs 38 GB/s beside 30 writers).
        std::memset(p + off, value, n);
        // Keep the compiler from dropping stores to memory nobody reads.
        asm volatile("" : : "r"(p) : "memory");
        written_.fetch_add(n, std::memory_order_relaxed);
      }
    }
  }

  std::size_t bytes_;
  std::atomic<int> ready_{0};
  std::atomic<int> failed_{0};
  std::atomic<std::uint64_t> written_{0};
  Clock::time_point t0_ = Clock::now();
  std::vector<std::jthread> threads_;  // last: joined before the counters die
};

// One GPU's measurement kit: a stream, two timing events, device memory and
// host sources near the GPU.
struct Rig {
  devices::Device* dev = nullptr;
  int ordinal = 0;
  devices::Stream stream;
  devices::Stream back;  // the D2H half of the both-ways measurement
  devices::Event start, stop, back_stop;
  devices::DeviceBuffer dbuf;
  devices::PinnedBuffer pinned;
  HostMemory pageable;
  bool ready = false;

  cudaStream_t native() const { return static_cast<cudaStream_t>(stream.native()); }
};

struct Errors {
  std::vector<std::string> list;
  void add(std::string s) { list.push_back(std::move(s)); }
};

std::string gpu_tag(const Rig& r) {
  return "GPU " + std::to_string(r.dev->index());
}

// Times `copies` enqueue() calls between two events, after `warmup` untimed
// rounds, `reps` times; returns the median rate in GB/s.
Result<double> time_copies(Rig& r, std::size_t bytes, int copies, int warmup, int reps,
                           const std::function<cudaError_t(cudaStream_t)>& enqueue) {
  if (auto ec = r.dev->health()) return Error{ec, "device faulted"};
  std::vector<double> rates;
  for (int i = 0; i < warmup + reps; ++i) {
    if (auto ec = r.dev->make_current()) return Error{ec, "cudaSetDevice"};
    if (auto ec = r.stream.record(r.start)) return Error{ec, "cudaEventRecord"};
    for (int c = 0; c < copies; ++c)
      if (const auto st = enqueue(r.native()); st != cudaSuccess)
        return Error{make_cuda_error(st), cuda_message("copy", st)};
    if (auto ec = r.stream.record(r.stop)) return Error{ec, "cudaEventRecord"};
    if (auto ec = r.stop.synchronize()) return Error{ec, "cudaEventSynchronize"};
    auto ms = devices::elapsed_ms(r.start, r.stop);
    if (!ms) return std::move(ms).error();
    if (i >= warmup && *ms > 0)
      rates.push_back(static_cast<double>(bytes) * copies / 1e9 / (*ms / 1e3));
  }
  auto m = median(std::move(rates));
  if (!m) return Error{Errc::verification_failed, "no positive event time"};
  return *m;
}

// H2D into the device buffer's first half on the rig's stream while D2H
// from its second half runs on the other, `copies` of each (half the copy
// size) after one start event; each direction's median rate from its own
// stop event.
struct Duplex {
  double h2d = 0, d2h = 0;
};
Result<Duplex> time_duplex(Rig& r, std::size_t bytes, int copies, int warmup, int reps) {
  if (auto ec = r.dev->health()) return Error{ec, "device faulted"};
  const std::size_t half = bytes / 2;
  auto* dev = static_cast<std::byte*>(r.dbuf.data());
  auto* host = static_cast<std::byte*>(r.pinned.data());
  const auto back = static_cast<cudaStream_t>(r.back.native());
  std::vector<double> in, out;
  for (int i = 0; i < warmup + reps; ++i) {
    if (auto ec = r.dev->make_current()) return Error{ec, "cudaSetDevice"};
    if (auto ec = r.stream.record(r.start)) return Error{ec, "cudaEventRecord"};
    if (auto ec = r.back.wait(r.start)) return Error{ec, "cudaStreamWaitEvent"};
    for (int c = 0; c < copies; ++c) {
      if (const auto st = cudaMemcpyAsync(dev, host, half, cudaMemcpyHostToDevice, r.native());
          st != cudaSuccess)
        return Error{make_cuda_error(st), cuda_message("H2D copy", st)};
      if (const auto st =
              cudaMemcpyAsync(host + half, dev + half, half, cudaMemcpyDeviceToHost, back);
          st != cudaSuccess)
        return Error{make_cuda_error(st), cuda_message("D2H copy", st)};
    }
    if (auto ec = r.stream.record(r.stop)) return Error{ec, "cudaEventRecord"};
    if (auto ec = r.back.record(r.back_stop)) return Error{ec, "cudaEventRecord"};
    for (auto* e : {&r.stop, &r.back_stop})
      if (auto ec = e->synchronize()) return Error{ec, "cudaEventSynchronize"};
    auto in_ms = devices::elapsed_ms(r.start, r.stop);
    auto out_ms = devices::elapsed_ms(r.start, r.back_stop);
    if (!in_ms) return std::move(in_ms).error();
    if (!out_ms) return std::move(out_ms).error();
    if (i < warmup || *in_ms <= 0 || *out_ms <= 0) continue;
    in.push_back(static_cast<double>(half) * copies / 1e9 / (*in_ms / 1e3));
    out.push_back(static_cast<double>(half) * copies / 1e9 / (*out_ms / 1e3));
  }
  auto h = median(std::move(in));
  auto d = median(std::move(out));
  if (!h || !d) return Error{Errc::verification_failed, "no positive event time"};
  return Duplex{*h, *d};
}

std::optional<double> record(Result<double> r, Errors& errors, const std::string& what) {
  if (r) return *r;
  errors.add(what + ": " + r.error().what());
  return std::nullopt;
}

struct CostFigure {
  std::size_t bytes = 0;
  std::optional<double> seconds;       // median of the allocations / registrations
  std::optional<double> free_seconds;  // median of the matching release
  std::optional<double> s_per_gib() const {
    if (!seconds || bytes == 0) return std::nullopt;
    return *seconds / (static_cast<double>(bytes) / kGiB);
  }
};

// Each repetition pins fresh memory (all buffers stay alive until the last
// is timed): a freed block's pages would come back cheaper than new ones.
CostFigure measure_host_alloc(const Plan& plan, Errors& errors) {
  CostFigure c;
  c.bytes = plan.cost_bytes;
  std::vector<double> alloc_s, free_s;
  std::vector<devices::PinnedBuffer> held;
  for (int i = 0; i < plan.cost_reps; ++i) {
    const auto t0 = Clock::now();
    auto p = devices::allocate_pinned(devices::Backend::cuda, c.bytes);
    const double s = seconds_since(t0);
    if (!p) {
      errors.add("cudaHostAlloc cost: " + p.error().what());
      break;
    }
    alloc_s.push_back(s);
    held.push_back(std::move(*p));
  }
  for (auto& p : held) {
    const auto t0 = Clock::now();
    p.reset();
    free_s.push_back(seconds_since(t0));
  }
  c.seconds = median(alloc_s);
  c.free_seconds = median(free_s);
  return c;
}

// Times cudaHostRegister of touched memory (a producer's buffer that already
// exists), a fresh buffer per repetition, and keeps the first registration
// in `keep` (its memory in `keep_memory`) for the copy tests.
CostFigure measure_host_register(const Plan& plan, std::size_t bytes,
                                 devices::HostRegistration& keep, HostMemory& keep_memory,
                                 Errors& errors) {
  CostFigure c;
  c.bytes = bytes;
  std::vector<double> reg_s, unreg_s;
  std::vector<HostMemory> memory;
  std::vector<devices::HostRegistration> held;
  for (int i = 0; i < plan.cost_reps; ++i) {
    HostMemory m = touched_memory(bytes);
    if (!m) {
      errors.add("cudaHostRegister cost: cannot allocate " + format_bytes(bytes));
      break;
    }
    const auto t0 = Clock::now();
    auto r = devices::register_host(devices::Backend::cuda, m.get(), bytes);
    const double s = seconds_since(t0);
    if (!r) {
      errors.add("cudaHostRegister cost: " + r.error().what());
      break;
    }
    reg_s.push_back(s);
    memory.push_back(std::move(m));
    held.push_back(std::move(*r));
  }
  // Unregister before the memory goes; the first registration stays for the copies.
  for (std::size_t i = 1; i < held.size(); ++i) {
    const auto t0 = Clock::now();
    held[i].reset();
    unreg_s.push_back(seconds_since(t0));
  }
  if (!held.empty()) {
    keep = std::move(held.front());
    keep_memory = std::move(memory.front());
  }
  c.seconds = median(reg_s);
  c.free_seconds = median(unreg_s);
  return c;
}

// Enables peer access where CUDA offers it and disables, on destruction, what
// this run enabled: doctor leaves the process as it found it.
class PeerAccess {
 public:
  PeerAccess() = default;
  PeerAccess(const PeerAccess&) = delete;
  PeerAccess& operator=(const PeerAccess&) = delete;
  ~PeerAccess() {
    for (const auto& [from, to] : enabled_) {
      if (cudaSetDevice(from) == cudaSuccess) cudaDeviceDisablePeerAccess(to);
      cudaGetLastError();
    }
  }
  // true: `from` can now reach `to` directly.
  bool enable(int from, int to, Errors& errors) {
    int can = 0;
    if (const auto st = cudaDeviceCanAccessPeer(&can, from, to); st != cudaSuccess) {
      errors.add(cuda_message("cudaDeviceCanAccessPeer", st));
      return false;
    }
    if (!can) return false;
    if (const auto st = cudaSetDevice(from); st != cudaSuccess) {
      errors.add(cuda_message("cudaSetDevice", st));
      return false;
    }
    const auto st = cudaDeviceEnablePeerAccess(to, 0);
    if (st == cudaSuccess) {
      enabled_.emplace_back(from, to);
      return true;
    }
    if (st == cudaErrorPeerAccessAlreadyEnabled) {
      cudaGetLastError();
      return true;
    }
    errors.add("CUDA ordinal " + std::to_string(from) + " -> " + std::to_string(to) + ": " +
               cuda_message("cudaDeviceEnablePeerAccess", st));
    return false;
  }

 private:
  std::vector<std::pair<int, int>> enabled_;
};

struct Report {
  Plan plan;
  HostFacts host;
  std::vector<const devices::DeviceInfo*> infos;
  double context_s = 0;
  CostFigure alloc, reg;
  DoctorFigures figures;
  std::vector<double> concurrent_per_gpu;  // event-timed GB/s during the all-GPU run
  std::optional<double> writers_gbps;
  std::vector<std::string> verdict;
  Errors errors;
};

std::string fmt(std::optional<double> v, int decimals = 1) {
  if (!v) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, *v);
  return buf;
}

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

// Every GPU copies from its own pinned buffer at once. The aggregate is
// total bytes over wall-clock time: events of different GPUs cannot be
// subtracted from one another.
void measure_concurrent(std::vector<Rig>& rigs, const Plan& plan, Report& rep) {
  std::vector<Rig*> live;
  for (auto& r : rigs)
    if (r.ready && !r.dev->health()) live.push_back(&r);
  if (live.size() < 2 || live.size() != rigs.size()) {
    if (rigs.size() > 1) rep.errors.add("all-GPU H2D: skipped, not every GPU is ready");
    return;
  }
  const std::size_t bytes = plan.copy_bytes;
  const int copies = plan.fast_copies;
  std::vector<double> agg;
  std::vector<std::vector<double>> per(live.size());
  for (int i = 0; i < plan.warmup + plan.reps; ++i) {
    const auto t0 = Clock::now();
    for (auto* r : live) {
      std::error_code ec = r->dev->make_current();
      if (!ec) ec = r->stream.record(r->start);
      for (int c = 0; !ec && c < copies; ++c)
        if (const auto st = cudaMemcpyAsync(r->dbuf.data(), r->pinned.data(), bytes,
                                            cudaMemcpyHostToDevice, r->native());
            st != cudaSuccess)
          return rep.errors.add("all-GPU H2D, " + gpu_tag(*r) + ": " +
                                cuda_message("cudaMemcpyAsync", st));
      if (!ec) ec = r->stream.record(r->stop);
      if (ec) return rep.errors.add("all-GPU H2D, " + gpu_tag(*r) + ": " + ec.message());
    }
    for (auto* r : live)
      if (auto ec = r->stop.synchronize())
        return rep.errors.add("all-GPU H2D, " + gpu_tag(*r) + ": " + ec.message());
    const double s = seconds_since(t0);
    if (i < plan.warmup) continue;
    agg.push_back(static_cast<double>(bytes) * copies * live.size() / 1e9 / s);
    for (std::size_t g = 0; g < live.size(); ++g) {
      auto ms = devices::elapsed_ms(live[g]->start, live[g]->stop);
      if (ms && *ms > 0) per[g].push_back(static_cast<double>(bytes) * copies / 1e9 / (*ms / 1e3));
    }
  }
  rep.figures.all_gpus_h2d = median(agg);
  for (auto& v : per) rep.concurrent_per_gpu.push_back(median(v).value_or(0));
}

void measure_peers(std::vector<Rig>& rigs, const Plan& plan, Report& rep) {
  const auto n = rigs.size();
  if (n < 2) return;
  PeerAccess access;
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) {
      if (i == j) continue;
      Rig& src = rigs[i];
      Rig& dst = rigs[j];
      PeerFigure pf;
      pf.src = static_cast<int>(i);
      pf.dst = static_cast<int>(j);
      if (!src.ready || !dst.ready) {
        rep.figures.peers.push_back(pf);
        continue;
      }
      pf.direct = access.enable(src.ordinal, dst.ordinal, rep.errors);
      // Without peer access the copy still works, staged through host memory.
      pf.gbps = record(time_copies(src, plan.copy_bytes, plan.fast_copies, plan.warmup, plan.reps,
                                   [&](cudaStream_t s) {
                                     return cudaMemcpyPeerAsync(dst.dbuf.data(), dst.ordinal,
                                                                src.dbuf.data(), src.ordinal,
                                                                plan.copy_bytes, s);
                                   }),
                       rep.errors, "peer copy " + gpu_tag(src) + " -> " + gpu_tag(dst));
      rep.figures.peers.push_back(pf);
    }
}

// Makes one GPU's kit: stream, events, device memory, and pinned and pageable
// sources allocated near the GPU.
void prepare(Rig& r, const Plan& plan, Errors& errors) {
  const std::string tag = gpu_tag(r);
  auto stream = r.dev->create_stream();
  auto back = r.dev->create_stream();
  auto start = r.dev->create_event(devices::EventKind::timing);
  auto stop = r.dev->create_event(devices::EventKind::timing);
  auto back_stop = r.dev->create_event(devices::EventKind::timing);
  for (const Error* e : {stream ? nullptr : &stream.error(), back ? nullptr : &back.error(),
                         start ? nullptr : &start.error(), stop ? nullptr : &stop.error(),
                         back_stop ? nullptr : &back_stop.error()})
    if (e) return errors.add(tag + ": " + e->what());
  r.stream = std::move(*stream);
  r.back = std::move(*back);
  r.start = std::move(*start);
  r.stop = std::move(*stop);
  r.back_stop = std::move(*back_stop);
  auto dbuf = r.dev->allocate(plan.copy_bytes);
  if (!dbuf) return errors.add(tag + ": " + dbuf.error().what());
  r.dbuf = std::move(*dbuf);
  std::optional<Error> failure;
  run_near(r.dev->info().cpu_affinity, [&] {
    auto pinned = devices::allocate_pinned(devices::Backend::cuda, plan.copy_bytes);
    if (!pinned) {
      failure = pinned.error();
      return;
    }
    r.pinned = std::move(*pinned);
    std::memset(r.pinned.data(), 1, plan.copy_bytes);
    r.pageable = touched_memory(plan.copy_bytes);
  });
  if (failure) return errors.add(tag + ": " + failure->what());
  if (!r.pageable)
    return errors.add(tag + ": cannot allocate " + format_bytes(plan.copy_bytes) +
                      " of pageable memory");
  r.ready = true;
}

int run_doctor(const Options& opt) {
  Report rep;
  rep.plan = make_plan(opt);
  const Plan& plan = rep.plan;
  rep.host = read_host_facts();
  rep.figures.writer_threads = plan.writers;

  devices::DiscoverOptions dopt;
  dopt.backend = devices::BackendChoice::cuda;
  auto set = devices::discover(dopt);
  if (!set) {
    std::fprintf(stderr, "stoker doctor: %s\n", set.error().what().c_str());
    return 1;
  }
  const std::size_t n = set->size();

  // Start every context first, so no later figure includes that one-off cost.
  const auto t_ctx = Clock::now();
  for (std::size_t i = 0; i < n; ++i) {
    auto& d = (*set)[i];
    rep.infos.push_back(&d.info());
    std::error_code ec = d.make_current();
    if (!ec)
      if (const auto st = cudaFree(nullptr); st != cudaSuccess)
        rep.errors.add("GPU " + std::to_string(i) + ": " + cuda_message("context start", st));
    if (ec) rep.errors.add("GPU " + std::to_string(i) + ": cudaSetDevice: " + ec.message());
  }
  rep.context_s = seconds_since(t_ctx);

  rep.alloc = measure_host_alloc(plan, rep.errors);

  // The registered buffer serves both the cost figure and the copies.
  const std::size_t reg_bytes = std::max(plan.cost_bytes, plan.copy_bytes);
  HostMemory reg_buf;
  devices::HostRegistration registration;
  rep.reg = measure_host_register(plan, reg_bytes, registration, reg_buf, rep.errors);

  std::vector<Rig> rigs(n);
  for (std::size_t i = 0; i < n; ++i) {
    rigs[i].dev = &(*set)[i];
    rigs[i].ordinal = (*set)[i].info().ordinal;
    prepare(rigs[i], plan, rep.errors);
  }
  rep.figures.gpus.resize(n);

  const auto h2d = [&](Rig& r, const void* src) {
    return [&r, src, &plan](cudaStream_t s) {
      return cudaMemcpyAsync(r.dbuf.data(), src, plan.copy_bytes, cudaMemcpyHostToDevice, s);
    };
  };
  const auto d2h = [&](Rig& r, void* dst) {
    return [&r, dst, &plan](cudaStream_t s) {
      return cudaMemcpyAsync(dst, r.dbuf.data(), plan.copy_bytes, cudaMemcpyDeviceToHost, s);
    };
  };
  const std::size_t b = plan.copy_bytes;
  const int fast = plan.fast_copies, w = plan.warmup, k = plan.reps;
  for (std::size_t i = 0; i < n; ++i) {
    Rig& r = rigs[i];
    if (!r.ready) continue;
    auto& g = rep.figures.gpus[i];
    const std::string tag = gpu_tag(r);
    g.pinned_h2d = record(time_copies(r, b, fast, w, k, h2d(r, r.pinned.data())), rep.errors,
                          tag + " H2D pinned");
    g.pinned_d2h = record(time_copies(r, b, fast, w, k, d2h(r, r.pinned.data())), rep.errors,
                          tag + " D2H pinned");
    g.pageable_h2d = record(time_copies(r, b, 1, w, k, h2d(r, r.pageable.get())), rep.errors,
                            tag + " H2D pageable");
    g.pageable_d2h = record(time_copies(r, b, 1, w, k, d2h(r, r.pageable.get())), rep.errors,
                            tag + " D2H pageable");
    if (auto both = time_duplex(r, b, fast, w, k)) {
      g.duplex_h2d = both->h2d;
      g.duplex_d2h = both->d2h;
    } else {
      rep.errors.add(tag + " H2D + D2H at once: " + both.error().what());
    }
    if (registration) {
      g.registered_h2d = record(time_copies(r, b, fast, w, k, h2d(r, registration.data())),
                                rep.errors, tag + " H2D registered");
      g.registered_d2h = record(time_copies(r, b, fast, w, k, d2h(r, registration.data())),
                                rep.errors, tag + " D2H registered");
    }
  }

  measure_concurrent(rigs, plan, rep);
  measure_peers(rigs, plan, rep);

  if (plan.writers > 0) {
    MemoryLoad load(plan.writers, plan.writer_bytes);
    if (load.failed())
      rep.errors.add(std::to_string(load.failed()) + " of " + std::to_string(plan.writers) +
                     " writer threads could not allocate " + format_bytes(plan.writer_bytes));
    for (std::size_t i = 0; i < n; ++i) {
      Rig& r = rigs[i];
      if (!r.ready) continue;
      auto& g = rep.figures.gpus[i];
      const std::string tag = gpu_tag(r);
      g.loaded_pinned_h2d = record(time_copies(r, b, fast, w, k, h2d(r, r.pinned.data())),
                                   rep.errors, tag + " H2D pinned under load");
      g.loaded_pageable_h2d = record(time_copies(r, b, 1, w, k, h2d(r, r.pageable.get())),
                                     rep.errors, tag + " H2D pageable under load");
    }
    rep.writers_gbps = load.write_gbps();
  }

  // Release the registration before its memory, and time it.
  if (registration) {
    const auto t0 = Clock::now();
    registration.reset();
    if (!rep.reg.free_seconds) rep.reg.free_seconds = seconds_since(t0);
  }
  reg_buf.reset();

  rep.figures.host_alloc_s_per_gib = rep.alloc.s_per_gib();
  rep.figures.host_register_s_per_gib = rep.reg.s_per_gib();
  rep.verdict = doctor_verdict(rep.figures);

  if (opt.json)
    print_json(rep);
  else
    print_text(rep);
  return rep.errors.list.empty() ? 0 : 1;
}

}  // namespace

int doctor_command(int argc, char** argv) {
  int status = 0;
  const auto opt = parse_options(argc, argv, status);
  if (!opt) return status;
  if (devices::cuda_device_count() == 0) {
    if (opt->json)
      std::printf("%s\n",
                  json_text(Json{{"error", "no CUDA device visible: nothing to measure"}}).c_str());
    else
      std::fputs("stoker doctor: no CUDA device visible: nothing to measure\n", stderr);
    return 1;
  }
  return run_doctor(*opt);
}

}  // namespace stoker::tools
