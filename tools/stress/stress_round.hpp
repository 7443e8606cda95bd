// One round of `stoker stress`: one engine lifetime. The round creates an
// engine, loads the toy SRS into it when the mix holds ntt_msm_h jobs, and
// runs `submitters` threads that each draw, build and submit their share of
// the mix through every completion token (cancelling some mid-job), while a
// sampler thread checks engine.stats() and watches for a stall. Every
// handler's outcome is checked as it runs; once every handler ran the round
// checks that the engine is idle, evicts the SRS, destroys the engine and
// checks that no thread and no stress memory is left behind.
//
// Thread safety: run() is called once, from one thread. What the round
// counts goes into the run's StressReport under the run's mutex; a
// violation or a resource failure is recorded there too, naming the seed
// and the round. A stall aborts the process (a hung engine cannot be
// destroyed).
#pragma once

#include <atomic>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/io_context.hpp>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <future>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <system_error>
#include <tuple>
#include <variant>
#include <vector>

#include "engine/engine.hpp"
#include "tools/stress/stress_driver.hpp"
#include "tools/stress/stress_job_record.hpp"

namespace stoker::tools::stress {

// A job submitted with use_future: the submitter polls it (harvest).
struct FutureJob {
  RecordPtr rec;
  std::variant<std::future<engine::JobReport>,
               std::future<std::tuple<boost::system::error_code, engine::JobReport>>>
      future;
};

class Round {
 public:
  // `report`, `report_mu` and `latencies` are the run's, shared by its
  // rounds; `quota` jobs at most, none submitted after `deadline`.
  // `srs_points` is the toy SRS (empty: no ntt_msm_h jobs in the mix).
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
  friend boost::asio::awaitable<void> await_job(Round* round, RecordPtr rec, engine::Job job);

 private:
  void submitter(int s, std::size_t quota);
  void submit(const RecordPtr& rec, engine::Job job, std::vector<FutureJob>& futures);
  void arm_cancel(const RecordPtr& rec);
  void harvest(std::vector<FutureJob>& futures, bool wait);
  // `thrown`: what the token threw, where it hands over no report.
  void done(const RecordPtr& rec, std::error_code ec, const engine::JobReport* report,
            const std::string& thrown = {});
  void sample_loop();
  void violation(const std::string& what);
  // What the machine refused (stress_driver.hpp): recorded in the report,
  // and no job is submitted after it.
  void resource_failure(const std::string& what);
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

  boost::asio::io_context io_;
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

  std::atomic<bool> stop_{false};  // a resource failure: submit nothing more
  std::atomic<std::size_t> submitted_{0};
  std::atomic<std::size_t> demand_{0};
  std::atomic<std::uint64_t> dead_mask_{0};  // devices a kernel fault may have broken
};

// Waits until the process has at most `limit` threads; a joined thread may
// linger in the kernel's count for a moment after pthread_join returns.
int settle_threads(int limit);

inline std::size_t round_up(std::size_t n, std::size_t to) {
  return (n + to - 1) / to * to;
}

}  // namespace stoker::tools::stress
