// KeyRegistry: what stays resident on every device between jobs (SRS points
// today): loading it (srs_loading.cpp), admitting the jobs that use it, and
// evicting it once the last of them has ended. Its residents hold a share
// of every device's budget (DeviceSlots) while they stay.
#pragma once

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/io_context.hpp>
#include <cstddef>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "devices/device.hpp"
#include "engine/detail/device_slots.hpp"
#include "engine/detail/host_staging.hpp"
#include "engine/detail/srs_residency.hpp"
#include "engine/srs.hpp"

namespace stoker::engine::detail {

class KeyRegistry {
 public:
  // `released` runs on the engine thread after a resident is gone (its
  // device memory may let waiting partitions run).
  KeyRegistry(boost::asio::io_context& engine, devices::DeviceSet& set, DeviceSlots& slots,
              HostStaging& staging, std::function<void()> released)
      : engine_(engine),
        set_(set),
        slots_(slots),
        staging_(staging),
        released_(std::move(released)) {}
  KeyRegistry(const KeyRegistry&) = delete;
  KeyRegistry& operator=(const KeyRegistry&) = delete;

  // Off the engine thread: reads, checks and uploads the points to every
  // device (engine/srs.hpp). `read` fills points [first, first + out.size())
  // of the source.
  Result<Srs> load_srs(std::size_t points, const SrsFill& read, const SrsLoadOptions& options);

  // Engine thread from here on.
  std::size_t resident() const noexcept { return srs_.size(); }
  // Refuses loads from now on (the engine is shutting down).
  void close() noexcept { closed_ = true; }
  // A job that names an Srs may run only while it is resident and its
  // partitions fit beside it; counts the job as its user.
  Error admit(const Job& job);
  // A job admitted by admit() has ended.
  void job_done(const std::shared_ptr<SrsResidency>& srs);
  // Any thread: evicts `srs` once no job uses it; the handler runs on
  // `handler_executor` when its memory is free.
  void evict(std::shared_ptr<SrsResidency> srs, EvictHandler handler,
             boost::asio::any_io_executor handler_executor);
  // Frees every resident now (engine destruction: no job is left).
  void release_all();

 private:
  void release(const std::shared_ptr<SrsResidency>& srs);

  boost::asio::io_context& engine_;
  devices::DeviceSet& set_;
  DeviceSlots& slots_;
  HostStaging& staging_;
  std::function<void()> released_;
  bool closed_ = false;
  std::vector<std::shared_ptr<SrsResidency>> srs_;
};

}  // namespace stoker::engine::detail
