#include "tools/stress/stress_driver.hpp"

#include <algorithm>
#include <atomic>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/cancellation_signal.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/system_executor.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <future>
#include <map>
#include <mutex>
#include <nlohmann/json.hpp>
#include <thread>
#include <variant>

#include "alloc/memory_budget.hpp"
#include "engine/engine.hpp"
#include "engine/workloads/toy_srs.hpp"

namespace stoker::tools::stress {

namespace asio = boost::asio;
using Clock = std::chrono::steady_clock;

int process_threads() {
  std::ifstream f("/proc/self/status");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("Threads:", 0) == 0) return std::atoi(line.c_str() + 8);
  return -1;
}

namespace {

constexpr std::size_t kMaxViolationsKept = 20;

double ms_since(Clock::time_point t) {
  return std::chrono::duration<double, std::milli>(Clock::now() - t).count();
}

std::size_t round_up(std::size_t n, std::size_t to) {
  return (n + to - 1) / to * to;
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// Empty when every device holds `want` bytes of resident SRS points, else
// the first device that does not.
std::string resident_mismatch(const engine::EngineStats& s, std::size_t want) {
  for (std::size_t d = 0; d < s.device_resident_bytes.size(); ++d)
    if (s.device_resident_bytes[d] != want)
      return "device " + std::to_string(d) + " holds " +
             std::to_string(s.device_resident_bytes[d]) +
             " bytes of resident SRS points, the toy SRS has " + std::to_string(want);
  return {};
}

// Waits until the process has at most `limit` threads; a joined thread may
// linger in the kernel's count for a moment after pthread_join returns.
int settle_threads(int limit) {
  int n = process_threads();
  for (int i = 0; i < 500 && n > limit; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    n = process_threads();
  }
  return n;
}

struct JobRecord {
  JobSpec spec;
  JobBuffers buffers;
  Expectation expect;
  std::size_t partitions = 0, demand = 0;
  std::vector<int> allowed;  // devices the job may run on
  Clock::time_point submitted;
  std::atomic<int> calls{0};
  // Touched only on the round's io thread (emit, and the engine's completion
  // clearing it) and by the initiation that installs the engine's handler.
  asio::cancellation_signal signal;
  std::unique_ptr<asio::steady_timer> timer;
};
using RecordPtr = std::shared_ptr<JobRecord>;

struct FutureJob {
  RecordPtr rec;
  std::variant<std::future<engine::JobReport>,
               std::future<std::tuple<boost::system::error_code, engine::JobReport>>>
      future;
};

class Round {
 public:
  Round(const StressOptions& o, const MixLimits& limits, StressReport& report,
        std::mutex& report_mu, std::vector<double>& latencies, int index, std::size_t quota,
        Clock::time_point deadline, std::span<const kernels::G1Affine> srs_points)
      : o_(o),
        limits_(limits),
        srs_points_(srs_points),
        rep_(report),
        rep_mu_(report_mu),
        latencies_(latencies),
        index_(index),
        quota_(quota),
        deadline_(deadline),
        in_flight_(static_cast<std::size_t>(o.submitters), 0) {}

  std::size_t submitted() const { return submitted_; }
  void run();
  friend asio::awaitable<void> await_job(Round* round, RecordPtr rec, engine::Job job);

 private:
  void submitter(int s, std::size_t quota);
  void submit(const RecordPtr& rec, engine::Job job, std::vector<FutureJob>& futures);
  void arm_cancel(const RecordPtr& rec);
  void harvest(std::vector<FutureJob>& futures, bool wait);
  void done(const RecordPtr& rec, std::error_code ec, const engine::JobReport* report);
  std::string check(const JobRecord& rec, std::error_code ec, const engine::JobReport* report,
                    int& outcome);
  bool collateral(const JobRecord& rec, std::error_code ec, const engine::JobReport* report);
  void sample_loop();
  void violation(const std::string& what);
  void job_violation(const JobRecord& rec, const std::string& what) {
    violation(rec.spec.describe() + ": " + what);
  }
  [[noreturn]] void stalled(double seconds);

  bool load_srs();
  void evict_srs();

  const StressOptions& o_;
  const MixLimits& limits_;
  const std::span<const kernels::G1Affine> srs_points_;  // empty: no ntt_msm_h jobs
  // Set before the submitters and the sampler start, cleared after they end.
  NttSrs ntt_;
  bool srs_failed_ = false;
  StressReport& rep_;
  std::mutex& rep_mu_;
  std::vector<double>& latencies_;
  const int index_;
  const std::size_t quota_;
  const Clock::time_point deadline_;

  asio::io_context io_;
  engine::Engine* engine_ = nullptr;
  alloc::PinnedPool* pool_ = nullptr;
  devices::Backend backend_ = devices::Backend::host;

  std::mutex mu_;  // guards what follows
  std::condition_variable cv_;
  std::vector<std::size_t> in_flight_;
  std::size_t outstanding_ = 0;
  std::map<std::uint64_t, std::weak_ptr<JobRecord>> live_;
  Clock::time_point last_progress_ = Clock::now();
  bool stop_sampler_ = false;
  bool stats_violation_ = false;

  std::atomic<std::size_t> submitted_{0};
  std::atomic<std::size_t> demand_{0};
  std::atomic<std::uint64_t> dead_mask_{0};  // devices a kernel fault may have broken
};

void Round::violation(const std::string& what) {
  std::lock_guard lk(rep_mu_);
  rep_.ok = false;
  ++rep_.violation_count;
  if (rep_.violations.size() < kMaxViolationsKept)
    rep_.violations.push_back("seed " + std::to_string(o_.seed) + ", round " +
                              std::to_string(index_) + ": " + what);
}

void Round::stalled(double seconds) {
  std::string s = "stoker stress: seed " + std::to_string(o_.seed) + ", round " +
                  std::to_string(index_) + ": no job completed for " + std::to_string(seconds) +
                  " s; jobs in flight:\n";
  {
    std::lock_guard lk(mu_);
    for (auto& [id, w] : live_)
      if (auto r = w.lock()) s += "  " + r->spec.describe() + "\n";
  }
  std::fputs(s.c_str(), stderr);
  std::fflush(stderr);
  std::abort();  // a hung engine cannot be destroyed, so the run cannot return
}

asio::awaitable<void> await_job(Round* round, RecordPtr rec, engine::Job job) {
  // A cancellation that arrives before the coroutine reaches the engine
  // throws here without submitting: that, too, is operation_aborted.
  try {
    if (rec->spec.tuple) {
      auto [ec, report] = co_await round->engine_->async_submit(
          std::move(job), asio::as_tuple(asio::use_awaitable));
      round->done(rec, ec, &report);
    } else {
      auto report = co_await round->engine_->async_submit(std::move(job), asio::use_awaitable);
      round->done(rec, {}, &report);
    }
  } catch (const boost::system::system_error& e) {
    round->done(rec, e.code(), nullptr);
  }
}

void Round::run() {
  const int baseline = process_threads();
  {
    // The stress tool's own pinned memory (PinnedVec inputs, pinned outputs):
    // roomy enough that building a job never waits for it.
    const std::size_t per_job =
        limits_.max_partitions * 3 * round_up(limits_.max_partition_bytes, 4096) + (1 << 20);
    alloc::MemoryBudget budget(per_job * o_.max_in_flight * static_cast<std::size_t>(o_.submitters),
                               "stress inputs");
    // One block per slab: shared slabs of mixed sizes fragment a small limit.
    alloc::PinnedPoolOptions pool_options;
    pool_options.max_blocks_per_slab = 1;
    pool_options.name = "stress inputs";
    std::unique_ptr<alloc::PinnedPool> pool;
    auto guard = asio::make_work_guard(io_);
    std::thread io_thread([this] { io_.run(); });
    // Every other round registers large pageable inputs in place instead of
    // staging them, so both paths (and the fallback between them) are driven.
    auto config = o_.config;
    if (index_ % 2 == 1) config.pageable_inputs = engine::PageableInputs::register_in_place;
    // Rounds also vary the staging threads, and with them the staging ring
    // (two chunks per thread), unless the command line fixed them.
    if (config.staging_threads == 0) {
      static constexpr int kStagingThreads[] = {1, 2, 3, 5, 8};
      config.staging_threads = kStagingThreads[static_cast<std::size_t>(index_) % 5];
    }
    auto created = engine::Engine::create(io_.get_executor(), config);
    if (!created) {
      violation("the engine could not be created: " + created.error().what());
      guard.reset();
      io_thread.join();
      return;
    }
    std::unique_ptr<engine::Engine> engine = std::move(*created);
    engine_ = engine.get();
    backend_ = engine->devices().backend();
    pool = std::make_unique<alloc::PinnedPool>(backend_, budget, pool_options);
    pool_ = pool.get();
    // A round whose SRS cannot be loaded submits nothing (the run ends).
    srs_failed_ = !srs_points_.empty() && !load_srs();

    std::thread sampler([this] { sample_loop(); });
    std::vector<std::thread> submitters;
    const auto k = static_cast<std::size_t>(o_.submitters);
    for (std::size_t s = 0; s < k; ++s) {
      const std::size_t share = quota_ / k + (s < quota_ % k ? 1 : 0);
      submitters.emplace_back([this, s, share] { submitter(static_cast<int>(s), share); });
    }
    for (auto& t : submitters) t.join();
    {
      std::unique_lock lk(mu_);
      cv_.wait(lk, [&] { return outstanding_ == 0; });
      stop_sampler_ = true;
    }
    cv_.notify_all();
    sampler.join();

    // Every handler ran: the engine must hold nothing.
    const auto s = engine->stats();
    std::string held;
    auto add = [&](const char* what, std::size_t n) {
      if (n) held += std::string(held.empty() ? "" : ", ") + what + " " + std::to_string(n);
    };
    add("jobs in flight", s.jobs_in_flight);
    add("partitions in flight", s.partitions_in_flight);
    add("busy slots", s.busy_slots);
    add("host budget bytes", s.host_budget_in_use);
    add("pinned bytes", s.pinned_bytes_in_use);
    for (std::size_t d = 0; d < s.device_budget_in_use.size(); ++d)
      add(("device " + std::to_string(d) + " budget bytes").c_str(), s.device_budget_in_use[d]);
    if (!held.empty())
      violation("engine not idle after every handler ran: " + held);
    else if (!s.idle())
      violation("engine stats() not idle() after every handler ran");
    if (ntt_.srs) evict_srs();
    std::size_t broken = 0;
    for (bool healthy : s.device_healthy) broken += !healthy;

    engine.reset();
    engine_ = nullptr;
    guard.reset();
    io_thread.join();  // pending cancel timers fire and drop their records
    const auto ps = pool->stats();
    if (ps.blocks_in_use != 0)
      violation(std::to_string(ps.blocks_in_use) +
                " PinnedVec blocks of the stress pool still in use after the engine was "
                "destroyed (inputs or outputs not given back)");
    pool.reset();
    if (budget.in_use() != 0)
      violation("stress input budget still holds " + std::to_string(budget.in_use()) + " bytes");
    std::lock_guard lk(rep_mu_);
    rep_.devices_broken += broken;
    ++rep_.rounds;
  }
  const int after = settle_threads(baseline);
  {
    std::lock_guard lk(rep_mu_);
    rep_.threads_after = after;
  }
  if (after > baseline)
    violation(std::to_string(after - baseline) +
              " thread(s) left behind after the engine was destroyed (" + std::to_string(after) +
              " now, " + std::to_string(baseline) + " before the round)");
}

// The toy SRS onto every device of this round's engine: resident from here
// until evict_srs, each device's copy exactly its size.
bool Round::load_srs() {
  engine::SrsLoadOptions options;
  options.label = "stress toy SRS 2^" + std::to_string(limits_.ntt_max_log_n);
  auto loaded = engine_->load_srs(srs_points_, options);
  if (!loaded) {
    violation("the toy SRS (" + std::to_string(srs_points_.size()) +
              " points) could not be loaded: " + loaded.error().what());
    return false;
  }
  ntt_.srs = *loaded;
  ntt_.log_n = limits_.ntt_max_log_n;
  ntt_.devices = &engine_->devices();
  const auto s = engine_->stats();
  if (auto bad = resident_mismatch(s, ntt_.srs.bytes()); !bad.empty())
    violation("after load_srs: " + bad);
  if (s.srs_resident != 1)
    violation("after load_srs the engine counts " + std::to_string(s.srs_resident) +
              " resident SRS, not 1");
  std::lock_guard lk(rep_mu_);
  ++rep_.srs_loads;
  return true;
}

// Every handler ran: the points are still resident, and once the eviction
// completes none are.
void Round::evict_srs() {
  const auto before = engine_->stats();
  if (auto bad = resident_mismatch(before, ntt_.srs.bytes()); !bad.empty())
    violation("after every handler ran, before eviction: " + bad);
  auto evicted = std::make_shared<std::promise<std::error_code>>();
  auto done = evicted->get_future();
  engine_->async_evict_srs(ntt_.srs,
                           [evicted](boost::system::error_code ec) { evicted->set_value(ec); });
  if (done.wait_for(std::chrono::duration<double>(o_.stall_s)) != std::future_status::ready) {
    violation("async_evict_srs did not complete within " + std::to_string(o_.stall_s) +
              " s with no job using the SRS");
  } else if (const auto ec = done.get()) {
    violation("async_evict_srs completed with " + ec.message());
  } else {
    const auto after = engine_->stats();
    if (auto bad = resident_mismatch(after, 0); !bad.empty())
      violation("after async_evict_srs completed: " + bad);
    if (after.srs_resident != 0 || !ntt_.srs.released())
      violation("after async_evict_srs completed the SRS is not released (" +
                std::to_string(after.srs_resident) + " resident)");
    std::lock_guard lk(rep_mu_);
    ++rep_.srs_evictions;
  }
  ntt_ = {};
}

void Round::submitter(int s, std::size_t quota) {
  if (srs_failed_) return;
  Rng rng(mix_seed(o_.seed, static_cast<std::uint64_t>(index_), static_cast<std::uint64_t>(s) + 1));
  // At most one kernel fault per engine lifetime, placed by submitter 0.
  const std::size_t kernel_fault_at =
      s == 0 ? rng.below(std::max<std::size_t>(1, std::min<std::size_t>(quota, 64)))
             : static_cast<std::size_t>(-1);
  std::vector<FutureJob> futures;
  for (std::size_t i = 0; i < quota && Clock::now() < deadline_; ++i) {
    // Room first: each submitter keeps at most max_in_flight jobs out.
    for (;;) {
      harvest(futures, false);
      std::unique_lock lk(mu_);
      if (in_flight_[static_cast<std::size_t>(s)] < o_.max_in_flight) break;
      cv_.wait_for(lk, std::chrono::milliseconds(1));
    }
    auto rec = std::make_shared<JobRecord>();
    rec->spec = make_spec(rng, limits_, index_, s, i, i == kernel_fault_at);
    rec->expect = expected(rec->spec);
    auto job = build_job(rec->spec, backend_, *pool_, rec->buffers, &ntt_);
    if (!job) {
      job_violation(*rec, "the stress tool could not build it: " + job.error().what());
      continue;
    }
    rec->partitions = job->partitions.size();
    // Refused jobs never reach the pool; the others want this much pinned.
    rec->demand =
        rec->expect.code == make_error_code(Errc::invalid_argument) ? 0 : pinned_demand(*job);
    if (job->devices) {
      rec->allowed = *job->devices;
    } else {
      for (std::size_t d = 0; d < limits_.devices; ++d) rec->allowed.push_back(static_cast<int>(d));
    }
    {
      std::lock_guard lk(rep_mu_);
      const auto& sp = rec->spec;
      if (sp.fault != Fault::none) ++rep_.faults_injected[static_cast<std::size_t>(sp.fault)];
      ++rep_.by_token[static_cast<std::size_t>(sp.token)];
      switch (sp.workload) {
        case Workload::synthetic:
          ++rep_.synthetic_jobs;
          break;
        case Workload::blend:
          ++rep_.blend_jobs;
          break;
        case Workload::ntt_msm_h:
          ++rep_.ntt_msm_h_jobs;
          break;
      }
      for (const auto& p : job->partitions)
        for (const auto& in : p.inputs) ++rep_.inputs_by_kind[static_cast<std::size_t>(in.kind)];
      ++rep_.jobs_submitted;
    }
    if (rec->spec.fault == Fault::kernel_error)
      dead_mask_.fetch_or(std::uint64_t{1} << rec->spec.fault_device);
    submit(rec, std::move(*job), futures);
    ++submitted_;
  }
  harvest(futures, true);
}

void Round::submit(const RecordPtr& rec, engine::Job job, std::vector<FutureJob>& futures) {
  {
    std::lock_guard lk(mu_);
    ++in_flight_[static_cast<std::size_t>(rec->spec.submitter)];
    ++outstanding_;
    live_[rec->spec.id] = rec;
  }
  demand_ += rec->demand;
  rec->submitted = Clock::now();
  auto handler = [this, rec](std::error_code ec, engine::JobReport r) { done(rec, ec, &r); };
  switch (rec->spec.token) {
    case Token::callback:
      engine_->async_submit(std::move(job),
                            asio::bind_cancellation_slot(rec->signal.slot(), std::move(handler)));
      arm_cancel(rec);
      break;
    case Token::deferred: {
      auto op = engine_->async_submit(std::move(job), asio::deferred);
      std::move(op)(asio::bind_cancellation_slot(rec->signal.slot(), std::move(handler)));
      arm_cancel(rec);
      break;
    }
    case Token::future:
      if (rec->spec.tuple)
        // use_future with a function: the future holds what it returns, so
        // the error comes back as a value together with the report.
        futures.push_back(
            {rec, engine_->async_submit(
                      std::move(job),
                      asio::use_future([](boost::system::error_code ec, engine::JobReport r) {
                        return std::make_tuple(ec, std::move(r));
                      }))});
      else
        futures.push_back({rec, engine_->async_submit(std::move(job), asio::use_future)});
      break;
    case Token::awaitable:
      // Spawned on the io thread, where the signal is emitted too.
      asio::post(io_, [this, rec, job = std::move(job)]() mutable {
        asio::co_spawn(io_, await_job(this, rec, std::move(job)),
                       asio::bind_cancellation_slot(rec->signal.slot(), [](std::exception_ptr) {}));
        arm_cancel(rec);
      });
      break;
  }
}

// The signal is emitted on the io thread, where the job's handler (and the
// engine's clearing of the slot before it) runs: Asio's cancellation signals
// are not thread-safe.
void Round::arm_cancel(const RecordPtr& rec) {
  if (!rec->spec.cancel) return;
  asio::post(io_, [this, rec] {
    rec->timer = std::make_unique<asio::steady_timer>(
        io_, std::chrono::microseconds(static_cast<long>(rec->spec.cancel_after_ms * 1000)));
    rec->timer->async_wait([this, rec](boost::system::error_code ec) {
      if (ec) return;
      {
        std::lock_guard lk(rep_mu_);
        ++rep_.cancels_requested;
      }
      rec->signal.emit(rec->spec.cancel_type);
    });
  });
}

void Round::harvest(std::vector<FutureJob>& futures, bool wait) {
  for (auto it = futures.begin(); it != futures.end();) {
    const bool ready = std::visit(
        [&](auto& f) {
          if (wait) f.wait();
          return f.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
        },
        it->future);
    if (!ready) {
      ++it;
      continue;
    }
    if (auto* plain = std::get_if<0>(&it->future)) {
      try {
        auto r = plain->get();
        done(it->rec, {}, &r);
      } catch (const boost::system::system_error& e) {
        done(it->rec, e.code(), nullptr);
      }
    } else {
      auto [ec, r] = std::get<1>(it->future).get();
      done(it->rec, ec, &r);
    }
    it = futures.erase(it);
  }
}

bool Round::collateral(const JobRecord& rec, std::error_code ec, const engine::JobReport* report) {
  const auto mask = dead_mask_.load();
  if (mask == 0) return false;
  bool any = false, all = true;
  for (int d : rec.allowed) {
    const bool dead = d >= 0 && d < 64 && (mask >> d & 1);
    any |= dead;
    all &= dead;
  }
  const std::string msg = report ? report->error : std::string{};
  if (ec == make_error_code(Errc::kernel_failed) && any && (!report || contains(msg, "faulted")))
    return true;
  return ec == make_error_code(Errc::device_fault) && all &&
         (!report || contains(msg, "no healthy device"));
}

// Outcome: 0 success, 1 expected failure, 2 aborted, 3 collateral.
std::string Round::check(const JobRecord& rec, std::error_code ec, const engine::JobReport* report,
                         int& outcome) {
  const auto& exp = rec.expect;
  const std::string got =
      ec ? ec.message() + (report ? " (\"" + report->error + "\")" : "") : "success";
  if (!ec) {
    outcome = 0;
    if (exp.code)
      return "succeeded, but must fail with " + exp.code.message() + " naming '" +
             exp.message.front() + "'";
    if (!report) return "succeeded without a report";
    if (report->partitions_done != rec.partitions || report->parts.size() != rec.partitions)
      return "succeeded with " + std::to_string(report->partitions_done) + " of " +
             std::to_string(rec.partitions) + " partitions done";
    for (const auto& p : report->parts)
      if (std::find(rec.allowed.begin(), rec.allowed.end(), p.device) == rec.allowed.end())
        return "partition " + std::to_string(p.index) + " ran on device " +
               std::to_string(p.device) + ", outside its affinity";
    if (auto bad = verify_outputs(rec.spec, rec.buffers); !bad.empty())
      return "succeeded with a wrong output: " + bad;
    return {};
  }
  if (ec == engine::operation_aborted() && rec.spec.cancel) {
    outcome = 2;
    if (report && !contains(report->error, "cancelled"))
      return "aborted, but its report does not say cancelled: " + report->error;
    if (report && report->partitions_done > rec.partitions) return "aborted with too many done";
    return {};
  }
  if (exp.code && ec == exp.code) {
    bool named = true;
    if (report)
      for (const auto& m : exp.message) named &= contains(report->error, m);
    if (named) {
      outcome = 1;
      if (report && report->partitions_done >= rec.partitions)
        return "failed as expected, yet reports every partition done";
      if (report && exp.code == make_error_code(Errc::invalid_argument) &&
          report->partitions_done != 0)
        return "refused as bad input after partitions ran";
      return {};
    }
  }
  if (collateral(rec, ec, report)) {
    outcome = 3;
    return {};
  }
  outcome = -1;
  std::string want = exp.code ? exp.code.message() : std::string("success");
  for (const auto& m : exp.message) want += " naming '" + m + "'";
  if (rec.spec.cancel) want += " or operation_aborted";
  return "completed with " + got + ", expected " + want;
}

void Round::done(const RecordPtr& rec, std::error_code ec, const engine::JobReport* report) {
  const double ms = ms_since(rec->submitted);
  const int calls = ++rec->calls;
  if (calls != 1) {
    job_violation(*rec, "its handler was called " + std::to_string(calls) + " times");
    return;
  }
  int outcome = -1;
  const std::string problem = check(*rec, ec, report, outcome);
  if (!problem.empty()) job_violation(*rec, problem);
  {
    std::lock_guard lk(rep_mu_);
    ++rep_.jobs_completed;
    latencies_.push_back(ms);
    if (report) rep_.partitions_done += report->partitions_done;
    if (report)
      for (const auto& p : report->parts) rep_.bytes_in += p.bytes_in;
    if (problem.empty()) {
      switch (outcome) {
        case 0:
          ++rep_.jobs_succeeded;
          if (rec->spec.workload == Workload::ntt_msm_h) ++rep_.ntt_msm_h_verified;
          if (rec->spec.cancel) ++rep_.cancels_too_late;
          break;
        case 1:
          ++rep_.faults_survived[static_cast<std::size_t>(rec->spec.fault)];
          break;
        case 2:
          ++rep_.cancels_aborted;
          break;
        case 3:
          ++rep_.collateral;
          break;
      }
    }
  }
  demand_ -= rec->demand;
  {
    std::lock_guard lk(mu_);
    --in_flight_[static_cast<std::size_t>(rec->spec.submitter)];
    --outstanding_;
    live_.erase(rec->spec.id);
    last_progress_ = Clock::now();
  }
  cv_.notify_all();
}

void Round::sample_loop() {
  for (;;) {
    {
      std::unique_lock lk(mu_);
      if (cv_.wait_for(lk, std::chrono::milliseconds(5), [&] { return stop_sampler_; })) return;
      const double quiet = std::chrono::duration<double>(Clock::now() - last_progress_).count();
      if (outstanding_ > 0 && quiet > o_.stall_s) {
        lk.unlock();
        stalled(quiet);
      }
    }
    const auto s = engine_->stats();
    const std::size_t demand = demand_.load();
    std::size_t device = 0;
    for (auto b : s.device_budget_in_use) device += b;
    std::string bad;
    if (s.busy_slots > s.total_slots)
      bad = std::to_string(s.busy_slots) + " busy slots of " + std::to_string(s.total_slots);
    if (s.host_budget_in_use > s.host_budget_limit)
      bad = "host budget " + std::to_string(s.host_budget_in_use) + " in use over its limit " +
            std::to_string(s.host_budget_limit);
    if (ntt_.srs)
      if (auto r = resident_mismatch(s, ntt_.srs.bytes()); !r.empty()) bad = r;
    if (!bad.empty() && !stats_violation_) {
      stats_violation_ = true;
      violation("stats() while running: " + bad);
    }
    std::lock_guard lk(rep_mu_);
    ++rep_.samples;
    if (demand > s.host_budget_limit) ++rep_.pressure_samples;
    rep_.host_budget_limit = s.host_budget_limit;
    rep_.peak_demand = std::max(rep_.peak_demand, demand);
    rep_.peak_host_budget_in_use = std::max(rep_.peak_host_budget_in_use, s.host_budget_in_use);
    rep_.peak_pinned_in_use = std::max(rep_.peak_pinned_in_use, s.pinned_bytes_in_use);
    rep_.peak_pinned_pooled = std::max(rep_.peak_pinned_pooled, s.pinned_bytes_pooled);
    rep_.peak_device_in_use = std::max(rep_.peak_device_in_use, device);
  }
}

Error check_options(const StressOptions& o) {
  // The command line's bounds (tools/stress/stress_command.cpp), so that a
  // caller of run() gets an error where `stoker stress` would give a usage
  // error, never an aborted process or a run that cannot end.
  constexpr double kDay = 86400;
  const auto number = [](double v) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", v);
    return std::string(text);
  };
  const auto seconds = [&](double s) { return number(s) + " s"; };
  if (!(o.duration_s >= 0 && o.duration_s <= 30 * kDay))
    return {Errc::invalid_argument,
            "duration must be 0 (none) or up to 30 days, not " + seconds(o.duration_s)};
  if (o.jobs == 0 && o.duration_s <= 0)
    return {Errc::invalid_argument, "stress needs a bound: a job count or a duration"};
  // A stall aborts the process: a bound under a second would abort a
  // healthy run, and 0 one as soon as any job is in flight.
  if (!(o.stall_s >= 1 && o.stall_s <= 30 * kDay))
    return {Errc::invalid_argument,
            "stall bound must be 1 s to 30 days, not " + seconds(o.stall_s)};
  if (!(o.round_s > 0 && o.round_s <= 30 * kDay))
    return {Errc::invalid_argument,
            "round duration must be above 0 and up to 30 days, not " + seconds(o.round_s)};
  if (!(o.max_cancel_delay_ms >= 0 && o.max_cancel_delay_ms <= 1e6))
    return {Errc::invalid_argument,
            "max cancel delay must be 0 to 1e6 ms, not " + number(o.max_cancel_delay_ms) + " ms"};
  if (o.submitters < 1 || o.submitters > 64)
    return {Errc::invalid_argument,
            "submitters must be 1..64, not " + std::to_string(o.submitters)};
  if (o.round_jobs == 0) return {Errc::invalid_argument, "round_jobs must be at least 1"};
  if (o.max_partitions == 0 || o.max_partitions > 1024)
    return {Errc::invalid_argument,
            "max partitions must be 1..1024, not " + std::to_string(o.max_partitions)};
  if (o.max_partition_bytes < 64)
    return {Errc::invalid_argument, "max partition size must be at least 64 bytes, not " +
                                        std::to_string(o.max_partition_bytes)};
  for (double r : {o.fault_rate, o.cancel_rate})
    if (!(r >= 0 && r <= 1))
      return {Errc::invalid_argument, "rates must be within 0..1, not " + std::to_string(r)};
  if (o.max_in_flight == 0 || o.max_in_flight > (std::size_t{1} << 20))
    return {Errc::invalid_argument,
            "max in flight must be 1..1048576, not " + std::to_string(o.max_in_flight)};
  return {};
}

}  // namespace

Result<StressReport> run(const StressOptions& options) {
  if (auto e = check_options(options)) return e;
  StressOptions o = options;
  // Backpressure must really wait: unless told otherwise the host budget
  // holds about four of the largest partitions, far less than the jobs in
  // flight want.
  const std::size_t largest_need = 3 * round_up(o.max_partition_bytes, 4096);
  if (o.config.host_budget_bytes == 0) o.config.host_budget_bytes = 4 * largest_need;

  StressReport rep;
  rep.seed = o.seed;
  // Process-wide threads that outlive any engine, started before the
  // baseline: Asio's system executor (use_future completes through it) and,
  // on CUDA, the runtime's own threads (the throwaway engine also tells us
  // the devices the mix may use).
  {
    std::promise<void> p;
    asio::post(asio::system_executor(), [&] { p.set_value(); });
    p.get_future().wait();
  }
  MixLimits limits;
  devices::Backend backend = devices::Backend::host;
  {
    asio::io_context io;
    auto e = engine::Engine::create(io.get_executor(), o.config);
    if (!e) return e.error();
    const auto& set = (*e)->devices();
    backend = set.backend();
    rep.backend = devices::to_string(backend);
    rep.devices = set.size();
    limits.devices = set.size();
    for (std::size_t d = 0; d < set.size(); ++d)
      limits.device_memory = std::max(limits.device_memory, set[d].info().total_memory);
    limits.host_budget = (*e)->stats().host_budget_limit;
  }
  if (limits.devices > 64) return Error{Errc::invalid_argument, "stress handles up to 64 devices"};
  limits.max_partitions = o.max_partitions;
  // Every job the mix means to succeed must fit the host budget.
  limits.max_partition_bytes =
      std::min(o.max_partition_bytes, limits.host_budget / 2 / 3 / 4096 * 4096);
  if (limits.max_partition_bytes < 64)
    return Error{Errc::invalid_argument, "host budget of " + std::to_string(limits.host_budget) +
                                             " bytes is too small for a stress partition"};
  limits.fault_rate = o.fault_rate;
  limits.cancel_rate = o.cancel_rate;
  limits.max_cancel_delay_ms = o.max_cancel_delay_ms;
  // The toy SRS for the largest ntt_msm_h size the mix draws, computed once
  // on the CPU (before the thread baseline: it runs on threads of its own).
  limits.ntt_max_log_n = stress_ntt_max_log_n(backend, limits.max_partition_bytes);
  std::vector<kernels::G1Affine> srs_points;
  if (limits.ntt_max_log_n != 0) {
    srs_points.resize(engine::workloads::toy_srs_points(limits.ntt_max_log_n));
    if (auto e =
            engine::workloads::make_toy_srs(kStressSrsSeed, limits.ntt_max_log_n, 0, srs_points))
      return Error{e.code, "the toy SRS for the ntt_msm_h jobs: " + e.what()};
    rep.srs_log_n = limits.ntt_max_log_n;
    rep.srs_bytes = srs_points.size() * sizeof(kernels::G1Affine);
  }
  rep.threads_baseline = settle_threads(process_threads());

  std::mutex rep_mu;
  std::vector<double> latencies;
  const auto start = Clock::now();
  const auto end = o.duration_s > 0
                       ? start + std::chrono::microseconds(static_cast<long>(o.duration_s * 1e6))
                       : Clock::time_point::max();
  std::size_t submitted = 0;
  for (int r = 0;; ++r) {
    const auto now = Clock::now();
    if ((o.jobs && submitted >= o.jobs) || now >= end) break;
    const std::size_t quota = o.jobs ? std::min(o.round_jobs, o.jobs - submitted) : o.round_jobs;
    const auto round_end =
        std::min(end, now + std::chrono::microseconds(static_cast<long>(o.round_s * 1e6)));
    Round round(o, limits, rep, rep_mu, latencies, r, quota, round_end, srs_points);
    round.run();
    submitted += round.submitted();
    if (o.log) {
      char line[200];
      std::snprintf(line, sizeof line,
                    "round %d: %zu jobs so far, %zu succeeded, %zu violations, %.1f s", r,
                    rep.jobs_completed, rep.jobs_succeeded, rep.violation_count,
                    std::chrono::duration<double>(Clock::now() - start).count());
      o.log(line);
    }
    if (round.submitted() == 0 && quota > 0 && Clock::now() < end) break;  // nothing got out
  }
  rep.wall_s = std::chrono::duration<double>(Clock::now() - start).count();
  rep.jobs_per_s = rep.wall_s > 0 ? rep.jobs_completed / rep.wall_s : 0;
  rep.partitions_per_s = rep.wall_s > 0 ? rep.partitions_done / rep.wall_s : 0;
  if (!latencies.empty()) {
    std::sort(latencies.begin(), latencies.end());
    auto at = [&](double q) {
      return latencies[std::min(
          latencies.size() - 1,
          static_cast<std::size_t>(q * static_cast<double>(latencies.size())))];
    };
    rep.latency_p50_ms = at(0.50);
    rep.latency_p99_ms = at(0.99);
    rep.latency_max_ms = latencies.back();
  }
  if (rep.jobs_completed != rep.jobs_submitted) {
    rep.ok = false;
    ++rep.violation_count;
    rep.violations.push_back("seed " + std::to_string(o.seed) + ": " +
                             std::to_string(rep.jobs_submitted) + " jobs submitted but " +
                             std::to_string(rep.jobs_completed) + " handlers ran");
  }
  return rep;
}

std::string to_json(const StressReport& r) {
  using Json = nlohmann::ordered_json;
  Json j;
  j["seed"] = r.seed;
  j["backend"] = r.backend;
  j["devices"] = r.devices;
  j["ok"] = r.ok;
  j["rounds"] = r.rounds;
  j["jobs_submitted"] = r.jobs_submitted;
  j["jobs_completed"] = r.jobs_completed;
  j["jobs_succeeded"] = r.jobs_succeeded;
  j["partitions_done"] = r.partitions_done;
  j["bytes_in"] = r.bytes_in;
  j["wall_s"] = r.wall_s;
  j["jobs_per_s"] = r.jobs_per_s;
  j["partitions_per_s"] = r.partitions_per_s;
  j["latency_ms"] = {
      {"p50", r.latency_p50_ms}, {"p99", r.latency_p99_ms}, {"max", r.latency_max_ms}};
  Json faults = Json::object();
  for (int f = 1; f < kFaultKinds; ++f)
    faults[fault_name(static_cast<Fault>(f))] = {
        {"injected", r.faults_injected[static_cast<std::size_t>(f)]},
        {"survived", r.faults_survived[static_cast<std::size_t>(f)]}};
  j["faults"] = std::move(faults);
  j["collateral"] = r.collateral;
  j["devices_broken"] = r.devices_broken;
  j["cancellations"] = {{"requested", r.cancels_requested},
                        {"aborted", r.cancels_aborted},
                        {"finished_first", r.cancels_too_late}};
  Json tokens = Json::object();
  for (int t = 0; t < kTokenKinds; ++t)
    tokens[token_name(static_cast<Token>(t))] = r.by_token[static_cast<std::size_t>(t)];
  j["tokens"] = std::move(tokens);
  j["workloads"] = {{"synthetic", r.synthetic_jobs},
                    {"blend", r.blend_jobs},
                    {"ntt_msm_h", r.ntt_msm_h_jobs},
                    {"ntt_msm_h_verified", r.ntt_msm_h_verified}};
  j["srs"] = {{"log_n", r.srs_log_n},
              {"bytes_per_device", r.srs_bytes},
              {"loads", r.srs_loads},
              {"evictions", r.srs_evictions}};
  j["inputs"] = {{"pinned", r.inputs_by_kind[0]},
                 {"registered", r.inputs_by_kind[1]},
                 {"pageable", r.inputs_by_kind[2]},
                 {"produced", r.inputs_by_kind[3]}};
  j["memory"] = {{"host_budget_limit", r.host_budget_limit},
                 {"peak_host_budget_in_use", r.peak_host_budget_in_use},
                 {"peak_demand", r.peak_demand},
                 {"pressure_samples", r.pressure_samples},
                 {"samples", r.samples},
                 {"peak_pinned_in_use", r.peak_pinned_in_use},
                 {"peak_pinned_pooled", r.peak_pinned_pooled},
                 {"peak_device_in_use", r.peak_device_in_use}};
  j["threads"] = {{"baseline", r.threads_baseline}, {"after", r.threads_after}};
  j["violation_count"] = r.violation_count;
  j["violations"] = r.violations;
  return j.dump(-1, ' ', false, Json::error_handler_t::replace);
}

std::string summarize(const StressReport& r) {
  char buf[512];
  std::string s;
  auto mib = [](std::size_t b) { return static_cast<double>(b) / (1 << 20); };
  std::snprintf(buf, sizeof buf,
                "stoker stress: seed %llu, %s backend, %zu device(s), %zu round(s), %.1f s\n"
                "  jobs: %zu submitted, %zu completed, %zu succeeded; %.1f jobs/s, %.1f "
                "partitions/s\n"
                "  job latency: p50 %.2f ms, p99 %.2f ms, max %.2f ms\n",
                static_cast<unsigned long long>(r.seed), r.backend.c_str(), r.devices, r.rounds,
                r.wall_s, r.jobs_submitted, r.jobs_completed, r.jobs_succeeded, r.jobs_per_s,
                r.partitions_per_s, r.latency_p50_ms, r.latency_p99_ms, r.latency_max_ms);
  s += buf;
  s += "  faults injected/survived:";
  for (int f = 1; f < kFaultKinds; ++f) {
    std::snprintf(buf, sizeof buf, " %s %zu/%zu", fault_name(static_cast<Fault>(f)),
                  r.faults_injected[static_cast<std::size_t>(f)],
                  r.faults_survived[static_cast<std::size_t>(f)]);
    s += buf;
  }
  std::snprintf(buf, sizeof buf,
                "\n  collateral failures (jobs on a device a kernel fault broke): %zu; devices "
                "broken: %zu\n"
                "  cancellations: %zu requested, %zu aborted, %zu finished first\n",
                r.collateral, r.devices_broken, r.cancels_requested, r.cancels_aborted,
                r.cancels_too_late);
  s += buf;
  std::snprintf(buf, sizeof buf,
                "  workloads: synthetic %zu, blend %zu, ntt_msm_h %zu (%zu succeeded, verified "
                "with the toy secret)\n",
                r.synthetic_jobs, r.blend_jobs, r.ntt_msm_h_jobs, r.ntt_msm_h_verified);
  s += buf;
  if (r.srs_log_n != 0) {
    std::snprintf(buf, sizeof buf,
                  "  toy SRS: 2^%u, %zu bytes on each device, loaded in %zu round(s), evicted in "
                  "%zu\n",
                  r.srs_log_n, r.srs_bytes, r.srs_loads, r.srs_evictions);
    s += buf;
  }
  s += "  tokens:";
  for (int t = 0; t < kTokenKinds; ++t) {
    std::snprintf(buf, sizeof buf, " %s %zu", token_name(static_cast<Token>(t)),
                  r.by_token[static_cast<std::size_t>(t)]);
    s += buf;
  }
  std::snprintf(buf, sizeof buf,
                "; inputs: pinned %zu, registered %zu, pageable %zu, produced %zu\n"
                "  memory: host budget %.2f MiB, peak in use %.2f MiB, peak demand in flight "
                "%.2f MiB (over budget in %zu of %zu samples)\n"
                "          peak pinned in use %.2f MiB (pooled %.2f MiB), peak device %.2f MiB\n"
                "  threads: %d before, %d after\n",
                r.inputs_by_kind[0], r.inputs_by_kind[1], r.inputs_by_kind[2], r.inputs_by_kind[3],
                mib(r.host_budget_limit), mib(r.peak_host_budget_in_use), mib(r.peak_demand),
                r.pressure_samples, r.samples, mib(r.peak_pinned_in_use), mib(r.peak_pinned_pooled),
                mib(r.peak_device_in_use), r.threads_baseline, r.threads_after);
  s += buf;
  if (r.ok) {
    s += "  invariants: all held\n";
  } else {
    s += "  VIOLATIONS: " + std::to_string(r.violation_count) + "\n";
    for (const auto& v : r.violations) s += "    " + v + "\n";
  }
  return s;
}

}  // namespace stoker::tools::stress
