#include "engine/workloads/srs_source.hpp"

#include <chrono>
#include <new>
#include <string>
#include <vector>

#include "common/elapsed.hpp"
#include "common/host_memory_limit.hpp"
#include "engine/workloads/toy_srs.hpp"

namespace stoker::engine::workloads {

Result<LoadedSrs> load_toy_srs(
    Engine& engine, const SrsRequest& request,
    const std::function<void(std::span<const kernels::G1Affine>, LoadedSrs&)>& on_points) {
  LoadedSrs out;
  const std::size_t n = toy_srs_points(request.log_n), bytes = n * sizeof(kernels::G1Affine);
  const std::string what = "the toy SRS of 2^" + std::to_string(request.log_n) + " - 1 points";
  if (Error e = common::check_host_memory(what, bytes)) return e;
  std::vector<kernels::G1Affine> points;
  try {
    points.resize(n);
  } catch (const std::bad_alloc&) {
    return common::host_memory_refused(what, bytes);
  }
  const auto t0 = std::chrono::steady_clock::now();
  const bool gpu = engine.devices().backend() == devices::Backend::cuda;
  const int ordinal = gpu ? engine.devices()[0].info().ordinal : -1;
  if (auto e = make_toy_srs(request.seed, request.log_n, 0, points, ordinal))
    return Error{e.code, "generating the toy SRS: " + e.what()};
  out.generate_s = common::seconds_since(t0);
  out.source = gpu ? "generated on GPU " + std::to_string(ordinal) : "generated on the CPU";
  if (on_points) on_points(points, out);
  SrsLoadOptions options;
  options.label = "toy 2^" + std::to_string(request.log_n);
  options.trust_points = true;  // made here, from the generator
  options.broadcast = request.broadcast;
  auto srs = engine.load_srs(points, options);
  if (!srs) return std::move(srs).error();
  out.srs = std::move(*srs);
  return out;
}

Result<LoadedSrs> load_srs_or_toy(Engine& engine, const SrsRequest& request) {
  if (request.path.empty()) return load_toy_srs(engine, request);
  SrsLoadOptions options;
  options.broadcast = request.broadcast;
  auto srs = engine.load_srs(request.path, options);
  if (!srs) return std::move(srs).error();
  return LoadedSrs{std::move(*srs), "file " + request.path, 0};
}

}  // namespace stoker::engine::workloads
