#include <algorithm>
#include <boost/asio/post.hpp>

#include "engine/detail/engine_core.hpp"
#include "engine/detail/guarded_call.hpp"
#include "engine/detail/nvtx.hpp"

namespace asio = boost::asio;

namespace stoker::engine::detail {

void EngineCore::run_producer(const Key& k) {
  auto* job = find(k.seq);
  auto& ps = job->parts[k.part];
  const auto& p = job->job.partitions[k.part];
  if (job->cancelled || job->failure) return produced(k, make_error_code(Errc::cancelled), {});
  if (!p.producer && !p.split_producer) return produced(k, {}, {});
  auto run = std::make_shared<ProducerRun>();
  std::size_t bytes = 0;
  for (std::size_t i = 0; i < ps.input_blocks; ++i) {
    run->spans.push_back(ps.blocks[i].bytes());
    bytes += ps.blocks[i].size();
  }
  const bool streamed = p.split_producer && p.share_align != 0 && config_.early_upload;
  if (p.producer) {
    run->plain = p.producer;
  } else {
    // Shares that all run at once also all end at once, and a streamed
    // partition's copies could only start then: streamed partitions get
    // several waves of shares, which end (and cross) one wave after another.
    const std::size_t most = worker_count_ * (streamed ? kStreamedShareWaves : 1);
    run->split = p.split_producer;
    run->tasks = p.producer_tasks ? p.producer_tasks
                                  : std::clamp<std::size_t>(bytes / kBytesPerWorkerTask, 1, most);
  }
  run->left = run->tasks;
  if (streamed) {
    run->feed = ps.feed = std::make_shared<ShareFeed>(run->tasks, p.share_align);
    early_uploads_.insert(k);
  }
  producing_.emplace(k, std::move(run));
  start_shares();
  if (streamed) pump();
}

void EngineCore::start_shares() {
  while (shares_running_ < worker_count_ && !producing_.empty()) {
    const auto it = producing_.begin();
    const Key k = it->first;
    const auto run = it->second;
    auto& job = *find(k.seq);
    if (job.cancelled || job.failure) {
      // Shares not taken are skipped (drop_queued stopped the workers going
      // on); the partition ends with its last running share, or now if none
      // runs.
      run->left -= run->tasks - std::min(run->tasks, run->claimed.exchange(run->tasks));
      if (!run->error) run->error = make_error_code(Errc::cancelled);
      producing_.erase(it);
      if (run->left == 0) producer_done(k, *run);
      continue;
    }
    const std::size_t t = run->claim();
    if (run->claimed.load(std::memory_order_relaxed) >= run->tasks) producing_.erase(it);
    if (t == run->tasks) continue;  // workers going on took the rest
    if (t == 0) {
      run->first_start = Clock::now();
      job.parts[k.part].report.producer.start_ms = ms_since(job.start, run->first_start);
    }
    ++shares_running_;
    asio::post(*workers_, [this, k, run, t] { produce_shares(k, run, t); });
  }
}

void EngineCore::produce_shares(const Key& k, std::shared_ptr<ProducerRun> run, std::size_t t) {
  for (;;) {
    std::string thrown;
    std::error_code ec;
    {
      const nvtx::ScopedRange range(nvtx::Stage::producer, k.part);
      ec = run->plain
               ? detail::guarded_call(thrown, run->plain, run->spans)
               : detail::guarded_call(thrown, run->split, run->spans, ProducerTask{t, run->tasks});
    }
    const std::size_t next =
        ec || run->stop.load(std::memory_order_relaxed) ? run->tasks : run->claim();
    const bool going_on = next != run->tasks;
    asio::post(io_, [this, k, run, t, ec, going_on, end = Clock::now(),
                     thrown = std::move(thrown)]() mutable {
      share_done(k, run, t, ec, end, std::move(thrown));
      if (going_on) return;
      --shares_running_;
      start_shares();
    });
    if (!going_on) return;
    t = next;
  }
}

void EngineCore::share_done(const Key& k, const std::shared_ptr<ProducerRun>& run,
                            std::size_t share, std::error_code ec, Clock::time_point end,
                            std::string thrown) {
  if (ec && !run->error) {
    run->error = ec;
    run->thrown = std::move(thrown);
  }
  // The feed is told here, not by the worker: once the feeder has seen the
  // last share it may end the launch, and the engine must have heard of the
  // producer's end by then (the same handler calls producer_done). Told
  // from the worker, a launch could end first and produced() then queued
  // the finished partition again, its input blocks gone (test
  // StreamedPartitionsRunOnceWhateverEndsFirst).
  if (!ec && run->feed) run->feed->share_done(share);
  run->last_end = std::max(run->last_end, end);
  if (--run->left == 0) producer_done(k, *run);
}

void EngineCore::producer_done(const Key& k, const ProducerRun& run) {
  if (run.first_start != Clock::time_point{})
    find(k.seq)->parts[k.part].report.producer.ms =
        std::chrono::duration<double, std::milli>(run.last_end - run.first_start).count();
  const std::string message = !run.error            ? std::string{}
                              : !run.thrown.empty() ? "producer threw: " + run.thrown
                                                    : "producer failed: " + run.error.message();
  // Every started share has ended: a feeder waiting for the others may stop.
  if (run.feed && run.error) run.feed->abort(run.error, message);
  produced(k, run.error, message);
}

}  // namespace stoker::engine::detail
