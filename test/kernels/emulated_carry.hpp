// The PTX carry-flag primitives of kernels/detail/ptx_carry.cuh on the host,
// with the flag made explicit, so the device arithmetic's instruction
// sequences (Fr's and Fq's Montgomery products, Fq's addition and
// subtraction) run in host tests. A carry that an algorithm proves
// impossible (an instruction without carry out that would carry) is
// counted in lost_carries, so tests check it rather than assume it.
#pragma once

#include <cstdint>

namespace stoker::kernels::test {

// PTX semantics of each primitive, with the carry flag made explicit.
struct EmulatedCarry {
  bool flag = false;
  int lost_carries = 0;  // carries dropped by a no-carry-out instruction

  void mul_lo(std::uint32_t& d, std::uint32_t a, std::uint32_t b) {
    d = static_cast<std::uint32_t>(std::uint64_t{a} * b);
  }
  void mul_hi(std::uint32_t& d, std::uint32_t a, std::uint32_t b) {
    d = static_cast<std::uint32_t>((std::uint64_t{a} * b) >> 32);
  }
  void add_with(std::uint32_t& d, std::uint64_t addend, bool carry_in, bool keep) {
    const std::uint64_t s = std::uint64_t{d} + addend + (carry_in ? 1 : 0);
    d = static_cast<std::uint32_t>(s);
    if (keep)
      flag = (s >> 32) != 0;
    else if ((s >> 32) != 0)
      ++lost_carries;
  }
  static std::uint32_t lo(std::uint32_t a, std::uint32_t b) {
    return static_cast<std::uint32_t>(std::uint64_t{a} * b);
  }
  static std::uint32_t hi(std::uint32_t a, std::uint32_t b) {
    return static_cast<std::uint32_t>((std::uint64_t{a} * b) >> 32);
  }
  void mad_lo_cc(std::uint32_t& d, std::uint32_t a, std::uint32_t b) {
    add_with(d, lo(a, b), false, true);
  }
  void madc_lo_cc(std::uint32_t& d, std::uint32_t a, std::uint32_t b) {
    add_with(d, lo(a, b), flag, true);
  }
  void madc_hi_cc(std::uint32_t& d, std::uint32_t a, std::uint32_t b) {
    add_with(d, hi(a, b), flag, true);
  }
  void madc_hi(std::uint32_t& d, std::uint32_t a, std::uint32_t b) {
    add_with(d, hi(a, b), flag, false);
  }
  void add_cc(std::uint32_t& d, std::uint32_t a) { add_with(d, a, false, true); }
  void addc_cc(std::uint32_t& d, std::uint32_t a) { add_with(d, a, flag, true); }
  void addc_flag(std::uint32_t& d) { add_with(d, 0, flag, false); }
  void sub_with(std::uint32_t& d, std::uint32_t a, bool borrow_in, bool keep) {
    const std::uint64_t s = std::uint64_t{d} - a - (borrow_in ? 1 : 0);
    d = static_cast<std::uint32_t>(s);
    if (keep) flag = (s >> 63) != 0;
  }
  void sub_cc(std::uint32_t& d, std::uint32_t a) { sub_with(d, a, false, true); }
  void subc_cc(std::uint32_t& d, std::uint32_t a) { sub_with(d, a, flag, true); }
  void subc_flag(std::uint32_t& d) { sub_with(d, 0, flag, false); }
};

}  // namespace stoker::kernels::test
