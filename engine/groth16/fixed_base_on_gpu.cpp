// Fixed-base multiplications on one GPU; see fixed_base_on_gpu.hpp.
#include "engine/groth16/fixed_base_on_gpu.hpp"

#include <algorithm>
#include <cstring>
#include <exception>
#include <new>

#include "devices/device_set.hpp"
#include "devices/pinned_buffer.hpp"
#include "kernels/detail/msm_group.hpp"
#include "kernels/fixed_base.hpp"

namespace stoker::engine::groth16 {
namespace {

using kernels::Fr;

// A chunk's points: 2^22 in G1 (with their scalars, 512 MiB on the device
// and 1 GiB of pinned buffers), 2^21 in G2. Larger chunks gain nothing: the
// table is rebuilt per call in well under a millisecond, against ~0.1 s of
// multiplications per G1 chunk.
constexpr std::size_t kChunkBytes = std::size_t{384} << 20;

std::size_t chunk_points(std::size_t point_bytes, std::size_t points) {
  return std::min(points, kChunkBytes / point_bytes);
}

// Where a chunk is, for a message: "points 0..4194304" (of task 2).
std::string chunk_name(std::size_t task, std::size_t tasks, std::size_t first, std::size_t count) {
  std::string s = "points " + std::to_string(first) + ".." + std::to_string(first + count);
  if (tasks > 1) s += " of task " + std::to_string(task);
  return s;
}

template <typename Affine>
Error run(int ordinal, std::span<const FixedBaseTask<Affine>> tasks, const std::string& where) {
  const auto fail = [&where](std::error_code ec, const std::string& what) {
    return Error{ec, where + what + ": " + ec.message()};
  };
  const auto wrap = [&where](Error e) { return Error{e.code, where + e.what()}; };

  std::size_t largest = 0;
  bool host_scalars = false;
  for (std::size_t i = 0; i < tasks.size(); ++i) {
    const auto& t = tasks[i];
    if (t.out.empty()) continue;
    if (t.scalars.empty() && !t.fill)
      return Error{Errc::invalid_argument,
                   where + "task " + std::to_string(i) + " has neither scalars nor a fill"};
    if (!t.scalars.empty() && t.scalars.size() != t.out.size())
      return Error{Errc::invalid_argument, where + "task " + std::to_string(i) + " has " +
                                               std::to_string(t.scalars.size()) + " scalars for " +
                                               std::to_string(t.out.size()) + " points"};
    largest = std::max(largest, t.out.size());
    host_scalars = host_scalars || !t.scalars.empty();
  }
  if (largest == 0) return {};

  devices::KeepCurrentDevice keep(true);
  devices::DiscoverOptions options;
  options.backend = devices::BackendChoice::cuda;
  options.cuda_ordinals = {ordinal};
  auto set = devices::discover(options);
  if (!set) return wrap(std::move(set).error());
  devices::Device& device = (*set)[0];
  if (auto ec = device.make_current()) return fail(ec, "making it current");

  const std::size_t chunk = chunk_points(sizeof(Affine), largest);
  const std::size_t scratch_bytes = kernels::gpu::fixed_base_scratch_bytes(
      kernels::detail::MsmGroupTraits<Affine>::kGroup, chunk);
  auto d_scalars = device.allocate(chunk * sizeof(Fr));
  if (!d_scalars) return wrap(std::move(d_scalars).error());
  auto d_points = device.allocate(chunk * sizeof(Affine));
  if (!d_points) return wrap(std::move(d_points).error());
  auto d_scratch = device.allocate(scratch_bytes);
  if (!d_scratch) return wrap(std::move(d_scratch).error());
  devices::PinnedBuffer bounce[2], staged[2];
  devices::Event done_event[2];
  for (int b = 0; b < 2; ++b) {
    auto p = devices::allocate_pinned(devices::Backend::cuda, chunk * sizeof(Affine));
    if (!p) return wrap(std::move(p).error());
    bounce[b] = std::move(*p);
    if (host_scalars) {
      auto s = devices::allocate_pinned(devices::Backend::cuda, chunk * sizeof(Fr));
      if (!s) return wrap(std::move(s).error());
      staged[b] = std::move(*s);
    }
    auto e = device.create_event(devices::EventKind::blocking_sync);
    if (!e) return wrap(std::move(e).error());
    done_event[b] = std::move(*e);
  }
  auto stream = device.create_stream();
  if (!stream) return wrap(std::move(stream).error());
  const auto native = static_cast<cudaStream_t>(stream->native());
  auto* scalars = static_cast<Fr*>(d_scalars->data());
  auto* points = static_cast<Affine*>(d_points->data());

  struct Chunk {
    std::size_t task = 0, first = 0, count = 0;
  };
  // The chunk whose points wait in bounce[slot]: into its task's `out`.
  const auto drain = [&](int slot, const Chunk& c) -> Error {
    if (auto ec = done_event[slot].synchronize())
      return fail(ec, chunk_name(c.task, tasks.size(), c.first, c.count));
    std::memcpy(tasks[c.task].out.data() + c.first, bounce[slot].data(), c.count * sizeof(Affine));
    return {};
  };
  const auto run_chunks = [&]() -> Error {
    Chunk pending;  // count 0: none
    int slot = 0;
    for (std::size_t ti = 0; ti < tasks.size(); ++ti) {
      const auto& t = tasks[ti];
      for (std::size_t first = 0; first < t.out.size(); first += chunk, slot ^= 1) {
        const Chunk c{ti, first, std::min(chunk, t.out.size() - first)};
        const std::string name = chunk_name(ti, tasks.size(), c.first, c.count);
        if (!t.scalars.empty()) {
          // staged[slot] was last read by the copy of two chunks ago, which
          // drain() waited for.
          std::memcpy(staged[slot].data(), t.scalars.data() + first, c.count * sizeof(Fr));
          if (auto ec = stream->copy(scalars, staged[slot].data(), c.count * sizeof(Fr)))
            return fail(ec, "copying the scalars of " + name + " to the GPU");
        } else if (auto ec = t.fill(scalars, first, c.count, native)) {
          return fail(ec, "the scalars of " + name);
        }
        if (auto ec = kernels::gpu::fixed_base_mul(points, scalars, c.count, d_scratch->data(),
                                                   scratch_bytes, native))
          return fail(ec, "fixed-base multiplication of " + name);
        if (auto ec = stream->copy(bounce[slot].data(), points, c.count * sizeof(Affine)))
          return fail(ec, "copying " + name + " to the host");
        if (auto ec = stream->record(done_event[slot])) return fail(ec, "recording an event");
        if (pending.count)
          if (Error e = drain(slot ^ 1, pending)) return e;
        pending = c;
      }
    }
    return pending.count ? drain(slot ^ 1, pending) : Error{};
  };
  Error e = run_chunks();
  // Nothing may still write into the buffers when they are freed.
  const std::error_code drained = stream->synchronize();
  if (!e && drained) e = fail(drained, "finishing");
  return e;
}

}  // namespace

template <typename Affine>
Error fixed_base_on_gpu(int cuda_ordinal, std::span<const FixedBaseTask<Affine>> tasks,
                        const std::string& what) {
  const std::string where = what + " on GPU " + std::to_string(cuda_ordinal) + ": ";
  try {
    return run<Affine>(cuda_ordinal, tasks, where);
  } catch (const std::bad_alloc&) {
    return Error{Errc::out_of_host_memory, where + "out of host memory"};
  } catch (const std::exception& e) {
    return Error{Errc::kernel_failed, where + e.what()};
  }
}

template Error fixed_base_on_gpu<kernels::G1Affine>(
    int, std::span<const FixedBaseTask<kernels::G1Affine>>, const std::string&);
template Error fixed_base_on_gpu<kernels::G2Affine>(
    int, std::span<const FixedBaseTask<kernels::G2Affine>>, const std::string&);

std::size_t fixed_base_on_gpu_host_bytes(std::size_t point_bytes, std::size_t points,
                                         bool host_scalars) {
  const std::size_t chunk = chunk_points(point_bytes, points);
  return 2 * chunk * (point_bytes + (host_scalars ? sizeof(Fr) : 0));
}

}  // namespace stoker::engine::groth16
