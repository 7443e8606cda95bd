// stoker bench pipeline: in one run, on the same synthetic workload, with
// writer threads competing for host memory as synthesis threads do:
//  (a) the naive baseline found in the field: pageable inputs, synchronous
//      cudaMemcpy, one global mutex around each partition's GPU work, one
//      host thread per GPU;
//  (b) the engine with pinned producers (inputs generated straight into
//      pinned pool blocks; generation time included);
//  (c) the engine with pageable inputs through its staging.
// Then (b) on one GPU against all GPUs. The variants take turns, one run
// each per repetition, for a warm-up repetition and --reps timed ones; each
// figure is the median of its timed runs, beside DESIGN.md's model bound,
// and each ratio also the median of the repetitions' own ratios. Each job
// is built once and each run checked after it, outside its time: building
// a job generates 4 GiB of pageable inputs and first-touches its output
// buffers, and a checksum inside the job would sit in its wall time, none
// of which is the engine's work.
#include "tools/bench/pipeline_bench.hpp"

#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <boost/asio/bind_executor.hpp>
#include <boost/asio/io_context.hpp>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "common/elapsed.hpp"
#include "devices/device_buffer.hpp"
#include "devices/device_set.hpp"
#include "engine/engine.hpp"
#include "engine/workloads/synthetic.hpp"
#include "tools/bench/bench_job.hpp"
#include "tools/bench/bench_stats.hpp"
#include "tools/cli/command_line.hpp"
#include "tools/cli/json_output.hpp"
#include "tools/cli/memory_guard.hpp"
#include "tools/cli/output_file.hpp"

namespace stoker::tools {
namespace {

using Clock = std::chrono::steady_clock;
namespace wl = engine::workloads;

// Bounds on --writers and --reps, as stoker doctor's: each writer holds a
// 256 MiB buffer of its own, and each repetition runs every variant once.
constexpr int kMaxWriters = 4096;
constexpr int kMaxReps = 1000;

struct Options {
  std::optional<std::size_t> partitions;  // default: 16 per GPU
  std::size_t size_mib = 256;
  int rounds = 16;
  int writers = 20;  // as many producers as in the field, whatever this host's core count
  int reps = 3;
  bool json = false;
  std::string trace;  // (b)'s last timed run as Chrome trace JSON
  std::set<std::string> variants = {"a", "b", "c", "b1"};  // which runs to make
  bool wants(const char* v) const { return variants.count(v) != 0; }
};

// Threads that keep writing their own large buffers, as a prover's synthesis
// threads do, so host memory bandwidth is contended during every run.
class MemoryWriters {
 public:
  explicit MemoryWriters(int n) : written_(static_cast<std::size_t>(n)) {
    for (int i = 0; i < n; ++i)
      threads_.emplace_back([this, count = &written_[static_cast<std::size_t>(i)].bytes] {
        std::vector<char> buf(std::size_t{256} << 20);
        std::size_t off = 0;
        char v = 1;
        while (!stop_.load(std::memory_order_relaxed)) {
          std::memset(buf.data() + off, v++, kStep);
          off = (off + kStep) % buf.size();
          count->fetch_add(kStep, std::memory_order_relaxed);
        }
      });
  }
  ~MemoryWriters() {
    stop_ = true;
    for (auto& t : threads_) t.join();
  }
  // Bytes the writers have set so far, to within one step per writer: read
  // before and after a run, it says how much host memory the writers got
  // beside it, which shows whether the engine and they share a memory
  // bound (docs/BENCHMARKS.md, `stoker bench pipeline`).
  std::size_t bytes_written() const {
    std::size_t n = 0;
    for (const auto& w : written_) n += w.bytes.load(std::memory_order_relaxed);
    return n;
  }

 private:
  static constexpr std::size_t kStep = std::size_t{16} << 20;
  struct alignas(64) Counter {  // one line each: the writers never share one
    std::atomic<std::size_t> bytes{0};
  };
  std::atomic<bool> stop_{false};
  std::vector<Counter> written_;
  std::vector<std::thread> threads_;
};

// (a) One host thread per GPU pulls partitions; each partition's GPU work
// runs under one process-wide mutex with synchronous copies from pageable
// memory. The outputs land in `run`'s output buffers, cleared first, and
// `job`'s verify checks them afterwards, outside the time, against the CPU
// version of the kernel: (a) is checked on its own, whichever variants ran.
Result<double> run_naive(const devices::DeviceSet& gpus, const engine::Job& job,
                         const wl::SyntheticRun& run) {
  const auto& o = run.options;
  std::mutex gpu_mutex;
  std::atomic<std::size_t> next{0};
  std::atomic<int> failed{0};
  for (const auto& out : run.outputs) std::ranges::fill(out, 0u);
  // Each GPU's input and output buffer, freed on every way out of here.
  std::vector<devices::DeviceBuffer> din, dout;
  for (std::size_t g = 0; g < gpus.size(); ++g) {
    auto in = gpus[g].allocate(o.input_bytes);
    if (!in) return Error{in.error().code, "naive baseline: " + in.error().what()};
    din.push_back(std::move(*in));
    auto out = gpus[g].allocate(o.input_bytes / 4);
    if (!out) return Error{out.error().code, "naive baseline: " + out.error().what()};
    dout.push_back(std::move(*out));
  }
  const auto t0 = Clock::now();
  std::vector<std::thread> threads;
  for (std::size_t g = 0; g < gpus.size(); ++g)
    threads.emplace_back([&, g] {
      if (gpus[g].make_current()) {
        ++failed;
        return;
      }
      for (std::size_t p; (p = next++) < o.partitions;) {
        std::lock_guard lock(gpu_mutex);  // the field's global GPU mutex, deliberately
        bool ok = cudaMemcpy(din[g].data(), run.pageable_inputs[p].data(), o.input_bytes,
                             cudaMemcpyHostToDevice) == cudaSuccess;
        ok = ok && !wl::synthetic_gpu(din[g].as<std::uint32_t>(), dout[g].as<std::uint32_t>(),
                                      o.input_bytes / 16, o.rounds, nullptr);
        ok = ok && cudaDeviceSynchronize() == cudaSuccess;
        ok = ok && cudaMemcpy(run.outputs[p].data(), dout[g].data(), o.input_bytes / 4,
                              cudaMemcpyDeviceToHost) == cudaSuccess;
        if (!ok) ++failed;
      }
    });
  for (auto& t : threads) t.join();
  const double ms = common::ms_since(t0);
  if (failed) return Error{Errc::kernel_failed, "naive baseline: a CUDA call failed"};
  for (std::size_t p = 0; p < o.partitions; ++p)
    if (auto v = job.verify(job.partitions[p], p))
      return Error{v, "naive baseline: partition " + std::to_string(p) +
                          " differs from the CPU version of the kernel: " + v.message()};
  return ms;
}

// One variant's timed runs, in the order made.
struct Figure {
  std::vector<double> each_ms, each_bound_ms;
  std::vector<double> each_writers_gbps;  // the writers' memset rate during each run
  std::vector<double> busy;
  engine::JobReport last;       // the last timed run, for --trace
  std::size_t slabs_grown = 0;  // pinned while timed runs ran: their figure is not the steady state
  double ms() const { return median(each_ms); }
  double bound_ms() const { return median(each_bound_ms); }
  double writers_gbps() const { return median(each_writers_gbps); }
};

Result<engine::Engine*> make_engine(std::unique_ptr<engine::Engine>& holder,
                                    boost::asio::io_context& io, engine::Config c,
                                    std::vector<int> ordinals) {
  c.devices.backend = devices::BackendChoice::cuda;
  c.devices.cuda_ordinals = std::move(ordinals);
  auto e = engine::Engine::create(io.get_executor(), c);
  if (!e) return e.error();
  holder = std::move(*e);
  return holder.get();
}

const std::string kHelp =
    std::string(
        "usage: stoker bench pipeline [--partitions N] [--size-mib M] [--rounds R] [--writers W]\n"
        "                             [--reps N] [--json] [--variants a,b,c,b1] [--trace FILE]\n"
        "                             [engine options]\n"
        "Runs (a) the naive baseline, (b) the engine with pinned producers, (c) the engine with\n"
        "pageable inputs, and (b1) (b) on GPU 0 alone, while writer threads load host memory;\n"
        "--variants picks some of them (default all). The variants take turns, one run each per\n"
        "repetition, and each ratio is also given as the median of the repetitions' own.\n"
        "Defaults: 16 partitions per GPU of 256 MiB, 16 rounds, 3 reps, and 20 writer threads\n"
        "whatever the core count, as the 20+ synthesis threads of a prover in the field; the\n"
        "rate at which the writers set memory during each engine run is reported beside it, to\n"
        "show how much host memory the engine left them.\n"
        "--trace writes (b)'s last timed run as Chrome trace JSON. Engine options and STOKER_*\n"
        "variables apply to (b) and (c); --devices is ignored (all GPUs, then GPU 0).\n") +
    kEngineOptionsHelp;

int bench_pipeline(int argc, char** argv) {
  CommandLine cl("bench pipeline", kHelp);
  engine::Config config;
  constexpr std::size_t kMaxSize = std::numeric_limits<std::size_t>::max();
  Options opt;
  cl.number("--partitions", opt.partitions, std::size_t{1}, kMaxSize);
  cl.number("--size-mib", opt.size_mib, std::size_t{1}, kMaxSize >> 20);
  cl.number("--rounds", opt.rounds, 0, std::numeric_limits<int>::max());
  cl.number("--writers", opt.writers, 0, kMaxWriters);
  cl.number("--reps", opt.reps, 1, kMaxReps);
  cl.flag("--json", opt.json);
  cl.value("--trace", opt.trace);
  cl.custom("--variants", [&](std::string_view text) {
    opt.variants.clear();
    std::stringstream list{std::string(text)};
    for (std::string v; std::getline(list, v, ',');) {
      if (v != "a" && v != "b" && v != "c" && v != "b1")
        return "--variants takes a, b, c, b1, not '" + v + "'";
      opt.variants.insert(v);
    }
    if (opt.variants.empty()) return std::string("--variants names none of a, b, c, b1");
    return std::string();
  });
  cl.engine_options(config);
  if (auto rc = cl.parse(argc, argv)) return *rc;
  if (!opt.trace.empty() && !opt.wants("b"))
    return cl.usage_error("--trace records (b), which --variants leaves out");
  // Checked now: a bad path fails before the runs.
  std::optional<OutputFile> trace_file;
  if (!opt.trace.empty()) {
    auto f = OutputFile::check(opt.trace);
    if (!f) return cl.usage_error("--trace: " + f.error().what());
    trace_file.emplace(std::move(*f));
  }
  const int gpus = devices::cuda_device_count();
  if (gpus == 0) {
    std::fprintf(stderr,
                 "stoker bench pipeline: needs a CUDA device (the baseline is CUDA's own)\n");
    return 1;
  }
  const int writers = opt.writers;
  wl::SyntheticOptions o;
  o.partitions = opt.partitions.value_or(16 * static_cast<std::size_t>(gpus));
  o.input_bytes = opt.size_mib << 20;
  o.rounds = opt.rounds;
  const double gb = static_cast<double>(o.partitions * o.input_bytes) / 1e9;

  boost::asio::io_context io;
  std::unique_ptr<engine::Engine> all_holder, one_holder;
  std::vector<int> all;
  for (int g = 0; g < gpus; ++g) all.push_back(g);
  auto all_engine = make_engine(all_holder, io, config, all);
  auto one_engine = make_engine(one_holder, io, config, {0});
  if (!all_engine || !one_engine) {
    std::fprintf(stderr, "stoker bench pipeline: %s\n",
                 (!all_engine ? all_engine.error() : one_engine.error()).what().c_str());
    return 1;
  }

  // The jobs, built once before the writers start: each run submits a copy
  // (bench_job.hpp). (a) and (c) share the pageable inputs, the outputs and
  // the check after each run; (b) and (b1) share theirs.
  wl::SyntheticOptions po = o;
  po.pageable = true;
  std::shared_ptr<wl::SyntheticRun> pageable_run, pinned_run;
  auto pj = wl::make_synthetic_job(po, pageable_run);
  auto bj = wl::make_synthetic_job(o, pinned_run);
  if (!pj || !bj) {
    std::fprintf(stderr, "stoker bench pipeline: %s\n",
                 (!pj ? pj.error() : bj.error()).what().c_str());
    return 2;
  }

  // Pin each engine's pool and map its devices' pools for a full lookahead
  // before anything is timed, as a prover does once at start-up: a pool that
  // grows mid-run pins memory under the writers' load (cudaHostAlloc, which
  // also blocks the process's other CUDA calls), and a warm-up run alone
  // does not reach the peak of the faster warm runs after it.
  {
    const engine::Partition& like = bj->partitions[0];
    for (engine::Engine* e : {*all_engine, *one_engine}) {
      if (auto ec = e->reserve_pinned(like, std::min(o.partitions, e->lookahead())))
        std::fprintf(
            stderr,
            "stoker bench pipeline: could not pin the pool ahead (%s); it will grow in the runs\n",
            ec.message().c_str());
      e->reserve_device(like);
    }
  }

  if (!opt.json)
    std::printf(
        "bench pipeline: %zu partitions x %zu MiB, %d rounds, %d GPU(s), %d writer threads, median "
        "of %d\n",
        o.partitions, opt.size_mib, o.rounds, gpus, writers, opt.reps);
  MemoryWriters load(writers);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));

  // Each repetition runs every wanted variant once: the variants take turns
  // through the same stretch of the writers' load, and each repetition's
  // ratios compare runs made moments apart. Repetition 0 warms pools, device
  // pools and caches and is not timed. A variant left out reads 0 ms and
  // prints as "-".
  Figure a, b, c, b1;
  const struct {
    const char* name;
    engine::Engine* engine;
    const engine::Job* job;
    wl::SyntheticRun* run;
    Figure* figure;
  } runs[] = {{"b", *all_engine, &*bj, pinned_run.get(), &b},
              {"c", *all_engine, &*pj, pageable_run.get(), &c},
              {"b1", *one_engine, &*bj, pinned_run.get(), &b1}};
  for (int r = 0; r <= opt.reps; ++r) {
    if (opt.wants("a")) {
      auto ms = run_naive((*all_engine)->devices(), *pj, *pageable_run);
      if (!ms) {
        std::fprintf(stderr, "stoker bench pipeline: %s\n", ms.error().what().c_str());
        return 1;
      }
      if (r > 0) a.each_ms.push_back(*ms);
    }
    for (const auto& run : runs) {
      if (!opt.wants(run.name)) continue;
      // The writers' bytes from the submit to the completion.
      std::size_t set_before = 0, set_after = 0;
      Clock::time_point t0, t1;
      auto rep = run_prepared(
          *run.engine, *run.job,
          [&, out = &run.run->outputs] {
            for (auto& o : *out) std::fill(o.begin(), o.end(), 0u);
            set_before = load.bytes_written();
            t0 = Clock::now();
          },
          [&] {
            set_after = load.bytes_written();
            t1 = Clock::now();
          });
      if (!rep) {
        std::fprintf(stderr, "stoker bench pipeline: engine run (%s) failed: %s\n", run.name,
                     rep.error().what().c_str());
        return 1;
      }
      if (r == 0) continue;
      Figure& f = *run.figure;
      f.each_ms.push_back(rep->wall_ms);
      f.each_bound_ms.push_back(rep->bound_ms);
      f.each_writers_gbps.push_back(static_cast<double>(set_after - set_before) /
                                    std::max(1e-9, std::chrono::duration<double>(t1 - t0).count()) /
                                    1e9);
      f.busy = rep->device_busy;
      f.slabs_grown += rep->pinned_slabs_grown;
      f.last = std::move(*rep);
    }
  }
  const double a_ms = a.ms();
  if (trace_file) {
    if (auto err = trace_file->write(
            [&](std::ostream& out) { engine::write_chrome_trace(out, {b.last}); })) {
      std::fprintf(stderr, "stoker bench pipeline: the trace: %s\n", err.what().c_str());
      return 1;
    }
  }
  auto rate = [&](double ms) { return ms > 0 ? gb / (ms / 1e3) : 0; };
  auto ratio = [](double num, double den) { return num > 0 && den > 0 ? num / den : 0; };
  // Throughput ratios, repetition by repetition: x against y is y's ms over x's.
  const Spread b_vs_a = ratios_per_rep(a.each_ms, b.each_ms);
  const Spread c_vs_b = ratios_per_rep(b.each_ms, c.each_ms);
  const Spread all_vs_one = ratios_per_rep(b1.each_ms, b.each_ms);
  if (opt.json) {
    const auto num = number_or_null;  // null: not run
    auto spread = [&](const Spread& x) {
      return x.median > 0
                 ? Json{{"median", num(x.median)}, {"min", num(x.min)}, {"max", num(x.max)}}
                 : Json(nullptr);
    };
    Json j;
    j["partitions"] = o.partitions;
    j["size_mib"] = opt.size_mib;
    j["rounds"] = o.rounds;
    j["gpus"] = gpus;
    j["writers"] = writers;
    j["naive_ms"] = num(a_ms);
    j["pinned_ms"] = num(b.ms());
    j["pageable_ms"] = num(c.ms());
    j["pinned_1gpu_ms"] = num(b1.ms());
    j["bound_ms"] = num(b.bound_ms());
    j["bound_1gpu_ms"] = num(b1.bound_ms());
    j["naive_each_ms"] = a.each_ms;
    j["pinned_each_ms"] = b.each_ms;
    j["pageable_each_ms"] = c.each_ms;
    j["pinned_1gpu_each_ms"] = b1.each_ms;
    j["pinned_vs_naive"] = spread(b_vs_a);
    j["pageable_vs_pinned"] = spread(c_vs_b);
    j["all_gpus_vs_one"] = spread(all_vs_one);
    j["writers_gbps"] = {{"pinned", num(b.writers_gbps())},
                         {"pageable", num(c.writers_gbps())},
                         {"pinned_1gpu", num(b1.writers_gbps())}};
    std::printf("%s\n", json_text(j).c_str());
    return 0;
  }
  auto cell = [](double v, const char* unit) {
    char buf[32];
    if (v > 0)
      std::snprintf(buf, sizeof buf, "%.2f%s", v, unit);
    else
      std::snprintf(buf, sizeof buf, "-");
    return std::string(buf);
  };
  auto row = [&](const char* what, double ms, double vs_a, double bound) {
    std::printf("  %-40s %9s %9s %9s %9s\n", what, cell(ms, "").c_str(), cell(rate(ms), "").c_str(),
                cell(vs_a, "x").c_str(), cell(bound, "").c_str());
  };
  std::printf("  %-40s %9s %9s %9s %9s\n", "", "ms", "GB/s in", "vs (a)", "bound ms");
  row("(a) naive: pageable, sync, global mutex", a_ms, a_ms > 0 ? 1.0 : 0, 0);
  row("(b) engine, pinned producers", b.ms(), ratio(a_ms, b.ms()), b.bound_ms());
  row("(c) engine, pageable through staging", c.ms(), ratio(a_ms, c.ms()), c.bound_ms());
  row("(b) on GPU 0 alone", b1.ms(), 0, b1.bound_ms());
  auto per_round = [&](const char* what, const Spread& x) {
    if (x.median > 0)
      std::printf("  %s: %.2fx (%.2f-%.2fx over %d reps)\n", what, x.median, x.min, x.max,
                  opt.reps);
  };
  if (b_vs_a.median > 0 || c_vs_b.median > 0 || all_vs_one.median > 0)
    std::printf("  throughput ratios, the median of each repetition's:\n");
  per_round("  (b) against (a)", b_vs_a);
  per_round("  (c) against (b)", c_vs_b);
  const std::string scaling = "  " + std::to_string(gpus) + " GPU(s) against GPU 0 alone";
  per_round(scaling.c_str(), all_vs_one);
  const std::pair<const char*, const Figure*> engine_runs[] = {
      {"(b)", &b}, {"(c)", &c}, {"(b) on GPU 0", &b1}};
  for (const auto& [name, fig] : engine_runs)
    if (fig->slabs_grown > 0)
      std::printf("  note: the pinned pool grew by %zu slab(s) during %s's timed runs\n",
                  fig->slabs_grown, name);
  for (const auto& [name, fig] : engine_runs)  // 0 where a variant or the writers were left out
    if (fig->writers_gbps() > 0)
      std::printf("  the writers set %.1f GB/s of host memory during %s (median)\n",
                  fig->writers_gbps(), name);
  for (std::size_t d = 0; d < b.busy.size(); ++d)
    std::printf("  (b) GPU %zu compute busy %.0f %%\n", d, b.busy[d] * 100);
  return 0;
}

}  // namespace

int bench_pipeline_command(int argc, char** argv) {
  return with_memory_guard("bench pipeline", [&] { return bench_pipeline(argc, argv); });
}

}  // namespace stoker::tools
