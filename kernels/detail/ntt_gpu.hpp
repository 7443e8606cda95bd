// Internals of the GPU NTT shared by ntt_gpu.cu and hpoly_gpu.cu: the cached
// tables of one (device, log_n) and the pass launchers. Not for callers.
//
// Shape of a transform of n = 2^L (L > tile_log): radix-2 decimation in
// frequency (natural -> bit-reversed) or in time (bit-reversed -> natural)
// cut into 2-3 passes over memory; each pass runs k consecutive butterfly
// levels in shared memory, two at a time in registers (radix 4), on tiles
// of 2^k elements at stride 2^s0 (2^c
// neighbouring columns per tile, so global accesses come in runs of 2^c
// elements), with the cross-pass twiddles w_n^(l * bitrev_k(t) * 2^(L-s0-k))
// fused into the load (DIT) or the store (DIF). A tiled, in-place bit
// reversal pass gives natural order and carries the inverse's scaling.
// L <= tile_log: one block per vector does everything in shared memory.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <system_error>

#include "kernels/field.cuh"

namespace stoker::kernels::gpu::detail {

// v(j) = lo[j mod 2^lo_bits] * hi[j >> lo_bits]: a geometric sequence
// c0 * base^j in two small tables (c0 folded into lo, hi[0] == 1).
struct GeoTable {
  const Fr* lo = nullptr;
  const Fr* hi = nullptr;
  std::uint32_t lo_bits = 0;
};

// Immutable once published in the cache.
struct NttTables {
  unsigned log_n = 0;
  unsigned tile_log = 0;          // largest shared-memory tile, log2 elements
  const Fr* local_fwd = nullptr;  // w_{2^11}^i, i < 2^10
  const Fr* local_inv = nullptr;  // w_{2^11}^-i
  GeoTable tw_fwd, tw_inv;        // w_n^j, w_n^-j
  GeoTable coset_fwd;             // g^j
  GeoTable coset_fwd_over_n;      // g^j / n
  GeoTable coset_inv_over_n;      // g^-j / n
  Fr n_inv{};
  // One strided pass's cross-pass twiddles w_n^(+-(j << direct_shift)) as a
  // plain table indexed by j (null when no pass has few enough).
  const Fr* direct_fwd = nullptr;
  const Fr* direct_inv = nullptr;
  unsigned direct_shift = 0;
};

// Tables of (current device, log_n); built on first use (allocates, waits).
std::error_code tables_for(unsigned log_n, const NttTables** out);

enum class Load : int { plain, scale_natural, scale_bitrev, hpoly_pointwise };
enum class Store : int { plain, bitrev, bitrev_const, bitrev_geo };

struct LoadSpec {
  Load mode = Load::plain;
  GeoTable geo;           // scale_natural: x_p *= geo(p); scale_bitrev: x_p *= geo(bitrev(p))
  const Fr* b = nullptr;  // hpoly_pointwise: x_p = (in_p * b_p - c_p) * z
  const Fr* c = nullptr;
  Fr z{};
};

struct StoreSpec {
  Store mode = Store::plain;  // bitrev*: only for single-pass (whole vector in one tile)
  GeoTable geo;               // bitrev_geo: out_j *= geo(j)
  Fr constant{};              // bitrev_const: out_j *= constant
};

// Multi-pass DIF (natural -> bit-reversed, unscaled). The first pass reads
// `in` (with `load`), writes `out`; the rest work in place on `out`.
std::error_code dif_passes(const NttTables& t, bool inverse, Fr* out, const Fr* in,
                           std::size_t batch, const LoadSpec& load, cudaStream_t stream);
// Multi-pass DIT (bit-reversed -> natural, unscaled), same in/out rules.
std::error_code dit_passes(const NttTables& t, bool inverse, Fr* out, const Fr* in,
                           std::size_t batch, const LoadSpec& load, cudaStream_t stream);
// Whole transform in one tile per vector: natural -> natural.
std::error_code single_pass(const NttTables& t, bool inverse, Fr* out, const Fr* in,
                            std::size_t batch, const LoadSpec& load, const StoreSpec& store,
                            cudaStream_t stream);
// In-place bit reversal of each vector (L > tile_log), scaling by `store`
// (plain/bitrev: none, bitrev_const, bitrev_geo by the destination index).
std::error_code bitrev_pass(const NttTables& t, Fr* data, std::size_t batch, const StoreSpec& store,
                            cudaStream_t stream);

}  // namespace stoker::kernels::gpu::detail
