// GPU NTT: pass kernels, table cache and the public transform entry point.
// The pass structure is described in detail/ntt_gpu.hpp.
#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <utility>

#include "common/error.hpp"
#include "kernels/detail/launch_geometry.cuh"
#include "kernels/detail/ntt_gpu.hpp"
#include "kernels/ntt.hpp"

namespace stoker::kernels::gpu {
namespace detail {
namespace {

constexpr unsigned kLocalLog = 11;  // local twiddles are powers of w_{2^11}
// A pass block has one thread per four elements of its tile, at most this
// many: the bound its __launch_bounds__ is compiled for (three blocks per SM).
constexpr unsigned kPassMaxThreads = 256;
constexpr unsigned kBitrevQ = 4;  // bit reversal tiles: 2^4 x 2^4 elements
// One thread per element of a bit reversal tile.
constexpr unsigned kBitrevThreads = 1u << (2 * kBitrevQ);
// Direct cross-twiddle tables up to 2^20 entries (32 MiB per direction):
// small enough to stay mostly in the 50 MB L2 while a pass streams.
constexpr unsigned kDirectMaxLog = 20;

// ---- device helpers ---------------------------------------------------------

__device__ __forceinline__ Fr load_ro(const Fr* p) {
  const ulonglong2* q = reinterpret_cast<const ulonglong2*>(p);
  const ulonglong2 a = __ldg(q), b = __ldg(q + 1);
  return Fr{{a.x, a.y, b.x, b.y}};
}
__device__ __forceinline__ Fr load(const Fr* p) {
  const ulonglong2* q = reinterpret_cast<const ulonglong2*>(p);
  const ulonglong2 a = q[0], b = q[1];
  return Fr{{a.x, a.y, b.x, b.y}};
}
__device__ __forceinline__ void store(Fr* p, const Fr& v) {
  ulonglong2* q = reinterpret_cast<ulonglong2*>(p);
  q[0] = make_ulonglong2(v.l[0], v.l[1]);
  q[1] = make_ulonglong2(v.l[2], v.l[3]);
}
__device__ __forceinline__ std::uint32_t brev(std::uint32_t x, unsigned bits) {
  return bits ? __brev(x) >> (32 - bits) : 0;
}
__device__ __forceinline__ Fr geo_at(const GeoTable& g, std::uint32_t j) {
  Fr v = load_ro(g.lo + (j & ((1u << g.lo_bits) - 1)));
  const std::uint32_t h = j >> g.lo_bits;
  if (h) v = v * load_ro(g.hi + h);
  return v;
}

// Shared memory holds a tile as four limb planes, so that consecutive
// threads touch consecutive 8-byte words. Butterflies of the low levels
// read elements 2^s or 4 * 2^s apart, which would put 2-4 lanes of a half
// warp on one bank pair; XOR-ing bits 4 and 5 of the index into its bank
// bits (bit 4 into bits 0 and 2, bit 5 into bits 1 and 3) spreads every
// access pattern of the passes over 16 bank pairs (the contiguous
// pass's radix-4 levels with 2^s < 16 and the strided passes' first level).
struct SmemTile {
  std::uint64_t* s;
  std::uint32_t size;
  __device__ __forceinline__ static std::uint32_t at(std::uint32_t e) {
    return e ^ (((e >> 4) & 3u) * 5u);
  }
  __device__ __forceinline__ Fr get(std::uint32_t e) const {
    e = at(e);
    return Fr{{s[e], s[size + e], s[2 * size + e], s[3 * size + e]}};
  }
  __device__ __forceinline__ void put(std::uint32_t e, const Fr& v) const {
    e = at(e);
    s[e] = v.l[0];
    s[size + e] = v.l[1];
    s[2 * size + e] = v.l[2];
    s[3 * size + e] = v.l[3];
  }
};

struct PassArgs {
  const Fr* in;
  Fr* out;
  std::size_t stride;  // elements between vectors of a batch
  std::uint32_t log_n, s0, k, c;
  const Fr* local_tw;   // w_{2^11}^(+-i)
  GeoTable tw;          // w_n^(+-j) for the cross-pass twiddles
  const Fr* tw_direct;  // this pass's w_n^(+-(j << shift)) by j, or null
  LoadSpec load;
  StoreSpec store;
};

// The cross-pass twiddle w_n^(j << shift): one load from this pass's direct
// table where it has one (small enough to live in L2), else lo * hi.
__device__ __forceinline__ Fr cross_twiddle_at(const PassArgs& a, std::uint32_t j,
                                               std::uint32_t shift) {
  return a.tw_direct ? load_ro(a.tw_direct + j) : geo_at(a.tw, j << shift);
}

// One pass: k butterfly levels (local stages sigma = 0..k-1 correspond to
// global stages s0 + sigma) on tiles of 2^k x 2^c elements.
// Element e of the tile: t = e >> c (position along the transform at stride
// 2^s0), lc = e & (2^c - 1) (neighbouring column).
// One radix-2 level sigma on the tile: butterflies (t0, t0 + 2^sigma).
template <bool kDif, typename Tile>
__device__ __forceinline__ void radix2_level(const Tile& sm, const Fr* local_tw,
                                             std::uint32_t sigma, std::uint32_t c,
                                             std::uint32_t half) {
  const std::uint32_t m = 1u << sigma, cmask = (1u << c) - 1;
  for (std::uint32_t b = threadIdx.x; b < half; b += blockDim.x) {
    const std::uint32_t lc = b & cmask, q = b >> c;
    const std::uint32_t j = q & (m - 1);
    const std::uint32_t t0 = ((q - j) << 1) + j;
    const std::uint32_t e0 = (t0 << c) | lc, e1 = ((t0 + m) << c) | lc;
    Fr u = sm.get(e0), v = sm.get(e1);
    if (kDif) {
      Fr d = u - v;
      u = u + v;
      if (sigma) d = d * load_ro(local_tw + (j << (kLocalLog - 1 - sigma)));
      v = d;
    } else {
      if (sigma) v = v * load_ro(local_tw + (j << (kLocalLog - 1 - sigma)));
      const Fr s = u + v;
      v = u - v;
      u = s;
    }
    sm.put(e0, u);
    sm.put(e1, v);
  }
}

// Levels s and s + 1 at once (radix 4): each thread takes the four elements
// t0 + i 2^s, i < 4, through both levels in registers, so a level pair costs
// one shared-memory round trip and one barrier instead of two, and gives the
// scheduler two independent products per level. Twiddles: level s + 1 pairs
// (x0, x2) with j and (x1, x3) with j + 2^s, level s both pairs with j. For
// s = 0 (kUnit), j = 0: three of the four twiddles are one and skipped.
// The pass is latency-bound and ptxas overlaps only products of one basic
// block, so s = 0 is a loop of its own rather than a branch inside this
// one: with `if (s)` around a product, level s + 1's two products fell into
// two blocks and ran one after the other (3 % of the NTT, measured).
template <bool kDif, bool kUnit, typename Tile>
__device__ __forceinline__ void radix4_loop(const Tile& sm, const Fr* local_tw, std::uint32_t s,
                                            std::uint32_t c, std::uint32_t quads) {
  const std::uint32_t m = 1u << s, cmask = (1u << c) - 1;
  const std::uint32_t sh = kLocalLog - 2 - s;  // level s + 1 twiddle: W[j' << sh]
  for (std::uint32_t b = threadIdx.x; b < quads; b += blockDim.x) {
    // Loaded in the loop: held across it, it costs 8 registers and more
    // spills (DIF 44 -> 56-68 bytes).
    Fr w_unit{};
    if (kUnit) w_unit = load_ro(local_tw + (std::uint32_t{1} << sh));
    const std::uint32_t lc = b & cmask, q = b >> c;
    const std::uint32_t j = q & (m - 1);
    const std::uint32_t t0 = ((q - j) << 2) + j;
    const std::uint32_t e0 = (t0 << c) | lc, e1 = ((t0 + m) << c) | lc,
                        e2 = ((t0 + 2 * m) << c) | lc, e3 = ((t0 + 3 * m) << c) | lc;
    Fr x0 = sm.get(e0), x1 = sm.get(e1), x2 = sm.get(e2), x3 = sm.get(e3);
    if (kDif) {
      Fr d0 = x0 - x2, d1 = x1 - x3;
      x0 = x0 + x2;
      x1 = x1 + x3;
      if (kUnit) {
        x2 = d0;
        x3 = d1 * w_unit;
      } else {
        x2 = d0 * load_ro(local_tw + (j << sh));
        x3 = d1 * load_ro(local_tw + ((j + m) << sh));
      }
      d0 = x0 - x1;
      d1 = x2 - x3;
      x0 = x0 + x1;
      x2 = x2 + x3;
      if (kUnit) {
        x1 = d0;
        x3 = d1;
      } else {
        const Fr w_lo = load_ro(local_tw + (j << (sh + 1)));
        x1 = d0 * w_lo;
        x3 = d1 * w_lo;
      }
    } else {
      if (!kUnit) {
        const Fr w_lo = load_ro(local_tw + (j << (sh + 1)));
        x1 = x1 * w_lo;
        x3 = x3 * w_lo;
      }
      Fr d0 = x0 - x1, d1 = x2 - x3;
      x0 = x0 + x1;
      x2 = x2 + x3;
      if (kUnit) {
        d1 = d1 * w_unit;
      } else {
        x2 = x2 * load_ro(local_tw + (j << sh));
        d1 = d1 * load_ro(local_tw + ((j + m) << sh));
      }
      x1 = d0 + d1;
      x3 = d0 - d1;
      d0 = x0 - x2;
      x0 = x0 + x2;
      x2 = d0;
    }
    sm.put(e0, x0);
    sm.put(e1, x1);
    sm.put(e2, x2);
    sm.put(e3, x3);
  }
}

template <bool kDif, typename Tile>
__device__ __forceinline__ void radix4_levels(const Tile& sm, const Fr* local_tw, std::uint32_t s,
                                              std::uint32_t c, std::uint32_t quads) {
  if (s == 0)
    radix4_loop<kDif, true>(sm, local_tw, s, c, quads);
  else
    radix4_loop<kDif, false>(sm, local_tw, s, c, quads);
}

// Three blocks of 256 threads per SM (the shared-memory limit of 64 KiB
// tiles) caps registers at 80; ptxas spills 44 bytes of the DIF form, none
// of the DIT one. Measured against 114-118 registers and two blocks: 3-5 %
// faster; against two quads per thread at 128 registers and two blocks
// (four products per level in flight): 3.5 % faster at 2^24.
template <bool kDif>
__global__ void __launch_bounds__(kPassMaxThreads, 3) pass_kernel(PassArgs a) {
  extern __shared__ std::uint64_t smem[];
  const std::uint32_t k = a.k, c = a.c, tile = 1u << (k + c), cmask = (1u << c) - 1;
  const SmemTile sm{smem, tile};
  const std::size_t vec = blockIdx.y;
  const Fr* in = a.in + vec * a.stride;
  Fr* out = a.out + vec * a.stride;

  const std::uint32_t lblocks_log = a.s0 - c;
  const std::uint32_t lblk = blockIdx.x & ((1u << lblocks_log) - 1);
  const std::uint32_t hblk = blockIdx.x >> lblocks_log;
  const std::uint32_t base = (hblk << (a.s0 + k)) + (lblk << c);
  const std::uint32_t tw_shift = a.log_n - a.s0 - k;
  const bool cross_twiddle = a.s0 != 0;

  for (std::uint32_t e = threadIdx.x; e < tile; e += blockDim.x) {
    const std::uint32_t t = e >> c, lc = e & cmask;
    const std::uint32_t pos = base + (t << a.s0) + lc;
    Fr x;
    switch (a.load.mode) {
      default:
        x = load(in + pos);
        break;
      case Load::scale_natural:
        x = load(in + pos) * geo_at(a.load.geo, pos);
        break;
      case Load::scale_bitrev:
        x = load(in + pos) * geo_at(a.load.geo, brev(pos, a.log_n));
        break;
      case Load::hpoly_pointwise:
        x = (load(in + pos) * load(a.load.b + pos) - load(a.load.c + pos)) * a.load.z;
        break;
    }
    if (!kDif && cross_twiddle) {
      const std::uint32_t l = (lblk << c) + lc;
      if (const std::uint32_t j = l * brev(t, k)) x = x * cross_twiddle_at(a, j, tw_shift);
    }
    sm.put(e, x);
  }
  __syncthreads();

  const std::uint32_t half = tile >> 1;
  if (kDif) {
    // Highest level first; an odd one out goes alone at the top, so that the
    // last pair is (1, 0) and skips its unit twiddles.
    std::uint32_t top = k;
    if (k & 1) {
      radix2_level<true>(sm, a.local_tw, k - 1, c, half);
      __syncthreads();
      --top;
    }
    for (; top >= 2; top -= 2) {
      radix4_levels<true>(sm, a.local_tw, top - 2, c, tile >> 2);
      __syncthreads();
    }
  } else {
    std::uint32_t s = 0;
    for (; s + 2 <= k; s += 2) {
      radix4_levels<false>(sm, a.local_tw, s, c, tile >> 2);
      __syncthreads();
    }
    if (s < k) {
      radix2_level<false>(sm, a.local_tw, s, c, half);
      __syncthreads();
    }
  }

  if (a.store.mode == Store::plain) {
    for (std::uint32_t e = threadIdx.x; e < tile; e += blockDim.x) {
      const std::uint32_t t = e >> c, lc = e & cmask;
      const std::uint32_t pos = base + (t << a.s0) + lc;
      Fr x = sm.get(e);
      if (kDif && cross_twiddle) {
        const std::uint32_t l = (lblk << c) + lc;
        if (const std::uint32_t j = l * brev(t, k)) x = x * cross_twiddle_at(a, j, tw_shift);
      }
      store(out + pos, x);
    }
  } else {
    // Whole vector in this tile (s0 = 0, c = 0, k = log_n): DIF left it
    // bit-reversed; write natural order.
    for (std::uint32_t j = threadIdx.x; j < tile; j += blockDim.x) {
      Fr x = sm.get(brev(j, k));
      if (a.store.mode == Store::bitrev_const) x = x * a.store.constant;
      if (a.store.mode == Store::bitrev_geo) x = x * geo_at(a.store.geo, j);
      store(out + j, x);
    }
  }
}

// In-place bit reversal: index = (a: q bits | m: L-2q bits | b: q bits) goes
// to (rev b | rev m | rev a). The block of middle m swaps its 2^q x 2^q tile
// with the tile of rev(m) through shared memory; global accesses are runs of
// 2^q elements on both sides.
__global__ void __launch_bounds__(kBitrevThreads)
    bitrev_kernel(Fr* data, std::size_t stride, std::uint32_t log_n, StoreSpec st) {
  constexpr std::uint32_t q = kBitrevQ, side = 1u << q, tile = side * side;
  __shared__ Fr ta[tile], tb[tile];
  const std::uint32_t mid_bits = log_n - 2 * q;
  const std::uint32_t m1 = blockIdx.x, m2 = brev(m1, mid_bits);
  if (m1 > m2) return;
  Fr* d = data + blockIdx.y * stride;
  const std::uint32_t hi_shift = log_n - q;
  for (std::uint32_t i = threadIdx.x; i < tile; i += blockDim.x) {
    const std::uint32_t ia = i >> q, ib = i & (side - 1);
    ta[i] = load(d + ((ia << hi_shift) | (m1 << q) | ib));
    if (m1 != m2) tb[i] = load(d + ((ia << hi_shift) | (m2 << q) | ib));
  }
  __syncthreads();
  for (std::uint32_t i = threadIdx.x; i < tile; i += blockDim.x) {
    const std::uint32_t oa = i >> q, ob = i & (side - 1);
    const std::uint32_t src = (brev(ob, q) << q) | brev(oa, q);
    const std::uint32_t dst2 = (oa << hi_shift) | (m2 << q) | ob;
    const std::uint32_t dst1 = (oa << hi_shift) | (m1 << q) | ob;
    Fr x = ta[src];
    if (st.mode == Store::bitrev_const) x = x * st.constant;
    if (st.mode == Store::bitrev_geo) x = x * geo_at(st.geo, dst2);
    store(d + dst2, x);
    if (m1 != m2) {
      Fr y = tb[src];
      if (st.mode == Store::bitrev_const) y = y * st.constant;
      if (st.mode == Store::bitrev_geo) y = y * geo_at(st.geo, dst1);
      store(d + dst1, y);
    }
  }
}

__global__ void geo_kernel(Fr* out, std::uint32_t count, Fr c0, Fr base) {
  const std::uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < count) out[i] = c0 * base.pow(static_cast<std::uint64_t>(i));
}

// ---- plans -------------------------------------------------------------------

struct Plan {
  unsigned passes = 0;
  unsigned k[4] = {};  // k[0]: the contiguous pass (s0 = 0); then strided ones
};

// Contiguous pass up to tile_log levels; strided passes up to tile_log - 1 so
// that each tile spans at least two neighbouring columns.
Plan make_plan(unsigned log_n, unsigned tile_log) {
  Plan p;
  if (log_n <= tile_log) {
    p.passes = 1;
    p.k[0] = log_n;
    return p;
  }
  const unsigned ks = tile_log - 1;
  p.passes = 1 + (log_n - tile_log + ks - 1) / ks;
  const unsigned strided = std::min(ks, log_n / p.passes);
  p.k[0] = log_n - (p.passes - 1) * strided;
  for (unsigned i = 1; i < p.passes; ++i) p.k[i] = strided;
  return p;
}

std::error_code launch_error() {
  return make_cuda_error(cudaGetLastError());
}

template <bool kDif>
std::error_code launch_pass(PassArgs a, std::size_t batch, cudaStream_t stream) {
  const unsigned tile_log = a.k + a.c;
  // One thread per four elements (the radix-4 levels), at least a warp.
  const unsigned threads =
      std::clamp<unsigned>(1u << (tile_log > 2 ? tile_log - 2 : 0), 32, kPassMaxThreads);
  const std::size_t smem = (std::size_t{1} << tile_log) * sizeof(Fr);
  const unsigned blocks = 1u << (a.log_n - tile_log);
  const Fr* in = a.in;
  Fr* out = a.out;
  for (std::size_t v = 0; v < batch; v += 65535) {
    const unsigned nb = static_cast<unsigned>(std::min<std::size_t>(65535, batch - v));
    a.in = in + v * a.stride;
    a.out = out + v * a.stride;
    pass_kernel<kDif><<<dim3(blocks, nb), threads, smem, stream>>>(a);
    if (auto ec = launch_error()) return ec;
  }
  return {};
}

PassArgs base_args(const NttTables& t, bool inverse, unsigned s0, unsigned k, unsigned c) {
  PassArgs a{};
  a.stride = std::size_t{1} << t.log_n;
  a.log_n = t.log_n;
  a.s0 = s0;
  a.k = k;
  a.c = c;
  a.local_tw = inverse ? t.local_inv : t.local_fwd;
  a.tw = inverse ? t.tw_inv : t.tw_fwd;
  if (s0 != 0 && t.direct_fwd && t.log_n - s0 - k == t.direct_shift)
    a.tw_direct = inverse ? t.direct_inv : t.direct_fwd;
  return a;
}

unsigned columns(unsigned s0, unsigned k, unsigned tile_log) {
  return std::min(s0, tile_log - k);
}

// ---- per-device state and the table cache ------------------------------------

struct DeviceInfo {
  unsigned tile_log = 10;
  std::error_code error;
};

std::mutex g_mutex;
std::map<int, DeviceInfo> g_devices;
std::map<std::pair<int, unsigned>, std::unique_ptr<NttTables>> g_tables;

DeviceInfo device_info(int device) {
  {
    std::lock_guard lock(g_mutex);
    if (auto it = g_devices.find(device); it != g_devices.end()) return it->second;
  }
  DeviceInfo info;
  int optin = 0;
  if (cudaError_t e =
          cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device)) {
    info.error = make_cuda_error(e);
    return info;
  }
  // Largest power-of-two tile of Fr that fits, at most 2^11 (64 KiB), so
  // that three blocks still share one SM.
  info.tile_log = 11;
  while (info.tile_log > 6 &&
         (std::size_t{1} << info.tile_log) * sizeof(Fr) > static_cast<std::size_t>(optin))
    --info.tile_log;
  const int bytes = static_cast<int>((std::size_t{1} << info.tile_log) * sizeof(Fr));
  cudaError_t e =
      cudaFuncSetAttribute(pass_kernel<true>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
  if (!e)
    e = cudaFuncSetAttribute(pass_kernel<false>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             bytes);
  // Under lazy loading (CUDA's default since 12.2) a kernel is loaded at its
  // first launch, and loading may synchronize the context: a pipeline's
  // first partition then kept its feeder waiting until its own kernels had
  // run, and the next partition's H2D started a whole kernel late (one H200,
  // hpoly 2^27: 240 ms). Setting an attribute loads the pass kernels above;
  // asking for attributes loads the rest now, outside any pipeline.
  cudaFuncAttributes attr{};
  if (!e) e = cudaFuncGetAttributes(&attr, bitrev_kernel);
  if (!e) e = cudaFuncGetAttributes(&attr, geo_kernel);
  if (e) {
    info.error = make_cuda_error(e);
    return info;
  }
  std::lock_guard lock(g_mutex);
  g_devices.emplace(device, info);
  return info;
}

std::error_code build_tables(unsigned log_n, const DeviceInfo& info, NttTables& t, Fr** storage) {
  const unsigned lo_bits = (log_n + 1) / 2, hi_bits = log_n - lo_bits;
  const std::size_t local = std::size_t{1} << (kLocalLog - 1);
  const std::size_t lo = std::size_t{1} << lo_bits, hi = std::size_t{1} << hi_bits;
  // local fwd/inv, tw_fwd lo/hi, tw_inv lo/hi, coset_fwd lo/hi, coset_fwd_over_n lo,
  // coset_inv_over_n lo/hi.
  // A direct cross-twiddle table for the strided pass with the fewest
  // distinct twiddles, when that pass has at most 2^kDirectMaxLog.
  unsigned direct_shift = 0, direct_log = 0;
  {
    const Plan plan = make_plan(log_n, info.tile_log);
    unsigned s0 = 0;
    for (unsigned i = 0; i < plan.passes; ++i) {
      const unsigned k = plan.k[i];
      if (s0 != 0 && s0 + k <= kDirectMaxLog && (direct_log == 0 || s0 + k < direct_log)) {
        direct_log = s0 + k;
        direct_shift = log_n - s0 - k;
      }
      s0 += k;
    }
  }
  const std::size_t direct = direct_log ? std::size_t{1} << direct_log : 0;
  const std::size_t total = 2 * local + 5 * lo + 4 * hi + 2 * direct;
  Fr* mem = nullptr;
  if (cudaError_t e = cudaMalloc(&mem, total * sizeof(Fr))) {
    cudaGetLastError();
    return make_cuda_error(e);
  }
  *storage = mem;
  cudaStream_t s = nullptr;
  if (cudaError_t e = cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking))
    return make_cuda_error(e);

  const Fr one = Fr::one();
  const Fr w = Fr::root_of_unity(log_n), wi = w.inverse();
  const Fr wl = Fr::root_of_unity(kLocalLog);
  const Fr g = Fr::generator(), gi = g.inverse();
  const Fr n_inv = Fr::from_u64(std::uint64_t{1} << log_n).inverse();
  const auto step = [&](Fr x) { return x.pow(std::uint64_t{1} << lo_bits); };

  Fr* p = mem;
  std::error_code ec;
  const auto gen = [&](std::size_t count, Fr c0, Fr base) {
    Fr* dst = p;
    p += count;
    if (ec) return static_cast<const Fr*>(dst);
    detail::ElementwiseGeometry g;
    if ((ec = detail::elementwise_geometry<geo_kernel>(count, g)))
      return static_cast<const Fr*>(dst);
    geo_kernel<<<g.blocks, g.threads, 0, s>>>(dst, static_cast<std::uint32_t>(count), c0, base);
    ec = launch_error();
    return static_cast<const Fr*>(dst);
  };
  t.log_n = log_n;
  t.tile_log = info.tile_log;
  t.local_fwd = gen(local, one, wl);
  t.local_inv = gen(local, one, wl.inverse());
  t.tw_fwd = {gen(lo, one, w), gen(hi, one, step(w)), lo_bits};
  t.tw_inv = {gen(lo, one, wi), gen(hi, one, step(wi)), lo_bits};
  t.coset_fwd = {gen(lo, one, g), gen(hi, one, step(g)), lo_bits};
  t.coset_fwd_over_n = {gen(lo, n_inv, g), t.coset_fwd.hi, lo_bits};
  t.coset_inv_over_n = {gen(lo, n_inv, gi), gen(hi, one, step(gi)), lo_bits};
  t.n_inv = n_inv;
  if (direct) {
    t.direct_shift = direct_shift;
    t.direct_fwd = gen(direct, one, w.pow(std::uint64_t{1} << direct_shift));
    t.direct_inv = gen(direct, one, wi.pow(std::uint64_t{1} << direct_shift));
  }
  if (cudaError_t e = cudaStreamSynchronize(s); e && !ec) ec = make_cuda_error(e);
  cudaStreamDestroy(s);
  return ec;
}

}  // namespace

std::error_code tables_for(unsigned log_n, const NttTables** out) {
  int device = 0;
  if (cudaError_t e = cudaGetDevice(&device)) return make_cuda_error(e);
  {
    std::lock_guard lock(g_mutex);
    if (auto it = g_tables.find({device, log_n}); it != g_tables.end()) {
      *out = it->second.get();
      return {};
    }
  }
  const DeviceInfo info = device_info(device);
  if (info.error) return info.error;
  // Built outside the lock (it waits for the device); a racing builder's
  // copy is dropped.
  auto t = std::make_unique<NttTables>();
  Fr* storage = nullptr;
  if (auto ec = build_tables(log_n, info, *t, &storage)) {
    if (storage) cudaFree(storage);
    return ec;
  }
  std::lock_guard lock(g_mutex);
  auto [it, inserted] = g_tables.emplace(std::make_pair(device, log_n), std::move(t));
  if (!inserted) cudaFree(storage);
  *out = it->second.get();
  return {};
}

std::error_code dif_passes(const NttTables& t, bool inverse, Fr* out, const Fr* in,
                           std::size_t batch, const LoadSpec& load, cudaStream_t stream) {
  const Plan plan = make_plan(t.log_n, t.tile_log);
  // Highest levels first: strided passes k[passes-1] .. k[1], then k[0] at s0 = 0.
  unsigned top = t.log_n;
  const Fr* src = in;
  for (unsigned i = plan.passes; i-- > 0;) {
    const unsigned k = plan.k[i], s0 = top - k;
    PassArgs a = base_args(t, inverse, s0, k, columns(s0, k, t.tile_log));
    a.in = src;
    a.out = out;
    if (i == plan.passes - 1) a.load = load;
    if (auto ec = launch_pass<true>(a, batch, stream)) return ec;
    src = out;
    top = s0;
  }
  return {};
}

std::error_code dit_passes(const NttTables& t, bool inverse, Fr* out, const Fr* in,
                           std::size_t batch, const LoadSpec& load, cudaStream_t stream) {
  const Plan plan = make_plan(t.log_n, t.tile_log);
  unsigned s0 = 0;
  const Fr* src = in;
  for (unsigned i = 0; i < plan.passes; ++i) {
    const unsigned k = plan.k[i];
    PassArgs a = base_args(t, inverse, s0, k, columns(s0, k, t.tile_log));
    a.in = src;
    a.out = out;
    if (i == 0) a.load = load;
    if (auto ec = launch_pass<false>(a, batch, stream)) return ec;
    src = out;
    s0 += k;
  }
  return {};
}

std::error_code single_pass(const NttTables& t, bool inverse, Fr* out, const Fr* in,
                            std::size_t batch, const LoadSpec& load, const StoreSpec& store,
                            cudaStream_t stream) {
  PassArgs a = base_args(t, inverse, 0, t.log_n, 0);
  a.in = in;
  a.out = out;
  a.load = load;
  a.store = store;
  if (a.store.mode == Store::plain) a.store.mode = Store::bitrev;
  return launch_pass<true>(a, batch, stream);
}

std::error_code bitrev_pass(const NttTables& t, Fr* data, std::size_t batch, const StoreSpec& store,
                            cudaStream_t stream) {
  const unsigned blocks = 1u << (t.log_n - 2 * kBitrevQ);
  const std::size_t stride = std::size_t{1} << t.log_n;
  for (std::size_t v = 0; v < batch; v += 65535) {
    const unsigned nb = static_cast<unsigned>(std::min<std::size_t>(65535, batch - v));
    bitrev_kernel<<<dim3(blocks, nb), kBitrevThreads, 0, stream>>>(data + v * stride, stride,
                                                                   t.log_n, store);
    if (auto ec = launch_error()) return ec;
  }
  return {};
}

}  // namespace detail

std::error_code prepare(unsigned log_n) {
  if (log_n == 0 || log_n > kMaxLogN) return make_error_code(Errc::invalid_argument);
  const detail::NttTables* t = nullptr;
  return detail::tables_for(log_n, &t);
}

std::error_code transform(NttKind kind, Fr* out, const Fr* in, unsigned log_n, std::size_t batch,
                          cudaStream_t stream) {
  if (log_n == 0 || log_n > kMaxLogN) return make_error_code(Errc::invalid_argument);
  if (batch == 0) return {};
  if (!out || !in) return make_error_code(Errc::invalid_argument);
  const detail::NttTables* t = nullptr;
  if (auto ec = detail::tables_for(log_n, &t)) return ec;

  const bool inverse = kind == NttKind::inverse || kind == NttKind::coset_inverse;
  detail::LoadSpec load;
  if (kind == NttKind::coset_forward) {
    load.mode = detail::Load::scale_natural;
    load.geo = t->coset_fwd;
  }
  detail::StoreSpec store;
  if (kind == NttKind::inverse) {
    store.mode = detail::Store::bitrev_const;
    store.constant = t->n_inv;
  } else if (kind == NttKind::coset_inverse) {
    store.mode = detail::Store::bitrev_geo;
    store.geo = t->coset_inv_over_n;
  }

  if (log_n <= t->tile_log)
    return detail::single_pass(*t, inverse, out, in, batch, load, store, stream);
  if (auto ec = detail::dif_passes(*t, inverse, out, in, batch, load, stream)) return ec;
  return detail::bitrev_pass(*t, out, batch, store, stream);
}

}  // namespace stoker::kernels::gpu
