// The carry-flag policy on the device: each PTX integer primitive that reads
// or writes the carry flag (add.cc, addc, mad.lo.cc, madc.hi.cc, ...) as one
// `asm volatile` statement. Volatile keeps the statements in program order,
// so the flag set by one is the flag read by the next, and ptxas schedules
// the machine code from there. Multi-word arithmetic written over a policy
// `Cc` with these members (detail/mont32.cuh for Fr, detail/mont_even_odd.cuh
// for Fq) runs on the host too with an emulated flag (test/kernels), so its
// carry logic is tested on every CI run, not only on a GPU.
#pragma once

#include <cstdint>

namespace stoker::kernels::detail {

#if defined(__CUDACC__)
// One PTX instruction per call; see the file comment for why volatile.
struct PtxCarry {
  __device__ __forceinline__ void mul_lo(std::uint32_t& d, std::uint32_t a, std::uint32_t b) {
    asm volatile("mul.lo.u32 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
  }
  __device__ __forceinline__ void mul_hi(std::uint32_t& d, std::uint32_t a, std::uint32_t b) {
    asm volatile("mul.hi.u32 %0, %1, %2;" : "=r"(d) : "r"(a), "r"(b));
  }
  // d += lo(a*b), sets the flag.
  __device__ __forceinline__ void mad_lo_cc(std::uint32_t& d, std::uint32_t a, std::uint32_t b) {
    asm volatile("mad.lo.cc.u32 %0, %1, %2, %0;" : "+r"(d) : "r"(a), "r"(b));
  }
  // d += lo(a*b) + flag, sets the flag.
  __device__ __forceinline__ void madc_lo_cc(std::uint32_t& d, std::uint32_t a, std::uint32_t b) {
    asm volatile("madc.lo.cc.u32 %0, %1, %2, %0;" : "+r"(d) : "r"(a), "r"(b));
  }
  // d += hi(a*b) + flag, sets the flag.
  __device__ __forceinline__ void madc_hi_cc(std::uint32_t& d, std::uint32_t a, std::uint32_t b) {
    asm volatile("madc.hi.cc.u32 %0, %1, %2, %0;" : "+r"(d) : "r"(a), "r"(b));
  }
  // d += hi(a*b) + flag; the caller proves no carry out.
  __device__ __forceinline__ void madc_hi(std::uint32_t& d, std::uint32_t a, std::uint32_t b) {
    asm volatile("madc.hi.u32 %0, %1, %2, %0;" : "+r"(d) : "r"(a), "r"(b));
  }
  // d += a, sets the flag.
  __device__ __forceinline__ void add_cc(std::uint32_t& d, std::uint32_t a) {
    asm volatile("add.cc.u32 %0, %0, %1;" : "+r"(d) : "r"(a));
  }
  // d += a + flag, sets the flag.
  __device__ __forceinline__ void addc_cc(std::uint32_t& d, std::uint32_t a) {
    asm volatile("addc.cc.u32 %0, %0, %1;" : "+r"(d) : "r"(a));
  }
  // d += flag.
  __device__ __forceinline__ void addc_flag(std::uint32_t& d) {
    asm volatile("addc.u32 %0, %0, 0;" : "+r"(d));
  }
  // d -= a, sets the borrow.
  __device__ __forceinline__ void sub_cc(std::uint32_t& d, std::uint32_t a) {
    asm volatile("sub.cc.u32 %0, %0, %1;" : "+r"(d) : "r"(a));
  }
  // d -= a + borrow, sets the borrow.
  __device__ __forceinline__ void subc_cc(std::uint32_t& d, std::uint32_t a) {
    asm volatile("subc.cc.u32 %0, %0, %1;" : "+r"(d) : "r"(a));
  }
  // d -= borrow.
  __device__ __forceinline__ void subc_flag(std::uint32_t& d) {
    asm volatile("subc.u32 %0, %0, 0;" : "+r"(d));
  }
};
#endif

}  // namespace stoker::kernels::detail
