// Bulk point checks for the Groth16 readers; see point_check.hpp.
#include "engine/groth16/point_check.hpp"

#include "engine/groth16/detail/first_failure.hpp"
#include "kernels/g1_encoding.hpp"
#include "kernels/g2_encoding.hpp"
#include "kernels/msm.hpp"

namespace stoker::engine::groth16 {
namespace {

using detail::first_failure;
using kernels::G1Affine;
using kernels::G2Affine;

// Coordinates are cheap to check: large ranges per thread.
constexpr std::size_t kCoordinateGrain = std::size_t{1} << 16;
// A G2 subgroup check costs about a G2 scalar multiplication.
constexpr std::size_t kG2Grain = 8;

const char* g1_coordinate_problem(const G1Affine& p) {
  if (!below_q(p.x)) return "x is not below q";
  if (!below_q(p.y)) return "y is not below q";
  return nullptr;
}

const char* g2_coordinate_problem(const G2Affine& p) {
  if (!below_q(p.x.c0)) return "x.c0 is not below q";
  if (!below_q(p.x.c1)) return "x.c1 is not below q";
  if (!below_q(p.y.c0)) return "y.c0 is not below q";
  if (!below_q(p.y.c1)) return "y.c1 is not below q";
  return nullptr;
}

std::string curve_problem(std::error_code ec) {
  if (ec == kernels::G1Error::not_on_curve || ec == kernels::G2Error::not_on_curve)
    return "not on the curve";
  if (ec == kernels::G1Error::not_in_subgroup) return "on the curve but not in G1";
  if (ec == kernels::G2Error::not_in_subgroup) return "on the curve but not in G2";
  return ec.message();
}

}  // namespace

bool below_q(const kernels::Fq& x) noexcept {
  return kernels::Fq::is_canonical(x.l);
}

std::optional<BadPoint> find_bad_point(std::span<const G1Affine> points, PointCheck check,
                                       unsigned threads) {
  const std::size_t n = points.size();
  std::size_t i = first_failure(n, threads, kCoordinateGrain,
                                [&](std::size_t k) { return !g1_coordinate_problem(points[k]); });
  if (i < n) return BadPoint{i, g1_coordinate_problem(points[i])};
  if (check == PointCheck::trusted) return std::nullopt;
  i = kernels::cpu::check_points(points.data(), n, threads);
  if (i < n) return BadPoint{i, curve_problem(kernels::check_g1(points[i]))};
  return std::nullopt;
}

std::optional<BadPoint> find_bad_point(std::span<const G2Affine> points, PointCheck check,
                                       unsigned threads) {
  const std::size_t n = points.size();
  std::size_t i = first_failure(n, threads, kCoordinateGrain,
                                [&](std::size_t k) { return !g2_coordinate_problem(points[k]); });
  if (i < n) return BadPoint{i, g2_coordinate_problem(points[i])};
  if (check == PointCheck::trusted) return std::nullopt;
  i = first_failure(n, threads, kG2Grain,
                    [&](std::size_t k) { return !kernels::check_g2(points[k]); });
  if (i < n) return BadPoint{i, curve_problem(kernels::check_g2(points[i]))};
  return std::nullopt;
}

}  // namespace stoker::engine::groth16
