#include "engine/detail/key_registry.hpp"

#include <algorithm>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/prefer.hpp>

#include "common/bytes_str.hpp"

namespace asio = boost::asio;

namespace stoker::engine::detail {

Error KeyRegistry::admit(const Job& job) {
  const auto& r = job.srs.residency();
  if (!r) return {};
  const std::string who = "job '" + job.name + "': its SRS '" + r->label + "'";
  if (r->registry != this) return {Errc::invalid_argument, who + " was loaded by another engine"};
  if (r->evicting.load()) return {Errc::invalid_argument, who + " has been evicted"};
  // The points take their share of each device budget for as long as they
  // are resident: a partition must fit in what is left.
  std::size_t largest = 0;
  for (std::size_t d = 0; d < slots_.size(); ++d)
    if (allowed_on(job, d)) largest = std::max(largest, slots_.capacity(d));
  for (std::size_t i = 0; i < job.partitions.size(); ++i)
    if (job.partitions[i].device_bytes() > largest)
      return {Errc::invalid_argument,
              "job '" + job.name + "' partition " + std::to_string(i) + " needs " +
                  common::bytes_str(job.partitions[i].device_bytes()) +
                  " of device memory; beside the resident SRS points the largest device budget "
                  "has " +
                  common::bytes_str(largest)};
  ++r->jobs_using;
  return {};
}

void KeyRegistry::job_done(const std::shared_ptr<SrsResidency>& r) {
  if (!r) return;
  --r->jobs_using;
  if (r->evicting.load() && r->jobs_using == 0) release(r);
}

void KeyRegistry::evict(std::shared_ptr<SrsResidency> r, EvictHandler handler,
                        asio::any_io_executor handler_executor) {
  // Tracked, so the caller's io_context keeps running until it completes.
  asio::any_io_executor ex =
      asio::prefer(handler_executor, asio::execution::outstanding_work.tracked);
  asio::post(engine_, [this, r = std::move(r), h = std::move(handler), ex]() mutable {
    const auto done = [ex](EvictHandler h, std::error_code ec) {
      asio::post(ex,
                 [h = std::move(h), ec]() mutable { std::move(h)(boost::system::error_code(ec)); });
    };
    if (!r || r->registry != this)
      return done(std::move(h), make_error_code(Errc::invalid_argument));
    if (r->released.load()) return done(std::move(h), {});
    r->evict_waiters.emplace_back(std::move(h), std::move(ex));
    if (r->evicting.exchange(true)) return;  // already on its way
    if (r->jobs_using == 0) release(r);
  });
}

void KeyRegistry::release(const std::shared_ptr<SrsResidency>& r) {
  // Freeing device memory synchronises the device (cudaFree): on a worker,
  // not on the thread that schedules every device.
  staging_.post_to_worker([this, r] {
    if (r->nccl_teardown.valid()) r->nccl_teardown.wait();
    if (!r->released.exchange(true, std::memory_order_acq_rel)) r->buffers.clear();
    asio::post(engine_, [this, r] {
      slots_.release_resident(r->points * sizeof(kernels::G1Affine), /*resize_pools=*/true);
      srs_.erase(std::remove(srs_.begin(), srs_.end(), r), srs_.end());
      for (auto& [h, ex] : r->evict_waiters)
        asio::post(ex, [h = std::move(h)]() mutable { std::move(h)(boost::system::error_code{}); });
      r->evict_waiters.clear();
      released_();
    });
  });
}

void KeyRegistry::release_all() {
  for (auto& r : srs_) {
    if (r->nccl_teardown.valid()) r->nccl_teardown.wait();
    if (!r->released.exchange(true, std::memory_order_acq_rel)) r->buffers.clear();
    for (auto& [h, ex] : r->evict_waiters)
      asio::post(ex, [h = std::move(h)]() mutable { std::move(h)(boost::system::error_code{}); });
    r->evict_waiters.clear();
  }
  srs_.clear();
}

}  // namespace stoker::engine::detail
