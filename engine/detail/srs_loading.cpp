// Loading, admitting and evicting resident SRS points (engine/srs.hpp).
#include <algorithm>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/prefer.hpp>
#include <chrono>
#include <future>

#include "engine/detail/engine_core.hpp"
#include "engine/detail/srs_residency.hpp"
#include "kernels/msm.hpp"

namespace asio = boost::asio;

namespace stoker::engine::detail {
namespace {

// Pinned blocks the points pass through on their way to the devices: two,
// so one is read while the other is copied; large enough that a copy runs
// at the link's speed, small enough that the host budget keeps room for
// the partitions' blocks.
constexpr std::size_t kChunkPoints = std::size_t{1} << 21;  // 192 MiB

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

std::string bytes_str(std::size_t n) {
  return std::to_string(n) + " bytes";
}

// Runs `f` on the engine thread and waits for its result.
template <typename F>
auto on_thread(asio::io_context& io, F f) {
  std::promise<decltype(f())> p;
  asio::post(io, [&] { p.set_value(f()); });
  return p.get_future().get();
}

}  // namespace

Result<Srs> EngineCore::load_srs(std::size_t points, const SrsSource& read,
                                 const SrsLoadOptions& options) {
  const auto t0 = Clock::now();
  const std::string who = "SRS '" + options.label + "'";
  if (points == 0) return Error{Errc::invalid_argument, who + " has no points"};
  if (points > (std::size_t{1} << 40) / sizeof(kernels::G1Affine))
    return Error{Errc::invalid_argument,
                 who + " has " + std::to_string(points) + " points, more than any device holds"};
  const std::size_t bytes = points * sizeof(kernels::G1Affine);

  // Every device's budget pays for its copy before anything is allocated.
  auto reserved = on_thread(io_, [&]() -> Error {
    if (shutting_down_) return {Errc::shutting_down, "engine is shutting down; " + who + " not loaded"};
    for (std::size_t d = 0; d < dev_.size(); ++d) {
      const auto& ds = dev_[d];
      if (!ds.healthy)
        return {Errc::device_fault, who + ": device " + std::to_string(d) + " has faulted"};
      const std::size_t left = ds.budget - ds.resident - ds.in_use;
      if (bytes > left)
        return {Errc::out_of_device_memory,
                who + " needs " + bytes_str(bytes) + " on device " + std::to_string(d) +
                    "; its budget has " + bytes_str(left) + " left of " + bytes_str(ds.budget)};
    }
    for (auto& ds : dev_) ds.resident += bytes;
    return {};
  });
  if (reserved) return reserved;
  auto unreserve = [&] {
    on_thread(io_, [&] {
      for (auto& ds : dev_) ds.resident -= bytes;
      return 0;
    });
  };

  auto r = std::make_shared<SrsResidency>();
  r->engine = this;
  r->points = points;
  r->label = options.label;
  auto fail = [&](Error e) -> Result<Srs> {
    r->buffers.clear();
    unreserve();
    return Error{e.code, who + ": " + e.what()};
  };

  const std::size_t n_dev = set_.size();
  std::vector<devices::Stream> streams;
  for (std::size_t d = 0; d < n_dev; ++d) {
    auto& dev = set_[d];
    r->devices.push_back(&dev);
    auto buf = dev.allocate(bytes);
    if (!buf)
      return fail(Error{buf.error().code, "allocating " + bytes_str(bytes) + " on device " +
                                              std::to_string(d) + ": " + buf.error().what()});
    r->buffers.push_back(std::move(*buf));
    auto s = dev.create_stream();
    if (!s) return fail(std::move(s).error());
    streams.push_back(std::move(*s));
  }

  // Devices that upload from the pinned blocks: the first, and those its
  // copy cannot reach by peer (or all, without broadcast).
  const auto& peers = set_.topology().peer_access;
  std::vector<std::size_t> uploads{0};
  bool broadcast = false;
  for (std::size_t d = 1; d < n_dev; ++d) {
    const bool reach = options.broadcast && peers.size() > d && peers[0][d] && peers[d][0];
    if (reach)
      broadcast = true;
    else
      uploads.push_back(d);
  }

  const std::size_t chunk = std::min(points, kChunkPoints);
  const std::size_t chunk_bytes = chunk * sizeof(kernels::G1Affine);
  const std::size_t n_blocks = points > chunk ? 2 : 1;
  std::vector<alloc::PinnedBlock> blocks;
  for (std::size_t b = 0; b < n_blocks; ++b) {
    auto blk = pool_->try_allocate(chunk_bytes);
    if (!blk)
      return fail(Error{blk.error().code, "a pinned block of " + bytes_str(chunk_bytes) +
                                              " to load through: " + blk.error().what()});
    blocks.push_back(std::move(*blk));
  }
  // copied[b][u]: upload u's copy out of block b has ended.
  std::vector<std::vector<devices::Event>> copied(n_blocks);
  for (auto& row : copied)
    for (auto u : uploads) {
      auto ev = set_[u].create_event();
      if (!ev) return fail(std::move(ev).error());
      row.push_back(std::move(*ev));
    }
  std::vector<bool> block_used(n_blocks, false);

  const bool cpu_check = !options.trust_points && set_.backend() != devices::Backend::cuda;
  const auto t_upload = Clock::now();
  for (std::size_t first = 0, c = 0; first < points; first += chunk, ++c) {
    const std::size_t count = std::min(chunk, points - first);
    const std::size_t b = c % n_blocks;
    if (block_used[b])
      for (auto& ev : copied[b])
        if (auto ec = ev.synchronize()) return fail(Error{ec, "uploading the points"});
    auto* host = reinterpret_cast<kernels::G1Affine*>(blocks[b].data());
    const auto t_read = Clock::now();
    if (auto e = read(first, std::span<kernels::G1Affine>(host, count))) return fail(std::move(e));
    r->times.read_s += seconds_since(t_read);
    if (cpu_check) {
      const auto t_check = Clock::now();
      const std::size_t bad = kernels::cpu::check_points(host, count);
      r->times.check_s += seconds_since(t_check);
      if (bad < count)
        return fail(Error{Errc::invalid_argument, "point " + std::to_string(first + bad) +
                                                      " is not on the curve or not in G1"});
    }
    const std::size_t offset = first * sizeof(kernels::G1Affine);
    for (std::size_t i = 0; i < uploads.size(); ++i) {
      auto& s = streams[uploads[i]];
      auto* dst = r->buffers[uploads[i]].as<std::byte>() + offset;
      if (auto ec = s.copy(dst, host, count * sizeof(kernels::G1Affine)))
        return fail(Error{ec, "uploading the points to device " + std::to_string(uploads[i])});
      if (auto ec = s.record(copied[b][i])) return fail(Error{ec, "uploading the points"});
    }
    block_used[b] = true;
  }
  for (auto u : uploads)
    if (auto ec = streams[u].synchronize())
      return fail(Error{ec, "uploading the points to device " + std::to_string(u)});
  r->times.upload_s = seconds_since(t_upload);
  blocks.clear();  // the host budget has them back before the broadcast

  if (broadcast) {
    const auto t_bcast = Clock::now();
    auto comm = communicator();
    if (!comm) return fail(std::move(comm).error());
    std::vector<void*> ptrs;
    std::vector<devices::Stream*> sp;
    for (std::size_t d = 0; d < n_dev; ++d) {
      ptrs.push_back(r->buffers[d].data());
      sp.push_back(&streams[d]);
    }
    if (auto ec = (*comm)->broadcast(ptrs, bytes, 0, sp))
      return fail(Error{ec, "broadcasting the points from device 0"});
    for (std::size_t d = 0; d < n_dev; ++d)
      if (auto ec = streams[d].synchronize())
        return fail(Error{ec, "broadcasting the points to device " + std::to_string(d)});
    r->times.broadcast_s = seconds_since(t_bcast);
    r->times.broadcast_used = true;
  }

  if (!options.trust_points && set_.backend() == devices::Backend::cuda) {
    const auto t_check = Clock::now();
    auto& dev = set_[0];
    if (auto ec = dev.make_current()) return fail(Error{ec, "checking the points"});
    auto flag = dev.allocate(sizeof(std::uint64_t));
    if (!flag) return fail(std::move(flag).error());
    auto landing = pool_->try_allocate(sizeof(std::uint64_t));
    if (!landing) return fail(std::move(landing).error());
    auto& s = streams[0];
    if (auto ec = kernels::gpu::check_points(flag->as<std::uint64_t>(),
                                             r->buffers[0].as<const kernels::G1Affine>(), points,
                                             static_cast<cudaStream_t>(s.native())))
      return fail(Error{ec, "checking the points"});
    if (auto ec = s.copy(landing->data(), flag->data(), sizeof(std::uint64_t)))
      return fail(Error{ec, "checking the points"});
    if (auto ec = s.synchronize()) return fail(Error{ec, "checking the points"});
    const auto bad = *reinterpret_cast<const std::uint64_t*>(landing->data());
    r->times.check_s = seconds_since(t_check);
    if (bad < points)
      return fail(Error{Errc::invalid_argument,
                        "point " + std::to_string(bad) + " is not on the curve or not in G1"});
  }
  r->times.total_s = seconds_since(t0);

  on_thread(io_, [&] {
    srs_.push_back(r);
    for (std::size_t d = 0; d < n_dev; ++d)
      set_[d].configure_pool(dev_[d].budget - dev_[d].resident);
    return 0;
  });
  return Srs(std::move(r));
}

Result<devices::NcclCommunicator*> EngineCore::communicator() {
  std::call_once(nccl_once_, [this] {
    auto c = devices::NcclCommunicator::create(set_);
    if (c)
      nccl_ = std::move(*c);
    else
      nccl_error_ = std::move(c).error();
  });
  if (!nccl_) return Error{nccl_error_.code, "NCCL: " + nccl_error_.what()};
  return &nccl_;
}

Error EngineCore::admit_srs(const Job& job) {
  const auto& r = job.srs.residency();
  if (!r) return {};
  const std::string who = "job '" + job.name + "': its SRS '" + r->label + "'";
  if (r->engine != this) return {Errc::invalid_argument, who + " was loaded by another engine"};
  if (r->evicting.load()) return {Errc::invalid_argument, who + " has been evicted"};
  // The points take their share of each device budget for as long as they
  // are resident: a partition must fit in what is left.
  std::size_t largest = 0;
  for (std::size_t d = 0; d < dev_.size(); ++d)
    if (allowed_on(job, d)) largest = std::max(largest, dev_[d].budget - dev_[d].resident);
  for (std::size_t i = 0; i < job.partitions.size(); ++i)
    if (job.partitions[i].device_bytes() > largest)
      return {Errc::invalid_argument,
              "job '" + job.name + "' partition " + std::to_string(i) + " needs " +
                  bytes_str(job.partitions[i].device_bytes()) +
                  " of device memory; beside the resident SRS points the largest device budget "
                  "has " +
                  bytes_str(largest)};
  ++r->jobs_using;
  return {};
}

void EngineCore::srs_job_done(const std::shared_ptr<SrsResidency>& r) {
  if (!r) return;
  --r->jobs_using;
  if (r->evicting.load() && r->jobs_using == 0) release_srs(r);
}

void EngineCore::evict_srs(std::shared_ptr<SrsResidency> r, EvictHandler handler,
                           asio::any_io_executor handler_executor) {
  // Tracked, so the caller's io_context keeps running until it completes.
  asio::any_io_executor ex =
      asio::prefer(handler_executor, asio::execution::outstanding_work.tracked);
  asio::post(io_, [this, r = std::move(r), h = std::move(handler), ex]() mutable {
    const auto done = [ex](EvictHandler h, std::error_code ec) {
      asio::post(ex, [h = std::move(h), ec]() mutable { std::move(h)(boost::system::error_code(ec)); });
    };
    if (!r || r->engine != this) return done(std::move(h), make_error_code(Errc::invalid_argument));
    if (r->released.load()) return done(std::move(h), {});
    r->evict_waiters.emplace_back(std::move(h), std::move(ex));
    if (r->evicting.exchange(true)) return;  // already on its way
    if (r->jobs_using == 0) release_srs(r);
  });
}

void EngineCore::release_srs(const std::shared_ptr<SrsResidency>& r) {
  // Freeing device memory synchronises the device (cudaFree): on a worker,
  // not on the thread that schedules every device.
  asio::post(*workers_, [this, r] {
    if (!r->released.exchange(true, std::memory_order_acq_rel)) r->buffers.clear();
    asio::post(io_, [this, r] {
      const std::size_t bytes = r->points * sizeof(kernels::G1Affine);
      for (std::size_t d = 0; d < dev_.size(); ++d) {
        dev_[d].resident -= bytes;
        set_[d].configure_pool(dev_[d].budget - dev_[d].resident);
      }
      srs_.erase(std::remove(srs_.begin(), srs_.end(), r), srs_.end());
      for (auto& [h, ex] : r->evict_waiters)
        asio::post(ex, [h = std::move(h)]() mutable { std::move(h)(boost::system::error_code{}); });
      r->evict_waiters.clear();
      pump();
    });
  });
}

void EngineCore::release_all_srs() {
  for (auto& r : srs_) {
    if (!r->released.exchange(true, std::memory_order_acq_rel)) r->buffers.clear();
    for (auto& [h, ex] : r->evict_waiters)
      asio::post(ex, [h = std::move(h)]() mutable { std::move(h)(boost::system::error_code{}); });
    r->evict_waiters.clear();
  }
  srs_.clear();
}

}  // namespace stoker::engine::detail
