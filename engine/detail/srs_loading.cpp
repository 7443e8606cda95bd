// Loading, admitting and evicting resident SRS points (engine/srs.hpp).
#include <algorithm>
#include <boost/asio/execution/outstanding_work.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/prefer.hpp>
#include <chrono>
#include <cstring>
#include <future>
#include <system_error>
#include <utility>

#include "common/bytes_str.hpp"
#include "common/elapsed.hpp"
#include "devices/nccl_communicator.hpp"
#include "engine/detail/key_registry.hpp"
#include "engine/detail/run_and_wait.hpp"
#include "engine/detail/srs_residency.hpp"
#include "kernels/fq_montgomery.hpp"
#include "kernels/msm.hpp"

namespace asio = boost::asio;

namespace stoker::engine::detail {
namespace {

// Pinned blocks the points pass through on their way to the devices: two,
// so one is read while the other is copied; large enough that a copy runs
// at the link's speed, small enough that the host budget keeps room for
// the partitions' blocks.
constexpr std::size_t kChunkPoints = std::size_t{1} << 21;  // 192 MiB

using common::bytes_str;
using common::seconds_since;

// NCCL's communicators over every device, and how long making them took.
struct MadeCommunicator {
  Result<devices::NcclCommunicator> comm;
  double seconds = 0;
};

MadeCommunicator make_communicator(const devices::DeviceSet& set) {
  const auto t = Clock::now();
  auto comm = devices::NcclCommunicator::create(set);
  if (!comm) comm = Error{comm.error().code, "NCCL: " + comm.error().what()};
  return {std::move(comm), seconds_since(t)};
}

}  // namespace

Result<Srs> KeyRegistry::load_srs(std::size_t points, const SrsFill& read,
                                  const SrsLoadOptions& options) {
  const auto t0 = Clock::now();
  const std::string who = "SRS '" + options.label + "'";
  if (points == 0) return Error{Errc::invalid_argument, who + " has no points"};
  if (points > (std::size_t{1} << 40) / sizeof(kernels::G1Affine))
    return Error{Errc::invalid_argument,
                 who + " has " + std::to_string(points) + " points, more than any device holds"};
  const std::size_t bytes = points * sizeof(kernels::G1Affine);
  // Slots [0, g1_points) are G1 points; then to point_slots G2 points, two
  // slots each; the rest raw bytes.
  const std::size_t point_slots = std::min(points, options.raw_from);
  const std::size_t g1_points = std::min(point_slots, options.g2_from);
  if ((point_slots - g1_points) % 2 != 0)
    return Error{Errc::invalid_argument, who + ": its G2 points from slot " +
                                             std::to_string(g1_points) + " take " +
                                             std::to_string(point_slots - g1_points) +
                                             " slots, not two a point"};
  const std::size_t g2_points = (point_slots - g1_points) / 2;
  const auto name_point = [&](std::size_t slot) {
    const std::string name =
        options.name_point ? options.name_point(slot) : "point " + std::to_string(slot);
    return name + " is not on the curve or not in " + (slot < g1_points ? "G1" : "G2");
  };
  const auto checking_failed = [](std::size_t d, std::error_code ec) {
    return Error{ec, "checking the points on device " + std::to_string(d) + ": " + ec.message()};
  };
  // A G2 point is checked with the range that holds its second slot, so that
  // both have landed: those of [begin, end) are [g2_of(begin), g2_of(end)).
  const auto g2_of = [g1_points, point_slots](std::size_t slot) {
    slot = std::min(slot, point_slots);
    return slot <= g1_points ? std::size_t{0} : (slot - g1_points) / 2;
  };

  const std::size_t n_dev = set_.size();
  const bool gpu = set_.backend() == devices::Backend::cuda;
  const bool gpu_check = !options.trust_points && gpu;
  const bool cpu_check = !options.trust_points && !gpu;
  const std::size_t chunk =
      std::min(points, options.chunk_points != 0 ? options.chunk_points : kChunkPoints);

  // The GPUs' check by random buckets, for ranges of up to a chunk's
  // points: its plans (the engine's GPUs are of one kind), the coins' key
  // from the OS CSPRNG, and scratch on each device. Without a key or room
  // for the scratch, each point is tested.
  kernels::gpu::BatchCheckPlan batch_plan[2];
  kernels::gpu::PointCheckKey batch_key;
  std::size_t batch_scratch = 0;
  if (gpu_check && !kernels::gpu::random_point_check_key(batch_key)) {
    int cuda_device = 0;
    bool planned = !set_[0].make_current() && cudaGetDevice(&cuda_device) == cudaSuccess;
    const std::size_t most[2] = {std::min(g1_points, chunk), std::min(g2_points, chunk / 2 + 1)};
    for (int g = 0; g < 2 && planned; ++g) {
      if (most[g] < kernels::gpu::kBatchCheckFrom) continue;
      planned = !kernels::gpu::plan_batch_check(g ? kernels::MsmGroup::g2 : kernels::MsmGroup::g1,
                                                most[g], cuda_device, batch_plan[g]);
      batch_scratch = std::max(batch_scratch, batch_plan[g].scratch_bytes);
    }
    if (!planned) batch_scratch = 0;
  }

  // Every device's budget pays for its copy (and the check's scratch, where
  // the budget has room for both) before anything is allocated.
  std::size_t reserved_bytes = bytes + batch_scratch;
  auto reserved = run_and_wait(engine_, [&]() -> Error {
    if (closed_) return {Errc::shutting_down, "engine is shutting down; " + who + " not loaded"};
    if (batch_scratch && !slots_.reserve_resident(reserved_bytes, who)) return {};
    batch_scratch = 0;
    reserved_bytes = bytes;
    return slots_.reserve_resident(bytes, who);
  });
  if (reserved) return reserved;
  auto unreserve = [&] {
    run_and_wait(engine_, [&] { slots_.release_resident(reserved_bytes, /*resize_pools=*/false); });
  };

  auto r = std::make_shared<SrsResidency>();
  r->registry = this;
  r->points = points;
  r->label = options.label;
  // Declared before what a failed load must still own when it returns: its
  // destructor waits for the communicators being made.
  std::future<MadeCommunicator> made_comm;
  std::vector<devices::Stream> streams, check_streams;
  std::vector<devices::DeviceBuffer> batch_scratches;
  auto fail = [&](Error e, bool named = false) -> Result<Srs> {
    // The copies and checks queued before the failure still read the
    // buffers and the pinned blocks: they end before either is freed (the
    // host backend's free, unlike cudaFree, does not wait for them).
    for (auto* group : {&streams, &check_streams})
      for (auto& s : *group) (void)s.synchronize();
    r->buffers.clear();
    batch_scratches.clear();
    unreserve();
    return named ? e : Error{e.code, who + ": " + e.what()};
  };

  // Per device: its share's first bad G1 index and first bad G2 index.
  std::vector<devices::DeviceBuffer> flags;
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
    if (gpu_check) {
      auto cs = dev.create_stream();
      if (!cs) return fail(std::move(cs).error());
      auto flag = dev.allocate(2 * sizeof(std::uint64_t));
      if (!flag) return fail(std::move(flag).error());
      if (auto ec = dev.make_current()) return fail(Error{ec, "checking the points"});
      const auto stream = static_cast<cudaStream_t>(cs->native());
      if (auto ec = kernels::gpu::check_points_begin(flag->as<std::uint64_t>(), g1_points, stream))
        return fail(checking_failed(d, ec));
      if (auto ec =
              kernels::gpu::check_points_begin(flag->as<std::uint64_t>() + 1, g2_points, stream))
        return fail(checking_failed(d, ec));
      check_streams.push_back(std::move(*cs));
      flags.push_back(std::move(*flag));
      if (batch_scratch) {
        // Where the budget had room but the device has not, each point is
        // tested rather than the load refused.
        if (auto scratch = dev.allocate(batch_scratch)) {
          batch_scratches.push_back(std::move(*scratch));
        } else {
          batch_scratches.clear();
          run_and_wait(engine_, [&] {
            slots_.release_resident(batch_scratch, /*resize_pools=*/false);
          });
          reserved_bytes = bytes;
          batch_scratch = 0;
        }
      }
    }
  }

  // Devices that upload from the pinned blocks: the first, and those its
  // copy cannot reach by peer (or all, without broadcast).
  const auto& peers = set_.topology().peer_access;
  std::vector<std::size_t> uploads{0};
  std::vector<bool> uploading(n_dev, false);
  uploading[0] = true;
  bool broadcast = false;
  for (std::size_t d = 1; d < n_dev; ++d) {
    const bool reach = options.broadcast && peers.size() > d && peers[0][d] && peers[d][0];
    if (reach) {
      broadcast = true;
    } else {
      uploads.push_back(d);
      uploading[d] = true;
    }
  }
  // NCCL's communicators live for one load: kept, they held 388 MiB of
  // each H200 that no budget counted, and threads that outlived the load.
  // Making them takes 30-650 ms, so it runs on a thread of its own while
  // the points upload to the first device; where the system refuses that
  // thread, here after the upload.
  if (broadcast) {
    const auto make = [this] { return make_communicator(set_); };
    try {
      made_comm = std::async(std::launch::async, make);
    } catch (const std::system_error&) {
      made_comm = std::async(std::launch::deferred, make);
    }
  }

  // A range of one group's points: by random buckets, a plan's worth at a
  // time, or point by point where a piece is short or there is no plan.
  const auto check_group = [&]<typename Affine>(std::size_t d, int g, const Affine* group_points,
                                                std::size_t begin, std::size_t end,
                                                cudaStream_t stream) -> std::error_code {
    auto* first_bad = flags[d].as<std::uint64_t>() + g;
    const auto& plan = batch_plan[g];
    const bool batched = batch_scratch != 0 && plan.max_points != 0;
    const std::size_t step = batched ? plan.max_points : end - begin;
    for (std::size_t at = begin; at < end; at += step) {
      const std::size_t to = std::min(end, at + step);
      const auto ec = batched && to - at >= kernels::gpu::kBatchCheckFrom
                          ? kernels::gpu::check_points_batched(plan, first_bad, group_points, at,
                                                               to, batch_key,
                                                               batch_scratches[d].data(),
                                                               batch_scratch, stream)
                          : kernels::gpu::check_points_range(first_bad, group_points, at, to,
                                                             stream);
      if (ec) return ec;
    }
    return {};
  };
  // Each device checks one share of the points, so that n devices check in
  // 1/n of the time: an uploading device as each chunk lands (beside the
  // reads), the others after the broadcast.
  const auto check = [&](std::size_t d, std::size_t begin, std::size_t end) -> std::error_code {
    begin = std::max(begin, point_slots * d / n_dev);
    end = std::min(end, point_slots * (d + 1) / n_dev);
    if (begin >= end) return {};
    if (auto ec = set_[d].make_current()) return ec;
    const auto stream = static_cast<cudaStream_t>(check_streams[d].native());
    const auto* slots = r->buffers[d].as<const kernels::G1Affine>();
    if (begin < g1_points)
      if (auto ec = check_group(d, 0, slots, begin, std::min(end, g1_points), stream)) return ec;
    if (g2_points == 0 || g2_of(begin) >= g2_of(end)) return {};
    const auto* g2 = reinterpret_cast<const kernels::G2Affine*>(slots + g1_points);
    return check_group(d, 1, g2, g2_of(begin), g2_of(end), stream);
  };

  // The CPU's check of one chunk of slots [first, first + size): the first
  // bad slot, or `points`. A G2 point whose first slot ended the previous
  // chunk is read again whole.
  const auto cpu_check_chunk = [&](std::size_t first,
                                   std::span<const kernels::G1Affine> in) -> Result<std::size_t> {
    const std::size_t end = std::min(first + in.size(), point_slots);
    if (first >= end) return points;
    if (first < g1_points) {
      const std::size_t n = std::min(end, g1_points) - first;
      if (const std::size_t bad = kernels::cpu::check_points(in.data(), n); bad < n)
        return first + bad;
    }
    std::size_t j = g2_of(first);
    const std::size_t j_end = g2_of(end);
    if (j < j_end && g1_points + 2 * j < first) {
      kernels::G1Affine pair[2];
      if (auto e = read(g1_points + 2 * j, std::span<kernels::G1Affine>(pair, 2))) return e;
      if (options.canonical) kernels::cpu::fq_to_montgomery(reinterpret_cast<kernels::Fq*>(pair), 4, 1);
      kernels::G2Affine p;
      std::memcpy(&p, pair, sizeof p);
      if (kernels::cpu::check_points(&p, 1, 1) == 0) return g1_points + 2 * j;  // 1: good
      ++j;
    }
    // The rest lie whole in this chunk, two slots each.
    const auto* g2 =
        reinterpret_cast<const kernels::G2Affine*>(in.data() + (g1_points + 2 * j - first));
    if (const std::size_t bad = kernels::cpu::check_points(g2, j_end - j); bad < j_end - j)
      return g1_points + 2 * (j + bad);
    return points;
  };

  const std::size_t chunk_bytes = chunk * sizeof(kernels::G1Affine);
  const std::size_t n_blocks = points > chunk ? 2 : 1;
  std::vector<alloc::PinnedBlock> blocks;
  for (std::size_t b = 0; b < n_blocks; ++b) {
    auto blk = staging_.pool().try_allocate(chunk_bytes);
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

  const auto t_upload = Clock::now();
  for (std::size_t first = 0, c = 0; first < points; first += chunk, ++c) {
    const std::size_t count = std::min(chunk, points - first);
    const std::size_t b = c % n_blocks;
    if (block_used[b])
      for (auto& ev : copied[b])
        if (auto ec = ev.synchronize()) return fail(Error{ec, "uploading the points"});
    auto* host = reinterpret_cast<kernels::G1Affine*>(blocks[b].data());
    const auto t_read = Clock::now();
    if (auto e = read(first, std::span<kernels::G1Affine>(host, count)))
      return fail(std::move(e), options.fill_errors_named);
    // Canonical coordinates: the host backend's devices are the CPU's, so it
    // converts them here (before its check); GPUs after their copies.
    const std::size_t to_convert = first < point_slots ? std::min(count, point_slots - first) : 0;
    if (options.canonical && !gpu)
      kernels::cpu::fq_to_montgomery(reinterpret_cast<kernels::Fq*>(host), 2 * to_convert);
    r->times.read_s += seconds_since(t_read);
    if (cpu_check) {
      const auto t_check = Clock::now();
      auto bad = cpu_check_chunk(first, std::span<const kernels::G1Affine>(host, count));
      r->times.check_s += seconds_since(t_check);
      if (!bad) return fail(std::move(bad).error());
      if (*bad < points) return fail(Error{Errc::invalid_argument, name_point(*bad)});
    }
    const std::size_t offset = first * sizeof(kernels::G1Affine);
    for (std::size_t i = 0; i < uploads.size(); ++i) {
      const std::size_t u = uploads[i];
      auto& s = streams[u];
      auto* dst = r->buffers[u].as<std::byte>() + offset;
      if (auto ec = s.copy(dst, host, count * sizeof(kernels::G1Affine)))
        return fail(Error{ec, "uploading the points to device " + std::to_string(u)});
      if (options.canonical && gpu && to_convert > 0) {
        static_assert(sizeof(kernels::G1Affine) == 2 * sizeof(kernels::Fq));
        std::error_code ec = set_[u].make_current();
        if (!ec)
          ec = kernels::gpu::fq_to_montgomery(reinterpret_cast<kernels::Fq*>(dst), 2 * to_convert,
                                              static_cast<cudaStream_t>(s.native()));
        if (ec) return fail(Error{ec, "converting the points on device " + std::to_string(u)});
      }
      if (auto ec = s.record(copied[b][i])) return fail(Error{ec, "uploading the points"});
      if (gpu_check) {
        if (auto ec = check_streams[u].wait(copied[b][i]))
          return fail(checking_failed(u, ec));
        if (auto ec = check(u, first, first + count))
          return fail(checking_failed(u, ec));
      }
    }
    block_used[b] = true;
  }
  for (auto u : uploads)
    if (auto ec = streams[u].synchronize())
      return fail(Error{ec, "uploading the points to device " + std::to_string(u)});
  r->times.upload_s = seconds_since(t_upload);
  blocks.clear();  // the host budget has them back before the broadcast

  if (broadcast) {
    auto made = made_comm.get();
    r->times.nccl_setup_s = made.seconds;
    if (!made.comm) return fail(std::move(made.comm).error());
    const auto t_bcast = Clock::now();
    std::vector<void*> ptrs;
    std::vector<devices::Stream*> sp;
    for (std::size_t d = 0; d < n_dev; ++d) {
      ptrs.push_back(r->buffers[d].data());
      sp.push_back(&streams[d]);
    }
    if (auto ec = made.comm->broadcast(ptrs, bytes, 0, sp))
      return fail(Error{ec, "broadcasting the points from device 0"});
    for (std::size_t d = 0; d < n_dev; ++d)
      if (auto ec = streams[d].synchronize())
        return fail(Error{ec, "broadcasting the points to device " + std::to_string(d)});
    r->times.broadcast_s = seconds_since(t_bcast);
    r->times.broadcast_used = true;
    if (gpu_check)
      for (std::size_t d = 0; d < n_dev; ++d)
        if (!uploading[d])
          if (auto ec = check(d, 0, points))
            return fail(checking_failed(d, ec));
    // Destroying them takes about 0.5 s (measured on two H200s): in the
    // background, done before this SRS's eviction completes. Where the
    // system refuses the thread, the lambda that holds them goes at once,
    // and they with it, here.
    try {
      r->nccl_teardown =
          std::async(std::launch::async, [c = std::move(*made.comm)]() mutable { c = {}; });
    } catch (const std::system_error&) {
    }
  }

  if (gpu_check) {
    const auto t_check = Clock::now();
    auto landing = staging_.pool().try_allocate(2 * n_dev * sizeof(std::uint64_t));
    if (!landing) return fail(std::move(landing).error());
    auto* first_bad = reinterpret_cast<std::uint64_t*>(landing->data());
    for (std::size_t d = 0; d < n_dev; ++d) {
      auto& cs = check_streams[d];
      if (auto ec = cs.copy(first_bad + 2 * d, flags[d].data(), 2 * sizeof(std::uint64_t)))
        return fail(checking_failed(d, ec));
      if (auto ec = cs.synchronize())
        return fail(checking_failed(d, ec));
    }
    std::size_t bad_g1 = g1_points, bad_g2 = g2_points;
    for (std::size_t d = 0; d < n_dev; ++d) {
      bad_g1 = std::min<std::size_t>(bad_g1, first_bad[2 * d]);
      bad_g2 = std::min<std::size_t>(bad_g2, first_bad[2 * d + 1]);
    }
    r->times.check_s = seconds_since(t_check);
    r->times.check_batched = batch_scratch != 0;
    if (bad_g1 < g1_points) return fail(Error{Errc::invalid_argument, name_point(bad_g1)});
    if (bad_g2 < g2_points)
      return fail(Error{Errc::invalid_argument, name_point(g1_points + 2 * bad_g2)});
  }
  r->times.total_s = seconds_since(t0);
  // The check's scratch goes back to the devices and their budgets; the
  // points stay.
  batch_scratches.clear();
  const std::size_t scratch_reserved = reserved_bytes - bytes;

  run_and_wait(engine_, [&] {
    slots_.release_resident(scratch_reserved, /*resize_pools=*/false);
    srs_.push_back(r);
    slots_.resize_pools();
  });
  return Srs(std::move(r));
}

}  // namespace stoker::engine::detail
