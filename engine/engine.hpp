// Engine: the Asio job loop that shards partitions across every device.
//
//   asio::io_context io;
//   stoker::Engine engine(io.get_executor(), stoker::Config::from_env().value());
//   engine.async_submit(std::move(job), [](std::error_code ec, stoker::JobReport r) {...});
//   io.run();
//
// Per device: three streams (H2D, compute, D2H) linked only by events, a
// pipeline of `pipeline_depth` slots so one partition's copies overlap
// another's kernels, pinned staging chunks for pageable inputs, a
// feeder thread that enqueues and an event-waiting thread that notices
// completion (and sticky faults) without CUDA host callbacks. Partitions are
// pulled by whichever device has a free slot first; jobs are ordered by
// priority, then arrival. No mutex is held around device work.
//
// Every async_ verb takes an Asio completion token (callback, use_future,
// use_awaitable, deferred); through use_future or use_awaitable a failed job
// throws a JobError that keeps its message. Handlers run on their associated
// executor (by default the executor given to the constructor), never on an
// engine thread.
// Cancelling through the handler's cancellation slot drops the partitions not
// yet started and completes with operation_aborted once the started ones have
// drained. Nothing leaks on any path: budget, pool blocks, device memory and
// slots all come back (stats() shows it).
#pragma once

#include <boost/asio/any_completion_handler.hpp>
#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/associated_executor.hpp>
#include <boost/asio/async_result.hpp>
#include <boost/asio/compose.hpp>
#include <boost/asio/post.hpp>
#include <boost/system/error_code.hpp>
#include <exception>
#include <memory>
#include <string>
#include <system_error>
#include <type_traits>

#include "alloc/pinned_vec.hpp"
#include "devices/device_set.hpp"
#include "engine/config.hpp"
#include "engine/detail/error_as_exception.hpp"
#include "engine/job.hpp"
#include "engine/job_error.hpp"
#include "engine/job_report.hpp"
#include "engine/srs.hpp"

namespace stoker::engine {

namespace detail {
class EngineCore;
}

// Asio's operation_aborted as a std::error_code, the code a cancelled job
// completes with.
std::error_code operation_aborted() noexcept;

// Snapshot of what the engine holds; all zero (but `*_limit`) when idle.
struct EngineStats {
  std::size_t jobs_in_flight = 0;
  std::size_t partitions_in_flight = 0;  // holding a device slot
  std::size_t busy_slots = 0;
  std::size_t total_slots = 0;
  std::size_t host_budget_in_use = 0, host_budget_limit = 0;
  std::size_t pinned_bytes_in_use = 0, pinned_bytes_pooled = 0;
  // Pinned slabs allocated and given back, ever: growth on the hot path
  // costs 0.05-0.5 s/GiB, so these should stop moving once warm.
  std::size_t pinned_slab_allocations = 0, pinned_slabs_trimmed = 0;
  std::vector<std::size_t> device_budget_in_use;
  std::vector<std::size_t> device_budget_limit;  // Config::device_budget_bytes or 85 % of memory
  // Bytes of resident SRS points on each device (engine/srs.hpp), off its
  // budget while they stay; not counted by idle().
  std::vector<std::size_t> device_resident_bytes;
  std::size_t srs_resident = 0;  // Srs loaded and not yet released
  std::vector<bool> device_healthy;
  // Pinned bytes of each device's staging buffers (Config::staging_ring_bytes),
  // outside the host budget and the pool.
  std::vector<std::size_t> staging_ring_bytes;
  // The CPUs each device's threads run on, as a cpulist ("0-15,32-47"),
  // empty where they were left unbound (Config::bind_threads).
  std::vector<std::string> device_cpus;

  // Nothing held: no job, slot, host budget, pinned block or device budget
  // (what every completed job leaves, PinnedVecs the caller holds aside).
  bool idle() const noexcept {
    for (auto b : device_budget_in_use)
      if (b != 0) return false;
    return jobs_in_flight == 0 && partitions_in_flight == 0 && busy_slots == 0 &&
           host_budget_in_use == 0 && pinned_bytes_in_use == 0;
  }
};

class Engine {
 public:
  using executor_type = boost::asio::any_io_executor;
  // boost::system::error_code: it wraps our std::error_code losslessly and
  // converts back implicitly, so handlers may take std::error_code.
  using SubmitSignature = void(boost::system::error_code, JobReport);
  // What tokens that throw see instead (async_submit, job_error.hpp).
  using ThrowingSubmitSignature = void(std::exception_ptr, JobReport);
  using ShutdownSignature = void(boost::system::error_code);

  // Throws std::system_error when the config is invalid or no device can be
  // opened (construction-time misuse); use create() to get an Error instead.
  Engine(executor_type executor, Config config);
  static Result<std::unique_ptr<Engine>> create(executor_type executor, Config config);
  // Cancels what is still queued, waits for started partitions to drain.
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  executor_type get_executor() const noexcept { return executor_; }
  const devices::DeviceSet& devices() const noexcept;
  const Config& config() const noexcept;
  EngineStats stats() const;
  // Pins the host blocks of `count` partitions shaped like `like` (one per
  // produced input, one per pageable output's landing area) before any job
  // runs: whole partitions while the host budget lasts, then the rest of the
  // budget as output blocks, which partitions keep after their inputs went
  // back. A cold pool grows by pinning memory: about 0.05 s/GiB for slabs of
  // 64 MiB and more (huge-page mappings registered with CUDA), 0.5 s/GiB for
  // smaller ones (cudaHostAlloc, which also blocks other CUDA calls of the
  // process while it runs), and registering memory slows every copy in
  // flight to a third (docs/ENGINE.md).
  std::error_code reserve_pinned(const Partition& like, std::size_t count);
  // Grows every device's stream-ordered memory pool to a full pipeline of
  // partitions like `like` and returns once the memory is mapped. A job does
  // this itself when it starts, on each device's feeder, and its first copy
  // waits for it (mapping device memory takes milliseconds per GiB); before
  // timing anything, call this beside reserve_pinned. Best effort: a device
  // that cannot grow its pool that far pays at its first launch instead.
  void reserve_device(const Partition& like);
  // Pinned bytes a partition takes from the host budget while it runs: a
  // block per produced input and per pageable output's landing area, each
  // rounded up to its pool size class (0 when none). A partition is refused
  // when this exceeds the host budget.
  static std::size_t pinned_bytes(const Partition& partition);
  // How many partitions the engine holds at once, from preparation to
  // completion (each holding its pinned blocks): what reserve_pinned needs.
  std::size_t lookahead() const noexcept;

  // The engine's pinned pool, charged to its host budget: where produced
  // inputs' blocks come from, and PinnedVec storage for callers.
  alloc::PinnedPool& pinned_pool() noexcept;

  // A PinnedVec of `n` value-initialised T (reserve or resize_for_overwrite
  // an empty one to skip the zeroing) whose storage comes from the engine's
  // pool and counts against its host budget (EngineStats::host_budget_in_use)
  // until it is given back: when the vector is destroyed, or, moved into a
  // job (Input::pinned), when the partition's copies are done. The engine's
  // partitions draw on the same budget, so vectors held long make them wait.
  // Never waits: out_of_host_memory, naming the size and the budget, when
  // the budget cannot pay now. It grows under `policy` (pinned_vec.hpp).
  template <typename T>
  Result<alloc::PinnedVec<T>> make_pinned_vec(
      std::size_t n, alloc::GrowthPolicy policy = alloc::GrowthPolicy::fail) {
    if (n > alloc::PinnedVec<T>::max_size())
      return Error{Errc::invalid_argument, "a PinnedVec of " + std::to_string(n) +
                                               " elements is larger than the pool's largest block"};
    if (n == 0) return alloc::PinnedVec<T>(pinned_pool(), policy);
    auto block = pinned_pool().try_allocate(n * sizeof(T));
    if (!block)
      return Error{block.error().code, "a PinnedVec of " + std::to_string(n * sizeof(T)) +
                                           " bytes: " + block.error().what()};
    return alloc::PinnedVec<T>(pinned_pool(), std::move(*block), n, policy);
  }

  // make_pinned_vec that waits in the host budget's FIFO until it can pay
  // (a producer's backpressure) instead of failing.
  //
  // Completion Signature
  //   void(boost::system::error_code, alloc::PinnedVec<T>): the vector, or
  //   an empty one with an error: at once for more than the whole budget or
  //   a block can hold, operation_aborted when cancelled.
  //
  // Per-Operation Cancellation
  //   terminal, partial and total, through the handler's slot: the wait for
  //   the budget ends with operation_aborted and nothing is charged.
  template <typename T, typename CompletionToken>
  auto async_make_pinned_vec(std::size_t n, CompletionToken&& token) {
    using Signature = void(boost::system::error_code, alloc::PinnedVec<T>);
    // Steps: 0 start, 1 completing at once (posted, never inline), 2 allocated.
    return boost::asio::async_compose<CompletionToken, Signature>(
        [pool = &pinned_pool(), n, step = 0, at_once = boost::system::error_code{}](
            auto& self, boost::system::error_code ec = {}, alloc::PinnedBlock block = {}) mutable {
          if (step == 0) {
            if (n == 0 || n > alloc::PinnedVec<T>::max_size()) {
              step = 1;
              if (n != 0) at_once = make_error_code(Errc::invalid_argument);
              return boost::asio::post(std::move(self));
            }
            step = 2;
            return pool->async_allocate(n * sizeof(T), std::move(self));
          }
          if (step == 1)
            return self.complete(at_once,
                                 at_once ? alloc::PinnedVec<T>{} : alloc::PinnedVec<T>(*pool));
          if (ec) return self.complete(ec, alloc::PinnedVec<T>{});
          self.complete(ec, alloc::PinnedVec<T>(*pool, std::move(block), n));
        },
        token, executor_);
  }

  // Loads G1 points to stay on every device (engine/srs.hpp says how):
  // from a file in the G1 encoding (96 bytes a point, docs/DESIGN.md), or
  // from points in memory (affine, Montgomery form, as kernels/g1.cuh holds
  // them). Blocks the caller until every device holds them: set-up, never
  // the hot path. Errors, with nothing left reserved: a file that cannot be
  // read or whose size is not a multiple of 96, a badly encoded point or
  // one off the curve or outside G1 (naming its index), points that do not
  // fit what a device budget has left (naming the size, the device and its
  // budget), too little host budget for the pinned blocks they pass
  // through.
  Result<Srs> load_srs(const std::string& path, const SrsLoadOptions& options = {});
  Result<Srs> load_srs(std::span<const kernels::G1Affine> points,
                       const SrsLoadOptions& options = {});
  // The points of several arrays, in order, as if one (a proving key's
  // queries, each in a vector of its own): gathered into the pinned blocks
  // without a joined copy first.
  Result<Srs> load_srs(std::span<const std::span<const kernels::G1Affine>> segments,
                       const SrsLoadOptions& options = {});
  // `points` slots that `fill` writes, range by range, into the pinned
  // blocks on their way (points kept in another order or form than the
  // devices want them).
  Result<Srs> load_srs(std::size_t points, const SrsFill& fill, const SrsLoadOptions& options = {});

  // Frees an Srs's device copies and gives their device budget back.
  //
  // Completion Signature
  //   void(boost::system::error_code): empty once the memory is free;
  //   Errc::invalid_argument for an Srs of another engine (or none).
  //
  // Jobs submitted after the call that name the Srs are refused
  // (invalid_argument, "... has been evicted"); jobs submitted before it run
  // to their end, and the eviction completes after the last of them. Not
  // cancellable. Evicting twice completes both.
  template <typename CompletionToken>
  auto async_evict_srs(Srs srs, CompletionToken&& token) {
    return boost::asio::async_initiate<CompletionToken, void(boost::system::error_code)>(
        [this](auto handler, Srs s) {
          executor_type ex = boost::asio::get_associated_executor(handler, executor_);
          evict_erased(std::move(s),
                       boost::asio::any_completion_handler<void(boost::system::error_code)>(
                           std::move(handler)),
                       std::move(ex));
        },
        token, std::move(srs));
  }

  // Submits a job; completes when every partition has finished, the job
  // failed, or it was cancelled. Bad input (Job::validate included) is
  // refused before any device work starts. The engine keeps no reference to
  // the job after the completion; the caller's inputs and output
  // destinations must stay alive until then (job.hpp).
  //
  // Completion Signature
  //   void(boost::system::error_code ec, JobReport report) for callbacks,
  //   deferred and every token that passes the code on (as_tuple,
  //   redirect_error). `ec` is empty on success, else a stoker code
  //   (Errc::invalid_argument, out_of_host_memory, device_fault,
  //   kernel_failed, verification_failed, callable_threw, shutting_down, ...)
  //   or operation_aborted when cancelled; it converts to std::error_code,
  //   so handlers may take that. report.error holds the message, naming the
  //   job and, once, the partition ("job 'x' partition 1: ...").
  //
  //   void(std::exception_ptr, JobReport) for tokens that throw
  //   (use_future, use_awaitable; token_throws_on_error in job_error.hpp):
  //   a failure is a JobError whose what() is report.error and whose
  //   report() is the report, so future::get() and co_await return the
  //   JobReport or throw JobError (job_error.hpp says why).
  //
  // What throws
  //   async_submit itself does not throw for any job; a failure always goes
  //   to the completion. Callbacks receive no exception. Only use_future and
  //   use_awaitable (and tokens given token_throws_on_error) throw, JobError.
  //
  // Per-Operation Cancellation
  //   Supports cancellation_type::terminal, partial and total alike (what a
  //   cancelled job has done is not undone, so every type means the same):
  //   partitions not yet on a device are dropped, those already running
  //   drain, and the job completes with operation_aborted and a report of
  //   the partitions done. A cancel after the job completed does nothing.
  template <typename CompletionToken>
  auto async_submit(Job job, CompletionToken&& token) {
    if constexpr (token_throws_on_error<std::decay_t<CompletionToken>>::value) {
      return boost::asio::async_initiate<CompletionToken, ThrowingSubmitSignature>(
          [this](auto handler, Job j) {
            executor_type ex = boost::asio::get_associated_executor(handler, executor_);
            submit_erased(std::move(j),
                          boost::asio::any_completion_handler<SubmitSignature>(
                              detail::ErrorAsException<decltype(handler)>(std::move(handler))),
                          std::move(ex));
          },
          token, std::move(job));
    } else {
      return boost::asio::async_initiate<CompletionToken, SubmitSignature>(
          [this](auto handler, Job j) {
            // Resolve the handler's executor before type erasure hides it.
            executor_type ex = boost::asio::get_associated_executor(handler, executor_);
            submit_erased(std::move(j),
                          boost::asio::any_completion_handler<SubmitSignature>(std::move(handler)),
                          std::move(ex));
          },
          token, std::move(job));
    }
  }

  // Stops taking jobs (later submits fail with shutting_down), completes once
  // every job in flight has completed.
  template <typename CompletionToken>
  auto async_shutdown(CompletionToken&& token) {
    return boost::asio::async_initiate<CompletionToken, ShutdownSignature>(
        [this](auto handler) {
          executor_type ex = boost::asio::get_associated_executor(handler, executor_);
          shutdown_erased(
              boost::asio::any_completion_handler<ShutdownSignature>(std::move(handler)),
              std::move(ex));
        },
        token);
  }

 private:
  struct Tag {};

 public:
  Engine(Tag, executor_type executor, std::unique_ptr<detail::EngineCore> core);

 private:
  void submit_erased(Job job, boost::asio::any_completion_handler<SubmitSignature> handler,
                     executor_type handler_executor);
  void evict_erased(Srs srs,
                    boost::asio::any_completion_handler<void(boost::system::error_code)> handler,
                    executor_type handler_executor);
  void shutdown_erased(boost::asio::any_completion_handler<ShutdownSignature> handler,
                       executor_type handler_executor);

  executor_type executor_;
  std::unique_ptr<detail::EngineCore> core_;
};

}  // namespace stoker::engine

// The names a user writes, in stoker:: (the host backend in one line:
// config.devices.backend = stoker::BackendChoice::host).
namespace stoker {
using alloc::GrowthPolicy;
using alloc::PinnedVec;
using devices::BackendChoice;
using engine::Config;
using engine::DeviceWork;
using engine::Engine;
using engine::EngineStats;
using engine::Input;
using engine::InputKind;
using engine::Job;
using engine::JobReport;
using engine::KernelContext;
using engine::operation_aborted;
using engine::Output;
using engine::Partition;
using engine::ProducerTask;
}  // namespace stoker
