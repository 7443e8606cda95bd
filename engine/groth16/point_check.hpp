// How much the Groth16 key and proof readers check of the points they read,
// and the bulk checks themselves.
//
// Every coordinate is always checked to be below q: the kernels' arithmetic
// assumes reduced Montgomery values and silently computes nonsense on
// others. Whether a point lies on its curve and in the order-r subgroup is
// what PointCheck decides: a point outside the subgroup lets a malicious
// key break soundness or zero knowledge, so `full` is the default; `trusted`
// is for files this process or a party the caller trusts wrote, where the
// subgroup checks (about as costly as an MSM over the key) buy nothing.
//
// The checks run on `threads` threads (0: the hardware's) and report the
// smallest failing index of the first failing kind (coordinates, then the
// curve and subgroup), so a message names one definite point. Thread safe.
#pragma once

#include <cstddef>
#include <optional>
#include <span>
#include <string>

#include "kernels/g1.cuh"
#include "kernels/g2.cuh"

namespace stoker::engine::groth16 {

enum class PointCheck {
  full,     // coordinates below q, on the curve, in the subgroup
  trusted,  // coordinates below q only
};

struct BadPoint {
  std::size_t index;
  std::string reason;  // "x is not below q", "not on the curve", ...
};

// The points hold Montgomery-form words exactly as a file or a decoder
// gave them; (0, 0) is the point at infinity and passes.
std::optional<BadPoint> find_bad_point(std::span<const kernels::G1Affine> points, PointCheck check,
                                       unsigned threads = 0);
std::optional<BadPoint> find_bad_point(std::span<const kernels::G2Affine> points, PointCheck check,
                                       unsigned threads = 0);

// Whether a Montgomery-form word vector is below q, for one coordinate.
bool below_q(const kernels::Fq& x) noexcept;

}  // namespace stoker::engine::groth16
