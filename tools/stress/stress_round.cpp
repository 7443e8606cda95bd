#include "tools/stress/stress_round.hpp"

#include <algorithm>
#include <boost/asio/as_tuple.hpp>
#include <boost/asio/bind_cancellation_slot.hpp>
#include <boost/asio/co_spawn.hpp>
#include <boost/asio/deferred.hpp>
#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/use_awaitable.hpp>
#include <boost/asio/use_future.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "alloc/memory_budget.hpp"
#include "common/elapsed.hpp"
#include "common/host_memory_limit.hpp"
#include "common/start_thread.hpp"
#include "tools/stress/stress_checks.hpp"
#include "tools/stress/thread_names.hpp"

namespace stoker::tools::stress {

namespace asio = boost::asio;

namespace {

constexpr std::size_t kMaxViolationsKept = 20;

// The round's threads keep counts that a std::bad_alloc halfway through
// would leave wrong (a job counted in flight that never went out, and a
// round that waits for it): out of host memory there, the run ends, in
// words (the job builds, where most of the memory goes, fail softly).
template <typename F>
void in_words(F&& f, const std::string& what) noexcept {
  try {
    f();
  } catch (const std::bad_alloc&) {
    common::abort_out_of_host_memory(what);
  }
}

using common::ms_since;
using common::seconds_since;

}  // namespace

int settle_threads(int limit) {
  int n = process_threads();
  for (int i = 0; i < 500 && n > limit; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    n = process_threads();
  }
  return n;
}

void Round::violation(const std::string& what) {
  std::lock_guard lk(rep_mu_);
  rep_.ok = false;
  ++rep_.violation_count;
  if (rep_.violations.size() < kMaxViolationsKept)
    rep_.violations.push_back("seed " + std::to_string(o_.seed) + ", round " +
                              std::to_string(index_) + ": " + what);
}

void Round::resource_failure(const std::string& what) {
  stop_ = true;
  std::lock_guard lk(rep_mu_);
  rep_.ok = false;
  ++rep_.resource_failure_count;
  if (rep_.resource_failures.size() < kMaxViolationsKept)
    rep_.resource_failures.push_back("seed " + std::to_string(o_.seed) + ", round " +
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
    round->done(rec, e.code(), nullptr, e.what());
  }
}

void Round::run() {
  const int baseline = process_threads();
  const auto baseline_names = thread_names();
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
    std::thread io_thread;
    if (Error e =
            common::start_thread(io_thread, "the round's thread for the engine's handlers", [this] {
              in_words([this] { io_.run(); }, "the round's thread for the engine's handlers");
            })) {
      resource_failure(e.what());
      return;
    }
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
      // The run's first engine, with the same devices, was created: a
      // refusal here is the machine running out, anything else the engine's.
      const std::string what = "the engine could not be created: " + created.error().what();
      if (machine_refused(created.error().code, created.error().what()))
        resource_failure(what);
      else
        violation(what);
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

    // A thread the system refuses ends the round's submitting; those
    // already started see stop_ and wind down.
    std::thread sampler;
    if (Error e = common::start_thread(sampler, "the round's sampler thread", [this] {
          in_words([this] { sample_loop(); }, "the round's sampler thread");
        }))
      resource_failure(e.what());
    std::vector<std::thread> submitters;
    const auto k = static_cast<std::size_t>(o_.submitters);
    for (std::size_t s = 0; s < k && !stop_; ++s) {
      const std::size_t share = quota_ / k + (s < quota_ % k ? 1 : 0);
      std::thread t;
      const std::string what =
          "submitter thread " + std::to_string(s + 1) + " of " + std::to_string(k);
      if (Error e = common::start_thread(t, what, [this, s, share, what] {
            in_words([&] { submitter(static_cast<int>(s), share); }, what);
          })) {
        resource_failure(e.what());
        break;
      }
      submitters.push_back(std::move(t));
    }
    for (auto& t : submitters) t.join();
    {
      std::unique_lock lk(mu_);
      cv_.wait(lk, [&] { return outstanding_ == 0; });
      stop_sampler_ = true;
    }
    cv_.notify_all();
    if (sampler.joinable()) sampler.join();

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
  if (after > baseline) {
    std::string what = std::to_string(after - baseline) +
                       " thread(s) left behind after the engine was destroyed (" +
                       std::to_string(after) + " now, " + std::to_string(baseline) +
                       " before the round)";
    const auto added = threads_added(baseline_names, thread_names());
    for (std::size_t i = 0; i < added.size(); ++i) what += (i == 0 ? ": " : ", ") + added[i];
    violation(what);
  }
}

// The toy SRS onto every device of this round's engine: resident from here
// until evict_srs, each device's copy exactly its size.
bool Round::load_srs() {
  engine::SrsLoadOptions options;
  options.label = "stress toy SRS 2^" + std::to_string(limits_.ntt_max_log_n);
  auto loaded = [&]() -> Result<engine::Srs> {
    try {
      return engine_->load_srs(srs_points_, options);
    } catch (const std::bad_alloc&) {
      return common::host_memory_refused("loading it");
    }
  }();
  if (!loaded) {
    const std::string what = "the toy SRS (" + std::to_string(srs_points_.size()) +
                             " points) could not be loaded: " + loaded.error().what();
    if (machine_refused(loaded.error().code, loaded.error().what()))
      resource_failure(what);
    else
      violation(what);
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
  for (std::size_t i = 0; i < quota && Clock::now() < deadline_ && !stop_; ++i) {
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
    auto job = [&]() -> Result<engine::Job> {
      try {
        return build_job(rec->spec, backend_, *pool_, rec->buffers, &ntt_);
      } catch (const std::bad_alloc&) {
        return common::host_memory_refused("its inputs and outputs");
      }
    }();
    if (!job) {
      // Its own inputs and outputs, the stress tool's memory: not the
      // engine's to get wrong.
      const std::string what = "the stress tool could not build it: " + job.error().what();
      if (job.error().code == make_error_code(Errc::out_of_host_memory))
        resource_failure(rec->spec.describe() + ": " + what);
      else
        job_violation(*rec, what);
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
        done(it->rec, e.code(), nullptr, e.what());
      }
    } else {
      auto [ec, r] = std::get<1>(it->future).get();
      done(it->rec, ec, &r);
    }
    it = futures.erase(it);
  }
}

void Round::done(const RecordPtr& rec, std::error_code ec, const engine::JobReport* report,
                 const std::string& thrown) {
  const double ms = ms_since(rec->submitted);
  const int calls = ++rec->calls;
  if (calls != 1) {
    job_violation(*rec, "its handler was called " + std::to_string(calls) + " times");
    return;
  }
  Outcome outcome = Outcome::wrong;
  std::string problem = check_outcome(*rec, ec, report, dead_mask_.load(), outcome);
  if (!problem.empty() && machine_refused(ec, report ? report->error : thrown)) {
    resource_failure(rec->spec.describe() + ": " + (report ? report->error : thrown));
    problem.clear();
    outcome = Outcome::wrong;  // counted as none of the allowed endings
  } else if (!problem.empty()) {
    job_violation(*rec, problem);
  }
  {
    std::lock_guard lk(rep_mu_);
    ++rep_.jobs_completed;
    latencies_.push_back(ms);
    if (report) rep_.partitions_done += report->partitions_done;
    if (report)
      for (const auto& p : report->parts) rep_.bytes_in += p.bytes_in;
    if (problem.empty()) {
      switch (outcome) {
        case Outcome::succeeded:
          ++rep_.jobs_succeeded;
          if (rec->spec.workload == Workload::ntt_msm_h) ++rep_.ntt_msm_h_verified;
          if (rec->spec.cancel) ++rep_.cancels_too_late;
          break;
        case Outcome::failed_as_expected:
          ++rep_.faults_survived[static_cast<std::size_t>(rec->spec.fault)];
          break;
        case Outcome::aborted:
          ++rep_.cancels_aborted;
          break;
        case Outcome::collateral:
          ++rep_.collateral;
          break;
        case Outcome::wrong:
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
      const double quiet = seconds_since(last_progress_);
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

}  // namespace stoker::tools::stress
