// Bucket reduction and window combination on the GPU.
//
// A window's value is V = sum_k k B_k over its buckets k = 1..m (bucket
// index i = k - 1 holds B_k), so V = sum_i i B_i + sum_i B_i. The weighted
// sum is split over groups of g consecutive items, level by level, with
// every level one launch and every item of a level one thread:
//
//   weighted = sum_j Y_j + G * sum_j j S_j        (G = product of the groups so far)
//
// starts with Y = 0, S = the buckets, G = 1. Item k of the next level covers
// items kg .. kg+g-1 and keeps the same form with
//   S'_k = sum_t S_(kg+t),   A_k = sum_t t S_(kg+t)   (running sums: 2 adds per item)
//   Y'_k = sum_t Y_(kg+t) + G A_k                     (log2 G doublings)
// and G' = G g. When one item is left, weighted = Y_0 and V = Y_0 + S_0.
// The first level does two XYZZ additions per bucket over W * 2^(c-1) /
// 2^reduce_first_log threads (2^6 unless the plan folds fewer); the later
// ones fold 8 items each (msm_window.hpp says why).
//
// The windows are then combined in one thread by Horner's rule:
// result = sum_w 2^(c w) V_w (about 255 doublings and W additions).
//
// Written once over the group's XYZZ type (msm_group.hpp).
#pragma once

#include <cstddef>
#include <cstdint>

#include "kernels/detail/msm_accumulate.cuh"
#include "kernels/msm.hpp"

namespace stoker::kernels::gpu::detail {

template <typename Xyzz>
struct ReduceArgs {
  unsigned windows;
  std::size_t in_per_window;  // items per window in
  unsigned group;             // g; out_per_window = in_per_window / g
  unsigned scale_log;         // log2 G
  // First level: the buckets and their flags; later levels: Y and S.
  const Xyzz* buckets;
  const std::uint8_t* filled;
  const Xyzz* y_in;
  const Xyzz* s_in;
  Xyzz* y_out;
  Xyzz* s_out;
};

template <bool kFirst, typename Xyzz>
__global__ void reduce_level_kernel(ReduceArgs<Xyzz> a) {
  const std::size_t out_per_window = a.in_per_window / a.group;
  const std::size_t item = std::size_t{blockIdx.x} * blockDim.x + threadIdx.x;
  if (item >= out_per_window * a.windows) return;
  const std::size_t w = item / out_per_window, k = item % out_per_window;
  const std::size_t base = w * a.in_per_window + k * a.group;
  Xyzz running = Xyzz::infinity(), weighted = Xyzz::infinity();
  for (unsigned t = a.group; t-- > 0;) {
    const std::size_t i = base + t;
    if (kFirst) {
      if (a.filled[i]) add(running, load_xyzz(a.buckets + i));
    } else {
      add(running, load_xyzz(a.s_in + i));
    }
    if (t > 0) add(weighted, running);
  }
  for (unsigned d = 0; d < a.scale_log; ++d) weighted = dbl(weighted);
  // Y in a loop of its own: three sums live at once spill registers.
  Xyzz y = weighted;
  if (!kFirst)
    for (unsigned t = 0; t < a.group; ++t) add(y, load_xyzz(a.y_in + base + t));
  store_xyzz(a.y_out + item, y);
  store_xyzz(a.s_out + item, running);
}

// One thread: V_w = Y_w + S_w, then Horner over the windows.
template <typename Xyzz>
__global__ void combine_windows_kernel(Xyzz* result, const Xyzz* y, const Xyzz* s, unsigned windows,
                                       unsigned c) {
  Xyzz acc = Xyzz::infinity();
  for (unsigned w = windows; w-- > 0;) {
    if (w + 1 < windows)
      for (unsigned d = 0; d < c; ++d) acc = dbl(acc);
    add(acc, load_xyzz(y + w));
    add(acc, load_xyzz(s + w));
  }
  store_xyzz(result, acc);
}

// The window sums for the host (msm.hpp, msm_window_sums): thread w < W
// copies y_w and s_w; thread W writes the header and the extra (infinity
// when there is none).
template <typename Xyzz>
__global__ void write_window_sums_kernel(unsigned char* out, const Xyzz* y, const Xyzz* s,
                                         unsigned windows, unsigned c, std::uint32_t group,
                                         const Xyzz* extra) {
  const unsigned t = blockIdx.x * blockDim.x + threadIdx.x;
  auto* sums = reinterpret_cast<Xyzz*>(out + sizeof(MsmWindowSumsHeader));
  if (t < windows) {
    store_xyzz(sums + t, load_xyzz(y + t));
    store_xyzz(sums + windows + t, load_xyzz(s + t));
  } else if (t == windows) {
    auto* h = reinterpret_cast<MsmWindowSumsHeader*>(out);
    h->group = group;
    h->windows = windows;
    h->window_bits = c;
    h->reserved = 0;
    store_xyzz(sums + 2 * windows, extra ? load_xyzz(extra) : Xyzz::infinity());
  }
}

// n == 0: the empty sum.
template <typename Xyzz>
__global__ void write_infinity_kernel(Xyzz* result) {
  store_xyzz(result, Xyzz::infinity());
}

}  // namespace stoker::kernels::gpu::detail
