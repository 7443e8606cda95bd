// Points between device memory and registers in 16-byte words: G1Affine
// (96 bytes) and G1Xyzz (192 bytes) are arrays of 16-byte aligned Fq, and
// the MSM's gathers are the bulk of its memory traffic, so each point is
// six (twelve) 16-byte loads rather than the compiler's choice. G2's
// points are arrays of Fq2, each two Fq: twice as many words.
#pragma once

#include "kernels/g1.cuh"
#include "kernels/g2.cuh"

namespace stoker::kernels::gpu::detail {

static_assert(sizeof(Fq) == 48 && alignof(Fq) == 16, "an Fq is three 16-byte words");
static_assert(sizeof(G1Affine) == 96 && sizeof(G1Xyzz) == 192, "points are arrays of Fq");
static_assert(sizeof(Fq2) == 96 && alignof(Fq2) == 16, "an Fq2 is two Fq");
static_assert(sizeof(G2Affine) == 192 && sizeof(G2Xyzz) == 384, "points are arrays of Fq2");

// Field by field, not through memcpy: a copy through a local array can stay
// in local memory (a stack frame in ptxas's report).
__device__ __forceinline__ Fq load_fq(const ulonglong2* q) {
  const ulonglong2 a = __ldg(q), b = __ldg(q + 1), c = __ldg(q + 2);
  return Fq{{a.x, a.y, b.x, b.y, c.x, c.y}};
}
// For memory the same kernel writes (bucket sums, heads): no read-only path.
__device__ __forceinline__ Fq load_fq_rw(const ulonglong2* q) {
  const ulonglong2 a = q[0], b = q[1], c = q[2];
  return Fq{{a.x, a.y, b.x, b.y, c.x, c.y}};
}
__device__ __forceinline__ void store_fq(ulonglong2* q, const Fq& v) {
  q[0] = make_ulonglong2(v.l[0], v.l[1]);
  q[1] = make_ulonglong2(v.l[2], v.l[3]);
  q[2] = make_ulonglong2(v.l[4], v.l[5]);
}

__device__ __forceinline__ Fq2 load_fq2(const ulonglong2* q) {
  return Fq2{load_fq(q), load_fq(q + 3)};
}
__device__ __forceinline__ Fq2 load_fq2_rw(const ulonglong2* q) {
  return Fq2{load_fq_rw(q), load_fq_rw(q + 3)};
}
__device__ __forceinline__ void store_fq2(ulonglong2* q, const Fq2& v) {
  store_fq(q, v.c0);
  store_fq(q + 3, v.c1);
}

__device__ __forceinline__ G1Affine load_affine(const G1Affine* p) {
  const ulonglong2* q = reinterpret_cast<const ulonglong2*>(p);
  return G1Affine{load_fq(q), load_fq(q + 3)};
}

// Affine points the kernel itself writes (a sparse MSM's accumulators).
__device__ __forceinline__ G1Affine load_affine_rw(const G1Affine* p) {
  const ulonglong2* q = reinterpret_cast<const ulonglong2*>(p);
  return G1Affine{load_fq_rw(q), load_fq_rw(q + 3)};
}
__device__ __forceinline__ void store_affine(G1Affine* p, const G1Affine& a) {
  ulonglong2* q = reinterpret_cast<ulonglong2*>(p);
  store_fq(q, a.x);
  store_fq(q + 3, a.y);
}

__device__ __forceinline__ G1Xyzz load_xyzz(const G1Xyzz* p) {
  const ulonglong2* q = reinterpret_cast<const ulonglong2*>(p);
  return G1Xyzz{load_fq_rw(q), load_fq_rw(q + 3), load_fq_rw(q + 6), load_fq_rw(q + 9)};
}

__device__ __forceinline__ void store_xyzz(G1Xyzz* p, const G1Xyzz& x) {
  ulonglong2* q = reinterpret_cast<ulonglong2*>(p);
  store_fq(q, x.x);
  store_fq(q + 3, x.y);
  store_fq(q + 6, x.zz);
  store_fq(q + 9, x.zzz);
}

__device__ __forceinline__ G2Affine load_affine(const G2Affine* p) {
  const ulonglong2* q = reinterpret_cast<const ulonglong2*>(p);
  return G2Affine{load_fq2(q), load_fq2(q + 6)};
}

__device__ __forceinline__ G2Affine load_affine_rw(const G2Affine* p) {
  const ulonglong2* q = reinterpret_cast<const ulonglong2*>(p);
  return G2Affine{load_fq2_rw(q), load_fq2_rw(q + 6)};
}
__device__ __forceinline__ void store_affine(G2Affine* p, const G2Affine& a) {
  ulonglong2* q = reinterpret_cast<ulonglong2*>(p);
  store_fq2(q, a.x);
  store_fq2(q + 6, a.y);
}

__device__ __forceinline__ G2Xyzz load_xyzz(const G2Xyzz* p) {
  const ulonglong2* q = reinterpret_cast<const ulonglong2*>(p);
  return G2Xyzz{load_fq2_rw(q), load_fq2_rw(q + 6), load_fq2_rw(q + 12), load_fq2_rw(q + 18)};
}

__device__ __forceinline__ void store_xyzz(G2Xyzz* p, const G2Xyzz& x) {
  ulonglong2* q = reinterpret_cast<ulonglong2*>(p);
  store_fq2(q, x.x);
  store_fq2(q + 6, x.y);
  store_fq2(q + 12, x.zz);
  store_fq2(q + 18, x.zzz);
}

// An affine point's x alone (the batched affine additions read y only
// where x does not settle the pair), from the key's points or from
// accumulators the kernel writes; and a field element of scratch.
__device__ __forceinline__ Fq load_affine_x(const G1Affine* p) {
  return load_fq(reinterpret_cast<const ulonglong2*>(p));
}
__device__ __forceinline__ Fq2 load_affine_x(const G2Affine* p) {
  return load_fq2(reinterpret_cast<const ulonglong2*>(p));
}
__device__ __forceinline__ Fq load_affine_x_rw(const G1Affine* p) {
  return load_fq_rw(reinterpret_cast<const ulonglong2*>(p));
}
__device__ __forceinline__ Fq2 load_affine_x_rw(const G2Affine* p) {
  return load_fq2_rw(reinterpret_cast<const ulonglong2*>(p));
}
__device__ __forceinline__ Fq load_field_rw(const Fq* p) {
  return load_fq_rw(reinterpret_cast<const ulonglong2*>(p));
}
__device__ __forceinline__ Fq2 load_field_rw(const Fq2* p) {
  return load_fq2_rw(reinterpret_cast<const ulonglong2*>(p));
}
__device__ __forceinline__ void store_field(Fq* p, const Fq& v) {
  store_fq(reinterpret_cast<ulonglong2*>(p), v);
}
__device__ __forceinline__ void store_field(Fq2* p, const Fq2& v) {
  store_fq2(reinterpret_cast<ulonglong2*>(p), v);
}

}  // namespace stoker::kernels::gpu::detail
