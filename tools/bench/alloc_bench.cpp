#include "tools/bench/alloc_bench.hpp"

#include <algorithm>
#include <atomic>
#include <boost/lockfree/stack.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <limits>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "alloc/memory_budget.hpp"
#include "alloc/pinned_pool.hpp"
#include "alloc/pinned_vec.hpp"
#include "common/elapsed.hpp"
#include "devices/device_set.hpp"
#include "devices/pinned_buffer.hpp"
#include "tools/bench/bench_stats.hpp"
#include "tools/cli/command_line.hpp"
#include "tools/cli/json_output.hpp"
#include "tools/cli/memory_guard.hpp"

namespace stoker::tools {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t MiB = std::size_t{1} << 20;

constexpr const char* kUsage =
    "usage: stoker bench alloc [--json] [--quick] [--backend auto|cuda|host]\n"
    "                          [--sizes-mib A,B,..] [--reps N] [--threads N]\n"
    "                          [--seconds S] [--h2d-mib N]\n"
    "  --quick        smaller defaults: sizes 1,64, 3 reps, 0.3 s, 64 MiB of H2D\n"
    "  --sizes-mib    block sizes of the cycle test (default 1,64,1024)\n"
    "  --reps         fresh allocations per size and H2D repetitions (default 5)\n"
    "  --threads      producer threads of the throughput test (default 32)\n"
    "  --seconds      duration of each throughput test, 0.001..60 (default 1)\n"
    "  --h2d-mib      bytes copied per H2D repetition (default 256)\n"
    "  --json         one JSON object instead of text\n";

struct Options {
  bool json = false;
  devices::BackendChoice backend = devices::BackendChoice::automatic;
  std::vector<std::size_t> sizes_mib{1, 64, 1024};
  int reps = 5;
  int threads = 32;
  double seconds = 1.0;
  std::size_t h2d_mib = 256;
};

// The options; nullopt after setting `status` (0 after --help, 2 after a
// usage error, printed). --quick changes the defaults, never a value given.
std::optional<Options> parse(int argc, char** argv, int& status) {
  CommandLine cl("bench alloc", kUsage);
  Options o;
  bool quick = false;
  std::string backend;
  std::optional<int> reps, threads;
  std::optional<std::size_t> h2d_mib;
  double seconds = 0;
  cl.flag("--json", o.json);
  cl.flag("--quick", quick);
  cl.choice("--backend", backend, {"auto", "cuda", "host"});
  cl.custom("--sizes-mib", [&](std::string_view text) {
    o.sizes_mib.clear();
    constexpr std::size_t most = std::numeric_limits<std::size_t>::max() / MiB;
    for (std::string_view rest = text;;) {
      const auto comma = rest.find(',');
      const auto item = rest.substr(0, comma);
      const auto n = engine::parse_integer(item, std::size_t{1}, most);
      if (!n) return engine::integer_problem("--sizes-mib", item, std::size_t{1}, most);
      o.sizes_mib.push_back(*n);
      if (comma == std::string_view::npos) return std::string();
      rest = rest.substr(comma + 1);
    }
  });
  cl.number("--reps", reps, 1, 100000);
  cl.number("--threads", threads, 1, 100000);
  cl.number("--h2d-mib", h2d_mib, std::size_t{1}, std::size_t{100000});
  cl.real("--seconds", seconds, 0.001, 60);
  if (auto rc = cl.parse(argc, argv)) {
    status = *rc;
    return std::nullopt;
  }
  if (backend == "cuda") o.backend = devices::BackendChoice::cuda;
  if (backend == "host") o.backend = devices::BackendChoice::host;
  if (quick && !cl.given("--sizes-mib")) o.sizes_mib = {1, 64};
  o.reps = reps.value_or(quick ? 3 : 5);
  o.threads = threads.value_or(o.threads);
  o.seconds = cl.given("--seconds") ? seconds : quick ? 0.3 : 1.0;
  o.h2d_mib = h2d_mib.value_or(quick ? 64 : 256);
  return o;
}

using common::seconds_since;

struct CycleRow {
  std::size_t bytes = 0;
  double fresh_ns = 0;   // allocate_pinned + free, median
  double pooled_ns = 0;  // try_allocate + reset, median of batch means
  std::string error;
};

CycleRow measure_cycle(devices::Backend backend, std::size_t bytes, int reps) {
  CycleRow row;
  row.bytes = bytes;
  std::vector<double> fresh;
  for (int i = 0; i < reps; ++i) {
    const auto t0 = Clock::now();
    auto b = devices::allocate_pinned(backend, bytes);
    if (!b) {
      row.error = b.error().what();
      return row;
    }
    // Touch one byte per page, as a user would, so the host backend pays for its pages too.
    for (std::size_t k = 0; k < bytes; k += 4096) static_cast<volatile char*>(b->data())[k] = 1;
    b->reset();
    fresh.push_back(seconds_since(t0) * 1e9);
  }
  row.fresh_ns = median(fresh);

  alloc::MemoryBudget budget(2 * bytes + 64 * MiB, "bench");
  alloc::PinnedPool pool(backend, budget);
  if (auto ec = pool.reserve(bytes)) {
    row.error = "reserve: " + ec.message();
    return row;
  }
  constexpr int kBatch = 2000;
  std::vector<double> batches;
  for (int r = 0; r < 7; ++r) {
    const auto t0 = Clock::now();
    for (int i = 0; i < kBatch; ++i) {
      auto b = pool.try_allocate(bytes);
      if (!b) {
        row.error = b.error().what();
        return row;
      }
      static_cast<volatile char*>(static_cast<void*>(b->data()))[0] = 1;
    }
    batches.push_back(seconds_since(t0) * 1e9 / kBatch);
  }
  row.pooled_ns = median(batches);
  return row;
}

struct H2dRow {
  bool measured = false;
  std::size_t bytes = 0;
  double pinned_vec_gbs = 0;
  double std_vector_gbs = 0;
  std::string error;
};

H2dRow measure_h2d(devices::DeviceSet& set, std::size_t bytes, int reps) {
  H2dRow row;
  row.bytes = bytes;
  if (set.backend() != devices::Backend::cuda || set.empty()) {
    row.error = "no CUDA device";
    return row;
  }
  auto& dev = set[0];
  auto fail = [&](const std::string& what) {
    row.error = what;
    return row;
  };
  auto stream = dev.create_stream();
  auto start = dev.create_event(devices::EventKind::timing);
  auto stop = dev.create_event(devices::EventKind::timing);
  auto dst = dev.allocate(bytes);
  if (!stream || !start || !stop || !dst) return fail("device set-up failed");

  alloc::MemoryBudget budget(bytes + bytes / 4 + 64 * MiB, "bench");
  alloc::PinnedPool pool(devices::Backend::cuda, budget);
  alloc::PinnedVec<std::byte> pinned(pool);
  if (pinned.try_resize(bytes)) return fail("PinnedVec of " + std::to_string(bytes) + " bytes");
  std::vector<std::byte> pageable(bytes, std::byte{1});
  std::memset(pinned.data(), 1, bytes);

  auto time_copy = [&](const void* src) -> std::optional<double> {
    std::vector<double> gbs;
    for (int i = 0; i < reps + 1; ++i) {
      if (stream->record(*start) || stream->copy(dst->data(), src, bytes) ||
          stream->record(*stop) || stop->synchronize())
        return std::nullopt;
      auto ms = devices::elapsed_ms(*start, *stop);
      if (!ms) return std::nullopt;
      if (i > 0) gbs.push_back(static_cast<double>(bytes) / (*ms * 1e-3) / 1e9);  // i = 0 warms up
    }
    return median(gbs);
  };
  auto a = time_copy(pinned.data());
  auto b = time_copy(pageable.data());
  if (!a || !b) return fail("a timed copy failed");
  row.measured = true;
  row.pinned_vec_gbs = *a;
  row.std_vector_gbs = *b;
  return row;
}

struct ThroughputRow {
  std::string what;
  int threads = 0;
  double ops_per_s = 0;
};

template <typename Body>
double run_threads(int threads, double seconds, Body body) {
  std::atomic<bool> stop{false};
  std::atomic<std::uint64_t> total{0};
  std::vector<std::thread> ts;
  const auto t0 = Clock::now();
  for (int t = 0; t < threads; ++t)
    ts.emplace_back([&, t] {
      std::uint64_t n = 0;
      while (!stop.load(std::memory_order_relaxed)) {
        for (int i = 0; i < 64; ++i) body(t);
        n += 64;
      }
      total.fetch_add(n);
    });
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  stop = true;
  for (auto& th : ts) th.join();
  return static_cast<double>(total.load()) / seconds_since(t0);
}

std::vector<ThroughputRow> measure_throughput(devices::Backend backend, int threads,
                                              double seconds) {
  std::vector<ThroughputRow> rows;
  constexpr std::size_t kBlock = MiB;
  {
    alloc::MemoryBudget budget(static_cast<std::size_t>(threads) * kBlock * 2 + 64 * MiB, "bench");
    alloc::PinnedPool pool(backend, budget);
    pool.reserve(kBlock, static_cast<std::size_t>(threads));
    const auto ops = run_threads(threads, seconds, [&](int) {
      auto b = pool.try_allocate(kBlock);
      if (b) static_cast<volatile char*>(static_cast<void*>(b->data()))[0] = 1;
    });
    rows.push_back({"PinnedPool try_allocate+release (1 MiB)", threads, ops});
  }
  {
    alloc::MemoryBudget budget(std::size_t{1} << 40, "bench");
    const auto ops =
        run_threads(threads, seconds, [&](int) { auto r = budget.try_acquire(kBlock); });
    rows.push_back({"MemoryBudget try_acquire+release", threads, ops});
  }
  // The free-list candidates alone, each pre-filled with two entries per thread.
  std::vector<char> storage(static_cast<std::size_t>(threads) * 2);
  {
    std::mutex m;
    std::vector<void*> list;
    for (auto& c : storage) list.push_back(&c);
    const auto ops = run_threads(threads, seconds, [&](int) {
      void* p = nullptr;
      {
        std::lock_guard lock(m);
        if (!list.empty()) {
          p = list.back();
          list.pop_back();
        }
      }
      if (p) {
        std::lock_guard lock(m);
        list.push_back(p);
      }
    });
    rows.push_back({"free list: std::mutex + vector pop+push", threads, ops});
  }
  {
    boost::lockfree::stack<void*> list(storage.size());
    for (auto& c : storage) list.push(&c);
    const auto ops = run_threads(threads, seconds, [&](int) {
      void* p = nullptr;
      if (list.pop(p)) list.push(p);
    });
    rows.push_back({"free list: boost::lockfree::stack pop+push", threads, ops});
  }
  return rows;
}

int bench_alloc(int argc, char** argv) {
  int status = 0;
  auto opt = parse(argc, argv, status);
  if (!opt) return status;
  devices::DiscoverOptions d;
  d.backend = opt->backend;
  auto set = devices::discover(d);
  if (!set) {
    std::fprintf(stderr, "stoker bench alloc: %s\n", set.error().what().c_str());
    return 1;
  }
  const auto backend = set->backend();
  // The first failure, told on stderr as well as in the table or the JSON.
  std::string failure;

  std::vector<CycleRow> cycles;
  for (auto mib : opt->sizes_mib) {
    cycles.push_back(measure_cycle(backend, mib * MiB, opt->reps));
    if (const auto& e = cycles.back().error; !e.empty() && failure.empty())
      failure = "cycle of " + std::to_string(mib) + " MiB: " + e;
  }
  auto h2d = measure_h2d(*set, opt->h2d_mib * MiB, opt->reps);
  if (backend == devices::Backend::cuda && !h2d.measured && failure.empty())
    failure = "H2D: " + h2d.error;
  auto tput = measure_throughput(backend, opt->threads, opt->seconds);
  const auto done = [&] {
    if (failure.empty()) return 0;
    std::fprintf(stderr, "stoker bench alloc: %s\n", failure.c_str());
    return 1;
  };

  if (opt->json) {
    Json j;
    j["ok"] = failure.empty();
    j["backend"] = devices::to_string(backend);
    j["cycle"] = Json::array();
    for (const auto& c : cycles) {
      Json row = {{"bytes", c.bytes},
                  {"fresh_ns", c.fresh_ns},
                  {"pooled_ns", c.pooled_ns},
                  {"ratio", c.pooled_ns > 0 ? c.fresh_ns / c.pooled_ns : 0.0}};
      if (!c.error.empty()) row["error"] = c.error;
      j["cycle"].push_back(std::move(row));
    }
    if (h2d.measured)
      j["h2d"] = {{"bytes", h2d.bytes},
                  {"pinned_vec_gbs", h2d.pinned_vec_gbs},
                  {"std_vector_gbs", h2d.std_vector_gbs}};
    else
      j["h2d"] = {{"skipped", h2d.error}};
    j["throughput"] = Json::array();
    for (const auto& t : tput)
      j["throughput"].push_back(
          {{"what", t.what}, {"threads", t.threads}, {"ops_per_s", t.ops_per_s}});
    std::puts(json_text(j).c_str());
    return done();
  }

  std::printf("stoker bench alloc (backend: %s)\n\n", devices::to_string(backend));
  std::printf("acquire/release cycle          fresh allocate_pinned+free   pooled      ratio\n");
  for (const auto& c : cycles) {
    if (!c.error.empty()) {
      std::printf("  %8zu MiB   failed: %s\n", c.bytes / MiB, c.error.c_str());
      continue;
    }
    std::printf("  %8zu MiB   %22.1f us   %8.1f ns   %9.0fx %s\n", c.bytes / MiB, c.fresh_ns / 1e3,
                c.pooled_ns, c.fresh_ns / c.pooled_ns,
                c.fresh_ns / c.pooled_ns >= 1000 ? "(>= 1000x: ok)" : "(below the 1000x target)");
  }
  std::printf("\nH2D, %zu MiB per copy, median of %d (CUDA events)\n", h2d.bytes / MiB, opt->reps);
  if (h2d.measured)
    std::printf("  from PinnedVec     %8.2f GB/s\n  from std::vector   %8.2f GB/s\n",
                h2d.pinned_vec_gbs, h2d.std_vector_gbs);
  else
    std::printf("  skipped: %s\n", h2d.error.c_str());
  std::printf("\nthroughput, %d threads, %.1f s each\n", opt->threads, opt->seconds);
  for (const auto& t : tput) std::printf("  %-45s %14.0f ops/s\n", t.what.c_str(), t.ops_per_s);
  std::fflush(stdout);
  return done();
}

}  // namespace

int bench_alloc_command(int argc, char** argv) {
  return with_memory_guard("bench alloc", [&] { return bench_alloc(argc, argv); });
}

}  // namespace stoker::tools
